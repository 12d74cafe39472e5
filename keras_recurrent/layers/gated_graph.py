"""The gated graph neural network propagation of Li et al. (2016)."""

import keras
from keras import activations
from keras import constraints
from keras import initializers
from keras import ops
from keras import regularizers

from keras_recurrent._checks import check_bool
from keras_recurrent._checks import check_known_last_axis
from keras_recurrent._checks import check_option
from keras_recurrent._checks import check_positive_int
from keras_recurrent._compat import variables_read_as
from keras_recurrent.graphs.validation import GRAPH_TENSOR_NAMES
from keras_recurrent.layers._concrete import in_xla_context
from keras_recurrent.layers._constrained_weights import ConstrainedWeights
from keras_recurrent.layers._graph_aggregation import AGGREGATIONS
from keras_recurrent.layers._graph_aggregation import DenseSums
from keras_recurrent.layers._graph_aggregation import SparseSums
from keras_recurrent.layers._graph_aggregation import stack_by_direction
from keras_recurrent.layers._graph_aggregation import uses_dense_aggregation
from keras_recurrent.layers._graph_checks import check_graph_input_shapes
from keras_recurrent.layers._graph_checks import check_host_graph
from keras_recurrent.layers._graph_checks import poison_invalid_graphs
from keras_recurrent.layers._graph_checks import prepare_graph_inputs
from keras_recurrent.layers._graph_checks import unpack_graph_inputs
from keras_recurrent.layers._graph_gru_cell import GraphGRUCell
from keras_recurrent.layers._graph_gru_cell import add_bias
from keras_recurrent.layers._initializers import reseeded
from keras_recurrent.layers._initializers import serialize_weight_options
from keras_recurrent.layers._known_rank import KnownRankInputs
from keras_recurrent.layers._node_inputs import zero_padding

# The arguments that configure the default GRU only, and their defaults.
GRU_OPTIONS = {
    "reset_after": True,
    "activation": "tanh",
    "recurrent_activation": "sigmoid",
    "recurrent_initializer": "orthogonal",
    "recurrent_regularizer": None,
    "recurrent_constraint": None,
}


@keras.saving.register_keras_serializable(package="keras_recurrent")
class GatedGraph(ConstrainedWeights, KnownRankInputs, keras.layers.Layer):
    """Gated graph neural network (GG-NN) propagation with typed edges.

    Call it on the list `[node_inputs, edges, edge_types, node_mask]` (or a
    dict with these keys, as `kr.graphs.graph_inputs` makes): a batch of
    graphs padded to `N` nodes and `E` edges, as `kr.graphs.encode_graphs`
    encodes them. It returns the node states after `propagation_steps`
    steps of the propagation model of "Gated Graph Sequence Neural Networks"
    (Li et al., 2016):

    ```
    h_v^(1) = [x_v, 0]                        (node_inputs zero-padded)
    a_v^(t) = Σ_{(u→v) of type e} (h_u^(t-1) A_e + b_e)
    h_v^(t) = GRU(a_v^(t), h_v^(t-1))          (or update_cell)
    ```

    for `t = 2 .. propagation_steps + 1`. With `add_reverse_edges`, every
    edge `u→v` of type `e` also passes a message `v→u` of its own type
    `e + num_edge_types`: the paper's `A = [A^(out), A^(in)]`, so that
    information flows both ways with different parameters. By default the
    messages of both directions are summed into one `a_v` of `units`
    entries. With `concatenate_directions=True` they are summed per
    direction and concatenated, `a_v = [Σ forward messages, Σ reverse
    messages]` of `2 * units` entries: the paper's Eq. 2, where `a_v` is
    `A_v:^T [h_1 ... h_|V|]` with `A_v:` the node's two column blocks of
    `A^(out)` and `A^(in)`, and its code (`yujiali/ggnn`). The weights are
    shared across steps. The GRU is a `keras.layers.GRUCell` sublayer named
    `gru`, with `reset_after` choosing its variant (`True`: Keras' and
    cuDNN's default, `False`: the paper's and Cho et al.'s).

    The node update is a Keras recurrent cell: `update_cell` replaces the
    GRU with any cell whose first state has `units` entries, such as
    `keras.layers.LSTMCell(units)` or a cell of your own (the contract of
    `keras.layers.RNN`: `state_size`, and `call(inputs, states)` returning
    `(output, new_states)`). At each step the cell's inputs are the
    message sums `a_v` (`(B * N, units)`, or `2 * units` with
    `concatenate_directions`) and its states are the node states; messages
    are sent from the first state, `h_v`, and any other state (an LSTM's
    `c_v`) starts at zero. The layer returns the first state.

    Messages are summed one of two ways, with the same result (multi-edges
    count once per edge):

    - `"sparse"`: on the disjoint union of the batch (node `v` of graph `b`
      is node `b * N + v`), one matmul of all node states against every
      edge type's kernel, a gather per (edge, type) and a segment sum into
      the targets. The cost is linear in nodes and edges, never `N²`.
    - `"dense"`: a tensor `C` of shape `(B, N, T, N)` counting the edges
      `u → v` of each type in each graph is built once per call (one
      segment sum); each step is then two dense matmuls, `C @ h` per graph
      and its `(B * N, T * units)` reshape times the `T` kernels stacked.
      Faster on CPUs for small, dense-ish graphs (no gather and scatter in
      the backward pass), but `T * N²` per graph.

    Aggregation is linear, so `(Σ_u h_u A_e) W_ih = (Σ_u h_u)(A_e W_ih)`:
    with the default GRU, where one matmul by the product costs less than
    two (one edge type, or one with reverse edges and
    `concatenate_directions`), the states are summed per type first and
    multiplied by `A_e` times the GRU's input kernel, formed once per
    call. The weights are the same either way.

    The default `"auto"` takes the dense path only when `N` and `E` are
    known when tracing and `T * N² <= 96 * messages` per graph (messages:
    `E`, or `2 E` with reverse edges; `32 * messages` when XLA compiles
    the call, as on JAX), so that memory and cost stay proportional to the
    edges; otherwise (also with dynamic `N` or `E`, as in an exported
    model) the sparse one. Padding nodes are never read (no
    real edge touches them) and their output states are zero.

    Weights, with `T = num_edge_types * (2 if add_reverse_edges else 1)`
    (the reverse of type `e` is at index `e + num_edge_types`):

    - `message_kernel`: `(T, units, units)`, the `A_e`.
    - `message_bias`: `(T, units)`, the `b_e`, if `use_bias`.
    - `gru/kernel` `(units, 3 * units)` (`(2 * units, 3 * units)` with
      `concatenate_directions`, rows `[forward; reverse]`),
      `gru/recurrent_kernel`
      `(units, 3 * units)` and, if `use_bias`, `gru/bias` (`(2, 3 * units)`
      with `reset_after`, else `(3 * units,)`): the `GRUCell`'s.
    - With `update_cell`, the cell's weights in place of `gru`'s, built for
      inputs of `units` (`2 * units`) entries.

    Bad input never gives a finite wrong number:

    - Static problems (a rank, `edges` not `(..., 2)`, sizes that disagree,
      `N = 0`, a non-numeric dtype, `node_inputs` wider than `units` or of
      another width than the layer was built for) raise a `ValueError`
      when the layer is built or traced.
    - Bad values (an edge index outside `[0, N)` or not a whole number, an
      edge touching a padding node, an edge type outside
      `[0, num_edge_types)`, a `node_mask` entry other than 0 and 1) raise
      a `ValueError` naming the first one on eager tensors, and inside a
      traced TensorFlow function (`fit`, `predict`, a SavedModel) an
      `InvalidArgumentError` with the same message at run time, before any
      op reads an index.
    - Where no assertion can run (XLA, `jit_compile=True`, which drops
      them; traced JAX or PyTorch code), a graph that holds a bad value
      gets NaN in all its output states, and the other graphs of the batch
      are unaffected: bad edges are dropped before they can reach any
      node. Check data with `kr.graphs.validate_graph_tensors` to find the
      culprit.

    A batch of `B = 0` graphs gives an empty `(0, N, units)` output.

    Args:
        units: Positive integer, the dimensionality of the node states.
        num_edge_types: Positive integer, the number of edge types in
            `edge_types`.
        propagation_steps: Positive integer, the number of propagation
            steps. Defaults to 5.
        add_reverse_edges: Whether every edge also passes a message backwards
            with its own weights. Defaults to `True`.
        concatenate_directions: Whether the GRU reads the sums of the
            forward and of the reverse messages side by side (`True`, the
            paper's `a_v` of `2 * units` entries; needs `add_reverse_edges`)
            or their total (`False`, default).
        use_bias: Whether to use `message_bias` and the GRU's bias.
            Defaults to `True`.
        reset_after: The `GRUCell` variant: apply the reset gate after
            (`True`, default) or before (`False`) the recurrent matmul.
        aggregation: How messages are summed: `"sparse"` (gather and
            segment sum, linear in edges), `"dense"` (per-graph edge-count
            matmuls, `T * N²` per graph) or `"auto"` (default: dense when
            the static shapes make it cheap, see above). The weights and
            the result are the same.
        activation: The GRU's candidate activation. Defaults to `"tanh"`.
        recurrent_activation: The GRU's gate activation.
            Defaults to `"sigmoid"`.
        kernel_initializer: Initializer of each type's `A_e` (a
            `(units, units)` matrix each) and of `gru/kernel`.
            Defaults to `"glorot_uniform"`.
        recurrent_initializer: Initializer of `gru/recurrent_kernel`.
            Defaults to `"orthogonal"`.
        bias_initializer: Initializer of `message_bias` and `gru/bias`.
            Defaults to `"zeros"`.
        kernel_regularizer, recurrent_regularizer, bias_regularizer: Optional
            regularizers of the same weights as the initializers.
        kernel_constraint, recurrent_constraint, bias_constraint: Optional
            constraints of the same weights as the initializers.
        update_cell: Optional Keras recurrent cell (or its serialized
            config) that updates the node states in place of the GRU; its
            first state must have `units` entries. With it, the GRU's own
            arguments (`reset_after`, `activation`, `recurrent_activation`
            and the `recurrent_*` ones) must keep their defaults; the
            `kernel_*` and `bias_*` ones apply to the message weights
            only. Defaults to `None`: the GRU.
        **kwargs: Standard layer keyword arguments, such as `name` and `dtype`.

    Call arguments:
        inputs: The list `[node_inputs, edges, edge_types, node_mask]`, or a
            dict with these keys:

            - `node_inputs`: float `(batch, N, D)` with `D <= units`, the
              node annotations;
            - `edges`: int `(batch, E, 2)`, `(source, target)` node indices
              within the same graph, `-1` rows for padding (floats are
              read if they are whole numbers);
            - `edge_types`: int `(batch, E)` in `[0, num_edge_types)`
              (ignored on padding rows);
            - `node_mask`: bool or int `(batch, N)`, 1 for real nodes and
              0 for padding.
        training: Python boolean, passed to `update_cell` (the default GRU
            has no dropout).

    Returns:
        The node states, `(batch, N, units)`, zero at padding nodes, NaN
        throughout a graph with bad input where no assertion can run.

    Shapes:
        - **input:** `(B, N, D)`, `(B, E, 2)`, `(B, E)`, `(B, N)`
        - **output:** `(B, N, units)`

    Example:

    >>> batch = kr.graphs.encode_graphs(
    ...     [{"edges": [(0, 1, 0), (1, 2, 1)]}, {"edges": [(1, 0, 1)]}]
    ... )
    >>> layer = kr.layers.GatedGraph(8, num_edge_types=2, propagation_steps=3)
    >>> layer([batch["node_inputs"], batch["edges"], batch["edge_types"],
    ...        batch["node_mask"]]).shape
    TensorShape([2, 3, 8])
    >>> layer.message_kernel.shape  # 2 types and their reverses
    TensorShape([4, 8, 8])

    An LSTM update, whose cell state `c_v` starts at zero:

    >>> lstm = kr.layers.GatedGraph(
    ...     8, num_edge_types=2, update_cell=keras.layers.LSTMCell(8)
    ... )
    >>> lstm(batch).shape
    TensorShape([2, 3, 8])

    Reference:
        - [Li et al., 2016. Gated Graph Sequence Neural Networks](
          https://arxiv.org/abs/1511.05493)
        - [Cho et al., 2014. Learning Phrase Representations using RNN
          Encoder-Decoder for Statistical Machine Translation](
          https://arxiv.org/abs/1406.1078)
    """

    input_tensor_names = GRAPH_TENSOR_NAMES

    def __init__(
        self,
        units,
        num_edge_types,
        propagation_steps=5,
        add_reverse_edges=True,
        concatenate_directions=False,
        use_bias=True,
        reset_after=True,
        aggregation="auto",
        activation="tanh",
        recurrent_activation="sigmoid",
        kernel_initializer="glorot_uniform",
        recurrent_initializer="orthogonal",
        bias_initializer="zeros",
        kernel_regularizer=None,
        recurrent_regularizer=None,
        bias_regularizer=None,
        kernel_constraint=None,
        recurrent_constraint=None,
        bias_constraint=None,
        update_cell=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.units = check_positive_int("units", units)
        self.num_edge_types = check_positive_int(
            "num_edge_types", num_edge_types
        )
        self.propagation_steps = check_positive_int(
            "propagation_steps", propagation_steps
        )
        check_bool("add_reverse_edges", add_reverse_edges)
        check_bool("concatenate_directions", concatenate_directions)
        check_bool("use_bias", use_bias)
        check_bool("reset_after", reset_after)
        aggregation = check_option("aggregation", aggregation, AGGREGATIONS)
        if concatenate_directions and not add_reverse_edges:
            raise ValueError(
                "Argument `concatenate_directions=True` concatenates the "
                "forward and reverse messages, so it needs "
                "`add_reverse_edges=True`. Received: "
                "concatenate_directions=True, add_reverse_edges=False"
            )
        self.aggregation = aggregation
        self.add_reverse_edges = add_reverse_edges
        self.concatenate_directions = concatenate_directions
        # The number of message sums the update reads side by side.
        self.num_directions = 2 if concatenate_directions else 1
        self.use_bias = use_bias
        self.reset_after = reset_after
        self.num_message_types = num_edge_types * (
            2 if add_reverse_edges else 1
        )
        self.activation = activations.get(activation)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.recurrent_initializer = initializers.get(recurrent_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.recurrent_regularizer = regularizers.get(recurrent_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.recurrent_constraint = constraints.get(recurrent_constraint)
        self.bias_constraint = constraints.get(bias_constraint)
        # `None`, or the user's cell. The default GRU is `gru` (its weights
        # are saved under that name).
        self.update_cell = _check_update_cell(update_cell, self.units)
        if update_cell is not None:
            _check_gru_options_unset(self)
            return
        self.gru = GraphGRUCell(
            units,
            activation=self.activation,
            recurrent_activation=self.recurrent_activation,
            use_bias=use_bias,
            # Seeds of their own: the message weights take the first
            # ones (`_message_kernel_initializer`).
            kernel_initializer=reseeded(
                self.kernel_initializer, self.num_message_types
            ),
            recurrent_initializer=self.recurrent_initializer,
            bias_initializer=reseeded(self.bias_initializer, 1),
            kernel_regularizer=self.kernel_regularizer,
            recurrent_regularizer=self.recurrent_regularizer,
            bias_regularizer=self.bias_regularizer,
            kernel_constraint=self.kernel_constraint,
            recurrent_constraint=self.recurrent_constraint,
            bias_constraint=self.bias_constraint,
            reset_after=reset_after,
            name="gru",
            dtype=self.dtype_policy,
        )

    @property
    def _cell(self):
        # Private, so that saving visits `gru` and `update_cell` first.
        return self.gru if self.update_cell is None else self.update_cell

    def build(self, input_shape):
        shapes = unpack_graph_inputs(self, input_shape)
        check_graph_input_shapes(self, shapes)
        features = check_known_last_axis("node_inputs", shapes[0])[-1]
        if features > self.units:
            raise ValueError(
                f"`node_inputs` has {features} features, more than "
                f"units={self.units}: the initial node state is "
                "`node_inputs` zero-padded to `units`. "
                f"Received: node_inputs.shape={tuple(shapes[0])}"
            )
        self._node_features = features
        self.message_kernel = self.add_weight(
            shape=(self.num_message_types, self.units, self.units),
            name="message_kernel",
            initializer=self._message_kernel_initializer,
            regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint,
        )
        if self.use_bias:
            self.message_bias = self.add_weight(
                shape=(self.num_message_types, self.units),
                name="message_bias",
                initializer=self.bias_initializer,
                regularizer=self.bias_regularizer,
                constraint=self.bias_constraint,
            )
        else:
            self.message_bias = None
        if not self._cell.built:
            self._cell.build((None, self.num_directions * self.units))

    def _message_kernel_initializer(self, shape, dtype=None):
        # One `(units, units)` matrix per type, so that fan-in and fan-out
        # are those of a single `A_e`, each from its own seed.
        return ops.stack(
            [
                reseeded(self.kernel_initializer, index)(shape[1:], dtype=dtype)
                for index in range(shape[0])
            ]
        )

    def check_host_inputs(self, inputs):
        check_host_graph(self, inputs, self.num_edge_types)

    def call(self, inputs, training=False):
        node_inputs, edges, edge_types, node_mask, valid = prepare_graph_inputs(
            self, inputs, self.num_edge_types, self._node_features
        )
        states = self.propagate(
            node_inputs, edges, edge_types, node_mask, training=training
        )
        return poison_invalid_graphs(states, valid)

    def propagate(
        self, node_inputs, edges, edge_types, node_mask, training=False
    ):
        """The propagation on a graph already checked, as a layer that
        checks the graph itself (`GGSNN`) calls it.

        Args:
            node_inputs: float `(batch, N, D)`, as for `call`.
            edges: int32 `(batch, E, 2)`, every row a valid edge or `-1`
                padding.
            edge_types: int32 `(batch, E)` in `[0, num_edge_types)`.
            node_mask: bool `(batch, N)`.
            training: Python boolean, passed to `update_cell`.

        Returns:
            The node states, `(batch, N, units)`, zero at padding nodes.
        """
        # float16 overflows (65504) in the message sums and the GRU's
        # products for node inputs of some 10**4, and the GRU's `r ⊙ (h U)`
        # then gives 0 * inf = NaN where `keras.layers.LSTM`, whose gates
        # saturate, stays finite. Under `mixed_float16` the propagation
        # runs in float32 (the float16 weights are promoted, exactly): the
        # output, in float16, is within float16 rounding of float32's.
        dtype = _propagation_dtype(self.compute_dtype)
        if dtype == self.compute_dtype:
            return self._propagate(
                node_inputs, edges, edge_types, node_mask, dtype, training
            )
        with variables_read_as(dtype):
            states = self._propagate(
                node_inputs, edges, edge_types, node_mask, dtype, training
            )
        return ops.cast(states, self.compute_dtype)

    def _propagate(
        self, node_inputs, edges, edge_types, node_mask, dtype, training
    ):
        node_states, is_real = _initial_states(
            node_inputs,
            node_mask,
            self.units,
            dtype,
            self._node_features,
        )
        batch_size, num_nodes = ops.shape(node_states)[:2]
        # Both choices are made when tracing, on whether XLA compiles it.
        xla = in_xla_context()
        dense = self._uses_dense_aggregation(
            node_states.shape, edges.shape, xla=xla
        )
        sums = (DenseSums if dense else SparseSums)(
            edges,
            edge_types,
            batch_size,
            num_nodes,
            self.num_edge_types,
            self.add_reverse_edges,
            dtype,
        )
        poisoned = None
        if dense:
            node_states, poisoned = sums.confine_non_finite(
                node_states, self.propagation_steps
            )
        step = self._step_function(sums, dense, xla, training)
        states = [ops.reshape(node_states, (-1, self.units))]
        for size in _state_sizes(self._cell)[1:]:
            states.append(ops.zeros((ops.shape(states[0])[0], size), dtype))
        for _ in range(self.propagation_steps):
            states = step(states)
        if hasattr(self._cell, "reset_dropout_mask"):
            # As `keras.layers.RNN` does after its loop.
            self._cell.reset_dropout_mask()
            self._cell.reset_recurrent_dropout_mask()
        states = ops.reshape(states[0], (batch_size, num_nodes, self.units))
        if poisoned is not None:
            # A scalar fill, not `full_like`: PyTorch's shape inference
            # runs this on the "meta" device, where `full_like` cannot
            # read its fill.
            states = ops.where(poisoned, float("nan"), states)
        return ops.where(is_real, states, ops.zeros_like(states))

    def _step_function(self, sums, dense, xla, training):
        """The function `states -> new states` of one propagation step."""
        message_bias = None
        if self.use_bias:
            # Σ_{edges into v} b_e = (edge counts per type of v) · b, the
            # same at every step.
            message_bias = ops.matmul(
                sums.type_counts(),
                stack_by_direction(
                    ops.expand_dims(self.message_bias, 1), self.num_directions
                ),
            )
        hook = getattr(self._cell, "graph_step_function", None)
        if hook is not None:  # The default GRU's faster step.
            return hook(
                sums,
                self.message_kernel,
                message_bias,
                self.num_directions,
                dense=dense,
                per_gate=not xla,
            )
        messages = sums.message_sums(self.message_kernel, self.num_directions)

        def step(states):
            inputs = add_bias(messages(states[0]), message_bias)
            # Keras drops `training` for a cell whose `call` lacks it.
            _, new_states = self._cell(inputs, states, training=training)
            if not isinstance(new_states, (list, tuple)):
                return [new_states]
            return list(new_states)

        return step

    def _uses_dense_aggregation(self, nodes_shape, edges_shape, xla=None):
        """Whether this call sums messages with dense adjacency matmuls
        (`_graph_aggregation.uses_dense_aggregation`); by default on whether
        XLA compiles the call."""
        return uses_dense_aggregation(
            self.aggregation,
            self.num_message_types,
            2 if self.add_reverse_edges else 1,
            nodes_shape[1],
            edges_shape[1],
            in_xla_context() if xla is None else xla,
        )

    def compute_output_shape(self, input_shape):
        shapes = unpack_graph_inputs(self, input_shape)
        return (shapes[0][0], shapes[0][1], self.units)

    def get_config(self):
        config = {
            "units": self.units,
            "num_edge_types": self.num_edge_types,
            "propagation_steps": self.propagation_steps,
            "add_reverse_edges": self.add_reverse_edges,
            "concatenate_directions": self.concatenate_directions,
            "use_bias": self.use_bias,
            "reset_after": self.reset_after,
            "aggregation": self.aggregation,
            "activation": activations.serialize(self.activation),
            "recurrent_activation": activations.serialize(
                self.recurrent_activation
            ),
        }
        config.update(
            serialize_weight_options(self, ("kernel", "recurrent", "bias"))
        )
        if self.update_cell is not None:
            config["update_cell"] = keras.saving.serialize_keras_object(
                self.update_cell
            )
        base_config = super().get_config()
        return {**base_config, **config}


def _check_update_cell(update_cell, units):
    """`update_cell` (deserialized if a config), or a `ValueError` if it is
    no cell whose first state has `units` entries."""
    if update_cell is None:
        return None
    if isinstance(update_cell, dict):
        update_cell = keras.saving.deserialize_keras_object(update_cell)
    sizes = _state_sizes(update_cell)
    if not isinstance(update_cell, keras.layers.Layer) or sizes is None:
        raise ValueError(
            "Argument `update_cell` must be a Keras recurrent cell: a layer "
            "with a `state_size` of positive ints and "
            "`call(inputs, states)`, such as `keras.layers.LSTMCell(units)`. "
            f"Received: update_cell={update_cell!r}"
        )
    if sizes[0] != units:
        raise ValueError(
            "Argument `update_cell` must have a first state of "
            f"units={units} entries: the node states, from which messages "
            f"are sent. Received: update_cell={update_cell.name!r} "
            f"({type(update_cell).__name__}) with "
            f"state_size={update_cell.state_size!r}"
        )
    return update_cell


def _state_sizes(cell):
    """A cell's state sizes as a list of ints, or `None` if they are not."""
    state_size = getattr(cell, "state_size", None)
    sizes = (
        list(state_size)
        if isinstance(state_size, (list, tuple))
        else [state_size]
    )
    if not all(
        isinstance(size, int) and not isinstance(size, bool) and size > 0
        for size in sizes
    ):
        return None
    return sizes


def _check_gru_options_unset(layer):
    """Refuses the GRU's own arguments next to an `update_cell`."""
    for name, default in GRU_OPTIONS.items():
        value = getattr(layer, name)
        if name.endswith("activation"):
            value, default = (
                activations.serialize(activations.get(v))
                for v in (value, default)
            )
        elif name.endswith("initializer"):
            value, default = (
                initializers.serialize(initializers.get(v))
                for v in (value, default)
            )
        if value != default:
            raise ValueError(
                f"Argument `{name}` configures the default GRU update, so "
                "it cannot be set with `update_cell`: configure the cell "
                f"instead. Received: {name}={getattr(layer, name)!r}, "
                f"update_cell={layer.update_cell.name!r}"
            )


def _propagation_dtype(compute_dtype):
    """The dtype of the propagation: float32 for a float16 `compute_dtype`
    (see `GatedGraph.propagate`), else `compute_dtype` (bfloat16 has
    float32's range)."""
    return "float32" if compute_dtype == "float16" else compute_dtype


def _initial_states(node_inputs, node_mask, units, dtype, features):
    """`h^(1) = [x_v, 0]` (zero at padding nodes) and the real-node mask.

    Returns the states `(batch, N, units)` and a boolean mask
    `(batch, N, 1)`. Padding rows are zeroed by `zero_padding`, not
    multiplied, so that whatever they hold (even NaN) cannot leak, in ONNX
    from TensorFlow too. `features` is the width the layer was built for (a
    retraced function may not know it statically).
    """
    node_inputs = ops.cast(node_inputs, dtype)
    is_real = ops.expand_dims(ops.cast(node_mask, "bool"), -1)
    if features < units:
        node_inputs = ops.pad(
            node_inputs, [[0, 0], [0, 0], [0, units - features]]
        )
    return zero_padding(node_inputs, is_real), is_real
