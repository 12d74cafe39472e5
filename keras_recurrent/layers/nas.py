"""Recurrent layer of the neural architecture search cell."""

import keras

from keras_recurrent.layers._cell_rnn import CellRNN
from keras_recurrent.layers.nas_cell import NASCell


@keras.saving.register_keras_serializable(package="keras_recurrent")
class NAS(CellRNN):
    """Recurrent layer of the neural architecture search cell.

    A thin `keras.layers.RNN` around `kr.layers.NASCell`,
    TensorFlow Addons' `NASCell` (Zoph & Le 2017) in Keras 3; see the
    cell for the equations and the weights (`layer.cell.*`). The layer
    takes every argument of the cell, with the same defaults, and each is
    also a read-only property of the layer (`layer.units`, ...).

    Args:
        units: Positive integer, the width of the cell state.
        **kwargs: The other arguments of `kr.layers.NASCell`;
            the options of `keras.layers.RNN`, each `False` by default:
            `return_sequences`, `return_state`, `go_backwards`, `stateful`,
            `unroll` and `zero_output_for_mask`; and standard layer keyword
            arguments, such as `name`, `dtype` and `activity_regularizer`.

    Call arguments:
        sequences: A 3D tensor `(batch, timesteps, features)`; integer and
            boolean values are cast to the compute dtype, as
            `keras.layers.LSTM` casts them.
        initial_state: Optional list `[c, m]` of initial states.
        mask: Optional boolean tensor `(batch, timesteps)`; masked steps keep
            the previous states.
        training: Python boolean; unused.

    Returns:
        `(batch, units)`, or `(batch, timesteps, units)` with
        `return_sequences` (`projection` instead of `units` with a
        projection), followed by the final states `[c, m]` with
        `return_state`.

    Example:

    >>> x = np.random.rand(4, 10, 8).astype("float32")
    >>> kr.layers.NAS(16, projection=6, return_sequences=True)(x).shape
    TensorShape([4, 10, 6])

    Reference:
        - [Zoph & Le, 2017. Neural Architecture Search with Reinforcement
          Learning](https://arxiv.org/abs/1611.01578)
    """

    cell_class = NASCell
