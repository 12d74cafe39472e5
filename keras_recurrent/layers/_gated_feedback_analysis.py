"""The analysis of `GatedFeedbackCell`: its global reset gates over a batch."""

import keras
from keras import ops

from keras_recurrent.layers._masking import zero_masked_steps
from keras_recurrent.layers._sequence_checks import check_mask
from keras_recurrent.layers._sequence_checks import check_sequences


def gate_values(cell, sequences, mask=None, initial_state=None):
    """The global reset gates `g^{i→j}_t` of `cell` over `sequences`.

    See `GatedFeedbackCell.gate_values`.
    """
    if not hasattr(sequences, "dtype"):
        sequences = ops.convert_to_tensor(sequences, cell.compute_dtype)
    sequences = check_sequences(
        cell, sequences, name="sequences", cast_integers=True
    )
    mask = check_mask(cell, mask, sequences)
    sequences = zero_masked_steps(sequences, mask)
    rnn = keras.layers.RNN(
        _GateCell(cell),
        return_sequences=True,
        zero_output_for_mask=True,
        dtype=cell.dtype_policy,
        name="gate_values",
    )
    gates = rnn(sequences, mask=mask, initial_state=initial_state)
    shape = ops.shape(gates)
    return ops.reshape(
        gates, (shape[0], shape[1], cell.num_layers, cell.num_layers)
    )


class _GateCell(keras.layers.Layer):
    """Runs a built `GatedFeedbackCell` with its gates, flat, as the output."""

    def __init__(self, cell, **kwargs):
        super().__init__(dtype=cell.dtype_policy, **kwargs)
        self.cell = cell
        self.state_size = cell.state_size
        self.output_size = cell.num_layers**2

    def build(self, input_shape):
        if not self.cell.built:
            self.cell.build(input_shape)

    def call(self, inputs, states, training=False):
        del training
        cell = self.cell
        _, new_states, gates = cell.step(
            inputs,
            states,
            cell._loop_state(inputs, training=False),
            return_gates=True,
        )
        return ops.reshape(gates, (-1, self.output_size)), new_states

    def get_initial_state(self, batch_size=None):
        return self.cell.get_initial_state(batch_size)
