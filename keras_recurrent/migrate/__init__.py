"""Bringing models made before Keras 3 to Keras 3.

`load_legacy_model` reads a tf.keras 2 `.h5` model (recurrent layers and
TensorFlow Addons cells included) as a Keras 3 model;
`load_legacy_weights` loads tf.keras 2 weights-only files into a Keras 3
model. Both read the files with h5py and work on every backend.

From the command line, `python -m keras_recurrent.migrate OLD.h5
NEW.keras` converts a model file and prints what it mapped.
"""

from keras_recurrent.migrate.legacy_model import load_legacy_model
from keras_recurrent.migrate.legacy_weights import load_legacy_weights

__all__ = ["load_legacy_model", "load_legacy_weights"]
