"""Peephole LSTM layer (Gers & Schmidhuber 2000)."""

import keras

from keras_recurrent.layers.lstm_variant import LSTMVariant
from keras_recurrent.layers.peephole_lstm_cell import PeepholeLSTMCell


@keras.saving.register_keras_serializable(package="keras_recurrent")
class PeepholeLSTM(LSTMVariant):
    """Peephole LSTM layer (Gers & Schmidhuber 2000).

    A thin `keras.layers.RNN` around `kr.layers.PeepholeLSTMCell`, the
    vanilla LSTM of Greff et al. (2017), whose gates read the cell state;
    see the cell for the equations and the weights (`layer.cell.*`).

    The layer takes every argument of the cell, with the same defaults (see
    `kr.layers.PeepholeLSTMCell`), and each is also a read-only property of
    the layer, as in `keras.layers.LSTM`: `layer.cell_clip`,
    `layer.kernel_initializer`, ... Like the cell, it refuses `variant` and
    `use_peepholes`.

    Args:
        units: Positive integer, dimensionality of the cell state.
        use_cudnn: Taken as `keras.layers.LSTM` takes it: `"auto"` (default)
            and `False` run the layer's loop; `True` raises a `ValueError`,
            as no fused (cuDNN) kernel computes this cell (its gates read
            the cell state). `kr.layers.LSTMVariant(variant="NP")` is
            Keras' LSTM.
        implementation: Taken as `keras.layers.LSTM` takes it (`1` or
            `2`), passed to the cell, and changing nothing, as in Keras 3.
            Not in the config, as in Keras.
        **kwargs: The other arguments of `kr.layers.PeepholeLSTMCell`
            (`cell_clip`, `projection_units`, ...); the options of
            `keras.layers.RNN`, each `False` by default: `return_sequences`,
            `return_state`, `go_backwards`, `stateful`, `unroll` and
            `zero_output_for_mask`; and standard layer keyword arguments,
            such as `name`, `dtype` and `activity_regularizer`.

    Call arguments:
        sequences: A 3D tensor `(batch, timesteps, features)`; integer and
            boolean values are cast to the compute dtype, as
            `keras.layers.LSTM` casts them.
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
