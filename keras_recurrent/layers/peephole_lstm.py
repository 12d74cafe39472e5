"""Peephole LSTM layer (Gers & Schmidhuber 2000)."""

import keras

from keras_recurrent.layers.lstm_variant import LSTMVariant
from keras_recurrent.layers.peephole_lstm_cell import PeepholeLSTMCell


@keras.saving.register_keras_serializable(package="keras_recurrent")
class PeepholeLSTM(LSTMVariant):
    """Peephole LSTM layer (Gers & Schmidhuber 2000).

    A thin `keras.layers.RNN` around `kr.layers.PeepholeLSTMCell`:

    ```
    i = σ(x W_i + h_{t-1} U_i + p_i ⊙ c_{t-1} + b_i)
    f = σ(x W_f + h_{t-1} U_f + p_f ⊙ c_{t-1} + b_f)
    c_t = f ⊙ c_{t-1} + i ⊙ tanh(x W_c + h_{t-1} U_c + b_c)
    o = σ(x W_o + h_{t-1} U_o + p_o ⊙ c_t + b_o)
    h_t = o ⊙ tanh(c_t)
    ```

    Weights (`layer.cell.*`): `kernel` `(input_dim, 4 * units)`,
    `recurrent_kernel` `(state_dim, 4 * units)`, both with gate blocks
    `[i, f, c, o]`; `bias` `(4 * units,)`; `input_gate_peephole_weights`,
    `forget_gate_peephole_weights`, `output_gate_peephole_weights`
    `(units,)`; `projection_kernel` `(units, projection_units)` with a
    projection.

    Args:
        units: Positive integer, dimensionality of the cell state.
        return_sequences, return_state, go_backwards, stateful, unroll,
        zero_output_for_mask: As in `keras.layers.RNN`.
        **kwargs: Any argument of `kr.layers.PeepholeLSTMCell` (`cell_clip`,
            `projection_units`, `dropout`, `recurrent_dropout`, `seed`,
            initializers, regularizers, constraints, ...) and the standard
            layer keyword arguments.

    Call arguments:
        sequences: A 3D float tensor `(batch, timesteps, features)`.
        initial_state: Optional list `[h, c]` of initial states.
        mask: Optional boolean tensor `(batch, timesteps)`.
        training: Python boolean; dropout is active only when `True`.

    Returns:
        `(batch, units)`, or `(batch, timesteps, units)` with
        `return_sequences` (`projection_units` instead of `units` with a
        projection), followed by the final `h` and `c` with `return_state`.

    Example:

    >>> x = np.random.rand(4, 10, 8).astype("float32")
    >>> kr.layers.PeepholeLSTM(16, return_sequences=True)(x).shape
    TensorShape([4, 10, 16])

    Reference:
        - [Gers & Schmidhuber, 2000. Recurrent nets that time and count](
          https://doi.org/10.1109/IJCNN.2000.861302)
        - [Greff et al., 2017. LSTM: A Search Space Odyssey](
          https://arxiv.org/abs/1503.04069)
    """

    cell_class = PeepholeLSTMCell
