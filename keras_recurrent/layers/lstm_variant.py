"""RNN layer running an `LSTMVariantCell` over a sequence."""

import keras

from keras_recurrent.layers._cell_rnn import CellRNN
from keras_recurrent.layers.lstm_variant_cell import LSTMVariantCell


@keras.saving.register_keras_serializable(package="keras_recurrent")
class LSTMVariant(CellRNN):
    """LSTM layer for any variant of Greff et al. (2017).

    A thin `keras.layers.RNN` around `kr.layers.LSTMVariantCell`; see the cell
    for the equations of each variant and the exact weights.

    The layer takes every argument of the cell, with the same defaults (see
    `kr.layers.LSTMVariantCell` for each), and each is also a read-only
    property of the layer, as in `keras.layers.LSTM`: `layer.variant`,
    `layer.cell_clip`, ...

    Args:
        units: Positive integer, dimensionality of the cell state.
        use_cudnn: As in `keras.layers.LSTM`: `"auto"` (default), `True` or
            `False`. Where the cell is exactly `keras.layers.LSTMCell`
            (variant `"NP"`, or `"V"` with `use_peepholes=False`; no
            `cell_clip`, `projection_units` or `recurrent_dropout`) and a
            call has no mask, `"auto"` and `True` run Keras' fused LSTM
            kernel on the cell's weights (cuDNN on a GPU; on PyTorch also
            Keras' CPU loop), with the same numbers as the layer's loop.
            Elsewhere `"auto"` runs the loop and `True` raises a
            `ValueError` saying why. Not in the config, as in Keras.
        **kwargs: The other arguments of `kr.layers.LSTMVariantCell`
            (`variant`, `use_peepholes`, `cell_clip`, ...); the options of
            `keras.layers.RNN`, each `False` by default: `return_sequences`,
            `return_state`, `go_backwards`, `stateful`, `unroll` and
            `zero_output_for_mask`; and standard layer keyword arguments,
            such as `name`, `dtype` and `activity_regularizer`.

        implementation: Taken as `keras.layers.LSTM` takes it (`1` or
            `2`), passed to the cell, and changing nothing, as in Keras 3.
            Not in the config, as in Keras.


    Call arguments:
        sequences: A 3D tensor `(batch, timesteps, features)`; integer and
            boolean values are cast to the compute dtype, as
            `keras.layers.LSTM` casts them.
        initial_state: Optional list of initial state tensors, `[h, c]`
            (plus `[i, f, o]` for FGR).
        mask: Optional boolean tensor `(batch, timesteps)`; masked steps keep
            the previous states.
        training: Python boolean; dropout is active only when `True`.

    Returns:
        `(batch, units)`, or `(batch, timesteps, units)` with
        `return_sequences` (`projection_units` instead of `units` with a
        projection), followed by the final states with `return_state`.

    Example:

    >>> x = np.random.rand(4, 10, 8).astype("float32")
    >>> layer = kr.layers.LSTMVariant(16, variant="NFG", return_state=True)
    >>> output, h, c = layer(x)
    >>> output.shape, c.shape
    (TensorShape([4, 16]), TensorShape([4, 16]))

    Reference:
        - [Greff et al., 2017. LSTM: A Search Space Odyssey](
          https://arxiv.org/abs/1503.04069)
    """

    cell_class = LSTMVariantCell
