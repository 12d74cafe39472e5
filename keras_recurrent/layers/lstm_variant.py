"""RNN layer running an `LSTMVariantCell` over a sequence."""

import inspect

import keras

from keras_recurrent.layers._cell_rnn import CellRNN
from keras_recurrent.layers.lstm_variant_cell import LSTMVariantCell


@keras.saving.register_keras_serializable(package="keras_recurrent")
class LSTMVariant(CellRNN):
    """LSTM layer for any variant of Greff et al. (2017).

    A thin `keras.layers.RNN` around `kr.layers.LSTMVariantCell`; see the cell
    for the equations of each variant and the exact weights.

    Each argument of the cell is also a read-only property of the layer, as
    in `keras.layers.LSTM`: `layer.variant`, `layer.cell_clip`, ...

    Args:
        units: Positive integer, dimensionality of the cell state.
        variant: Name of the Greff et al. variant: `"V"` (or `"vanilla"`),
            `"NIG"`, `"NFG"`, `"NOG"`, `"NIAF"`, `"NOAF"`, `"NP"`, `"CIFG"`
            or `"FGR"` (case-insensitive). Defaults to `"V"`.
        use_peepholes: Whether the gates read the cell state. `None` (default)
            follows the variant (`False` for `"NP"`, `True` otherwise).
        activation: Cell input and output activation. Defaults to `"tanh"`.
        recurrent_activation: Gate activation. Defaults to `"sigmoid"`.
        use_bias: Whether to add `bias`. Defaults to `True`.
        kernel_initializer: Initializer for `kernel`.
            Defaults to `"glorot_uniform"`.
        recurrent_initializer: Initializer for `recurrent_kernel` (and FGR's
            `gate_recurrent_kernel`). Defaults to `"orthogonal"`.
        bias_initializer: Initializer for `bias`. Defaults to `"zeros"`.
        peephole_initializer: Initializer for the peephole weights.
            Defaults to `"glorot_uniform"` (as tf.keras' `PeepholeLSTMCell`).
        projection_initializer: Initializer for `projection_kernel`.
            Defaults to `"glorot_uniform"`.
        unit_forget_bias: If `True` and the variant has a forget gate, its
            bias block starts at 1 (Jozefowicz et al. 2015). Defaults to `True`.
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
        **kwargs: Standard layer keyword arguments, such as `name`, `dtype`
            and `activity_regularizer`.

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

    # The cell the layer wraps, and the cell arguments which that class fixes
    # itself and so neither takes nor saves (`PeepholeLSTM`, `CoupledLSTM`):
    # left at their default here, they are left out; any other value goes to
    # the cell, which refuses it.
    _cell_class = LSTMVariantCell
    _fixed_cell_args = ()

    def __init__(
        self,
        units,
        variant="V",
        use_peepholes=None,
        activation="tanh",
        recurrent_activation="sigmoid",
        use_bias=True,
        kernel_initializer="glorot_uniform",
        recurrent_initializer="orthogonal",
        bias_initializer="zeros",
        peephole_initializer="glorot_uniform",
        projection_initializer="glorot_uniform",
        unit_forget_bias=True,
        kernel_regularizer=None,
        recurrent_regularizer=None,
        bias_regularizer=None,
        peephole_regularizer=None,
        projection_regularizer=None,
        kernel_constraint=None,
        recurrent_constraint=None,
        bias_constraint=None,
        peephole_constraint=None,
        projection_constraint=None,
        dropout=0.0,
        recurrent_dropout=0.0,
        cell_clip=None,
        projection_units=None,
        seed=None,
        return_sequences=False,
        return_state=False,
        go_backwards=False,
        stateful=False,
        unroll=False,
        zero_output_for_mask=False,
        **kwargs,
    ):
        cell_args = {
            "units": units,
            "variant": variant,
            "use_peepholes": use_peepholes,
            "activation": activation,
            "recurrent_activation": recurrent_activation,
            "use_bias": use_bias,
            "kernel_initializer": kernel_initializer,
            "recurrent_initializer": recurrent_initializer,
            "bias_initializer": bias_initializer,
            "peephole_initializer": peephole_initializer,
            "projection_initializer": projection_initializer,
            "unit_forget_bias": unit_forget_bias,
            "kernel_regularizer": kernel_regularizer,
            "recurrent_regularizer": recurrent_regularizer,
            "bias_regularizer": bias_regularizer,
            "peephole_regularizer": peephole_regularizer,
            "projection_regularizer": projection_regularizer,
            "kernel_constraint": kernel_constraint,
            "recurrent_constraint": recurrent_constraint,
            "bias_constraint": bias_constraint,
            "peephole_constraint": peephole_constraint,
            "projection_constraint": projection_constraint,
            "dropout": dropout,
            "recurrent_dropout": recurrent_dropout,
            "cell_clip": cell_clip,
            "projection_units": projection_units,
            "seed": seed,
        }
        defaults = inspect.signature(LSTMVariant.__init__).parameters
        for name in self._fixed_cell_args:
            if cell_args[name] == defaults[name].default:
                del cell_args[name]
        super().__init__(
            self._cell_class,
            cell_args,
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
    def peephole_initializer(self):
        return self.cell.peephole_initializer

    @property
    def projection_initializer(self):
        return self.cell.projection_initializer

    @property
    def peephole_regularizer(self):
        return self.cell.peephole_regularizer

    @property
    def projection_regularizer(self):
        return self.cell.projection_regularizer

    @property
    def peephole_constraint(self):
        return self.cell.peephole_constraint

    @property
    def projection_constraint(self):
        return self.cell.projection_constraint

    @property
    def cell_clip(self):
        return self.cell.cell_clip

    @property
    def projection_units(self):
        return self.cell.projection_units
