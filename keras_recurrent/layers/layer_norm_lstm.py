"""LSTM layer with layer normalization (Ba et al. 2016)."""

import keras

from keras_recurrent.layers._cell_rnn import CellRNN
from keras_recurrent.layers.layer_norm_lstm_cell import LayerNormLSTMCell


@keras.saving.register_keras_serializable(package="keras_recurrent")
class LayerNormLSTM(CellRNN):
    """LSTM layer with layer normalization (Ba et al. 2016).

    A thin `keras.layers.RNN` around `kr.layers.LayerNormLSTMCell`,
    TensorFlow Addons' `LayerNormLSTMCell` in Keras 3; see the cell for
    the equations and the weights (`layer.cell.*`). The layer takes every
    argument of the cell, with the same defaults, and each is also a
    read-only property of the layer (`layer.units`, ...).

    Args:
        units: Positive integer, dimensionality of the cell state.
        **kwargs: The other arguments of `kr.layers.LayerNormLSTMCell`;
            the options of `keras.layers.RNN`, each `False` by default:
            `return_sequences`, `return_state`, `go_backwards`, `stateful`,
            `unroll` and `zero_output_for_mask`; and standard layer keyword
            arguments, such as `name`, `dtype` and `activity_regularizer`.

    Call arguments:
        sequences: A 3D tensor `(batch, timesteps, features)`; integer and
            boolean values are cast to the compute dtype, as
            `keras.layers.LSTM` casts them.
        initial_state: Optional list `[h, c]` of initial states.
        mask: Optional boolean tensor `(batch, timesteps)`; masked steps keep
            the previous states.
        training: Python boolean; dropout is active only when `True`.

    Returns:
        `(batch, units)`, or `(batch, timesteps, units)` with
        `return_sequences`, followed by the final states `[h, c]` with
        `return_state`.

    Example:

    >>> x = np.random.rand(4, 10, 8).astype("float32")
    >>> output, h, c = kr.layers.LayerNormLSTM(16, return_state=True)(x)
    >>> output.shape, c.shape
    (TensorShape([4, 16]), TensorShape([4, 16]))

    Reference:
        - [Ba et al., 2016. Layer Normalization](
          https://arxiv.org/abs/1607.06450)
    """

    cell_class = LayerNormLSTMCell
