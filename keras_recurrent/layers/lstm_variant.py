"""RNN layer running an `LSTMVariantCell` over a sequence."""

import keras

from keras_recurrent.layers._cell_rnn import CellRNN
from keras_recurrent.layers.lstm_variant_cell import LSTMVariantCell


@keras.saving.register_keras_serializable(package="keras_recurrent")
class LSTMVariant(CellRNN):
    """LSTM layer for any variant of Greff et al. (2017).

    A thin `keras.layers.RNN` around `kr.layers.LSTMVariantCell`; see the cell
    for the equations of each variant and the exact weights. (Computing the
    input projection of all steps in one matmul before the time loop was
    measured slower on TensorFlow's CPU loop, so every step does its own.)

    Args:
        units: Positive integer, dimensionality of the cell state.
        variant: `"V"` (vanilla, with peepholes), `"NIG"`, `"NFG"`, `"NOG"`,
            `"NIAF"`, `"NOAF"`, `"NP"`, `"CIFG"` or `"FGR"`.
            Defaults to `"V"`.
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
        **kwargs: Any argument of `kr.layers.LSTMVariantCell` (activations,
            initializers, regularizers, constraints, `dropout`,
            `recurrent_dropout`, `cell_clip`, `projection_units`, `seed`, ...)
            and the standard layer keyword arguments.

    Call arguments:
        sequences: A 3D float tensor `(batch, timesteps, features)`.
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

    def __init__(
        self,
        units,
        return_sequences=False,
        return_state=False,
        go_backwards=False,
        stateful=False,
        unroll=False,
        zero_output_for_mask=False,
        **kwargs,
    ):
        super().__init__(
            self.cell_class,
            {"units": units},
            return_sequences=return_sequences,
            return_state=return_state,
            go_backwards=go_backwards,
            stateful=stateful,
            unroll=unroll,
            zero_output_for_mask=zero_output_for_mask,
            **kwargs,
        )

    @property
    def variant(self):
        return self.cell.variant

    @property
    def use_peepholes(self):
        return self.cell.use_peepholes

    @property
    def cell_clip(self):
        return self.cell.cell_clip

    @property
    def projection_units(self):
        return self.cell.projection_units
