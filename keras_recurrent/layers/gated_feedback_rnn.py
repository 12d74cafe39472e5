"""RNN layer running a `GatedFeedbackCell` over a sequence."""

import keras
from keras import ops

from keras_recurrent.layers._cell_rnn import CellRNN
from keras_recurrent.layers._sequence_checks import check_mask
from keras_recurrent.layers._sequence_checks import check_sequences
from keras_recurrent.layers.gated_feedback_cell import GatedFeedbackCell


@keras.saving.register_keras_serializable(package="keras_recurrent")
class GatedFeedbackRNN(CellRNN):
    """Gated-Feedback RNN layer (GF-RNN, Chung et al. 2015).

    A thin `keras.layers.RNN` around `kr.layers.GatedFeedbackCell`: a stack of
    `num_layers` simple, GRU or LSTM layers in which every layer reads every
    layer of the previous step through scalar global reset gates
    `g^{i→j}_t`. See the cell for the equations, the weights (names, shapes
    and block orders) and the state order. `gate_values` returns the gates
    for a batch, e.g. for `kr.plot.gate_heatmap`. Time and memory of a
    train step grow linearly in the number of steps.

    Each argument of the cell is also a read-only property of the layer, as
    in `keras.layers.LSTM`: `layer.cell_type`, `layer.kernel_initializer`, ...

    Args:
        units: Positive integer (every layer's width) or a list of positive
            integers, one per layer.
        num_layers: Positive integer, the number of layers. `None` (default)
            means `len(units)` for a list and 1 for an integer.
        cell_type: `"simple"` (as `keras.layers.SimpleRNN`), `"gru"` or
            `"lstm"`. Defaults to `"simple"`. `"tanh"`, the old name of
            `"simple"`, still works and warns.
        feedback: `"gated"` (the paper), `"fixed"` (all gates 1) or `"none"`
            (a plain stacked RNN). Defaults to `"gated"`.
        output_mode: `"top"` (the last layer's `h`) or `"all"` (all layers'
            `h`, concatenated). Defaults to `"top"`.
        activation: Activation of the candidate and (lstm) cell output.
            Defaults to `"tanh"`.
        recurrent_activation: Activation of the gru/lstm gates.
            Defaults to `"sigmoid"`.
        use_bias: Whether the layers have `bias_j`. Defaults to `True`.
        kernel_initializer: Initializer of `kernel_j` and `gate_kernel_j`.
            Defaults to `"glorot_uniform"`.
        recurrent_initializer: Initializer of `recurrent_kernel_j`,
            `feedback_kernel_j` and `gate_recurrent_kernel`.
            Defaults to `"orthogonal"`.
        bias_initializer: Initializer of `bias_j`. Defaults to `"zeros"`.
        unit_forget_bias: For lstm, start the forget gate bias at 1.
            Defaults to `True`.
        kernel_regularizer, recurrent_regularizer, bias_regularizer: Optional
            regularizers of the weights of the matching initializer.
        kernel_constraint, recurrent_constraint, bias_constraint: Optional
            constraints, likewise.
        dropout: Float in [0, 1), input dropout rate, one mask per sequence.
            Defaults to 0.
        recurrent_dropout: Float in [0, 1), dropout rate of `h*_{t-1}`, one
            mask per sequence. Defaults to 0.
        seed: Random seed for dropout.
        return_sequences: Whether to return the whole output sequence or only
            the last output. Defaults to `False`.
        return_state: Whether to return the final states after the output.
            Defaults to `False`.
        go_backwards: Process the sequence backwards. Defaults to `False`.
        stateful: Use the final states of batch `i` as the initial states of
            batch `i` in the next batch. Defaults to `False`.
        unroll: Unroll the time loop (short sequences only).
            Defaults to `False`.
        zero_output_for_mask: Output zeros, not the last output, at masked
            steps when `return_sequences`. Defaults to `False`.
        **kwargs: Standard layer keyword arguments, such as `name`, `dtype`
            and `activity_regularizer`.

    Call arguments:
        sequences: A 3D float tensor `(batch, timesteps, features)`.
        initial_state: Optional list of initial state tensors, in the cell's
            state order (`[h_0, ..., h_{L-1}]`, or `[h_0, c_0, h_1, c_1, ...]`
            for lstm).
        mask: Optional boolean tensor `(batch, timesteps)`; masked steps keep
            the previous states.
        training: Python boolean; dropout is active only when `True`.

    Returns:
        `(batch, output_size)`, or `(batch, timesteps, output_size)` with
        `return_sequences`, where `output_size` is the top layer's width
        (`output_mode="top"`) or the sum of all widths (`"all"`); followed by
        the final states with `return_state`.

    Example:

    >>> x = np.random.rand(4, 10, 8).astype("float32")
    >>> layer = kr.layers.GatedFeedbackRNN(
    ...     16, num_layers=3, cell_type="gru", return_sequences=True)
    >>> layer(x).shape
    TensorShape([4, 10, 16])
    >>> layer.gate_values(x).shape  # [batch, time, i, j]: g^{i→j}_t
    TensorShape([4, 10, 3, 3])

    Reference:
        - [Chung et al., 2015. Gated Feedback Recurrent Neural Networks](
          https://arxiv.org/abs/1502.02367)
    """

    def __init__(
        self,
        units,
        num_layers=None,
        cell_type="simple",
        feedback="gated",
        output_mode="top",
        activation="tanh",
        recurrent_activation="sigmoid",
        use_bias=True,
        kernel_initializer="glorot_uniform",
        recurrent_initializer="orthogonal",
        bias_initializer="zeros",
        unit_forget_bias=True,
        kernel_regularizer=None,
        recurrent_regularizer=None,
        bias_regularizer=None,
        kernel_constraint=None,
        recurrent_constraint=None,
        bias_constraint=None,
        dropout=0.0,
        recurrent_dropout=0.0,
        seed=None,
        return_sequences=False,
        return_state=False,
        go_backwards=False,
        stateful=False,
        unroll=False,
        zero_output_for_mask=False,
        **kwargs,
    ):
        super().__init__(
            GatedFeedbackCell,
            {
                "units": units,
                "num_layers": num_layers,
                "cell_type": cell_type,
                "feedback": feedback,
                "output_mode": output_mode,
                "activation": activation,
                "recurrent_activation": recurrent_activation,
                "use_bias": use_bias,
                "kernel_initializer": kernel_initializer,
                "recurrent_initializer": recurrent_initializer,
                "bias_initializer": bias_initializer,
                "unit_forget_bias": unit_forget_bias,
                "kernel_regularizer": kernel_regularizer,
                "recurrent_regularizer": recurrent_regularizer,
                "bias_regularizer": bias_regularizer,
                "kernel_constraint": kernel_constraint,
                "recurrent_constraint": recurrent_constraint,
                "bias_constraint": bias_constraint,
                "dropout": dropout,
                "recurrent_dropout": recurrent_dropout,
                "seed": seed,
            },
            return_sequences=return_sequences,
            return_state=return_state,
            go_backwards=go_backwards,
            stateful=stateful,
            unroll=unroll,
            zero_output_for_mask=zero_output_for_mask,
            **kwargs,
        )

    def inner_loop(self, sequences, initial_state, mask, training=False):
        if (
            mask is None
            or self.zero_output_for_mask
            or self.unroll
            or keras.backend.backend() != "jax"
        ):
            return super().inner_loop(
                sequences, initial_state, mask, training=training
            )
        # Keras' JAX scan fills masked steps with the first state, taken as
        # the previous output; ours is the top layer (or all layers). Run
        # with zeros there, then carry each sequence's last valid output.
        _, outputs, states = self._time_loop(
            sequences,
            initial_state,
            mask,
            training,
            zero_output_for_mask=True,
            return_sequences=True,
        )
        if self.go_backwards:
            mask = ops.flip(mask, axis=1)  # `outputs` are in loop order.
        outputs = _carry_last_valid(outputs, mask)
        return outputs[:, -1], outputs, states

    def gate_values(self, sequences, mask=None, initial_state=None):
        """The global reset gates `g^{i→j}_t` for a batch, without dropout.

        Runs the cell over `sequences` (backwards if `go_backwards`) from
        `initial_state` (zeros if `None`; a stateful layer's states are
        neither read nor changed).

        Args:
            sequences: Float tensor `(batch, timesteps, features)`.
            mask: Optional boolean tensor `(batch, timesteps)`; masked steps
                get gates 0.
            initial_state: Optional list of initial states.

        Returns:
            Tensor `(batch, timesteps, L, L)` in the input's time order;
            `[b, t, i, j]` is `g^{i→j}_t` (all ones for `feedback="fixed"`,
            the identity for `"none"`).
        """
        if not hasattr(sequences, "dtype"):
            sequences = ops.convert_to_tensor(sequences, self.compute_dtype)
        check_sequences(self, sequences, self._built_features, name="sequences")
        mask = check_mask(self, mask, sequences)
        sequences = ops.convert_to_tensor(sequences, self.compute_dtype)
        if not self.built:
            self.build(tuple(sequences.shape))
        if self.go_backwards:
            sequences = ops.flip(sequences, axis=1)
            if mask is not None:
                mask = ops.flip(ops.convert_to_tensor(mask), axis=1)
        gates = self.cell.gate_values(
            sequences, mask=mask, initial_state=initial_state
        )
        return ops.flip(gates, axis=1) if self.go_backwards else gates

    @property
    def num_layers(self):
        return self.cell.num_layers

    @property
    def cell_type(self):
        return self.cell.cell_type

    @property
    def feedback(self):
        return self.cell.feedback

    @property
    def output_mode(self):
        return self.cell.output_mode


def _carry_last_valid(outputs, mask):
    """`outputs[b, t]` replaced by `outputs[b, s]`, `s` the last step `<= t`
    that `mask` keeps (zeros before the first), as TensorFlow's loop does."""
    # A running maximum, without a scan over the time axis: jax2tf cannot
    # export an associative scan over an open number of steps. The kept
    # steps sorted first, in order (unique keys), and the count of kept
    # steps up to `t` picks the last of them.
    mask = ops.cast(mask, "bool")
    timesteps = ops.shape(mask)[1]
    steps = ops.arange(timesteps, dtype="int32")[None, :]
    kept_first = ops.argsort(ops.where(mask, steps, steps + timesteps), axis=1)
    kept = ops.cumsum(ops.cast(mask, "int32"), axis=1)
    latest = ops.where(
        kept > 0,
        ops.take_along_axis(kept_first, ops.maximum(kept - 1, 0), axis=1),
        -1,
    )
    carried = ops.take_along_axis(
        outputs, ops.maximum(latest, 0)[:, :, None], axis=1
    )
    return ops.where((latest >= 0)[:, :, None], carried, 0)
