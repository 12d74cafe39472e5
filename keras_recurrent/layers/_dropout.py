"""Per-sequence (variational) dropout masks for the package's RNN cells.

One input mask and one recurrent mask per sequence, reused at every time
step. `SequenceDropout` makes them; it is the only place in the package that
does.

The one dependence on Keras beyond its public API is a class identity:
`keras.layers.RNN` makes a cell's masks once per sequence only for instances
of the unexported class `keras_recurrent._compat.KERAS_DROPOUT_CELL` (a
cell that is not one would make its masks inside the loop, where they would
change at every step or, under `jax.jit`, leak from the traced loop).
`SequenceDropout` derives from that class for the `isinstance` check alone:
it implements the four public methods the check leads Keras to call, with
attributes of its own, and uses nothing else of the Keras class.
"""

import keras
from keras import ops

from keras_recurrent._compat import KERAS_DROPOUT_CELL


class SequenceDropout(KERAS_DROPOUT_CELL):
    """Mixin of the cells: one dropout mask per sequence, from `seed_generator`.

    The cell sets `dropout`, `recurrent_dropout` and `seed_generator`, and
    says how wide its masks are with `_input_mask_width` and
    `_recurrent_mask_width`.

    `get_dropout_mask`, `get_recurrent_dropout_mask` and the two `reset_*`
    methods are Keras' protocol: `keras.layers.RNN` calls the first two
    before its time loop, the cell reads the masks at each step, and the
    `RNN` resets them after the loop. The loop contract reads them with
    `sequence_dropout_masks`, which keeps nothing on the cell.
    """

    def _input_mask_width(self):
        """The width of the input mask (an int)."""
        raise NotImplementedError

    def _recurrent_mask_width(self):
        """The width of the recurrent mask (an int)."""
        raise NotImplementedError

    def get_dropout_mask(self, step_input):
        """The input mask of the current sequence: made on the first call,
        then the same one until `reset_dropout_mask`. `None` if no dropout.

        `step_input` gives the batch size and dtype."""
        if self._sequence_input_mask() is None and self.dropout > 0:
            self._input_mask_of_sequence = self._new_mask(
                step_input, self._input_mask_width(), self.dropout
            )
        return self._sequence_input_mask()

    def get_recurrent_dropout_mask(self, step_state):
        """The recurrent mask of the current sequence, likewise."""
        if self._sequence_recurrent_mask() is None and (
            self.recurrent_dropout > 0
        ):
            self._recurrent_mask_of_sequence = self._new_mask(
                step_state, self._recurrent_mask_width(), self.recurrent_dropout
            )
        return self._sequence_recurrent_mask()

    def reset_dropout_mask(self):
        """Forgets the input mask: the next sequence gets a new one."""
        self._input_mask_of_sequence = None

    def reset_recurrent_dropout_mask(self):
        """Forgets the recurrent mask: the next sequence gets a new one."""
        self._recurrent_mask_of_sequence = None

    def sequence_dropout_masks(self, reference, training):
        """`(input_mask, recurrent_mask)` for one pass over a sequence.

        Each is `None` unless `training` and its rate is positive. They are
        the masks an `RNN` made for the current sequence with `get_*`, else
        new ones, which are not kept.

        Args:
            reference: A tensor `(batch, ...)` whose batch size and dtype
                new masks take, such as one step's inputs.
            training: Python boolean.
        """
        if not training:
            return None, None
        input_mask = self._sequence_input_mask()
        if input_mask is None and self.dropout > 0:
            input_mask = self._new_mask(
                reference, self._input_mask_width(), self.dropout
            )
        recurrent_mask = self._sequence_recurrent_mask()
        if recurrent_mask is None and self.recurrent_dropout > 0:
            recurrent_mask = self._new_mask(
                reference, self._recurrent_mask_width(), self.recurrent_dropout
            )
        return input_mask, recurrent_mask

    def _sequence_input_mask(self):
        return getattr(self, "_input_mask_of_sequence", None)

    def _sequence_recurrent_mask(self):
        return getattr(self, "_recurrent_mask_of_sequence", None)

    def _new_mask(self, reference, width, rate):
        """A `(batch, width)` mask of 0 and `1 / (1 - rate)`, in the dtype of
        `reference`."""
        ones = ops.ones((ops.shape(reference)[0], width), reference.dtype)
        return keras.random.dropout(ones, rate=rate, seed=self.seed_generator)
