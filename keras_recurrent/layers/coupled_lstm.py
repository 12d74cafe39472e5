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

    Greff et al.'s CIFG, peepholes included, as
    `kr.layers.LSTMVariant(units, variant="CIFG")`; `use_peepholes=False`
    drops the bracketed terms for a faster layer.

    Weights (`layer.cell.*`): `kernel` `(input_dim, 3 * units)` and
    `recurrent_kernel` `(state_dim, 3 * units)` with gate blocks `[f, c, o]`;
    `bias` `(3 * units,)`; with `use_peepholes`,
    `forget_gate_peephole_weights` and `output_gate_peephole_weights`
    `(units,)`.

    Each argument of the cell is also a read-only property of the layer, as
    in `keras.layers.LSTM`: `layer.use_peepholes`, `layer.dropout`, ...

    Args:
        units: Positive integer, dimensionality of the cell state.
        use_peepholes: Whether the forget and output gates read the cell
            state. Defaults to `True` (Greff et al.'s CIFG); `False` drops the
            peephole weights and is faster.
        activation: Cell input and output activation. Defaults to `"tanh"`.
        recurrent_activation: Gate activation. Defaults to `"sigmoid"`.
        use_bias: Whether to add `bias`. Defaults to `True`.
        kernel_initializer: Initializer for `kernel`.
            Defaults to `"glorot_uniform"`.
        recurrent_initializer: Initializer for `recurrent_kernel`.
            Defaults to `"orthogonal"`.
        bias_initializer: Initializer for `bias`. Defaults to `"zeros"`.
        peephole_initializer: Initializer for the peephole weights.
            Defaults to `"glorot_uniform"` (as tf.keras' `PeepholeLSTMCell`).
        projection_initializer: Initializer for `projection_kernel`.
            Defaults to `"glorot_uniform"`.
        unit_forget_bias: If `True`, the forget gate's bias block starts at
            1 (Jozefowicz et al. 2015). Defaults to `True`.
        kernel_regularizer: Optional regularizer of `kernel`.
        recurrent_regularizer: Optional regularizer of `recurrent_kernel`.
        bias_regularizer: Optional regularizer of `bias`.
        peephole_regularizer: Optional regularizer of the peephole weights.
        projection_regularizer: Optional regularizer of `projection_kernel`.
        kernel_constraint: Optional constraint of `kernel`.
        recurrent_constraint: Optional constraint of `recurrent_kernel`.
        bias_constraint: Optional constraint of `bias`.
        peephole_constraint: Optional constraint of the peephole weights.
        projection_constraint: Optional constraint of `projection_kernel`.
        dropout: Float in [0, 1). Fraction of the inputs dropped, with one
            mask per sequence. Defaults to 0.
        recurrent_dropout: Float in [0, 1). Fraction of `h_{t-1}` dropped
            before the recurrent matmul, one mask per sequence. Defaults to 0.
        cell_clip: Optional positive float; clips the cell state to
            `[-cell_clip, cell_clip]` before the output gate reads it.
        projection_units: Optional positive integer; LSTMP projection size
            (the output and recurrent state width).
        seed: Random seed for dropout.
        return_sequences: Whether to return the whole output sequence or only
            the last output. Defaults to `False`.
        return_state: Whether to return the final states after the output.
            Defaults to `False`.
        go_backwards: Process the sequence backwards. Defaults to `False`.
        stateful: Use the final states of batch `i` as the initial states of
            batch `i` in the next batch. Defaults to `False`.
        unroll: Unroll the time loop (short sequences only).
            Defaults to `False`.
        zero_output_for_mask: Output zeros, not the last output, at masked
            steps when `return_sequences`. Defaults to `False`.
        **kwargs: Standard layer keyword arguments, such as `name`, `dtype`
            and `activity_regularizer`.

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

    _cell_class = CoupledLSTMCell
    _fixed_cell_args = ("variant",)

    def __init__(self, units, use_peepholes=True, **kwargs):
        super().__init__(units, use_peepholes=use_peepholes, **kwargs)
