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

    The bracketed peephole terms are present with `use_peepholes=True`
    (Greff et al.'s CIFG has them; TF1's `CoupledInputForgetGateLSTMCell`
    makes them optional, default off, as here).

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
            state. Defaults to `False`.
        activation, recurrent_activation, use_bias, kernel_initializer,
        recurrent_initializer, bias_initializer, peephole_initializer,
        projection_initializer, unit_forget_bias, kernel_regularizer,
        recurrent_regularizer, bias_regularizer, peephole_regularizer,
        projection_regularizer, kernel_constraint, recurrent_constraint,
        bias_constraint, peephole_constraint, projection_constraint, dropout,
        recurrent_dropout, cell_clip, projection_units, seed: As in
            `kr.layers.LSTMVariantCell`.
        **kwargs: Standard layer keyword arguments, such as `name` and `dtype`.

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

    def __init__(self, units, use_peepholes=False, **kwargs):
        if "variant" in kwargs:
            raise ValueError(
                "CoupledLSTMCell does not take `variant`; use "
                "kr.layers.LSTMVariantCell for other variants. "
                f"Received: variant={kwargs['variant']!r}"
            )
        super().__init__(
            units, variant="CIFG", use_peepholes=use_peepholes, **kwargs
        )

    def get_config(self):
        config = super().get_config()
        del config["variant"]
        return config
