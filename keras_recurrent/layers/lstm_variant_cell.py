"""An LSTM cell covering every variant of Greff et al. (2017)."""

import keras
from keras import activations
from keras import constraints
from keras import initializers
from keras import ops
from keras import regularizers

from keras_recurrent._checks import check_bool
from keras_recurrent._checks import check_layer_seed
from keras_recurrent._checks import check_option
from keras_recurrent._checks import check_positive_float
from keras_recurrent._checks import check_positive_int
from keras_recurrent._checks import check_rate
from keras_recurrent._checks import float_or_cast
from keras_recurrent.layers._dropout import SequenceDropout
from keras_recurrent.layers._gates import lstm_cell_state
from keras_recurrent.layers._gates import lstm_output
from keras_recurrent.layers._initializers import gate_bias
from keras_recurrent.layers._initializers import reseeded
from keras_recurrent.layers._initializers import serialize_weight_options
from keras_recurrent.layers._known_rank import KnownRankInputs
from keras_recurrent.layers._sequence_checks import check_step_inputs
from keras_recurrent.layers._sequence_checks import check_step_shape

# What each variant changes relative to the vanilla LSTM ("V"). Keys are the
# structural switches of `LSTMVariantCell`; see the class docstring.
VARIANTS = {
    "V": {},
    "NIG": {"input_gate": False},
    "NFG": {"forget_gate": False},
    "NOG": {"output_gate": False},
    "NIAF": {"input_activation": False},
    "NOAF": {"output_activation": False},
    "NP": {"peepholes": False},
    "CIFG": {"coupled": True},
    "FGR": {"full_gate_recurrence": True},
}
_ALIASES = {"VANILLA": "V"}
_GATE_NAMES = {"i": "input", "f": "forget", "o": "output"}


def canonical_variant(variant):
    """Returns the canonical (upper-case) name of a Greff et al. variant."""
    if isinstance(variant, str):
        variant = _ALIASES.get(variant.upper(), variant)
    return check_option("variant", variant, [*VARIANTS, *_ALIASES])


@keras.saving.register_keras_serializable(package="keras_recurrent")
class LSTMVariantCell(KnownRankInputs, keras.layers.Layer, SequenceDropout):
    """Cell class for the LSTM variants of Greff et al. (2017).

    One time step of the vanilla LSTM with peepholes ("V", Gers & Schmidhuber
    2000) or of any of the eight single-change variants studied in "LSTM: A
    Search Space Odyssey", chosen by name with `variant`:

    ```
    V (vanilla):  i = σ(x W_i + h U_i + p_i ⊙ c_{t-1} + b_i)
                  f = σ(x W_f + h U_f + p_f ⊙ c_{t-1} + b_f)
                  g = tanh(x W_c + h U_c + b_c)
                  c_t = f ⊙ c_{t-1} + i ⊙ g
                  o = σ(x W_o + h U_o + p_o ⊙ c_t + b_o)
                  h_t = o ⊙ tanh(c_t)
    NIG  (no input gate):          i = 1
    NFG  (no forget gate):         f = 1
    NOG  (no output gate):         o = 1
    NIAF (no input activation):    g = x W_c + h U_c + b_c
    NOAF (no output activation):   h_t = o ⊙ c_t
    NP   (no peepholes):           p_i = p_f = p_o = 0, i.e. Keras' LSTMCell
    CIFG (coupled gates):          i = 1 - f
    FGR  (full gate recurrence):   each gate also reads all three gates of
                                   the previous step:  ... + [i, f, o]_{t-1} R
    ```

    `h` is `h_{t-1}` above; σ is `recurrent_activation` and tanh is
    `activation`. The output gate reads the *new* cell state `c_t`.
    Greff et al. write CIFG as `f = 1 - i`; here the forget gate is the free
    one and `i = 1 - f`, as in TF1's `CoupledInputForgetGateLSTMCell`. The two
    are the same family (σ(-z) = 1 - σ(z)).

    Options on top of any variant: `cell_clip` clips `c_t` to
    `[-cell_clip, cell_clip]` before the output gate reads it (TF1's
    `LSTMCell`), and `projection_units` adds the LSTMP projection of Sak et al.
    (2014), `h_t = (o ⊙ tanh(c_t)) P`, which then is the recurrent state.

    Weights (gate blocks are the gates a variant has, in Keras' `LSTMCell`
    order `[i, f, c, o]`: `[i, f, c, o]` for V, NIAF, NOAF, NP and FGR;
    `[f, c, o]` for NIG and CIFG; `[i, c, o]` for NFG; `[i, f, c]` for NOG):

    - `kernel`: `(input_dim, n_blocks * units)`.
    - `recurrent_kernel`: `(state_dim, n_blocks * units)`, where `state_dim`
      is `projection_units` if set, else `units`.
    - `bias`: `(n_blocks * units,)`, if `use_bias`.
    - `input_gate_peephole_weights`, `forget_gate_peephole_weights`,
      `output_gate_peephole_weights`: `(units,)` each, for the gates the
      variant has, when it uses peepholes.
    - `gate_recurrent_kernel` (FGR only): `(3 * units, 3 * units)`; rows are
      the previous gates `[i, f, o]_{t-1}`, column blocks the gates `[i, f, o]`.
    - `projection_kernel`: `(units, projection_units)`, if `projection_units`.

    States are `[h, c]` (Keras' order), plus the previous gate activations
    `[i, f, o]` (shape `(batch, 3 * units)`) for FGR.

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
        recurrent_initializer: Initializer for `recurrent_kernel` and
            `gate_recurrent_kernel`. Defaults to `"orthogonal"`.
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
        cell_clip: Optional positive float; clips the cell state.
        projection_units: Optional positive integer; LSTMP projection size.
        seed: Random seed for dropout.
        **kwargs: Standard layer keyword arguments, such as `name` and
            `dtype`; and `implementation` (`1` or `2`), taken as
            `keras.layers.LSTMCell` takes it: kept as `cell.implementation`,
            out of the config, and changing nothing (one dropout mask serves
            all gates either way).

    Call arguments:
        inputs: A 2D tensor `(batch, input_dim)`; integer and boolean values
            are cast to the compute dtype, as `keras.layers.LSTMCell` takes
            them.
        states: List of state tensors, `[h, c]` (plus `[i, f, o]` for FGR).
        training: Python boolean; dropout is active only when `True`.

    Returns:
        A tuple `(h_t, new_states)`.

    Example:

    >>> x = np.random.rand(4, 10, 8).astype("float32")
    >>> cell = kr.layers.LSTMVariantCell(16, variant="NOG")
    >>> keras.layers.RNN(cell)(x).shape
    TensorShape([4, 16])
    >>> cell.kernel.shape  # blocks [i, f, c]
    TensorShape([8, 48])

    Reference:
        - [Greff et al., 2017. LSTM: A Search Space Odyssey](
          https://arxiv.org/abs/1503.04069)
        - [Gers & Schmidhuber, 2000. Recurrent nets that time and count](
          https://doi.org/10.1109/IJCNN.2000.861302)
        - [Sak et al., 2014. Long Short-Term Memory Based Recurrent Neural
          Network Architectures for Large Vocabulary Speech Recognition](
          https://arxiv.org/abs/1402.1128)
    """

    # The arguments that a subclass sets itself, with their values (e.g.
    # `PeepholeLSTMCell` is variant "V" with peepholes); it refuses them and
    # leaves them out of its config.
    _fixed_arguments = {}

    @classmethod
    def _with_fixed_arguments(cls, kwargs):
        """`kwargs` and the class's fixed arguments; refuses any of those
        in `kwargs`."""
        for name in cls._fixed_arguments:
            if name in kwargs:
                raise ValueError(
                    f"{cls.__name__} does not take `{name}`; use "
                    "kr.layers.LSTMVariantCell for other variants. "
                    f"Received: {name}={kwargs[name]!r}"
                )
        return {**kwargs, **cls._fixed_arguments}

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
        **kwargs,
    ):
        # As `keras.layers.LSTMCell`: taken from `**kwargs`, kept, and left
        # out of the config; the cell computes the same either way.
        self.implementation = kwargs.pop("implementation", 2)
        super().__init__(**kwargs)
        self.units = check_positive_int("units", units)
        self.variant = canonical_variant(variant)
        self.projection_units = check_positive_int(
            "projection_units", projection_units, allow_none=True
        )
        self.cell_clip = check_positive_float(
            "cell_clip", cell_clip, allow_none=True
        )
        self.dropout = check_rate("dropout", dropout)
        self.recurrent_dropout = check_rate(
            "recurrent_dropout", recurrent_dropout
        )

        structure = {
            "input_gate": True,
            "forget_gate": True,
            "output_gate": True,
            "input_activation": True,
            "output_activation": True,
            "peepholes": True,
            "coupled": False,
            "full_gate_recurrence": False,
        }
        structure.update(VARIANTS[self.variant])
        use_peepholes = check_bool(
            "use_peepholes", use_peepholes, allow_none=True
        )
        if use_peepholes is not None:
            if use_peepholes and self.variant == "NP":
                raise ValueError(
                    "Variant 'NP' has no peepholes. Received: "
                    f"variant={variant!r}, use_peepholes={use_peepholes!r}"
                )
            structure["peepholes"] = use_peepholes
        self.use_peepholes = structure["peepholes"]
        self._structure = structure
        # Gate blocks in Keras' LSTMCell order, restricted to those present.
        self.gate_blocks = [
            name
            for name, present in (
                ("i", structure["input_gate"] and not structure["coupled"]),
                ("f", structure["forget_gate"]),
                ("c", True),
                ("o", structure["output_gate"]),
            )
            if present
        ]

        self.activation = activations.get(activation)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.use_bias = check_bool("use_bias", use_bias)
        self.unit_forget_bias = check_bool("unit_forget_bias", unit_forget_bias)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.recurrent_initializer = initializers.get(recurrent_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.peephole_initializer = initializers.get(peephole_initializer)
        self.projection_initializer = initializers.get(projection_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.recurrent_regularizer = regularizers.get(recurrent_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.peephole_regularizer = regularizers.get(peephole_regularizer)
        self.projection_regularizer = regularizers.get(projection_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.recurrent_constraint = constraints.get(recurrent_constraint)
        self.bias_constraint = constraints.get(bias_constraint)
        self.peephole_constraint = constraints.get(peephole_constraint)
        self.projection_constraint = constraints.get(projection_constraint)
        self.seed = check_layer_seed(seed)
        self.seed_generator = keras.random.SeedGenerator(seed=seed)

        state_units = self.projection_units or units
        self.state_size = [state_units, units]
        if structure["full_gate_recurrence"]:
            self.state_size.append(3 * units)
        self.output_size = state_units

    def build(self, input_shape):
        input_shape = check_step_shape(self, input_shape, known_features=True)
        input_dim = input_shape[-1]
        units = self.units
        n_blocks = len(self.gate_blocks)
        self.kernel = self.add_weight(
            shape=(input_dim, n_blocks * units),
            name="kernel",
            initializer=self.kernel_initializer,
            regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint,
        )
        self.recurrent_kernel = self.add_weight(
            shape=(self.state_size[0], n_blocks * units),
            name="recurrent_kernel",
            initializer=self.recurrent_initializer,
            regularizer=self.recurrent_regularizer,
            constraint=self.recurrent_constraint,
        )
        if self.use_bias:
            self.bias = self.add_weight(
                shape=(n_blocks * units,),
                name="bias",
                initializer=self._bias_initializer,
                regularizer=self.bias_regularizer,
                constraint=self.bias_constraint,
            )
        else:
            self.bias = None
        self.peephole_weights = {}
        if self.use_peepholes:
            for index, gate in enumerate(("i", "f", "o")):
                if self._has_gate(gate):
                    self.peephole_weights[gate] = self.add_weight(
                        shape=(units,),
                        name=f"{_GATE_NAMES[gate]}_gate_peephole_weights",
                        initializer=reseeded(self.peephole_initializer, index),
                        regularizer=self.peephole_regularizer,
                        constraint=self.peephole_constraint,
                    )
        if self._structure["full_gate_recurrence"]:
            self.gate_recurrent_kernel = self.add_weight(
                shape=(3 * units, 3 * units),
                name="gate_recurrent_kernel",
                initializer=reseeded(self.recurrent_initializer, 1),
                regularizer=self.recurrent_regularizer,
                constraint=self.recurrent_constraint,
            )
        if self.projection_units:
            self.projection_kernel = self.add_weight(
                shape=(units, self.projection_units),
                name="projection_kernel",
                initializer=self.projection_initializer,
                regularizer=self.projection_regularizer,
                constraint=self.projection_constraint,
            )

    def _fused_lstm_blocker(self):
        """Why Keras' fused LSTM kernel cannot compute this cell, or `None`.

        `None` where the cell is exactly `keras.layers.LSTMCell`: the gates
        of variant `"NP"` (or `"V"` with `use_peepholes=False`), with the
        same weights (`kernel`, `recurrent_kernel`, `bias`, gate blocks
        `[i, f, c, o]`), no `cell_clip`, no `projection_units` and no
        `recurrent_dropout` (which `keras.layers.LSTM` does not run on
        cuDNN either). The activations, `use_bias`, `unroll` and the
        device are for Keras' backend to judge, as in `keras.layers.LSTM`.
        """
        fixed = self._fixed_arguments
        if self.variant not in ("NP", "V"):
            how = " (fixed by this class)" if "variant" in fixed else ""
            return (
                f"variant={self.variant!r}{how} changes the gates of the "
                "standard LSTM (variant='NP' is keras.layers.LSTM)"
            )
        if self.use_peepholes:
            how = (
                " (fixed by this class)"
                if "use_peepholes" in fixed
                else f" (the default of variant={self.variant!r})"
            )
            return (
                f"use_peepholes=True{how}: the gates read the cell state "
                "through peephole weights (variant='NP' has none)"
            )
        for name in ("cell_clip", "projection_units", "recurrent_dropout"):
            value = getattr(self, name)
            if value:
                return f"{name}={value!r} is not in keras.layers.LSTM"
        return None

    def _has_gate(self, gate):
        """Whether gate `i`, `f` or `o` has its own pre-activation block."""
        return gate in self.gate_blocks

    def _input_mask_width(self):
        return self.kernel.shape[0]

    def _recurrent_mask_width(self):
        return self.state_size[0]

    def _bias_initializer(self, shape, dtype=None):
        del shape
        return gate_bias(
            self.bias_initializer,
            self.gate_blocks,
            self.units,
            self.unit_forget_bias,
            dtype,
        )

    def call(self, inputs, states, training=False):
        inputs = float_or_cast(self, inputs)
        check_step_inputs(self, inputs, self.kernel.shape[0])
        input_mask, recurrent_mask = self.sequence_dropout_masks(
            inputs, training
        )
        loop_state = {
            "weights": self._step_weights(),
            "input_mask": input_mask,
            "recurrent_mask": recurrent_mask,
        }
        return self.step(inputs, states, loop_state)

    def prepare_loop(self, sequences, training=False):
        """What a time loop over `sequences` reads: `(step_inputs, loop_state)`.

        The layer's half of the loop contract (see `LSTMVariant`): call it
        once before the loop, then `step(inputs_t, states, loop_state)` at
        each step `t` of `step_inputs`.

        `loop_state` holds `"weights"`, each read and cast to the compute
        dtype once for all steps (instead of reading the variables at every
        step), and the dropout masks of the sequences, `"input_mask"` and
        `"recurrent_mask"` (`None` unless `training`). At inference
        (`training=False`) the peepholes are also broadcast to the batch, and
        the bias becomes the last row of the kernel, fed by a column of ones
        appended to `sequences`, so that no step adds it: `step_inputs` then
        has one more feature. Training keeps both as they are, and
        `step_inputs` is `sequences`. Results equal those of steps that read
        the variables, to float rounding. Why: the design note
        docs/design/lstm_variants.md ("The served step").

        Args:
            sequences: Float tensor `(batch, timesteps, features)`.
            training: Python boolean; dropout is active only when `True`.

        Returns:
            A tuple `(step_inputs, loop_state)`.
        """
        dtype = self.compute_dtype
        weights = self._step_weights()
        peepholes = weights.pop("peepholes")
        weights = {
            role: None if value is None else ops.cast(value, dtype)
            for role, value in weights.items()
        }
        weights["peepholes"] = {
            gate: ops.cast(weight, dtype) for gate, weight in peepholes.items()
        }
        batch_size = ops.shape(sequences)[0]
        input_mask, recurrent_mask = self.sequence_dropout_masks(
            sequences[:, 0, :], training
        )
        if not training:
            timesteps = ops.shape(sequences)[1]
            weights["peepholes"] = {
                gate: ops.broadcast_to(weight, (batch_size, self.units))
                for gate, weight in weights["peepholes"].items()
            }
            if self.use_bias:
                weights["kernel"] = ops.concatenate(
                    [weights["kernel"], weights["bias"][None, :]], axis=0
                )
                weights["bias"] = None
                ones = ops.ones((batch_size, timesteps, 1), sequences.dtype)
                sequences = ops.concatenate([sequences, ones], axis=-1)
        loop_state = {
            "weights": weights,
            "input_mask": input_mask,
            "recurrent_mask": recurrent_mask,
        }
        return sequences, loop_state

    def step(self, inputs, states, loop_state):
        """One step of a loop that `prepare_loop` prepared.

        Args:
            inputs: One step of `step_inputs`, `(batch, k)`.
            states: The states `[h, c]` (plus `[i, f, o]` for FGR).
            loop_state: What `prepare_loop` returned with `step_inputs`.

        Returns:
            A tuple `(h_t, new_states)`.
        """
        h_tm1, c_tm1 = states[0], states[1]
        weights = loop_state["weights"]
        if loop_state["input_mask"] is not None:
            inputs = inputs * loop_state["input_mask"]
        # Each step projects its own input, as Keras' LSTM does: one matmul
        # for all steps before the loop measured slower
        # (docs/design/lstm_variants.md).
        z = ops.matmul(inputs, weights["kernel"])
        if weights["bias"] is not None:
            z = z + weights["bias"]
        h_for_matmul = h_tm1
        if loop_state["recurrent_mask"] is not None:
            h_for_matmul = h_tm1 * loop_state["recurrent_mask"]
        z = z + ops.matmul(h_for_matmul, weights["recurrent_kernel"])
        blocks = dict(
            zip(self.gate_blocks, ops.split(z, len(self.gate_blocks), axis=-1))
        )
        if self._structure["full_gate_recurrence"]:
            gate_input = ops.split(
                ops.matmul(states[2], weights["gate_recurrent_kernel"]),
                3,
                axis=-1,
            )
            for gate, extra in zip(("i", "f", "o"), gate_input):
                blocks[gate] = blocks[gate] + extra
        peepholes = weights["peepholes"]

        def gate(name, cell_state):
            pre = blocks[name]
            if name in peepholes:
                pre = pre + peepholes[name] * cell_state
            return self.recurrent_activation(pre)

        f = gate("f", c_tm1) if self._has_gate("f") else None
        if self._has_gate("i"):
            i = gate("i", c_tm1)
        elif self._structure["coupled"]:
            i = 1.0 - f
        else:
            i = None
        g = blocks["c"]
        if self._structure["input_activation"]:
            g = self.activation(g)
        c = lstm_cell_state(i, g, f, c_tm1)
        if self.cell_clip is not None:
            c = ops.clip(c, -self.cell_clip, self.cell_clip)
        o = gate("o", c) if self._has_gate("o") else None
        output_activation = (
            self.activation if self._structure["output_activation"] else None
        )
        h = lstm_output(o, c, output_activation)
        if self.projection_units:
            h = ops.matmul(h, weights["projection_kernel"])
        new_states = [h, c]
        if self._structure["full_gate_recurrence"]:
            new_states.append(ops.concatenate([i, f, o], axis=-1))
        return h, new_states

    def _step_weights(self):
        """The weights as `call` reads them, by role."""
        return {
            "kernel": self.kernel,
            "recurrent_kernel": self.recurrent_kernel,
            "bias": self.bias,
            "peepholes": self.peephole_weights,
            "gate_recurrent_kernel": getattr(
                self, "gate_recurrent_kernel", None
            ),
            "projection_kernel": getattr(self, "projection_kernel", None),
        }

    def get_initial_state(self, batch_size=None):
        return [
            ops.zeros((batch_size, size), dtype=self.compute_dtype)
            for size in self.state_size
        ]

    def get_config(self):
        config = {
            "units": self.units,
            "variant": self.variant,
            "use_peepholes": self.use_peepholes,
            "activation": activations.serialize(self.activation),
            "recurrent_activation": activations.serialize(
                self.recurrent_activation
            ),
            "use_bias": self.use_bias,
            "unit_forget_bias": self.unit_forget_bias,
            "dropout": self.dropout,
            "recurrent_dropout": self.recurrent_dropout,
            "cell_clip": self.cell_clip,
            "projection_units": self.projection_units,
            "seed": self.seed,
        }
        config.update(
            serialize_weight_options(
                self, ("kernel", "recurrent", "bias", "peephole", "projection")
            )
        )
        for name in self._fixed_arguments:
            del config[name]
        base_config = super().get_config()
        return {**base_config, **config}
