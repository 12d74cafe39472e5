"""Old home of `kr.callbacks.ResetStatesCallback`, kept for one release."""

from keras_recurrent._deprecation import moved_getattr

__getattr__ = moved_getattr(
    __name__,
    {
        "ResetStatesCallback": (
            "keras_recurrent.callbacks",
            "ResetStatesCallback",
        )
    },
)
