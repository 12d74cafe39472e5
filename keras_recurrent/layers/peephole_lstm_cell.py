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

    TensorFlow Addons' `PeepholeLSTMCell` (the former
    `tf.keras.experimental.PeepholeLSTMCell`) has the same weights, in the
    same order, shapes and gate order, and the same equations:
    `PeepholeLSTMCell.from_config(tfa_config)` reads its config (its
    peepholes start from its `kernel_initializer`; its `implementation`,
    like Keras 3's, is taken and ignored) and
    `set_weights(tfa_cell.get_weights())` its weights. TF1's
    `LSTMCell(use_peepholes=True)` stores `[i, c, f, o]` blocks and one
    stacked `[x; h]` kernel, to be split and reordered when porting.
    States are `[h, c]`.

    Args:
        units: Positive integer, dimensionality of the cell state.
        **kwargs: The other arguments of `kr.layers.LSTMVariantCell`, with
            the same defaults (all but `variant` and `use_peepholes`, which
            this cell sets itself and refuses), and standard layer keyword
            arguments, such as `name` and `dtype`.

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

    _fixed_arguments = {"variant": "V", "use_peepholes": True}

    def __init__(self, units, **kwargs):
        super().__init__(units, **self._with_fixed_arguments(kwargs))

    @classmethod
    def from_config(cls, config):
        """Also reads the config of TensorFlow Addons' `PeepholeLSTMCell`,
        whose peepholes are drawn by its `kernel_initializer`."""
        config = dict(config)
        if "peephole_initializer" not in config:
            config["peephole_initializer"] = config.get(
                "kernel_initializer", "glorot_uniform"
            )
        return cls(**config)
