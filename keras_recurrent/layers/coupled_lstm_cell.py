"""Coupled input-forget gate LSTM cell (CIFG)."""

import keras

from keras_recurrent.layers.lstm_variant_cell import LSTMVariantCell


@keras.saving.register_keras_serializable(package="keras_recurrent")
class CoupledLSTMCell(LSTMVariantCell):
    """Cell class for the coupled input-forget gate LSTM (CIFG).

    The input gate is tied to the forget gate, `i = 1 - f`, which saves a
    quarter of the weights and of the matmul work (Greff et al. 2017 found it
    costs no accuracy):

    ```
    f = σ(x W_f + h_{t-1} U_f [+ p_f ⊙ c_{t-1}] + b_f)
    c_t = f ⊙ c_{t-1} + (1 - f) ⊙ tanh(x W_c + h_{t-1} U_c + b_c)
    o = σ(x W_o + h_{t-1} U_o [+ p_o ⊙ c_t] + b_o)
    h_t = o ⊙ tanh(c_t)
    ```

    This is Greff et al.'s CIFG: their vanilla LSTM, peepholes included,
    with coupled input and forget gates, the same cell as
    `kr.layers.LSTMVariantCell(units, variant="CIFG")`. The bracketed
    peephole terms go with `use_peepholes=False` (the default of TF1's
    `CoupledInputForgetGateLSTMCell`), a cell with fewer weights and less
    work per step.

    Weights, for porting in and out (gate blocks `[f, c, o]`):

    - `kernel`: `(input_dim, 3 * units)`.
    - `recurrent_kernel`: `(state_dim, 3 * units)`; `state_dim` is
      `projection_units` if set, else `units`.
    - `bias`: `(3 * units,)`; the forget block starts at 1 with
      `unit_forget_bias` (default), so the cell starts remembering.
    - `forget_gate_peephole_weights` (reads `c_{t-1}`) and
      `output_gate_peephole_weights` (reads `c_t`): `(units,)` each, with
      `use_peepholes`.
    - `projection_kernel`: `(units, projection_units)`, with `projection_units`.

    States are `[h, c]`.

    Args:
        units: Positive integer, dimensionality of the cell state.
        use_peepholes: Whether the forget and output gates read the cell
            state. Defaults to `True` (Greff et al.'s CIFG); `False` drops the
            peephole weights and is faster.
        **kwargs: The other arguments of `kr.layers.LSTMVariantCell`, with
            the same defaults (all but `variant`, which this cell sets itself
            and refuses), and standard layer keyword arguments, such as
            `name` and `dtype`.

    Call arguments:
        inputs: A 2D tensor `(batch, input_dim)`.
        states: List `[h, c]` of the previous states.
        training: Python boolean; dropout is active only when `True`.

    Returns:
        A tuple `(h_t, [h_t, c_t])`.

    Example:

    >>> x = np.random.rand(4, 10, 8).astype("float32")
    >>> cell = kr.layers.CoupledLSTMCell(16)
    >>> keras.layers.RNN(cell)(x).shape
    TensorShape([4, 16])
    >>> cell.kernel.shape  # blocks [f, c, o]
    TensorShape([8, 48])

    Reference:
        - [Greff et al., 2017. LSTM: A Search Space Odyssey](
          https://arxiv.org/abs/1503.04069)
    """

    _fixed_arguments = {"variant": "CIFG"}

    def __init__(self, units, use_peepholes=True, **kwargs):
        super().__init__(
            units,
            use_peepholes=use_peepholes,
            **self._with_fixed_arguments(kwargs),
        )
