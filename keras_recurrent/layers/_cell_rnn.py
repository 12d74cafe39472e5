"""What `LSTMVariant` and `GatedFeedbackRNN` share: a thin `RNN` of one cell."""

import keras
from keras import ops

from keras_recurrent._checks import check_bool
from keras_recurrent.layers._known_rank import KnownRankInputs
from keras_recurrent.layers._sequence_checks import built_features
from keras_recurrent.layers._sequence_checks import check_mask
from keras_recurrent.layers._sequence_checks import check_sequence_shape
from keras_recurrent.layers._sequence_checks import check_sequences
from keras_recurrent.layers._sequence_checks import check_stateful_batch
from keras_recurrent.layers._sequence_checks import record_features
from keras_recurrent.layers._sequence_checks import zero_masked_steps

# Cell config keys that belong to the base Layer, not to the cell's math.
_LAYER_KEYS = ("name", "trainable", "dtype")


class CellRNN(KnownRankInputs, keras.layers.RNN):
    """An `RNN` layer that builds its cell from its own keyword arguments.

    Subclasses list every argument of their cell in their `__init__` (as
    `keras.layers.LSTM` does) and pass them as `cell_args`; the remaining
    keyword arguments go to `keras.layers.RNN`. The config is the cell's,
    flattened into the layer's, so `from_config` is `cls(**config)`, and
    each cell argument is a read-only property of the layer. The layer
    checks its inputs (rank 3, floating point, the built width, at least one
    step; a boolean `(batch, timesteps)` mask), zeroes the inputs at masked
    steps (so NaN or inf there reaches neither the outputs nor the
    gradients), makes the cell's dropout masks once per sequence before the
    time loop, and resets them afterwards.

    Subclasses may override `_loop_inputs` (what the time loop reads instead
    of the sequences) and `_end_call` (cleanup after the loop).
    """

    def __init__(
        self,
        cell_class,
        cell_args,
        *,
        return_sequences=False,
        return_state=False,
        go_backwards=False,
        stateful=False,
        unroll=False,
        zero_output_for_mask=False,
        **kwargs,
    ):
        cell = cell_class(
            **cell_args,
            dtype=kwargs.get("dtype"),
            trainable=kwargs.get("trainable", True),
            name="cell",
        )
        # Keras' RNN takes any value here; `"no"` would mean True.
        flags = {
            "return_sequences": return_sequences,
            "return_state": return_state,
            "go_backwards": go_backwards,
            "stateful": stateful,
            "unroll": unroll,
            "zero_output_for_mask": zero_output_for_mask,
        }
        for name, value in flags.items():
            check_bool(name, value)
        super().__init__(cell, **flags, **kwargs)

    def build(self, sequences_shape, initial_state_shape=None):
        sequences_shape = check_sequence_shape(self, sequences_shape)
        record_features(self, sequences_shape)
        super().build(sequences_shape, initial_state_shape)

    def call(self, sequences, initial_state=None, mask=None, training=False):
        check_sequences(self, sequences, built_features(self))
        mask = check_mask(self, mask, sequences)
        if self.stateful and initial_state is None and self.states is not None:
            sequences = check_stateful_batch(self, sequences)
        sequences = zero_masked_steps(sequences, mask)
        cell = self.cell
        if training:
            # One mask per sequence, made before the time loop from the
            # layer's inputs: the loop may read others (`_loop_inputs`), and
            # Keras' RNN, which makes them from what the loop reads, then
            # finds them made.
            cell.get_dropout_mask(sequences[:, 0, :])
            batch_size = ops.shape(sequences)[0]
            cell.get_recurrent_dropout_mask(
                ops.zeros((batch_size, cell.state_size[0]), sequences.dtype)
            )
        try:
            return super().call(
                self._loop_inputs(sequences, training),
                initial_state=initial_state,
                mask=mask,
                training=training,
            )
        finally:
            self._end_call()
            cell.reset_dropout_mask()
            cell.reset_recurrent_dropout_mask()

    def _loop_inputs(self, sequences, training):
        """What the time loop feeds the cell; the sequences by default."""
        del training
        return sequences

    def _end_call(self):
        """Undoes what `_loop_inputs` set on the cell."""

    @property
    def units(self):
        return self.cell.units

    @property
    def activation(self):
        return self.cell.activation

    @property
    def recurrent_activation(self):
        return self.cell.recurrent_activation

    @property
    def use_bias(self):
        return self.cell.use_bias

    @property
    def unit_forget_bias(self):
        return self.cell.unit_forget_bias

    @property
    def kernel_initializer(self):
        return self.cell.kernel_initializer

    @property
    def recurrent_initializer(self):
        return self.cell.recurrent_initializer

    @property
    def bias_initializer(self):
        return self.cell.bias_initializer

    @property
    def kernel_regularizer(self):
        return self.cell.kernel_regularizer

    @property
    def recurrent_regularizer(self):
        return self.cell.recurrent_regularizer

    @property
    def bias_regularizer(self):
        return self.cell.bias_regularizer

    @property
    def kernel_constraint(self):
        return self.cell.kernel_constraint

    @property
    def recurrent_constraint(self):
        return self.cell.recurrent_constraint

    @property
    def bias_constraint(self):
        return self.cell.bias_constraint

    @property
    def dropout(self):
        return self.cell.dropout

    @property
    def recurrent_dropout(self):
        return self.cell.recurrent_dropout

    @property
    def seed(self):
        return self.cell.seed

    def get_config(self):
        config = {
            key: value
            for key, value in self.cell.get_config().items()
            if key not in _LAYER_KEYS
        }
        base_config = super().get_config()
        del base_config["cell"]
        return {**base_config, **config}

    @classmethod
    def from_config(cls, config):
        return cls(**config)
