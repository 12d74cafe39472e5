"""keras_recurrent: the recurrent layers Keras 3 does not ship.

Usage: `import keras_recurrent as kr`, then e.g. `kr.layers.PeepholeLSTM(64)`.

The layers need only Keras, on any backend. `kr.distribute` and
`kr.export` (TensorFlow),
`kr.tuning` (keras-tuner) and `kr.testing` (TensorFlow) are imported on first
use, so the package imports without TensorFlow, e.g. on a JAX or PyTorch
installation.

Saved models: `import keras_recurrent` before `keras.saving.load_model`. The
layers register with Keras when the package is imported, and Keras imports
no third-party module named in a `.keras` file; without the import, loading
fails with "Could not locate class 'PeepholeLSTM'" after a dump of the
model's config.
"""

from keras_recurrent import callbacks
from keras_recurrent import constraints
from keras_recurrent import data
from keras_recurrent import datasets
from keras_recurrent import graphs
from keras_recurrent import layers
from keras_recurrent import migrate
from keras_recurrent import plot
from keras_recurrent import trees
from keras_recurrent._lazy import lazy_getattr

__getattr__ = lazy_getattr(
    __name__,
    {
        "distribute": ".distribute",
        "export": ".export",
        "testing": ".testing",
        "tuning": ".tuning",
    },
)

__version__ = "0.1.0"

__all__ = [
    "callbacks",
    "constraints",
    "data",
    "datasets",
    "distribute",
    "export",
    "graphs",
    "layers",
    "migrate",
    "plot",
    "trees",
    "tuning",
    "__version__",
]
