"""RNN layer running an `LSTMVariantCell` over a sequence."""

import inspect

import keras
from keras import ops

from keras_recurrent.layers.lstm_variant_cell import LSTMVariantCell
from keras_recurrent.layers.lstm_variant_cell import _check_float_inputs

# Cell config keys that belong to the base Layer, not to the cell's math.
_LAYER_KEYS = ("name", "trainable", "dtype")


@keras.saving.register_keras_serializable(package="keras_recurrent")
class LSTMVariant(keras.layers.RNN):
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
        cell_arguments = {
            name
            for klass in (self.cell_class, LSTMVariantCell)
            for name in inspect.signature(klass.__init__).parameters
        }
        cell_kwargs = {
            key: kwargs.pop(key)
            for key in list(kwargs)
            if key in cell_arguments and key not in ("self", "kwargs")
        }
        cell = self.cell_class(
            units,
            dtype=kwargs.get("dtype"),
            trainable=kwargs.get("trainable", True),
            name="cell",
            **cell_kwargs,
        )
        super().__init__(
            cell,
            return_sequences=return_sequences,
            return_state=return_state,
            go_backwards=go_backwards,
            stateful=stateful,
            unroll=unroll,
            zero_output_for_mask=zero_output_for_mask,
            **kwargs,
        )

    def build(self, sequences_shape, initial_state_shape=None):
        sequences_shape = tuple(sequences_shape)
        if len(sequences_shape) != 3:
            raise ValueError(
                f"{type(self).__name__} expects `inputs` of rank 3 "
                "(batch, timesteps, features). "
                f"Received: inputs.shape={sequences_shape}"
            )
        super().build(sequences_shape, initial_state_shape)

    def call(self, sequences, initial_state=None, mask=None, training=False):
        _check_float_inputs(self, sequences)
        if training:
            # One mask per sequence, made before the time loop. Keras' RNN
            # does this too for cells with its (unexported) dropout mixin;
            # doing it here keeps it so should that mixin go away.
            cell = self.cell
            cell.get_dropout_mask(sequences[:, 0, :])
            batch_size = ops.shape(sequences)[0]
            cell.get_recurrent_dropout_mask(
                ops.zeros((batch_size, cell.state_size[0]), sequences.dtype)
            )
        try:
            return super().call(
                sequences,
                initial_state=initial_state,
                mask=mask,
                training=training,
            )
        finally:
            self.cell.reset_dropout_mask()
            self.cell.reset_recurrent_dropout_mask()

    @property
    def units(self):
        return self.cell.units

    @property
    def variant(self):
        return self.cell.variant

    @property
    def use_peepholes(self):
        return self.cell.use_peepholes

    @property
    def dropout(self):
        return self.cell.dropout

    @property
    def recurrent_dropout(self):
        return self.cell.recurrent_dropout

    @property
    def cell_clip(self):
        return self.cell.cell_clip

    @property
    def projection_units(self):
        return self.cell.projection_units

    def get_config(self):
        config = {
            key: value
            for key, value in self.cell.get_config().items()
            if key not in _LAYER_KEYS
        }
        base_config = super().get_config()
        del base_config["cell"]
        return {**base_config, **config}

    @classmethod
    def from_config(cls, config):
        return cls(**config)
