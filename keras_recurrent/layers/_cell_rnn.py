"""What `LSTMVariant` and `GatedFeedbackRNN` share: a thin `RNN` of one cell."""

import keras

from keras_recurrent._checks import check_bool
from keras_recurrent.layers._known_rank import KnownRankInputs
from keras_recurrent.layers._masking import zero_masked_steps
from keras_recurrent.layers._sequence_checks import check_mask
from keras_recurrent.layers._sequence_checks import check_sequence_shape
from keras_recurrent.layers._sequence_checks import check_sequences
from keras_recurrent.layers._sequence_checks import check_stateful_batch

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
    step; a boolean `(batch, timesteps)` mask) and zeroes the inputs at
    masked steps (so NaN or inf there reaches neither the outputs nor the
    gradients).

    The loop contract. A cell run by this layer has, besides Keras' cell
    contract (`state_size`, `output_size`, `call(inputs, states,
    training=False)` returning `(output, new_states)`, and
    `get_initial_state(batch_size)`), two methods:

    - `prepare_loop(sequences, training=False)` returns `(step_inputs,
      loop_state)`. The layer calls it once per call, before its time loop.
      `step_inputs` is what the loop steps through, `(batch, timesteps, k)`:
      the sequences themselves, or a form of them that the cell's steps
      read instead (e.g. their input projections, made for all steps at
      once). `loop_state` is a structure (a dict) of what every step of
      this loop reads and nothing else changes: the weights arranged and
      cast once, the dropout masks of the sequences (`None` outside
      training; see `SequenceDropout.sequence_dropout_masks`).
    - `step(inputs, states, loop_state)` returns `(output, new_states)` for
      one step of `step_inputs`. The layer passes `loop_state` to each step
      as it is.

    `call` is one `step` with a `loop_state` the cell makes for that call
    from its variables, so a cell also gives the same numbers run by a plain
    `keras.layers.RNN`, `Bidirectional` or `StackedRNNCells` (to float
    rounding: a loop may order the matmuls differently). The cell keeps
    nothing between calls; the only state on it is the dropout masks that
    Keras' `RNN` asks for before its loop and clears after it (see
    `keras_recurrent.layers._dropout`). This is Keras' own split of a fast
    path: `keras.layers.LSTM.inner_loop` hands the weights to
    `backend.lstm` explicitly.
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

    # The last-axis size the layer was built for (`None` until built).
    _built_features = None

    def build(self, sequences_shape, initial_state_shape=None):
        sequences_shape = check_sequence_shape(self, sequences_shape)
        self._built_features = sequences_shape[-1]
        super().build(sequences_shape, initial_state_shape)

    def call(self, sequences, initial_state=None, mask=None, training=False):
        check_sequences(self, sequences, self._built_features)
        mask = check_mask(self, mask, sequences)
        if self.stateful and initial_state is None and self.states is not None:
            sequences = check_stateful_batch(self, sequences)
        sequences = zero_masked_steps(sequences, mask)
        cell = self.cell
        try:
            # Keras' `RNN.call` asks the cell for its dropout masks before
            # `inner_loop` and clears them after it; the `finally` also
            # clears them when a step fails.
            return super().call(
                sequences,
                initial_state=initial_state,
                mask=mask,
                training=training,
            )
        finally:
            cell.reset_dropout_mask()
            cell.reset_recurrent_dropout_mask()

    def inner_loop(self, sequences, initial_state, mask, training=False):
        return self._time_loop(
            sequences,
            initial_state,
            mask,
            training,
            zero_output_for_mask=self.zero_output_for_mask,
            return_sequences=self.return_sequences,
        )

    def _time_loop(
        self,
        sequences,
        initial_state,
        mask,
        training,
        *,
        zero_output_for_mask,
        return_sequences,
    ):
        """Keras' time loop over the cell's `step`, with the options given.

        Returns `(last_output, outputs, states)`, as `inner_loop`.
        """
        cell = self.cell
        step_inputs, loop_state = cell.prepare_loop(sequences, training)

        def step(inputs, states):
            return cell.step(inputs, states, loop_state)

        options = _LoopOptions(
            step,
            go_backwards=self.go_backwards,
            unroll=self.unroll,
            stateful=self.stateful,
            zero_output_for_mask=zero_output_for_mask,
            return_sequences=return_sequences,
        )
        return keras.layers.RNN.inner_loop(
            options, step_inputs, initial_state, mask
        )

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


class _LoopOptions:
    """What `keras.layers.RNN.inner_loop` reads of its layer, given here.

    `RNN.inner_loop` is Keras' public way into its backend time loop
    (`backend.rnn`, which Keras does not export). It reads the loop options
    from the layer's public attributes and steps `cell`. Passed this object
    in place of the layer, it steps the function given here with the
    options given here, so that neither the layer's attributes nor its cell
    change during a call.
    """

    def __init__(
        self,
        step,
        *,
        go_backwards,
        unroll,
        stateful,
        zero_output_for_mask,
        return_sequences,
    ):
        self.cell = step
        self.go_backwards = go_backwards
        self.unroll = unroll
        self.stateful = stateful
        self.zero_output_for_mask = zero_output_for_mask
        self.return_sequences = return_sequences
