"""Mask-exact sequence-to-vector readouts: last step, mean, max, attention."""

import keras
from keras import constraints
from keras import initializers
from keras import ops
from keras import regularizers

from keras_recurrent._checks import check_bool
from keras_recurrent._checks import check_option
from keras_recurrent._checks import check_positive_int
from keras_recurrent.layers._initializers import serialize_weight_options
from keras_recurrent.layers._known_rank import KnownRankInputs
from keras_recurrent.layers._masking import last_valid_step
from keras_recurrent.layers._sequence_checks import check_mask
from keras_recurrent.layers._sequence_checks import check_sequence_shape
from keras_recurrent.layers._sequence_checks import check_sequences

MODES = ("last", "mean", "max", "attention")

# Masked scores before the softmax. The softmax runs in float32 (see `call`),
# so this is far below any real score yet finite: a fully masked row gives a
# uniform softmax, not 0/0, and no NaN reaches the gradient.
_MASKED_SCORE = -1e9


@keras.saving.register_keras_serializable(package="keras_recurrent")
class SequencePooling(KnownRankInputs, keras.layers.Layer):
    """Pools a masked sequence `(batch, timesteps, features)` into one vector.

    `SequencePooling()` without a `mode` takes the last valid step
    (`mode="last"`), the vector a `keras.layers.LSTM` returns without
    `return_sequences`; pass `"mean"`, `"max"` or `"attention"` for the
    others. Padding never affects the result: the values at masked steps
    are replaced before any arithmetic, so they may be anything (even `inf`
    or `NaN`). With `m_t` the mask and `h_t` the input at step `t`:

    ```
    last:       y = h_T*,            T* = max{t : m_t}  (the last valid step,
                                     not the last index; holes are skipped)
    mean:       y = Σ_t m_t h_t / Σ_t m_t
    max:        y = max_{t : m_t} h_t          (feature-wise)
    attention:  s_t = v^T tanh(h_t W + b)
                a_t = exp(s_t) m_t / Σ_u exp(s_u) m_u
                y = Σ_t a_t h_t
    ```

    `attention` is the attention pooling of Yang et al. (2016), with the
    additive (Bahdanau-style) score and a learned context vector `v`. Its
    weights are `kernel` `(features, attention_units)`, `bias`
    `(attention_units,)` and `context_vector` `(attention_units,)`; the other
    modes have no weights.

    A sequence with no valid step (a fully masked row) pools to zeros in every
    mode, and its attention weights are all zero. Without a mask every step is
    valid.

    Under mixed precision, the mean is summed and the attention softmax is
    computed in float32 before casting back to the compute dtype, so long
    sequences cannot overflow float16 and the masking constant stays finite.

    Args:
        mode: `"last"`, `"mean"`, `"max"` or `"attention"`
            (case-insensitive). Defaults to `"last"`: the output at the last
            valid step of each row.
        return_attention_scores: If `True` (`mode="attention"` only), also
            return the attention weights `a_t` (after the softmax).
            Defaults to `False`.
        attention_units: Positive integer, width of the attention's hidden
            layer `W`. `None` (default) uses the input's `features`.
        kernel_initializer: Initializer for `kernel`.
            Defaults to `"glorot_uniform"`.
        bias_initializer: Initializer for `bias`. Defaults to `"zeros"`.
        context_initializer: Initializer for `context_vector`.
            Defaults to `"glorot_uniform"`.
        kernel_regularizer, bias_regularizer, context_regularizer: Optional
            regularizers of the corresponding attention weights.
        kernel_constraint, bias_constraint, context_constraint: Optional
            constraints of the corresponding attention weights.
        **kwargs: Standard layer keyword arguments, such as `name` and `dtype`.

    Call arguments:
        inputs: A 3D float tensor `(batch, timesteps, features)`.
        mask: Optional boolean tensor `(batch, timesteps)`; `True` marks the
            valid steps. Picked up from a `Masking` or `Embedding(...,
            mask_zero=True)` layer upstream.

    Returns:
        The pooled tensor `(batch, features)`; with `return_attention_scores`,
        the tuple `(pooled, weights)` with `weights` `(batch, timesteps)`,
        which sum to 1 over the valid steps of a row and are 0 on padding.
        The output carries no mask.

    Example:

    >>> x = np.random.rand(4, 10, 8).astype("float32")
    >>> mask = np.arange(10) < np.array([[10], [7], [3], [1]])
    >>> kr.layers.SequencePooling("max")(x, mask=mask).shape
    TensorShape([4, 8])
    >>> last = kr.layers.SequencePooling()(x, mask=mask)  # mode="last"
    >>> np.allclose(last[2], x[2, 2])  # row 2 has 3 valid steps
    True
    >>> pooling = kr.layers.SequencePooling(
    ...     "attention", return_attention_scores=True
    ... )
    >>> pooled, weights = pooling(x, mask=mask)
    >>> pooled.shape, weights.shape
    (TensorShape([4, 8]), TensorShape([4, 10]))

    Reference:
        - [Yang et al., 2016. Hierarchical Attention Networks for Document
          Classification](https://aclanthology.org/N16-1174)
        - [Bahdanau et al., 2015. Neural Machine Translation by Jointly
          Learning to Align and Translate](https://arxiv.org/abs/1409.0473)
    """

    def __init__(
        self,
        mode="last",
        return_attention_scores=False,
        attention_units=None,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        context_initializer="glorot_uniform",
        kernel_regularizer=None,
        bias_regularizer=None,
        context_regularizer=None,
        kernel_constraint=None,
        bias_constraint=None,
        context_constraint=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.mode = check_option("mode", mode, MODES)
        self.return_attention_scores = check_bool(
            "return_attention_scores", return_attention_scores
        )
        if self.return_attention_scores and self.mode != "attention":
            raise ValueError(
                "Argument `return_attention_scores` needs "
                "`mode='attention'`. Received: return_attention_scores="
                f"{return_attention_scores!r}, mode={self.mode!r}"
            )
        self.attention_units = check_positive_int(
            "attention_units", attention_units, allow_none=True
        )
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.context_initializer = initializers.get(context_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.context_regularizer = regularizers.get(context_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.bias_constraint = constraints.get(bias_constraint)
        self.context_constraint = constraints.get(context_constraint)
        self.supports_masking = True

    def build(self, input_shape):
        attention = self.mode == "attention"
        input_shape = check_sequence_shape(
            self,
            input_shape,
            known_features=attention,
            context="for mode='attention'",
        )
        if not attention:
            return
        features = input_shape[-1]
        units = self.attention_units or features
        self.kernel = self.add_weight(
            shape=(features, units),
            name="kernel",
            initializer=self.kernel_initializer,
            regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint,
        )
        self.bias = self.add_weight(
            shape=(units,),
            name="bias",
            initializer=self.bias_initializer,
            regularizer=self.bias_regularizer,
            constraint=self.bias_constraint,
        )
        self.context_vector = self.add_weight(
            shape=(units,),
            name="context_vector",
            initializer=self.context_initializer,
            regularizer=self.context_regularizer,
            constraint=self.context_constraint,
        )

    def call(self, inputs, mask=None):
        features = self.kernel.shape[0] if self.mode == "attention" else None
        check_sequences(self, inputs, features)
        mask = check_mask(self, mask, inputs)
        if mask is None:
            mask = ops.ones(ops.shape(inputs)[:2], dtype="bool")
        else:
            mask = ops.convert_to_tensor(mask)
        valid = ops.expand_dims(mask, -1)
        # Zeroed, not multiplied by the mask: 0 * inf would be NaN.
        clean = ops.where(valid, inputs, ops.zeros_like(inputs))
        has_valid = ops.any(mask, axis=1, keepdims=True)

        if self.mode == "last":
            steps = ops.arange(ops.shape(inputs)[1], dtype="int32")
            steps = ops.expand_dims(steps, 0)
            # -1 for a fully masked row, which then matches no step.
            last = last_valid_step(mask)
            is_last = ops.expand_dims(ops.equal(steps, last), -1)
            return ops.sum(ops.where(is_last, clean, 0), axis=1)

        if self.mode == "mean":
            total = ops.sum(ops.cast(clean, "float32"), axis=1)
            count = ops.sum(ops.cast(mask, "float32"), axis=1, keepdims=True)
            mean = total / ops.maximum(count, 1.0)
            return ops.cast(mean, self.compute_dtype)

        if self.mode == "max":
            # A scalar -inf, not a filled tensor: tf2onnx writes a select
            # whose operands are no infinite constant as `c * x + (1 - c) *
            # y`, and `0 * -inf` is NaN.
            maximum = max_over_time(ops.where(valid, inputs, float("-inf")))
            return ops.where(has_valid, maximum, ops.zeros_like(maximum))

        hidden = ops.tanh(ops.matmul(clean, self.kernel) + self.bias)
        scores = ops.cast(
            ops.sum(hidden * self.context_vector, axis=-1), "float32"
        )
        scores = ops.where(mask, scores, _MASKED_SCORE)
        weights = ops.softmax(scores, axis=-1)
        weights = ops.where(mask, weights, 0.0)
        weights = ops.cast(weights, self.compute_dtype)
        pooled = ops.sum(ops.expand_dims(weights, -1) * clean, axis=1)
        if self.return_attention_scores:
            return pooled, weights
        return pooled

    def compute_mask(self, inputs, mask=None):
        return None

    def compute_output_shape(self, input_shape):
        input_shape = check_sequence_shape(self, input_shape)
        pooled_shape = (input_shape[0], input_shape[2])
        if self.return_attention_scores:
            return pooled_shape, (input_shape[0], input_shape[1])
        return pooled_shape

    def get_config(self):
        config = {
            "mode": self.mode,
            "return_attention_scores": self.return_attention_scores,
            "attention_units": self.attention_units,
        }
        config.update(
            serialize_weight_options(self, ("kernel", "bias", "context"))
        )
        base_config = super().get_config()
        return {**base_config, **config}


def max_over_time(values, axis=1):
    """`ops.max(values, axis)` that also takes a batch of 0 eagerly."""
    best = ops.expand_dims(ops.argmax(values, axis=axis), axis)
    return ops.squeeze(ops.take_along_axis(values, best, axis=axis), axis)
