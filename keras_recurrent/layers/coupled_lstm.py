"""Coupled input-forget gate LSTM layer (CIFG)."""

import keras

from keras_recurrent.layers.coupled_lstm_cell import CoupledLSTMCell
from keras_recurrent.layers.lstm_variant import LSTMVariant


@keras.saving.register_keras_serializable(package="keras_recurrent")
class CoupledLSTM(LSTMVariant):
    """Coupled input-forget gate LSTM layer (CIFG).

    A thin `keras.layers.RNN` around `kr.layers.CoupledLSTMCell`, whose
    input gate is `1 - f`: Greff et al.'s CIFG, peepholes included, as
    `kr.layers.LSTMVariant(units, variant="CIFG")`; `use_peepholes=False`
    drops them for a faster layer. See the cell for the equations and the
    weights (`layer.cell.*`).

    The layer takes every argument of the cell, with the same defaults (see
    `kr.layers.CoupledLSTMCell`), and each is also a read-only property of
    the layer, as in `keras.layers.LSTM`: `layer.use_peepholes`,
    `layer.dropout`, ... Like the cell, it refuses `variant`.

    Args:
        units: Positive integer, dimensionality of the cell state.
        use_cudnn: Taken as `keras.layers.LSTM` takes it: `"auto"` (default)
            and `False` run the layer's loop; `True` raises a `ValueError`,
            as no fused (cuDNN) kernel computes this cell (its input gate
            is `1 - f`). `kr.layers.LSTMVariant(variant="NP")` is Keras'
            LSTM.
        implementation: Taken as `keras.layers.LSTM` takes it (`1` or
            `2`), passed to the cell, and changing nothing, as in Keras 3.
            Not in the config, as in Keras.
        **kwargs: The other arguments of `kr.layers.CoupledLSTMCell`
            (`use_peepholes`, `cell_clip`, ...); the options of
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
