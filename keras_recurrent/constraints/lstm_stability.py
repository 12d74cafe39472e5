"""The sufficient stability condition of Miller & Hardt (2019) for LSTMs."""

import keras
from keras import ops

from keras_recurrent._checks import check_rate
from keras_recurrent.constraints.spectral_norm import _check_unit_interval

_GATES = ("i", "f", "c", "o")


@keras.saving.register_keras_serializable(package="keras_recurrent")
class LSTMStability(keras.constraints.Constraint):
    """Keeps an LSTM's recurrent kernel inside the LSTM stability region.

    For the LSTM (in the paper's notation, column vectors, no peepholes)

    ```
    f_t = σ(W_f h_{t-1} + U_f x_t)      i_t = σ(W_i h_{t-1} + U_i x_t)
    o_t = σ(W_o h_{t-1} + U_o x_t)      z_t = tanh(W_z h_{t-1} + U_z x_t)
    c_t = i_t ⊙ z_t + f_t ⊙ c_{t-1}     h_t = o_t ⊙ tanh(c_t)
    ```

    Proposition 2 of Miller & Hardt (2019) gives a sufficient condition for
    stability in the infinity norm. With `λ = sup_t ||f_t||_∞ < 1`, the
    largest forget gate activation, the LSTM is stable if

    ```
    ||W_i||_∞ < 1 - λ,    ||W_f||_∞ < (1 - λ)^2,
    ||W_z||_∞ < (1 - λ) / 4,    ||W_o||_∞ < 1 - λ,
    ```

    where `||W||_∞ = max_r Σ_s |W_rs|` is the largest absolute row sum.
    (Why: with `σ' <= 1/4`, `|tanh'| <= 1` and `||c_t||_∞ <= 1 / (1 - λ)`,
    one step changes `(c, h)` by at most `λ + ||W_i||/4 + ||W_z|| +
    ||W_f|| / (4 (1 - λ)) + ||W_o||/4` times the change of `(c, h)` in the
    infinity norm; the four bounds give each of the four terms less than
    `(1 - λ) / 4`, so the factor is below 1.)

    This constraint enforces the four bounds, shrunk by `1 - margin` so that
    they hold strictly, on a recurrent kernel in Keras' layout: shape
    `(units, 4 * units)` with gate blocks `[i, f, c, o]` (`c` is the paper's
    `z`), applied as `h_{t-1} @ kernel`, so the paper's `W_g` is the
    transpose of block `g` and its row sums are the block's *column* sums.
    Every column whose absolute sum exceeds its block's bound is rescaled to
    the bound, which keeps its direction (this maps onto the stable set; it
    is not the Euclidean nearest point, which would soft-threshold the
    column); a kernel inside the region is returned unchanged. Keras applies
    the constraint after every optimizer update, so training stays in the
    stable set after every step (not before the first one: Keras does not
    constrain the initial weights, and under `"mixed_float16"` the loss
    scale optimizer skips the first steps, constraint included, while its
    scaled gradients overflow; call `kr.constraints.constrain_weights(model)`
    once the model is built to start inside the region).

    Use it as the `recurrent_constraint` of `keras.layers.LSTM` or of
    `kr.layers.LSTMVariant(variant="NP")`, the LSTM the proposition is
    about. It applies as well to every recurrent kernel with the same
    `[i, f, c, o]` layout, such as that of `kr.layers.PeepholeLSTM` and of
    variants `"V"`, `"NIAF"` and `"NOAF"`, but there the guarantee does not
    carry over as stated: peepholes add `p ⊙ c` terms to the gates, `"NIAF"`
    drops the `tanh` that bounds the cell input and `"NOAF"` the one that
    bounds `h`. With `projection_units` (kernel `(projection_units,
    4 * units)`) the projection must not expand distances either. Variants
    with fewer gate blocks, and `"FGR"`, whose `gate_recurrent_kernel` shares
    `recurrent_constraint`, are not covered.

    `λ` is an assumption, not something a recurrent-kernel constraint can
    enforce: the forget gate also depends on the input kernel and the bias.
    It holds when the forget gate's pre-activation is at most
    `log(λ / (1 - λ))`, e.g. when `||W_f||_∞ + ||U_f||_∞ ||x_t||_∞ + max b_f`
    is (the paper's LSTM has no bias). Note that Keras' default
    `unit_forget_bias=True` starts `b_f` at 1, so forget gates start near
    `σ(1) ≈ 0.73`; pick `λ` accordingly, or start from `unit_forget_bias=
    False`.

    Args:
        max_forget_gate: Float `λ` in `(0, 1)`, the assumed bound on the
            forget gate activations, `sup_t ||f_t||_∞`. Smaller values give
            looser bounds on the recurrent kernel but require smaller forget
            gates.
        margin: Float in `[0, 1)`; every bound is multiplied by
            `1 - margin` so that the inequalities hold strictly. Defaults to
            `0.01`. With 0 the bounds hold with `<=`.

    Call arguments:
        w: A recurrent kernel of shape `(state_dim, 4 * units)`.

    Returns:
        The projected kernel, of the same shape and dtype as `w`.

    Example:

    >>> constraint = kr.constraints.LSTMStability(max_forget_gate=0.6)
    >>> layer = keras.layers.LSTM(32, recurrent_constraint=constraint)
    >>> {gate: round(bound, 4) for gate, bound in
    ...  constraint.gate_bounds.items()}
    {'i': 0.396, 'f': 0.1584, 'c': 0.099, 'o': 0.396}
    >>> w = np.random.normal(size=(32, 128)).astype("float32")
    >>> f_block = np.asarray(constraint(w))[:, 32:64]  # the paper's W_f^T
    >>> round(float(np.abs(f_block).sum(axis=0).max()), 4)
    0.1584

    Reference:
        - [Miller & Hardt, 2019. Stable Recurrent Models](
          https://arxiv.org/abs/1805.10369), Proposition 2.
    """

    def __init__(self, max_forget_gate, margin=0.01):
        self.max_forget_gate = _check_unit_interval(
            "max_forget_gate", max_forget_gate
        )
        self.margin = check_rate("margin", margin)

    @property
    def gate_bounds(self):
        """`{gate: bound}`, the bound on `||W_gate||_∞` for gates i, f, c, o."""
        slack = 1.0 - self.margin
        gap = 1.0 - self.max_forget_gate
        return {
            "i": slack * gap,
            "f": slack * gap**2,
            "c": slack * gap / 4.0,
            "o": slack * gap,
        }

    def __call__(self, w):
        w = ops.convert_to_tensor(w)
        shape = tuple(w.shape)
        if len(shape) != 2 or shape[-1] is None or shape[-1] % 4:
            raise ValueError(
                "LSTMStability applies to LSTM recurrent kernels of shape "
                "(state_dim, 4 * units) with gate blocks [i, f, c, o]. "
                f"Received: w.shape={shape}"
            )
        tiny = ops.cast(1e-12, w.dtype)
        blocks = []
        for block, gate in zip(ops.split(w, 4, axis=-1), _GATES):
            bound = ops.cast(self.gate_bounds[gate], w.dtype)
            # Column j of the Keras block is row j of the paper's W_gate.
            row_sums = ops.sum(ops.abs(block), axis=0, keepdims=True)
            scale = ops.minimum(1.0, bound / ops.maximum(row_sums, tiny))
            blocks.append(block * scale)
        return ops.concatenate(blocks, axis=-1)

    def get_config(self):
        return {"max_forget_gate": self.max_forget_gate, "margin": self.margin}
