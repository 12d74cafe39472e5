"""Per-sequence (variational) dropout masks for the package's RNN cells."""

import keras


def _keras_dropout_mixin():
    """Keras' `DropoutRNNCell` mixin, which Keras does not export.

    `keras.layers.RNN` (and so `Bidirectional` and `StackedRNNCells` inside
    it) makes each cell's dropout masks before the time loop and clears them
    after it only for cells deriving from this mixin; without it, a mask
    made inside the loop would change at every step or outlive its batch.
    It is reached through the MRO of the public `keras.layers.LSTMCell`.
    """
    for klass in keras.layers.LSTMCell.__mro__:
        if klass.__name__ == "DropoutRNNCell":
            return klass
    raise ImportError(
        "keras_recurrent needs Keras' `DropoutRNNCell` mixin, a base class of "
        "`keras.layers.LSTMCell`, for its dropout masks. Received: "
        f"keras {keras.__version__}, whose LSTMCell bases are "
        f"{[klass.__name__ for klass in keras.layers.LSTMCell.__mro__]}"
    )


# One mask per sequence, reused at every time step: `get_dropout_mask`,
# `get_recurrent_dropout_mask` and the two `reset_*` methods. The cell needs
# `dropout`, `recurrent_dropout` and `seed_generator`.
DropoutRNNCellMixin = _keras_dropout_mixin()
