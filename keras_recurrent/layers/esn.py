"""Echo state network layer (Jaeger 2001)."""

import keras

from keras_recurrent.layers._cell_rnn import CellRNN
from keras_recurrent.layers.esn_cell import ESNCell


@keras.saving.register_keras_serializable(package="keras_recurrent")
class ESN(CellRNN):
    """Echo state network layer (Jaeger 2001).

    A thin `keras.layers.RNN` around `kr.layers.ESNCell`, TensorFlow
    Addons' `ESN` layer in Keras 3, with the same arguments and config
    keys; see the cell for the equations and the (non-trainable) weights
    (`layer.cell.*`). The layer takes every argument of the cell, with the
    same defaults, and each is also a read-only property of the layer
    (`layer.spectral_radius`, ...). `ESN.from_config` also reads the config
    of TFA's `ESN` (its `time_major`, which must be `False`, is dropped).

    Args:
        units: Positive integer, the reservoir size.
        **kwargs: The other arguments of `kr.layers.ESNCell`; the options of
            `keras.layers.RNN`, each `False` by default: `return_sequences`,
            `return_state`, `go_backwards`, `stateful`, `unroll` and
            `zero_output_for_mask`; and standard layer keyword arguments,
            such as `name`, `dtype` and `activity_regularizer`.

    Call arguments:
        sequences: A 3D tensor `(batch, timesteps, features)`; integer and
            boolean values are cast to the compute dtype, as
            `keras.layers.LSTM` casts them.
        initial_state: Optional list `[h]` of initial states.
        mask: Optional boolean tensor `(batch, timesteps)`; masked steps keep
            the previous states.
        training: Python boolean; unused.

    Returns:
        `(batch, units)`, or `(batch, timesteps, units)` with
        `return_sequences`, followed by the final state `h` with
        `return_state`.

    Example:

    >>> x = np.random.rand(4, 10, 8).astype("float32")
    >>> kr.layers.ESN(32, leaky=0.5, return_sequences=True)(x).shape
    TensorShape([4, 10, 32])

    Reference:
        - [Jaeger, 2001. The "echo state" approach to analysing and training
          recurrent neural networks. GMD Report 148](
          https://www.researchgate.net/publication/215385037)
    """

    cell_class = ESNCell

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        if config.pop("time_major", False):
            raise ValueError(
                "ESN takes batch-major sequences only. Received: "
                "time_major=True"
            )
        return cls(**config)
