"""Coupled input-forget gate LSTM layer (CIFG)."""

import keras

from keras_recurrent.layers.coupled_lstm_cell import CoupledLSTMCell
from keras_recurrent.layers.lstm_variant import LSTMVariant


@keras.saving.register_keras_serializable(package="keras_recurrent")
class CoupledLSTM(LSTMVariant):
    """Coupled input-forget gate LSTM layer (CIFG).

    A thin `keras.layers.RNN` around `kr.layers.CoupledLSTMCell`:

    ```
    f = σ(x W_f + h_{t-1} U_f [+ p_f ⊙ c_{t-1}] + b_f)
    c_t = f ⊙ c_{t-1} + (1 - f) ⊙ tanh(x W_c + h_{t-1} U_c + b_c)
    o = σ(x W_o + h_{t-1} U_o [+ p_o ⊙ c_t] + b_o)
    h_t = o ⊙ tanh(c_t)
    ```

    Weights (`layer.cell.*`): `kernel` `(input_dim, 3 * units)` and
    `recurrent_kernel` `(state_dim, 3 * units)` with gate blocks `[f, c, o]`;
    `bias` `(3 * units,)`; with `use_peepholes`,
    `forget_gate_peephole_weights` and `output_gate_peephole_weights`
    `(units,)`.

    Args:
        units: Positive integer, dimensionality of the cell state.
        return_sequences, return_state, go_backwards, stateful, unroll,
        zero_output_for_mask: As in `keras.layers.RNN`.
        **kwargs: Any argument of `kr.layers.CoupledLSTMCell`
            (`use_peepholes`, `unit_forget_bias`, `dropout`,
            `recurrent_dropout`, `seed`, initializers, regularizers,
            constraints, ...) and the standard layer keyword arguments.

    Call arguments:
        sequences: A 3D float tensor `(batch, timesteps, features)`.
        initial_state: Optional list `[h, c]` of initial states.
        mask: Optional boolean tensor `(batch, timesteps)`.
        training: Python boolean; dropout is active only when `True`.

    Returns:
        `(batch, units)`, or `(batch, timesteps, units)` with
        `return_sequences`, followed by the final `h` and `c` with
        `return_state`.

    Example:

    >>> x = np.random.rand(4, 10, 8).astype("float32")
    >>> kr.layers.CoupledLSTM(16)(x).shape
    TensorShape([4, 16])

    Reference:
        - [Greff et al., 2017. LSTM: A Search Space Odyssey](
          https://arxiv.org/abs/1503.04069)
    """

    cell_class = CoupledLSTMCell
