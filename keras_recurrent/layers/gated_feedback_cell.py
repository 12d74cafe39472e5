"""Cell of the Gated-Feedback RNN of Chung et al. (2015)."""

import collections

import keras
import numpy as np
from keras import activations
from keras import constraints
from keras import initializers
from keras import ops
from keras import regularizers

from keras_recurrent._checks import check_bool
from keras_recurrent._checks import check_float_dtype
from keras_recurrent._checks import check_option
from keras_recurrent._checks import check_positive_int
from keras_recurrent._checks import check_rate
from keras_recurrent._checks import invalid
from keras_recurrent._checks import is_positive_int
from keras_recurrent.layers._dropout import DropoutRNNCellMixin
from keras_recurrent.layers._initializers import gate_bias
from keras_recurrent.layers._initializers import reseeded
from keras_recurrent.layers._initializers import serialize_weight_options
from keras_recurrent.layers._known_rank import KnownRankInputs
from keras_recurrent.layers._sequence_checks import check_mask
from keras_recurrent.layers._sequence_checks import check_sequences
from keras_recurrent.layers._sequence_checks import check_step_inputs
from keras_recurrent.layers._sequence_checks import check_step_shape
from keras_recurrent.layers._sequence_checks import zero_masked_steps

# Pre-activation blocks of `kernel_j` per unit type (Keras' cell orders).
CELL_TYPES = {
    "tanh": ("h",),
    "gru": ("z", "r", "h"),
    "lstm": ("i", "f", "c", "o"),
}
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


def _split_sizes(x, sizes, axis=-1):
    """`x` cut into parts of `sizes` along `axis` (equal parts in one
    `split` by count, which builds fewer ops than split points)."""
    if len(sizes) == 1:
        return [x]
    if len(set(sizes)) == 1:
        return ops.split(x, len(sizes), axis=axis)
    return ops.split(x, [int(i) for i in np.cumsum(sizes)[:-1]], axis=axis)


@keras.saving.register_keras_serializable(package="keras_recurrent")
class GatedFeedbackCell(
    KnownRankInputs, keras.layers.Layer, DropoutRNNCellMixin
):
    """Cell class for the Gated-Feedback RNN (GF-RNN) of Chung et al. (2015).

    One time step of a stack of `L` recurrent layers in which layer `j` reads
    every layer `i` of the previous step through a scalar global reset gate
    `g^{i→j}` (one per sequence, pair and step). With `h^0_t = x_t` and
    `h*_{t-1} = concat(h^1_{t-1}, ..., h^L_{t-1})`:

    ```
    g^{i→j} = σ(w_g^{i→j} · h^{j-1}_t + u_g^{i→j} · h*_{t-1})   (σ logistic)
    F^j     = Σ_i g^{i→j} U^{i→j} h^i_{t-1}

    tanh: h^j_t = act(W^j h^{j-1}_t + b^j + F^j)
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
    the unit type (`tanh`: 1 `[h]`; `gru`: 3 `[z, r, h]`; `lstm`: 4
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

    States, in this order: `[h_0, h_1, ..., h_{L-1}]` for tanh and gru;
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
        cell_type: `"tanh"`, `"gru"` or `"lstm"` (options are
            case-insensitive). Defaults to `"tanh"`.
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
        **kwargs: Standard layer keyword arguments, such as `name` and `dtype`.

    Call arguments:
        inputs: A 2D float tensor `(batch, input_dim)`.
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
        cell_type="tanh",
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
        super().__init__(**kwargs)
        self.layer_units = resolve_units(units, num_layers)
        self.units = (
            list(self.layer_units)
            if isinstance(units, (list, tuple))
            else units
        )
        self.num_layers = len(self.layer_units)
        self.cell_type = check_option("cell_type", cell_type, CELL_TYPES)
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
        self.seed = seed
        self.seed_generator = keras.random.SeedGenerator(seed=seed)

        self.gate_blocks = CELL_TYPES[self.cell_type]
        if self.cell_type == "lstm":
            self.state_size = [n for n in self.layer_units for _ in range(2)]
        else:
            self.state_size = list(self.layer_units)
        self.output_size = (
            self.layer_units[-1]
            if self.output_mode == "top"
            else sum(self.layer_units)
        )
        # The 0/1 matrix `(L, sum(units))` that broadcasts g^{i→j} over
        # layer i's units (for unequal widths; equal widths broadcast
        # through a reshape).
        self._gate_expansion = np.repeat(
            np.eye(self.num_layers), self.layer_units, axis=1
        )
        # Between `begin_projected_loop` and `end_projected_loop`: what the
        # steps of that loop read (`None` for a cell run alone).
        self._projected_loop = None

    def build(self, input_shape):
        input_shape = check_step_shape(self, input_shape, known_features=True)
        num_layers, widths = self.num_layers, self.layer_units
        num_blocks = len(self.gate_blocks)
        self.input_widths = [int(input_shape[-1])] + widths[:-1]
        total = sum(widths)
        # How many weights each initializer has started so far: each gets
        # its own seed offset, so that layers of equal widths do not start
        # out equal.
        uses = collections.Counter()

        def weight(name, shape, kind):
            uses[kind] += 1
            return self.add_weight(
                shape=shape,
                name=name,
                initializer=reseeded(
                    getattr(self, f"{kind}_initializer"), uses[kind] - 1
                ),
                regularizer=getattr(self, f"{kind}_regularizer"),
                constraint=getattr(self, f"{kind}_constraint"),
            )

        self.kernels, self.recurrent_kernels = [], []
        self.feedback_kernels, self.biases, self.gate_kernels = [], [], []
        for j, (m, n) in enumerate(zip(self.input_widths, widths)):
            self.kernels.append(
                weight(f"kernel_{j}", (m, num_blocks * n), "kernel")
            )
            if num_blocks > 1:
                self.recurrent_kernels.append(
                    weight(
                        f"recurrent_kernel_{j}",
                        (n, (num_blocks - 1) * n),
                        "recurrent",
                    )
                )
            rows = n if self.feedback == "none" else total
            self.feedback_kernels.append(
                weight(f"feedback_kernel_{j}", (rows, n), "recurrent")
            )
            if self.use_bias:
                self.biases.append(
                    self.add_weight(
                        shape=(num_blocks * n,),
                        name=f"bias_{j}",
                        initializer=self._bias_initializer(n, j),
                        regularizer=self.bias_regularizer,
                        constraint=self.bias_constraint,
                    )
                )
            if self.feedback == "gated":
                self.gate_kernels.append(
                    weight(f"gate_kernel_{j}", (m, num_layers), "kernel")
                )
        if self.feedback == "gated":
            self.gate_recurrent_kernel = weight(
                "gate_recurrent_kernel", (total, num_layers**2), "recurrent"
            )

    def _bias_initializer(self, units, layer):
        def initializer(shape, dtype=None):
            del shape
            return gate_bias(
                self.bias_initializer,
                self.gate_blocks,
                units,
                self.unit_forget_bias,
                dtype,
                seed_offset=layer * len(self.gate_blocks),
            )

        return initializer

    def get_dropout_mask(self, step_input):
        if getattr(self, "_dropout_mask", None) is None and self.dropout > 0:
            ones = ops.ones(
                (ops.shape(step_input)[0], sum(self.input_widths)),
                dtype=step_input.dtype,
            )
            self._dropout_mask = self._create_dropout_mask(ones, self.dropout)
        return getattr(self, "_dropout_mask", None)

    def get_recurrent_dropout_mask(self, step_state):
        if (
            getattr(self, "_recurrent_dropout_mask", None) is None
            and self.recurrent_dropout > 0
        ):
            ones = ops.ones(
                (ops.shape(step_state)[0], sum(self.layer_units)),
                dtype=step_state.dtype,
            )
            self._recurrent_dropout_mask = self._create_dropout_mask(
                ones, self.recurrent_dropout
            )
        return getattr(self, "_recurrent_dropout_mask", None)

    def project_inputs(self, sequences, training=False):
        """Layer 0's input terms for all steps at once, `(batch, time, k)`.

        `[x_t W^0 + b^0, x_t w_g^{·→0}]` (the second part for `"gated"`
        only), with the input dropout mask of the sequence applied to `x_t`.
        Nothing here depends on `t - 1`, so on PyTorch `GatedFeedbackRNN`
        computes it in one matmul before the time loop and the cell reads it
        in place of `x_t`.
        """
        if training and self.dropout > 0:
            mask = self.get_dropout_mask(sequences[:, 0, :])
            mask = mask[:, : self.input_widths[0]]
            sequences = sequences * ops.expand_dims(mask, 1)
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
        by side, `[U^i, U^{i→0}, ..., U^{i→L-1}]`.

        `(n_i, (G - 1) * n_i + N)`: `recurrent_kernel_i` (gru and lstm
        only), then the rows of layer `i` of every `feedback_kernel_j`. With
        them a step makes every product of `h^i_{t-1}` at its start, in one
        matmul per source layer, and weights the feedback products by the
        gates after: the feedback matmuls then need not wait for the gates,
        which wait for the layer below, and run alongside them. (Scaling
        `h*` by the gates first puts each layer's feedback matmul after its
        gates.) `GatedFeedbackRNN` arranges them once, before its time loop;
        `None` for the other feedback modes.
        """
        if self.feedback != "gated":
            return None
        rows = [
            _split_sizes(kernel, self.layer_units, axis=0)
            for kernel in self.feedback_kernels
        ]
        return [
            ops.concatenate(
                self.recurrent_kernels[i : i + 1]
                + [kernel_rows[i] for kernel_rows in rows],
                axis=1,
            )
            for i in range(self.num_layers)
        ]

    def begin_projected_loop(
        self, sequences, training=False, inputs_projected=True
    ):
        """Starts a time loop: returns what the loop reads in place of `x_t`.

        Until `end_projected_loop()`, each `call` makes the feedback
        products from `feedback_weights()`, arranged here once for all
        steps, and, with `inputs_projected`, reads its `inputs` as one step
        of `project_inputs(sequences)` (returned here) instead of `x_t`
        (`sequences`, returned as they are). `GatedFeedbackRNN` calls both
        around its time loop; `step` takes the same two things as arguments.
        """
        self._projected_loop = {
            "inputs_projected": inputs_projected,
            "feedback_weights": self.feedback_weights(),
        }
        if inputs_projected:
            return self.project_inputs(sequences, training=training)
        return sequences

    def end_projected_loop(self):
        """Ends what `begin_projected_loop` started."""
        self._projected_loop = None

    def call(self, inputs, states, training=False):
        check_float_dtype(self, inputs)
        loop = self._projected_loop or {}
        inputs_projected = loop.get("inputs_projected", False)
        if not inputs_projected:
            check_step_inputs(self, inputs, self.input_widths[0])
        output, new_states, _ = self.step(
            inputs,
            states,
            training=training,
            inputs_projected=inputs_projected,
            feedback_weights=loop.get("feedback_weights"),
        )
        return output, new_states

    def step(
        self,
        inputs,
        states,
        training=False,
        return_gates=False,
        *,
        inputs_projected=False,
        feedback_weights=None,
    ):
        """One step; also returns the gates `(batch, L, L)` if asked.

        `gates[:, i, j]` is `g^{i→j}_t` (ones for `"fixed"`, the identity for
        `"none"`); `None` unless `return_gates`. With `inputs_projected`,
        `inputs` are one step of `project_inputs`; with `feedback_weights`
        (from `feedback_weights()`, `"gated"` only), the step makes the
        feedback products before the gates.
        """
        lstm = self.cell_type == "lstm"
        h_prev = list(states[::2] if lstm else states)
        c_prev = list(states[1::2]) if lstm else [None] * self.num_layers
        input_masks, h_rec = self._step_dropout(inputs, h_prev, training)
        h_star = h_rec[0]
        if self.num_layers > 1 and self.feedback != "none":
            h_star = ops.concatenate(h_rec, axis=-1)
        recurrent_terms = self._recurrent_terms(h_rec, h_star, feedback_weights)
        unit = getattr(self, f"_{self.cell_type}_unit")
        layer_input = inputs
        new_h, new_states, gates = [], [], []
        for j in range(self.num_layers):
            if j == 0 and inputs_projected:
                # `[x W^0 + b^0, x w_g^{·→0}]`, made for all steps before
                # the loop (see `project_inputs`).
                width = len(self.gate_blocks) * self.layer_units[0]
                z, gate_input = inputs[:, :width], inputs[:, width:]
            else:
                z, gate_input = self._input_terms(
                    j, layer_input, input_masks[j]
                )
            feedback, g = self._feedback(
                j, gate_input, recurrent_terms, h_star, h_rec
            )
            gates.append(g)
            recurrent = None
            if self.cell_type != "tanh":
                recurrent = self._own_recurrent(recurrent_terms, j, h_rec)
            h, layer_states = unit(z, recurrent, feedback, h_prev[j], c_prev[j])
            new_states.extend(layer_states)
            new_h.append(h)
            layer_input = h
        output = (
            new_h[-1]
            if self.output_mode == "top" or self.num_layers == 1
            else ops.concatenate(new_h, axis=-1)
        )
        all_gates = self._all_gates(gates, h_rec) if return_gates else None
        return output, new_states, all_gates

    def _step_dropout(self, inputs, h_prev, training):
        """The input dropout mask of each layer (or `None`s) and the
        (dropped-out) `h^i_{t-1}` that the recurrent matmuls read."""
        input_masks = [None] * self.num_layers
        if training and self.dropout > 0:
            mask = self.get_dropout_mask(inputs)
            input_masks = _split_sizes(mask, self.input_widths)
        # The (dropped-out) h^i_{t-1} that the recurrent matmuls read, and
        # their concatenation h*_{t-1}, which only the feedback reads.
        h_rec = h_prev
        if training and self.recurrent_dropout > 0:
            mask = self.get_recurrent_dropout_mask(h_prev[0])
            masks = _split_sizes(mask, self.layer_units)
            h_rec = [h * m for h, m in zip(h_prev, masks)]
        return input_masks, h_rec

    def _recurrent_terms(self, h_rec, h_star, feedback_weights):
        """What a `"gated"` step computes of `h*_{t-1}` for all layers at
        once, before the layers: a dict (empty for the other modes)."""
        if self.feedback != "gated":
            return {}
        num_layers = self.num_layers
        # u_g^{i→j} · h*_{t-1} for every pair at once, one split into
        # the layers' parts (cheaper than a slice per layer, backward).
        terms = {
            "gate_recurrent": ops.split(
                ops.matmul(h_star, self.gate_recurrent_kernel),
                num_layers,
                axis=-1,
            )
        }
        if feedback_weights is None:
            terms["h_blocks"] = self._layer_blocks(h_star)
            return terms
        # `own_recurrent[i]` = h^i_{t-1} U^i (gru, lstm) and
        # `pair_products[i][j]` = h^i_{t-1} U^{i→j}.
        own = len(self.gate_blocks) - 1
        pair_products, own_recurrent = [], []
        for h, kernel, width in zip(h_rec, feedback_weights, self.layer_units):
            parts = _split_sizes(
                ops.matmul(h, kernel),
                [own * width] * (own > 0) + self.layer_units,
            )
            if own:
                own_recurrent.append(parts[0])
            pair_products.append(parts[-num_layers:])
        terms["pair_products"] = pair_products
        if own:
            terms["own_recurrent"] = own_recurrent
        return terms

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

    def _feedback(self, j, gate_input, recurrent_terms, h_star, h_rec):
        """Layer `j`'s feedback `F^j` and its gates `g^{·→j}` (`"gated"`;
        else `None`)."""
        if self.feedback == "fixed":
            return ops.matmul(h_star, self.feedback_kernels[j]), None
        if self.feedback == "none":
            return ops.matmul(h_rec[j], self.feedback_kernels[j]), None
        g = ops.sigmoid(gate_input + recurrent_terms["gate_recurrent"][j])
        pair_products = recurrent_terms.get("pair_products")
        if pair_products is None:
            # Σ_i g^{i→j} U^{i→j} h^i = (h* ⊙ g broadcast per
            # layer) U.
            feedback = ops.matmul(
                self._scale_by_layer(h_star, recurrent_terms["h_blocks"], g),
                self.feedback_kernels[j],
            )
            return feedback, g
        # Σ_i g^{i→j} (h^i U^{i→j}).
        num_layers = self.num_layers
        g_columns = ops.split(g, num_layers, axis=-1) if num_layers > 1 else [g]
        feedback = g_columns[0] * pair_products[0][j]
        for i in range(1, num_layers):
            feedback = feedback + g_columns[i] * pair_products[i][j]
        return feedback, g

    def _own_recurrent(self, recurrent_terms, j, h_rec):
        """`h^j_{t-1} U^j`, the gru/lstm gates' own-layer recurrent term."""
        own_recurrent = recurrent_terms.get("own_recurrent")
        if own_recurrent is not None:
            return own_recurrent[j]
        return ops.matmul(h_rec[j], self.recurrent_kernels[j])

    def _tanh_unit(self, z, recurrent, feedback, h, c):
        """A tanh layer's new `h` and states `[h]`."""
        del recurrent, h, c
        h = self.activation(z + feedback)
        return h, [h]

    def _gru_unit(self, z, recurrent, feedback, h, c):
        """A GRU layer's new `h` and states `[h]`."""
        del c
        z_x, r_x, h_x = ops.split(z, 3, axis=-1)
        z_h, r_h = ops.split(recurrent, 2, axis=-1)
        update = self.recurrent_activation(z_x + z_h)
        reset = self.recurrent_activation(r_x + r_h)
        candidate = self.activation(h_x + reset * feedback)
        h = update * h + (1.0 - update) * candidate
        return h, [h]

    def _lstm_unit(self, z, recurrent, feedback, h, c):
        """An LSTM layer's new `h` and states `[h, c]`."""
        del h
        i_x, f_x, c_x, o_x = ops.split(z, 4, axis=-1)
        i_h, f_h, o_h = ops.split(recurrent, 3, axis=-1)
        i = self.recurrent_activation(i_x + i_h)
        f = self.recurrent_activation(f_x + f_h)
        o = self.recurrent_activation(o_x + o_h)
        c = f * c + i * self.activation(c_x + feedback)
        h = o * self.activation(c)
        return h, [h, c]

    def _all_gates(self, gates, h_rec):
        """The gates of a step `(batch, L, L)`: those of `"gated"`, ones for
        `"fixed"`, the identity for `"none"`."""
        if self.feedback == "gated":
            return ops.stack(gates, axis=2)
        num_layers = self.num_layers
        pattern = (
            np.ones((num_layers, num_layers))
            if self.feedback == "fixed"
            else np.eye(num_layers)
        )
        return ops.zeros_like(h_rec[0][:, :1, None]) + ops.cast(
            pattern, h_rec[0].dtype
        )

    def _layer_blocks(self, h_star):
        """`h*` as `(batch, L, units)` if the layers' widths are equal (made
        once per step for all layers' gates), else `None`."""
        widths = self.layer_units
        if len(set(widths)) > 1:
            return None
        return ops.reshape(h_star, (-1, self.num_layers, widths[0]))

    def _scale_by_layer(self, h_star, h_blocks, g):
        """`h*` with layer i's units multiplied by `g[:, i]`."""
        if h_blocks is not None:
            # A reshape and a broadcast: cheaper than a gather or a matmul,
            # forward and backward.
            return ops.reshape(
                h_blocks * ops.expand_dims(g, -1), (-1, sum(self.layer_units))
            )
        expansion = ops.cast(self._gate_expansion, g.dtype)
        return h_star * ops.matmul(g, expansion)

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
        if not hasattr(sequences, "dtype"):
            sequences = ops.convert_to_tensor(sequences, self.compute_dtype)
        check_sequences(self, sequences, name="sequences")
        mask = check_mask(self, mask, sequences)
        sequences = zero_masked_steps(sequences, mask)
        rnn = keras.layers.RNN(
            _GateCell(self),
            return_sequences=True,
            zero_output_for_mask=True,
            dtype=self.dtype_policy,
            name="gate_values",
        )
        gates = rnn(sequences, mask=mask, initial_state=initial_state)
        shape = ops.shape(gates)
        return ops.reshape(
            gates, (shape[0], shape[1], self.num_layers, self.num_layers)
        )

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


class _GateCell(keras.layers.Layer):
    """Runs a built `GatedFeedbackCell` with its gates, flat, as the output."""

    def __init__(self, cell, **kwargs):
        super().__init__(dtype=cell.dtype_policy, **kwargs)
        self.cell = cell
        self.state_size = cell.state_size
        self.output_size = cell.num_layers**2

    def build(self, input_shape):
        if not self.cell.built:
            self.cell.build(input_shape)

    def call(self, inputs, states, training=False):
        _, new_states, gates = self.cell.step(
            inputs, states, training=False, return_gates=True
        )
        return ops.reshape(gates, (-1, self.output_size)), new_states

    def get_initial_state(self, batch_size=None):
        return self.cell.get_initial_state(batch_size)
