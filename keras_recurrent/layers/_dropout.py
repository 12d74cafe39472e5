"""Per-sequence (variational) dropout masks for the package's RNN cells."""

import keras


class _DropoutMasks:
    """Caches one dropout mask per sequence, reused at every time step.

    Same protocol as Keras' own cells: `get_dropout_mask(step_input)`,
    `get_recurrent_dropout_mask(step_state)` and the two `reset_*` methods.
    The owning cell needs `dropout`, `recurrent_dropout` and `seed_generator`.
    """

    def _create_dropout_mask(self, step_input, rate):
        return keras.random.dropout(
            keras.ops.ones_like(step_input), rate=rate, seed=self.seed_generator
        )

    def get_dropout_mask(self, step_input):
        if getattr(self, "_dropout_mask", None) is None and self.dropout > 0:
            self._dropout_mask = self._create_dropout_mask(
                step_input, self.dropout
            )
        return getattr(self, "_dropout_mask", None)

    def get_recurrent_dropout_mask(self, step_state):
        if (
            getattr(self, "_recurrent_dropout_mask", None) is None
            and self.recurrent_dropout > 0
        ):
            self._recurrent_dropout_mask = self._create_dropout_mask(
                step_state, self.recurrent_dropout
            )
        return getattr(self, "_recurrent_dropout_mask", None)

    def reset_dropout_mask(self):
        self._dropout_mask = None

    def reset_recurrent_dropout_mask(self):
        self._recurrent_dropout_mask = None


def _keras_dropout_protocol():
    # `keras.layers.RNN` (and so `Bidirectional` and `StackedRNNCells` inside
    # it) prepares each cell's dropout masks before the time loop and clears
    # them after it only for cells deriving from Keras' `DropoutRNNCell` mixin,
    # which Keras does not export. Without that, a mask created inside the loop
    # would either change at every step or outlive its batch. Deriving from the
    # mixin, reached through the MRO of the public `keras.layers.LSTMCell`,
    # gives our cells Keras' exact masks in every wrapper and on every backend.
    # If a future Keras drops the mixin, our own RNN layers still prepare and
    # clear the masks themselves (see `LSTMVariant.call`).
    for klass in keras.layers.LSTMCell.__mro__:
        if klass.__name__ == "DropoutRNNCell":
            return klass
    return object


DropoutRNNCellMixin = type(
    "DropoutRNNCellMixin", (_DropoutMasks, _keras_dropout_protocol()), {}
)
