"""Feed-forward (truncated) approximation of a recurrent layer."""

import keras
from keras import ops

from keras_recurrent._checks import check_bool
from keras_recurrent._checks import check_positive_int
from keras_recurrent._checks import invalid
from keras_recurrent.layers._known_rank import KnownRankInputs
from keras_recurrent.layers._masking import last_valid_step
from keras_recurrent.layers._masking import zero_masked_steps
from keras_recurrent.layers._sequence_checks import check_mask
from keras_recurrent.layers._sequence_checks import check_sequence_shape
from keras_recurrent.layers._sequence_checks import check_sequences
from keras_recurrent.layers._sequence_checks import refuse_traced_open_steps

# Settings of the wrapped layer that do not make sense per window.
_UNSUPPORTED_RNN_SETTINGS = (
    "return_sequences",
    "return_state",
    "go_backwards",
    "stateful",
)


@keras.saving.register_keras_serializable(package="keras_recurrent")
class TruncatedRNN(KnownRankInputs, keras.layers.Layer):
    """Runs a recurrent layer over the last `window` steps only.

    The truncated, feed-forward model of Miller & Hardt (2019): the output at
    step `t` is the wrapped RNN run from its zero initial state over the
    window of the last `k = window` inputs only,

    ```
    y_t = RNN(x_{t-k+1}, ..., x_t)        (x_s with s < 0 is absent)
    ```

    so nothing before `t - k + 1` can influence `y_t`. For a stable recurrent
    model (see `kr.constraints.SpectralNorm` and `kr.constraints.
    LSTMStability`) `y_t` differs from the full RNN output by a term that
    decays exponentially in `k`; for `k >= timesteps` the two are equal.

    All windows are computed in parallel: the layer gathers the `timesteps`
    windows of every sequence into one batch of shape
    `(batch * timesteps, window, features)`, runs the wrapped layer over it
    once, and reshapes the last outputs to `(batch, timesteps, units)`. This
    costs `window` times the work (and the windows `window` times the memory
    of the inputs) of the full RNN, but the time loop has only `window`
    steps, each one batched over all windows. Without `return_sequences`,
    only the window ending at the last valid step of each sequence is run.

    Steps before the start of the sequence and steps masked out by the input
    mask are skipped: each window's valid steps are moved to its front and the
    rest is masked, so the wrapped RNN runs exactly over the window's valid
    inputs, in order, and its last output is the one of the last valid step.
    (The mask of every window is then right-padded, which cuDNN kernels
    require.) A window without any valid step outputs zeros, like a Keras RNN
    over a fully masked sequence.

    Args:
        rnn_layer: A `keras.layers.RNN` instance (e.g. `keras.layers.LSTM`,
            `keras.layers.GRU`, `kr.layers.PeepholeLSTM`) with
            `return_sequences=False`, `return_state=False`,
            `go_backwards=False` and `stateful=False`. Its weights are those
            of this layer.
        window: Positive integer `k`, the number of most recent steps each
            output sees.
        return_sequences: Whether to return the outputs of all steps, or only
            that of the last valid (unmasked) step. Defaults to `False`.
        **kwargs: Standard layer keyword arguments, such as `name` and `dtype`.

    Call arguments:
        inputs: A 3D float tensor `(batch, timesteps, features)`.
        mask: Optional boolean tensor `(batch, timesteps)`; masked steps are
            skipped inside every window.
        training: Python boolean, passed on to the wrapped layer (dropout).

    Returns:
        `(batch, timesteps, units)` with `return_sequences`, else
        `(batch, units)`, where `units` is the output size of `rnn_layer`.

    Example:

    >>> x = np.random.rand(4, 10, 8).astype("float32")
    >>> layer = kr.layers.TruncatedRNN(
    ...     keras.layers.LSTM(16), window=3, return_sequences=True
    ... )
    >>> layer(x).shape
    TensorShape([4, 10, 16])
    >>> kr.layers.TruncatedRNN(kr.layers.PeepholeLSTM(16), window=3)(x).shape
    TensorShape([4, 16])

    Reference:
        - [Miller & Hardt, 2019. Stable Recurrent Models](
          https://arxiv.org/abs/1805.10369)
    """

    # The last-axis size and the number of steps the layer was built for
    # (`None` until built, or where open).
    _built_features = None
    _built_steps = None

    def __init__(self, rnn_layer, window, return_sequences=False, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(rnn_layer, keras.layers.RNN):
            raise invalid(
                "rnn_layer",
                rnn_layer,
                "a `keras.layers.RNN` instance, such as "
                "`keras.layers.LSTM(16)`",
            )
        for setting in _UNSUPPORTED_RNN_SETTINGS:
            if getattr(rnn_layer, setting):
                raise ValueError(
                    f"TruncatedRNN needs the wrapped layer's last output per "
                    f"window, so `rnn_layer` must have `{setting}=False` "
                    "(set `return_sequences` on TruncatedRNN instead). "
                    f"Received: rnn_layer.{setting}=True"
                )
        self.rnn_layer = rnn_layer
        self.window = check_positive_int("window", window)
        self.return_sequences = check_bool("return_sequences", return_sequences)
        self.supports_masking = True

    def build(self, input_shape):
        input_shape = check_sequence_shape(
            self, input_shape, known_features=True
        )
        self._built_features = input_shape[-1]
        self._built_steps = input_shape[1]
        if not self.rnn_layer.built:
            self.rnn_layer.build((None, self.window, input_shape[-1]))

    def _units(self, features):
        return self.rnn_layer.compute_output_shape(
            (None, self.window, features)
        )[-1]

    def compute_output_shape(self, input_shape):
        batch, timesteps, features = check_sequence_shape(self, input_shape)
        units = self._units(features)
        if self.return_sequences:
            return (batch, timesteps, units)
        return (batch, units)

    def compute_mask(self, inputs, mask=None):
        return mask if self.return_sequences else None

    def call(self, inputs, mask=None, training=None):
        check_sequences(self, inputs, self._built_features)
        mask = check_mask(self, mask, inputs)
        refuse_traced_open_steps(self, inputs, self._built_steps)
        # The wrapped RNN (Keras' own too) then never sees what is at a
        # masked step: NaN there would otherwise reach the gradients.
        inputs = zero_masked_steps(inputs, mask)
        window = self.window
        shape = ops.shape(inputs)
        batch, timesteps, features = shape[0], shape[1], inputs.shape[-1]
        if mask is None:
            mask = ops.ones((batch, timesteps), dtype="bool")
        steps = ops.arange(timesteps, dtype="int32")

        # `ends[b, n]`: the step at which window `n` of sequence `b` ends.
        if self.return_sequences:
            ends = ops.broadcast_to(steps[None, :], (batch, timesteps))
        else:
            ends = last_valid_step(mask)

        # `window` padding steps in front: step `s` sits at `s + window`, and
        # the window ending at `e` covers `e + 1, ..., e + window`.
        padded_inputs = ops.pad(inputs, [[0, 0], [window, 0], [0, 0]])
        padded_mask = ops.concatenate(
            [ops.zeros((batch, window), dtype="bool"), mask], axis=1
        )
        offsets = ops.arange(1, window + 1, dtype="int32")
        index = ends[:, :, None] + offsets  # (batch, windows, window)
        num_windows = ops.shape(index)[1]
        window_mask = ops.reshape(
            ops.take_along_axis(
                padded_mask, ops.reshape(index, (batch, -1)), axis=1
            ),
            (batch, num_windows, window),
        )

        # Move each window's valid steps to its front, in order, so that its
        # mask becomes right-padded: the RNN then runs over the valid steps
        # from its zero state, and cuDNN kernels accept the mask.
        positions = ops.arange(window, dtype="int32")
        sort_key = ops.where(window_mask, 0, window) + positions
        order = ops.argsort(sort_key, axis=-1)
        index = ops.take_along_axis(index, order, axis=-1)
        num_valid = ops.sum(ops.cast(window_mask, "int32"), axis=-1)
        has_valid = num_valid > 0
        # A fully masked window is run over one ignored step (cuDNN rejects
        # fully masked sequences), and its output is zeroed below.
        window_mask = ops.logical_or(
            positions < num_valid[:, :, None],
            ops.logical_and(
                positions == 0, ops.logical_not(has_valid)[:, :, None]
            ),
        )

        windows = ops.take_along_axis(
            padded_inputs, ops.reshape(index, (batch, -1))[:, :, None], axis=1
        )
        outputs = self.rnn_layer(
            ops.reshape(windows, (-1, window, features)),
            mask=ops.reshape(window_mask, (-1, window)),
            training=training,
        )
        outputs = ops.reshape(
            outputs, (batch, num_windows, self._units(features))
        )
        outputs = ops.where(has_valid[:, :, None], outputs, 0.0)
        if self.return_sequences:
            return outputs
        return outputs[:, 0]

    def get_config(self):
        config = {
            "rnn_layer": keras.saving.serialize_keras_object(self.rnn_layer),
            "window": self.window,
            "return_sequences": self.return_sequences,
        }
        base_config = super().get_config()
        return {**base_config, **config}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        if "rnn_layer" not in config:
            raise ValueError(
                "TruncatedRNN.from_config needs the wrapped layer under the "
                "key `rnn_layer` (a serialized `keras.layers.RNN`, as "
                "`get_config` writes it). Received: config keys="
                f"{sorted(config)}"
            )
        config["rnn_layer"] = keras.saving.deserialize_keras_object(
            config["rnn_layer"]
        )
        return cls(**config)
