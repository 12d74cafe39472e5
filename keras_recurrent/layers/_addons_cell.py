"""What the TensorFlow Addons cells share: Keras' cell contract and the
loop contract of `CellRNN`, around a cell's `step`.

A cell sets `state_size` and `output_size`, creates its weights in `build`
and defines:

- `_loop_weights()`: its weights by role, as every step reads them;
- `step(inputs, states, loop_state)`: one step, which applies the dropout
  masks of `loop_state` itself.

`call` is one step of the same loop, so a cell gives the same numbers in a
plain `keras.layers.RNN` as in its own layer.
"""

import keras
from keras import ops

from keras_recurrent._checks import float_or_cast
from keras_recurrent.layers._constrained_weights import ConstrainedWeights
from keras_recurrent.layers._dropout import SequenceDropout
from keras_recurrent.layers._known_rank import KnownRankInputs
from keras_recurrent.layers._sequence_checks import check_step_inputs
from keras_recurrent.layers._sequence_checks import check_step_shape


class AddonsCell(
    ConstrainedWeights, KnownRankInputs, keras.layers.Layer, SequenceDropout
):
    """Base of the cells ported from TensorFlow Addons (see the module).

    A weight with a constraint satisfies it from its creation on (see
    `ConstrainedWeights`). Integer and boolean inputs are cast to the
    compute dtype, as `keras.layers.LSTMCell` takes them (`float_or_cast`).
    """

    # Cells without dropout in TensorFlow Addons keep these.
    dropout = 0.0
    recurrent_dropout = 0.0

    def _input_mask_width(self):
        return self.input_dim

    def _recurrent_mask_width(self):
        return self.state_size[0]

    def _build_input_dim(self, input_shape):
        """The input width from `build`'s `input_shape`, checked."""
        shape = check_step_shape(self, input_shape, known_features=True)
        self.input_dim = shape[-1]
        return self.input_dim

    def call(self, inputs, states, training=False):
        inputs = float_or_cast(self, inputs)
        check_step_inputs(self, inputs, self.input_dim)
        _, loop_state = self.prepare_loop(ops.expand_dims(inputs, 1), training)
        return self.step(inputs, states, loop_state)

    def prepare_loop(self, sequences, training=False):
        """What a time loop over `sequences` reads: `(step_inputs,
        loop_state)` (the loop contract of `CellRNN`).

        `loop_state` holds `"weights"`, read and cast to the compute dtype
        once for all steps, and the sequences' dropout masks,
        `"input_mask"` and `"recurrent_mask"` (`None` unless `training`).
        """
        dtype = self.compute_dtype
        weights = {
            role: None if weight is None else ops.cast(weight, dtype)
            for role, weight in self._loop_weights().items()
        }
        input_mask, recurrent_mask = self.sequence_dropout_masks(
            sequences[:, 0, :], training
        )
        loop_state = {
            "weights": weights,
            "input_mask": input_mask,
            "recurrent_mask": recurrent_mask,
        }
        return sequences, loop_state

    def get_initial_state(self, batch_size=None):
        sizes = self.state_size
        sizes = sizes if isinstance(sizes, (list, tuple)) else [sizes]
        return [
            ops.zeros((batch_size, size), dtype=self.compute_dtype)
            for size in sizes
        ]
