"""Cell of the Gated-Feedback RNN of Chung et al. (2015)."""

import keras
from keras import activations
from keras import constraints
from keras import initializers
from keras import ops
from keras import regularizers

from keras_recurrent._checks import check_bool
from keras_recurrent._checks import check_layer_seed
from keras_recurrent._checks import check_option
from keras_recurrent._checks import check_positive_int
from keras_recurrent._checks import check_rate
from keras_recurrent._checks import float_or_cast
from keras_recurrent._checks import invalid
from keras_recurrent._checks import is_positive_int
from keras_recurrent.layers._dropout import SequenceDropout
from keras_recurrent.layers._gated_feedback_analysis import gate_values
from keras_recurrent.layers._gated_feedback_combiner import FeedbackCombiner
from keras_recurrent.layers._gated_feedback_combiner import split_sizes
from keras_recurrent.layers._gated_feedback_units import CELL_TYPES
from keras_recurrent.layers._gated_feedback_units import UNITS
from keras_recurrent.layers._gated_feedback_units import canonical_cell_type
from keras_recurrent.layers._gated_feedback_weights import add_weights
from keras_recurrent.layers._initializers import serialize_weight_options
from keras_recurrent.layers._known_rank import KnownRankInputs
from keras_recurrent.layers._sequence_checks import check_step_inputs
from keras_recurrent.layers._sequence_checks import check_step_shape

FEEDBACK_MODES = ("gated", "fixed", "none")
OUTPUT_MODES = ("top", "all")


def resolve_units(units, num_layers):
    """Per-layer widths from `units` (int or list) and `num_layers`."""
    num_layers = check_positive_int("num_layers", num_layers, allow_none=True)
    widths = units if isinstance(units, (list, tuple)) else [units]
    if not widths or not all(is_positive_int(u) for u in widths):
        raise invalid(
            "units",
            units,
            "a positive integer or a non-empty list of positive integers",
        )
    if isinstance(units, (list, tuple)):
        if num_layers is not None and len(units) != num_layers:
            raise ValueError(
                "Argument `units` must have one width per layer: its length "
                f"must equal `num_layers`. Received: units={units!r} "
                f"(length {len(units)}), num_layers={num_layers!r}"
            )
        return [int(u) for u in units]
    return [int(units)] * (1 if num_layers is None else num_layers)


@keras.saving.register_keras_serializable(package="keras_recurrent")
class GatedFeedbackCell(KnownRankInputs, keras.layers.Layer, SequenceDropout):
    """Cell class for the Gated-Feedback RNN (GF-RNN) of Chung et al. (2015).

    One time step of a stack of `L` recurrent layers in which layer `j` reads
    every layer `i` of the previous step through a scalar global reset gate
    `g^{i→j}` (one per sequence, pair and step). With `h^0_t = x_t` and
    `h*_{t-1} = concat(h^1_{t-1}, ..., h^L_{t-1})`:

    ```
    g^{i→j} = σ(w_g^{i→j} · h^{j-1}_t + u_g^{i→j} · h*_{t-1})   (σ logistic)
    F^j     = Σ_i g^{i→j} U^{i→j} h^i_{t-1}

    simple: h^j_t = act(W^j h^{j-1}_t + b^j + F^j)
    gru:  z = σ_r(W_z^j h^{j-1}_t + U_z^j h^j_{t-1} + b_z^j)
          r = σ_r(W_r^j h^{j-1}_t + U_r^j h^j_{t-1} + b_r^j)
          h̃ = act(W_h^j h^{j-1}_t + b_h^j + r ⊙ F^j)
          h^j_t = z ⊙ h^j_{t-1} + (1 - z) ⊙ h̃
    lstm: i, f, o = σ_r(W_{i,f,o}^j h^{j-1}_t + U_{i,f,o}^j h^j_{t-1} + b)
          c̃ = act(W_c^j h^{j-1}_t + b_c^j + F^j)
          c^j_t = f ⊙ c^j_{t-1} + i ⊙ c̃,   h^j_t = o ⊙ act(c^j_t)
    ```

    `act` is `activation` (tanh) and `σ_r` is `recurrent_activation`
    (sigmoid); the global reset gates always use the logistic sigmoid and have
    no bias, as in the paper. The GRU is Keras' `GRUCell(reset_after=True)`
    form (the reset gate multiplies the recurrent product, Keras'
    interpolation `z ⊙ h_{t-1} + (1 - z) ⊙ h̃`) without recurrent bias.

    `feedback="gated"` is the paper's model; `"fixed"` sets every
    `g^{i→j} = 1` (the paper's ablation); `"none"` keeps only the `i = j`
    terms with `g = 1`, which is exactly a stacked RNN (Keras'
    `StackedRNNCells` of `SimpleRNNCell`, `GRUCell(reset_after=True)` or
    `LSTMCell`).

    Weights, with layers numbered `j = 0 .. L-1` (paper's layer `j + 1`),
    `n_j = units[j]`, `m_j` = the input width of layer `j` (`input_dim` for
    `j = 0`, else `n_{j-1}`), `N = Σ_j n_j` and `G` the number of blocks of
    the unit type (`simple`: 1 `[h]`; `gru`: 3 `[z, r, h]`; `lstm`: 4
    `[i, f, c, o]`):

    - `kernel_j`: `(m_j, G * n_j)`, the `W^j` blocks in that order.
    - `recurrent_kernel_j` (gru, lstm): `(n_j, (G - 1) * n_j)`, the gates'
      own-layer `U^j` blocks: `[z, r]` for gru, `[i, f, o]` for lstm.
    - `feedback_kernel_j`: `(N, n_j)` for `"gated"` and `"fixed"`, rows in
      layer order, rows of layer `i` = `U^{i→j}` (the candidate's); `(n_j,
      n_j)` = `U^{j→j}` for `"none"`.
    - `bias_j`: `(G * n_j,)`, if `use_bias`.
    - `gate_kernel_j` (`"gated"`): `(m_j, L)`; column `i` is `w_g^{i→j}`.
    - `gate_recurrent_kernel` (`"gated"`): `(N, L * L)`; column `j * L + i`
      is `u_g^{i→j}`.

    `cell.weights` (and `get_weights`) list them layer by layer, `kernel_j`,
    `recurrent_kernel_j`, `feedback_kernel_j`, `bias_j`, `gate_kernel_j`,
    then `gate_recurrent_kernel`. The cell gives the same numbers run by
    `keras.layers.RNN` or by `GatedFeedbackRNN` (which orders a step's
    matmuls for speed: see docs/design/gated_feedback.md).

    States, in this order: `[h_0, h_1, ..., h_{L-1}]` for simple and gru;
    `[h_0, c_0, h_1, c_1, ..., h_{L-1}, c_{L-1}]` for lstm (each layer in
    Keras' `[h, c]` order, as `StackedRNNCells` flattens them). The output is
    `h_{L-1}` (`output_mode="top"`) or `concat(h_0, ..., h_{L-1})` (`"all"`).

    Dropout: `dropout` drops each layer's input `h^{j-1}_t` (one mask per
    sequence and layer, made as one `(batch, m_0 + ... + m_{L-1})` mask);
    `recurrent_dropout` drops `h*_{t-1}` (one `(batch, N)` mask per
    sequence) wherever it enters a matmul.

    Args:
        units: Positive integer (the same width for every layer) or list of
            positive integers, one width per layer.
        num_layers: Positive integer, the number of layers `L`. `None`
            (default) means `len(units)` for a list and 1 for an integer.
        cell_type: `"simple"` (as `keras.layers.SimpleRNN`), `"gru"` or
            `"lstm"` (options are case-insensitive). Defaults to `"simple"`.
            `"tanh"`, the old name of `"simple"`, still works and warns.
        feedback: `"gated"`, `"fixed"` or `"none"`. Defaults to `"gated"`.
        output_mode: `"top"` (the last layer's `h`) or `"all"` (every layer's
            `h`, concatenated). Defaults to `"top"`.
        activation: Activation of the candidate and (lstm) cell output.
            Defaults to `"tanh"`.
        recurrent_activation: Activation of the gru/lstm gates.
            Defaults to `"sigmoid"`.
        use_bias: Whether the layers have `bias_j`. Defaults to `True`.
        kernel_initializer: Initializer of `kernel_j` and `gate_kernel_j`.
            Defaults to `"glorot_uniform"`.
        recurrent_initializer: Initializer of `recurrent_kernel_j`,
            `feedback_kernel_j` and `gate_recurrent_kernel`.
            Defaults to `"orthogonal"`.
        bias_initializer: Initializer of `bias_j`. Defaults to `"zeros"`.
        unit_forget_bias: For lstm, start the forget gate bias at 1.
            Defaults to `True`.
        kernel_regularizer, recurrent_regularizer, bias_regularizer: Optional
            regularizers of the weights of the matching initializer.
        kernel_constraint, recurrent_constraint, bias_constraint: Optional
            constraints, likewise.
        dropout: Float in [0, 1), input dropout rate. Defaults to 0.
        recurrent_dropout: Float in [0, 1), dropout rate of `h*_{t-1}`.
            Defaults to 0.
        seed: Random seed for dropout.
        **kwargs: Standard layer keyword arguments, such as `name` and
            `dtype`; and `implementation` (`1` or `2`), taken as Keras'
            `LSTMCell` and `GRUCell` take it: kept as `cell.implementation`,
            out of the config, and changing nothing.

    Call arguments:
        inputs: A 2D tensor `(batch, input_dim)`; integer and boolean
            values are cast to the compute dtype, as Keras' cells take them.
        states: List of state tensors, in the order above.
        training: Python boolean; dropout is active only when `True`.

    Returns:
        A tuple `(output, new_states)`.

    Example:

    >>> x = np.random.rand(4, 10, 8).astype("float32")
    >>> cell = kr.layers.GatedFeedbackCell([16, 12], cell_type="lstm")
    >>> keras.layers.RNN(cell)(x).shape
    TensorShape([4, 12])
    >>> cell.state_size
    [16, 16, 12, 12]
    >>> cell.gate_recurrent_kernel.shape
    TensorShape([28, 4])

    Reference:
        - [Chung et al., 2015. Gated Feedback Recurrent Neural Networks](
          https://arxiv.org/abs/1502.02367)
    """

    def __init__(
        self,
        units,
        num_layers=None,
        cell_type="simple",
        feedback="gated",
        output_mode="top",
        activation="tanh",
        recurrent_activation="sigmoid",
        use_bias=True,
        kernel_initializer="glorot_uniform",
        recurrent_initializer="orthogonal",
        bias_initializer="zeros",
        unit_forget_bias=True,
        kernel_regularizer=None,
        recurrent_regularizer=None,
        bias_regularizer=None,
        kernel_constraint=None,
        recurrent_constraint=None,
        bias_constraint=None,
        dropout=0.0,
        recurrent_dropout=0.0,
        seed=None,
        **kwargs,
    ):
        # As Keras' `LSTMCell` and `GRUCell`: taken from `**kwargs`, kept,
        # and left out of the config; the cell computes the same either way.
        self.implementation = kwargs.pop("implementation", 2)
        super().__init__(**kwargs)
        self.layer_units = resolve_units(units, num_layers)
        self.units = (
            list(self.layer_units)
            if isinstance(units, (list, tuple))
            else units
        )
        self.num_layers = len(self.layer_units)
        self.cell_type = canonical_cell_type(cell_type)
        self.feedback = check_option("feedback", feedback, FEEDBACK_MODES)
        self.output_mode = check_option(
            "output_mode", output_mode, OUTPUT_MODES
        )
        self.dropout = check_rate("dropout", dropout)
        self.recurrent_dropout = check_rate(
            "recurrent_dropout", recurrent_dropout
        )
        self.activation = activations.get(activation)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.use_bias = check_bool("use_bias", use_bias)
        self.unit_forget_bias = check_bool("unit_forget_bias", unit_forget_bias)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.recurrent_initializer = initializers.get(recurrent_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.recurrent_regularizer = regularizers.get(recurrent_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.recurrent_constraint = constraints.get(recurrent_constraint)
        self.bias_constraint = constraints.get(bias_constraint)
        self.seed = check_layer_seed(seed)
        self.seed_generator = keras.random.SeedGenerator(seed=seed)

        self.gate_blocks = CELL_TYPES[self.cell_type]
        self._unit = UNITS[self.cell_type](
            self.activation, self.recurrent_activation
        )
        self._combiner = FeedbackCombiner(
            self.feedback, self.layer_units, len(self.gate_blocks) - 1
        )
        if self._unit.has_cell_state:
            self.state_size = [n for n in self.layer_units for _ in range(2)]
        else:
            self.state_size = list(self.layer_units)
        self.output_size = (
            self.layer_units[-1]
            if self.output_mode == "top"
            else sum(self.layer_units)
        )

    def build(self, input_shape):
        input_shape = check_step_shape(self, input_shape, known_features=True)
        self.input_widths = [int(input_shape[-1])] + self.layer_units[:-1]
        weights = add_weights(self)
        self.kernels = weights["kernels"]
        self.recurrent_kernels = weights["recurrent_kernels"]
        self.feedback_kernels = weights["feedback_kernels"]
        self.biases = weights["biases"]
        self.gate_kernels = weights["gate_kernels"]
        if self.feedback == "gated":
            self.gate_recurrent_kernel = weights["gate_recurrent_kernel"]

    def _input_mask_width(self):
        # One mask for every layer's input, made at once.
        return sum(self.input_widths)

    def _recurrent_mask_width(self):
        return sum(self.layer_units)

    def project_inputs(self, sequences, input_mask=None):
        """Layer 0's input terms for all steps at once, `(batch, time, k)`.

        `[x_t W^0 + b^0, x_t w_g^{·→0}]` (the second part for `"gated"`
        only), with `input_mask` (layer 0's input dropout mask, if any)
        applied to `x_t`. Nothing here depends on `t - 1`, so on PyTorch
        `prepare_loop` computes it in one matmul before the time loop and
        the steps read it in place of `x_t`.
        """
        if input_mask is not None:
            sequences = sequences * ops.expand_dims(input_mask, 1)
        kernel = self.kernels[0]
        if self.feedback == "gated":
            kernel = ops.concatenate([kernel, self.gate_kernels[0]], axis=-1)
        projected = ops.matmul(sequences, kernel)
        if self.use_bias:
            bias = self.biases[0]
            if self.feedback == "gated":
                bias = ops.pad(bias, [(0, self.num_layers)])
            projected = projected + bias
        return projected

    def feedback_weights(self):
        """For `"gated"`: per source layer `i`, its recurrent matrices side
        by side, `[U^i, U^{i→0}, ..., U^{i→L-1}]`; `None` otherwise.

        See docs/design/gated_feedback.md: with them a step makes the
        feedback products before the gates. `prepare_loop` arranges them
        once for all steps.
        """
        return self._combiner.arrange_weights(
            self.feedback_kernels, self.recurrent_kernels
        )

    def prepare_loop(self, sequences, training=False):
        """What a time loop over `sequences` reads: `(step_inputs, loop_state)`.

        The layer's half of the loop contract (see `GatedFeedbackRNN`): call
        it once before the loop, then `step(inputs_t, states, loop_state)`
        at each step `t` of `step_inputs`.

        `loop_state` holds `"feedback_weights"` (`feedback_weights()`,
        arranged once), the dropout masks of the sequences split by layer,
        `"input_masks"` and `"recurrent_masks"` (`None` unless `training`),
        and `"inputs_projected"`. On PyTorch, whose loop runs step by step in
        Python, `step_inputs` is `project_inputs(sequences)`, layer 0's input
        terms made in one matmul, and `"inputs_projected"` is `True`;
        elsewhere `step_inputs` is `sequences`. (TensorFlow's loop makes the
        gradient of what it reads O(T) per step, a train step quadratic in
        T, and JAX measured no faster: docs/design/gated_feedback.md.)

        Args:
            sequences: Float tensor `(batch, timesteps, input_dim)`.
            training: Python boolean; dropout is active only when `True`.

        Returns:
            A tuple `(step_inputs, loop_state)`.
        """
        loop_state = self._loop_state(sequences[:, 0, :], training)
        loop_state["feedback_weights"] = self.feedback_weights()
        if keras.backend.backend() == "torch":
            input_masks = loop_state["input_masks"]
            sequences = self.project_inputs(
                sequences, None if input_masks is None else input_masks[0]
            )
            loop_state["inputs_projected"] = True
        return sequences, loop_state

    def call(self, inputs, states, training=False):
        inputs = float_or_cast(self, inputs)
        check_step_inputs(self, inputs, self.input_widths[0])
        return self.step(inputs, states, self._loop_state(inputs, training))

    def _loop_state(self, step_input, training):
        """The `loop_state` of one `call`: the variables as they are, and
        the dropout masks split by layer."""
        input_masks, recurrent_masks = self.sequence_dropout_masks(
            step_input, training
        )
        if input_masks is not None:
            input_masks = split_sizes(input_masks, self.input_widths)
        if recurrent_masks is not None:
            recurrent_masks = split_sizes(recurrent_masks, self.layer_units)
        return {
            "inputs_projected": False,
            "feedback_weights": None,
            "input_masks": input_masks,
            "recurrent_masks": recurrent_masks,
        }

    def step(self, inputs, states, loop_state, *, return_gates=False):
        """One step of a loop that `prepare_loop` prepared.

        Args:
            inputs: One step of `step_inputs`.
            states: The states, in the order of the class docstring.
            loop_state: What `prepare_loop` returned with `step_inputs`.
            return_gates: Whether to also return the gates of the step.

        Returns:
            A tuple `(output, new_states)`, and with `return_gates` also the
            gates `(batch, L, L)`: `gates[:, i, j]` is `g^{i→j}_t` (ones for
            `"fixed"`, the identity for `"none"`).
        """
        unit, combiner = self._unit, self._combiner
        h_prev = list(states[::2] if unit.has_cell_state else states)
        c_prev = (
            list(states[1::2])
            if unit.has_cell_state
            else [None] * self.num_layers
        )
        input_masks = loop_state["input_masks"] or [None] * self.num_layers
        # The (dropped-out) h^i_{t-1} that the recurrent matmuls read, and
        # their concatenation h*_{t-1}, which only the feedback reads.
        h_rec = h_prev
        if loop_state["recurrent_masks"] is not None:
            h_rec = [
                h * m for h, m in zip(h_prev, loop_state["recurrent_masks"])
            ]
        h_star = h_rec[0]
        if self.num_layers > 1 and self.feedback != "none":
            h_star = ops.concatenate(h_rec, axis=-1)
        terms = combiner.recurrent_terms(
            h_rec,
            h_star,
            getattr(self, "gate_recurrent_kernel", None),
            loop_state["feedback_weights"],
        )
        layer_input = inputs
        new_h, new_states, gates = [], [], []
        for j in range(self.num_layers):
            if j == 0 and loop_state["inputs_projected"]:
                # `[x W^0 + b^0, x w_g^{·→0}]`, made for all steps before
                # the loop (see `project_inputs`).
                width = len(self.gate_blocks) * self.layer_units[0]
                z, gate_input = inputs[:, :width], inputs[:, width:]
            else:
                z, gate_input = self._input_terms(
                    j, layer_input, input_masks[j]
                )
            feedback, g = combiner.layer_feedback(
                j, gate_input, terms, h_star, h_rec, self.feedback_kernels[j]
            )
            gates.append(g)
            recurrent = None
            if self.recurrent_kernels:
                recurrent = combiner.own_recurrent(
                    terms, j, h_rec, self.recurrent_kernels[j]
                )
            h, layer_states = unit.step(
                z, recurrent, feedback, h_prev[j], c_prev[j]
            )
            new_states.extend(layer_states)
            new_h.append(h)
            layer_input = h
        output = (
            new_h[-1]
            if self.output_mode == "top" or self.num_layers == 1
            else ops.concatenate(new_h, axis=-1)
        )
        if return_gates:
            return output, new_states, combiner.all_gates(gates, h_rec)
        return output, new_states

    def _input_terms(self, j, layer_input, input_mask):
        """Layer `j`'s input terms: `h^{j-1}_t W^j + b^j` and (`"gated"`)
        `h^{j-1}_t w_g^{·→j}`, else `None`."""
        u = layer_input
        if input_mask is not None:
            u = u * input_mask
        z = ops.matmul(u, self.kernels[j])
        if self.use_bias:
            z = z + self.biases[j]
        gate_input = None
        if self.feedback == "gated":
            gate_input = ops.matmul(u, self.gate_kernels[j])
        return z, gate_input

    def gate_values(self, sequences, mask=None, initial_state=None):
        """The global reset gates `g^{i→j}_t` over a batch of sequences.

        Args:
            sequences: Float tensor `(batch, timesteps, input_dim)`.
            mask: Optional boolean tensor `(batch, timesteps)`; masked steps
                keep the states and get gates 0.
            initial_state: Optional list of initial states (zeros if `None`).

        Returns:
            Tensor `(batch, timesteps, L, L)`; `[b, t, i, j]` is `g^{i→j}_t`.
        """
        return gate_values(self, sequences, mask, initial_state)

    def get_initial_state(self, batch_size=None):
        return [
            ops.zeros((batch_size, size), dtype=self.compute_dtype)
            for size in self.state_size
        ]

    def get_config(self):
        config = {
            "units": self.units,
            "num_layers": self.num_layers,
            "cell_type": self.cell_type,
            "feedback": self.feedback,
            "output_mode": self.output_mode,
            "activation": activations.serialize(self.activation),
            "recurrent_activation": activations.serialize(
                self.recurrent_activation
            ),
            "use_bias": self.use_bias,
            "unit_forget_bias": self.unit_forget_bias,
            "dropout": self.dropout,
            "recurrent_dropout": self.recurrent_dropout,
            "seed": self.seed,
        }
        config.update(
            serialize_weight_options(self, ("kernel", "recurrent", "bias"))
        )
        base_config = super().get_config()
        return {**base_config, **config}
