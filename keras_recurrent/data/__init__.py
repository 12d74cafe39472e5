"""Input pipelines for training recurrent models."""

from keras_recurrent._deprecation import moved_getattr
from keras_recurrent.data.tbptt_batches import tbptt_batches

__getattr__ = moved_getattr(
    __name__,
    {
        "ResetStatesCallback": (
            "keras_recurrent.callbacks",
            "ResetStatesCallback",
        )
    },
)

__all__ = ["tbptt_batches"]
