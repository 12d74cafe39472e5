"""Bringing recurrent models made before Keras 3 to Keras 3.

`load_legacy_model` reads a tf.keras 2 `.h5` model (recurrent layers and
TensorFlow Addons cells included) as a Keras 3 model;
`load_legacy_weights` loads tf.keras 2 weights-only files into a Keras 3
model. Both read the files with h5py and work on every backend.

`tf1_rnn` builds a Keras 3 layer from the cells of a TF1 checkpoint
(`tf.compat.v1.nn.rnn_cell`); reading the checkpoint needs TensorFlow, on
any Keras backend.

From the command line, `python -m keras_recurrent.migrate OLD.h5
NEW.keras` converts a model file and prints what it mapped.
"""

from keras_recurrent.migrate.legacy_model import load_legacy_model
from keras_recurrent.migrate.legacy_weights import load_legacy_weights
from keras_recurrent.migrate.tf1_rnn import tf1_rnn

__all__ = ["load_legacy_model", "load_legacy_weights", "tf1_rnn"]
