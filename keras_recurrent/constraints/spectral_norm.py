"""Projection onto the spectral-norm ball: the stability condition of RNNs."""

import keras
from keras import ops


def _check_unit_interval(name, value):
    """Checks `0 < value < 1` and returns `value` as a float."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(
            f"Argument `{name}` must be a float in (0, 1). "
            f"Received: {name}={value!r}"
        )
    if not 0.0 < value < 1.0:
        raise ValueError(
            f"Argument `{name}` must be in (0, 1) for the recurrence to be "
            f"stable (contractive). Received: {name}={value!r}"
        )
    return float(value)


@keras.saving.register_keras_serializable(package="keras_recurrent")
class SpectralNorm(keras.constraints.Constraint):
    """Keeps a recurrent kernel's spectral norm at most `max_norm < 1`.

    A recurrent network `h_t = tanh(h_{t-1} W + x_t U + b)` is stable in the
    sense of Miller & Hardt (2019, Section 2.2) when its state-transition map
    is a contraction in `h`: since `tanh` is 1-Lipschitz, this holds when

    ```
    ||W||_2 = σ_max(W) <= λ < 1
    ```

    (for an `L`-Lipschitz activation, `L ||W||_2 < 1`). Stable models forget
    their past exponentially fast, which is what makes them well approximated
    by the truncated model `kr.layers.TruncatedRNN`.

    As in the paper, training keeps the condition by projected gradient
    descent: Keras applies a weight's constraint after every optimizer
    update, and this constraint maps `W` to the nearest matrix (in Frobenius
    norm) of the ball `||W||_2 <= λ`, by clipping its singular values:

    ```
    W = U diag(σ) V^T   ->   U diag(min(σ, λ)) V^T
    ```

    A matrix already inside the ball is returned unchanged. The SVD costs
    `O(n^3)` per update for an `n x n` kernel. Keras does not apply
    constraints to the initial weights: the condition holds from the first
    update on (under `"mixed_float16"` the loss scale optimizer may skip
    the first steps, constraint included). Call
    `kr.constraints.constrain_weights(model)` once the model is built, or
    initialize inside the ball, e.g. with
    `keras.initializers.Orthogonal(gain=λ)`.

    Use it as the `recurrent_constraint` of `keras.layers.SimpleRNN` (its
    `recurrent_kernel` is `W`, `(units, units)`). For an LSTM, whose
    recurrent kernel holds four gate blocks, use
    `kr.constraints.LSTMStability`.

    Args:
        max_norm: Float `λ` in `(0, 1)`, the largest singular value allowed.
            Values of 1 or more do not make the recurrence contractive and
            raise a `ValueError`.

    Call arguments:
        w: A 2D weight tensor (any shape `(m, n)`).

    Returns:
        The projected tensor, of the same shape and dtype as `w`.

    Example:

    >>> layer = keras.layers.SimpleRNN(
    ...     32, recurrent_constraint=kr.constraints.SpectralNorm(0.95)
    ... )
    >>> w = np.random.normal(size=(32, 32)).astype("float32")
    >>> projected = kr.constraints.SpectralNorm(0.95)(w)
    >>> round(float(np.linalg.norm(projected, ord=2)), 4)
    0.95

    Reference:
        - [Miller & Hardt, 2019. Stable Recurrent Models](
          https://arxiv.org/abs/1805.10369)
    """

    def __init__(self, max_norm):
        self.max_norm = _check_unit_interval("max_norm", max_norm)

    def __call__(self, w):
        w = ops.convert_to_tensor(w)
        if len(w.shape) != 2:
            raise ValueError(
                "SpectralNorm applies to 2D kernels. "
                f"Received: w.shape={tuple(w.shape)}"
            )
        u, singular_values, v_transposed = ops.svd(w, full_matrices=False)
        max_norm = ops.cast(self.max_norm, w.dtype)
        projected = ops.matmul(
            u * ops.minimum(singular_values, max_norm)[None, :], v_transposed
        )
        return ops.where(ops.max(singular_values) > max_norm, projected, w)

    def get_config(self):
        return {"max_norm": self.max_norm}
