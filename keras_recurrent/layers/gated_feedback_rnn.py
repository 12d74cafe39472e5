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

    The layer takes every argument of the cell, with the same defaults (see
    `kr.layers.GatedFeedbackCell` for each), and each is also a read-only
    property of the layer, as in `keras.layers.LSTM`: `layer.cell_type`,
    `layer.kernel_initializer`, ...

    Args:
        units: Positive integer (every layer's width) or a list of positive
            integers, one per layer.
        use_cudnn: Taken as `keras.layers.LSTM` takes it: `"auto"` (default)
            and `False` run the layer's loop; `True` raises a `ValueError`,
            as no fused (cuDNN) kernel computes the gated-feedback cell.
        implementation: Taken as `keras.layers.LSTM` takes it (`1` or
            `2`), passed to the cell, and changing nothing, as in Keras 3.
            Not in the config, as in Keras.
        **kwargs: The other arguments of `kr.layers.GatedFeedbackCell`
            (`num_layers`, `cell_type`, `feedback`, ...); the options of
            `keras.layers.RNN`, each `False` by default: `return_sequences`,
            `return_state`, `go_backwards`, `stateful`, `unroll` and
            `zero_output_for_mask`; and standard layer keyword arguments,
            such as `name`, `dtype` and `activity_regularizer`.

    Call arguments:
        sequences: A 3D tensor `(batch, timesteps, features)`; integer and
            boolean values are cast to the compute dtype, as
            `keras.layers.LSTM` casts them.
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

    cell_class = GatedFeedbackCell

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
        sequences = check_sequences(
            self,
            sequences,
            self._built_features,
            name="sequences",
            cast_integers=True,
        )
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


def _carry_last_valid(outputs, mask):
    """`outputs[b, t]` replaced by `outputs[b, s]`, `s` the last step `<= t`
    that `mask` keeps (zeros before the first), as TensorFlow's loop does."""
    # A running maximum, without a scan over the time axis (jax2tf cannot
    # export an associative scan over an open number of steps) and without
    # a sort or a scatter (LiteRT runs neither, so a SavedModel made on JAX
    # would not convert): pointer jumping. `latest[b, t]` starts at `t` if
    # the step is kept, else at `t - 1`; while it points at a step that is
    # not kept, it takes that step's pointer, which doubles the distance
    # covered: ceil(log2(longest masked run)) + 1 gathers.
    mask = ops.cast(mask, "bool")
    timesteps = ops.shape(mask)[1]
    steps = ops.arange(timesteps, dtype="int32")[None, :]
    latest = ops.where(mask, steps, steps - 1)

    def pending(latest):
        return ops.logical_and(
            latest >= 0,
            ops.logical_not(
                ops.take_along_axis(mask, ops.maximum(latest, 0), axis=1)
            ),
        )

    def jump(latest, waiting):
        jumped = ops.take_along_axis(latest, ops.maximum(latest, 0), axis=1)
        latest = ops.where(waiting, jumped, latest)
        return latest, pending(latest)

    latest, _ = ops.while_loop(
        lambda latest, waiting: ops.any(waiting),
        jump,
        (latest, pending(latest)),
    )
    carried = ops.take_along_axis(
        outputs, ops.maximum(latest, 0)[:, :, None], axis=1
    )
    return ops.where((latest >= 0)[:, :, None], carried, 0)
