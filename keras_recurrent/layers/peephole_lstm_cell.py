"""Peephole LSTM cell (Gers & Schmidhuber 2000)."""

import keras

from keras_recurrent.layers.lstm_variant_cell import LSTMVariantCell


@keras.saving.register_keras_serializable(package="keras_recurrent")
class PeepholeLSTMCell(LSTMVariantCell):
    """Cell class for the peephole LSTM (Gers & Schmidhuber 2000).

    The vanilla LSTM of Greff et al. (2017): the input and forget gates look
    at the previous cell state, the output gate at the new one.

    ```
    i = σ(x W_i + h_{t-1} U_i + p_i ⊙ c_{t-1} + b_i)
    f = σ(x W_f + h_{t-1} U_f + p_f ⊙ c_{t-1} + b_f)
    c_t = f ⊙ c_{t-1} + i ⊙ tanh(x W_c + h_{t-1} U_c + b_c)
    o = σ(x W_o + h_{t-1} U_o + p_o ⊙ c_t + b_o)
    h_t = o ⊙ tanh(c_t)
    ```

    With `cell_clip`, `c_t` is clipped to `[-cell_clip, cell_clip]` before the
    output gate reads it (as TF1's `LSTMCell`). With `projection_units`
    (LSTMP, Sak et al. 2014), `h_t = (o ⊙ tanh(c_t)) P` and the recurrent
    state is the projection.

    Weights, for porting in and out (gate blocks in Keras' `LSTMCell` order
    `[i, f, c, o]`, so zero peepholes make it `keras.layers.LSTMCell`):

    - `kernel`: `(input_dim, 4 * units)`.
    - `recurrent_kernel`: `(state_dim, 4 * units)`; `state_dim` is
      `projection_units` if set, else `units`.
    - `bias`: `(4 * units,)`.
    - `input_gate_peephole_weights`, `forget_gate_peephole_weights`,
      `output_gate_peephole_weights`: `(units,)` each.
    - `projection_kernel`: `(units, projection_units)`, with `projection_units`.

    tf.keras' `PeepholeLSTMCell` has the same kernel layout and peephole
    names; TF1's `LSTMCell(use_peepholes=True)` stores `[i, c, f, o]` blocks
    and one stacked `[x; h]` kernel, to be split and reordered when porting.
    States are `[h, c]`.

    Args:
        units: Positive integer, dimensionality of the cell state.
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
        **kwargs: Standard layer keyword arguments, such as `name` and `dtype`.

    Call arguments:
        inputs: A 2D tensor `(batch, input_dim)`.
        states: List `[h, c]` of the previous states.
        training: Python boolean; dropout is active only when `True`.

    Returns:
        A tuple `(h_t, [h_t, c_t])`.

    Example:

    >>> x = np.random.rand(4, 10, 8).astype("float32")
    >>> cell = kr.layers.PeepholeLSTMCell(16)
    >>> keras.layers.RNN(cell, return_sequences=True)(x).shape
    TensorShape([4, 10, 16])
    >>> [w.path.split("/")[-1] for w in cell.weights]
    ['kernel', 'recurrent_kernel', 'bias', 'input_gate_peephole_weights',
     'forget_gate_peephole_weights', 'output_gate_peephole_weights']

    Reference:
        - [Gers & Schmidhuber, 2000. Recurrent nets that time and count](
          https://doi.org/10.1109/IJCNN.2000.861302)
        - [Greff et al., 2017. LSTM: A Search Space Odyssey](
          https://arxiv.org/abs/1503.04069)
    """

    def __init__(self, units, **kwargs):
        for fixed in ("variant", "use_peepholes"):
            if fixed in kwargs:
                raise ValueError(
                    f"PeepholeLSTMCell does not take `{fixed}`; use "
                    "kr.layers.LSTMVariantCell for other variants. "
                    f"Received: {fixed}={kwargs[fixed]!r}"
                )
        super().__init__(units, variant="V", use_peepholes=True, **kwargs)

    def get_config(self):
        config = super().get_config()
        del config["variant"], config["use_peepholes"]
        return config
