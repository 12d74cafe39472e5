"""The gate maths of the package, each update written once.

The LSTM cell-state and output updates and the GRU update, in `keras.ops`.
The sequence cells, the gated-feedback units, the tree cells and the graph
update all compute their steps with these functions; they differ only in
how they form the pre-activations (peepholes, feedback, child sums).

A gate given as `None` is absent and counts as 1 (Greff et al.'s NIG, NFG
and NOG variants; the tree leaves, which have no forget gate to apply).
"""

import keras
from keras import ops


def lstm_cell_state(input_gate, candidate, forget_gate, previous_cell):
    """The new LSTM cell state, `c_t = f ⊙ c_{t-1} + i ⊙ g`.

    With a child axis (trees), `forget_gate` and `previous_cell` are
    `(M, K, units)` and the retained memory is summed over the children,
    `c = i ⊙ g + Σ_k f_k ⊙ c_k` (Tai et al. 2015).

    Args:
        input_gate: `i`, `(M, units)`, or `None` for no input gate.
        candidate: `g`, `(M, units)`, the activated cell input.
        forget_gate: `f`, `(M, units)` or `(M, K, units)`, or `None` for no
            forget gate.
        previous_cell: `c_{t-1}`, `(M, units)` or `(M, K, units)`, or
            `None` for a cell with nothing to retain (a leaf).

    Returns:
        The new cell state, `(M, units)`.
    """
    new_memory = candidate if input_gate is None else input_gate * candidate
    if previous_cell is None:
        return new_memory
    retained = (
        previous_cell if forget_gate is None else forget_gate * previous_cell
    )
    if len(retained.shape) > len(new_memory.shape):
        retained = ops.sum(retained, axis=-2)
    return new_memory + retained


def lstm_output(output_gate, cell, activation):
    """The LSTM output, `h_t = o ⊙ act(c_t)`.

    Args:
        output_gate: `o`, `(M, units)`, or `None` for no output gate.
        cell: `c_t`, `(M, units)`.
        activation: The output activation, or `None` for none (Greff et
            al.'s NOAF).

    Returns:
        `h_t`, `(M, units)`.
    """
    h = cell if activation is None else activation(cell)
    return h if output_gate is None else output_gate * h


def lstm_step(
    z_input,
    z_forget,
    z_candidate,
    z_output,
    previous_cell,
    activation,
    recurrent_activation,
):
    """One plain LSTM update from the four pre-activations.

    `i = σ(z_i)`, `f = σ(z_f)`, `g = act(z_g)`, `o = σ(z_o)`, then
    `lstm_cell_state` and `lstm_output`; `z_forget` may be `None` with
    `previous_cell` `None` (a leaf), or be `(M, K, units)` with a child axis.

    Returns:
        The tuple `(h_t, c_t)`.
    """
    forget_gate = None if z_forget is None else recurrent_activation(z_forget)
    cell = lstm_cell_state(
        recurrent_activation(z_input),
        activation(z_candidate),
        forget_gate,
        previous_cell,
    )
    return lstm_output(recurrent_activation(z_output), cell, activation), cell


def gru_step(
    z_update,
    z_reset,
    candidate_input,
    candidate_recurrent,
    previous_h,
    activation,
    recurrent_activation,
):
    """One GRU update (Cho et al. 2014, Keras' `GRUCell` conventions).

    ```
    z  = σ(z_update)                 r = σ(z_reset)
    h̃ = act(candidate_input + r ⊙ candidate_recurrent)
    h  = z ⊙ h_{t-1} + (1 - z) ⊙ h̃
    ```

    `candidate_recurrent` is `h_{t-1} U_h (+ b)` for Keras' `reset_after=True`
    (and the gated-feedback term for GF-RNN's GRU). For `reset_after=False`,
    where the reset gate scales `h_{t-1}` before the product, pass a function
    of the reset gate `r` that returns `(r ⊙ h_{t-1}) U_h`; it is then added
    as it is.

    Returns:
        `h_t`.
    """
    update = recurrent_activation(z_update)
    reset = recurrent_activation(z_reset)
    if callable(candidate_recurrent):
        recurrent_term = candidate_recurrent(reset)
    else:
        recurrent_term = reset * candidate_recurrent
    candidate = activation(candidate_input + recurrent_term)
    # `z h + (1 - z) h̃`, in three ops instead of four (it is on the hot
    # path of every GRU step of the package).
    return candidate + update * (previous_h - candidate)


def layer_norm(z, gamma, beta, epsilon):
    """Layer normalization over the last axis (Ba et al. 2016),
    `γ ⊙ (z - μ) / √(σ² + ε) + β`, computed in at least float32.

    `σ² = E[z²] - μ²` (clamped at 0), so that the two means are independent
    reductions, and the gradient is written out (`ẑ = (z - μ) / √(σ² + ε)`,
    `g = γ ⊙ dy`: `dz = (g - mean(g) - ẑ mean(g ⊙ ẑ)) / √(σ² + ε)`, `dγ =
    Σ_M dy ⊙ ẑ`), so that a time loop keeps two tensors per step for it
    instead of every intermediate. On TensorFlow's CPU loop, the two and
    leaving the shifts to the caller (`beta=None`, to add them once,
    summed: `LayerNormLSTMCell`) brought `LayerNormLSTM`'s train step from
    2.65 to about 1.1 to 1.2 times `keras.layers.LSTM`'s, from
    `ops.layer_normalization` (benchmarks/lstm_variants.py).

    Args:
        z: `(M, units)`.
        gamma: `(units,)`.
        beta: `(units,)`, or `None` for no shift.
        epsilon: Python float added to the variance.

    Returns:
        The normalized `z`, in its dtype.
    """
    dtype = z.dtype
    if keras.backend.standardize_dtype(dtype) in ("float16", "bfloat16"):
        z = ops.cast(z, "float32")
        gamma = ops.cast(gamma, "float32")
        beta = None if beta is None else ops.cast(beta, "float32")
    normalized = _scaled_normalization(epsilon)(z, gamma)
    if beta is not None:
        normalized = normalized + beta
    return ops.cast(normalized, dtype)


def _scaled_normalization(epsilon):
    """`(z, γ) -> γ ⊙ ẑ`, with its gradient (see `layer_norm`)."""

    @ops.custom_gradient
    def scaled_normalization(z, gamma):
        mean = ops.mean(z, axis=-1, keepdims=True)
        mean_square = ops.mean(ops.square(z), axis=-1, keepdims=True)
        variance = ops.relu(mean_square - ops.square(mean))
        inverse = ops.rsqrt(variance + epsilon)
        normalized = (z - mean) * inverse

        # Keras' portable form: `upstream` is a keyword on PyTorch only.
        def grad(*args, upstream=None):
            if upstream is None:
                (upstream,) = args
            scaled = upstream * gamma
            mean_scaled = ops.mean(scaled, axis=-1, keepdims=True)
            projection = ops.mean(scaled * normalized, axis=-1, keepdims=True)
            d_z = inverse * (scaled - mean_scaled - normalized * projection)
            d_gamma = ops.sum(upstream * normalized, axis=0)
            return d_z, d_gamma

        return normalized * gamma, grad

    return scaled_normalization
