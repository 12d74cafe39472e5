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
from keras_recurrent.graphs.validation import GRAPH_TENSOR_NAMES
from keras_recurrent.layers._concrete import in_xla_context
from keras_recurrent.layers._graph_checks import check_graph_input_shapes
from keras_recurrent.layers._graph_checks import check_host_graph
from keras_recurrent.layers._graph_checks import poison_invalid_graphs
from keras_recurrent.layers._graph_checks import prepare_graph_inputs
from keras_recurrent.layers._graph_checks import unpack_graph_inputs
from keras_recurrent.layers._initializers import reseeded
from keras_recurrent.layers._initializers import serialize_weight_options
from keras_recurrent.layers._known_rank import KnownRankInputs

# With `aggregation="auto"`, messages are summed with dense per-graph
# adjacency matmuls when the count tensor has at most this many entries per
# message (`T * N * N <= ratio * messages`); above, gather + segment sum.
# Compiled by XLA (JAX, TensorFlow with `jit_compile=True`) the sparse path
# wins sooner than in TensorFlow graphs and on PyTorch. The thresholds come
# from benchmarks/ggnn.py (docs/design/gated_graph.md).
DENSE_AGGREGATION_RATIO = 96
XLA_DENSE_AGGREGATION_RATIO = 32
AGGREGATIONS = ("auto", "dense", "sparse")


@keras.saving.register_keras_serializable(package="keras_recurrent")
class GatedGraph(KnownRankInputs, keras.layers.Layer):
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
    h_v^(t) = GRU(a_v^(t), h_v^(t-1))
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
    where one matmul by the product costs less than two (one edge type,
    or one with reverse edges and `concatenate_directions`), the states
    are summed per type first and multiplied by `A_e` times the GRU's
    input kernel, formed once per call. The weights are the same either
    way.

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
        training: Python boolean; unused (the layer has no dropout).

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
        # The number of message sums the GRU reads side by side.
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
        self.gru = keras.layers.GRUCell(
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
        self.gru.build((None, self.num_directions * self.units))

    def _message_kernel_initializer(self, shape, dtype=None):
        # One `(units, units)` matrix per type, so that fan-in and fan-out
        # are those of a single `A_e`, each from its own seed.
        return ops.stack(
            [
                reseeded(self.kernel_initializer, index)(shape[1:], dtype=dtype)
                for index in range(shape[0])
            ]
        )

    def __call__(self, inputs, *args, **kwargs):
        if not kwargs.get("_checked"):
            check_host_graph(self, inputs, self.num_edge_types)
        return super().__call__(inputs, *args, **kwargs)

    def call(self, inputs, training=False, _checked=False):
        # `_checked`: an enclosing layer (`GGSNN`) passes the output of its
        # own `prepare_graph_inputs`, so that the graph is checked once.
        if _checked:
            node_inputs, edges, edge_types, node_mask = inputs
            valid = None
        else:
            node_inputs, edges, edge_types, node_mask, valid = (
                prepare_graph_inputs(
                    self, inputs, self.num_edge_types, self._node_features
                )
            )
        node_states, is_real = _initial_states(
            node_inputs,
            node_mask,
            self.units,
            self.compute_dtype,
            self._node_features,
        )
        # Both choices are made when tracing, on whether XLA compiles it.
        xla = in_xla_context()
        dense = self._uses_dense_aggregation(
            node_states.shape, edges.shape, xla=xla
        )
        propagate = self._propagate_dense if dense else self._propagate_sparse
        states = propagate(node_states, edges, edge_types, per_gate=not xla)
        states = ops.where(is_real, states, ops.zeros_like(states))
        if valid is None:
            return states
        return poison_invalid_graphs(states, valid)

    def _uses_dense_aggregation(self, nodes_shape, edges_shape, xla=None):
        """Whether this call sums messages with dense adjacency matmuls.

        Decided on static shapes, so that it is fixed when tracing: with
        `"auto"`, the dense path is taken when `N` and `E` are known and the
        per-graph count tensor (`T * N * N` entries) is at most
        `DENSE_AGGREGATION_RATIO` (`XLA_DENSE_AGGREGATION_RATIO` when `xla`,
        by default when XLA compiles the call) times the number of messages
        per graph (`E`, twice that with reverse edges), which keeps its
        memory and cost proportional to the edges.
        """
        if self.aggregation != "auto":
            return self.aggregation == "dense"
        num_nodes, num_edges = nodes_shape[1], edges_shape[1]
        # Open sizes are `None`, or symbols when jax2tf traces with
        # polymorphic shapes (the SavedModel from JAX): sparse either way.
        if not isinstance(num_nodes, int) or not isinstance(num_edges, int):
            return False
        num_messages = num_edges * (2 if self.add_reverse_edges else 1)
        cells = self.num_message_types * num_nodes * num_nodes
        if xla is None:
            xla = in_xla_context()
        ratio = XLA_DENSE_AGGREGATION_RATIO if xla else DENSE_AGGREGATION_RATIO
        return cells <= ratio * max(num_messages, 1)

    def _fuses_kernels(self, dense):
        """Whether each step multiplies the per-type sums of the states by
        the product `A_e W_ih` instead of by `A_e`, then by `W_ih`.

        Aggregation is linear, so `(Σ_u h_u A_e) W_ih = (Σ_u h_u)(A_e
        W_ih)`: with the kernels multiplied once per call, each step needs
        one matmul into the GRU's input projection instead of two. Taken
        when that one is the smaller: `3 T` against `T + 3 D` columns of
        `units²` per node on the sparse path (`T * D + 3 D` on the dense
        one, whose stacked kernel has `D` column blocks), which is one edge
        type, or one or two types with `concatenate_directions`.
        """
        num_types, directions = self.num_message_types, self.num_directions
        transform = num_types * (directions if dense else 1)
        return 3 * num_types < transform + 3 * directions

    def _input_projection(self, type_counts, sums, per_gate):
        """The function from a step's message sums to the GRU's input
        projections `x W_ih + b`, one per gate: `[update, reset,
        candidate]` (see `_gate_product` for `per_gate`).

        `sums` says what each step passes it:

        - `"fused"`: the per-type sums of the states, `(B * N, T * units)`,
          row `v` holding `Σ_{(u→v) of type e} h_u` in block `e`,
          multiplied by the kernels' product `A_e W_ih` (`_fuses_kernels`);
        - `"per_type"`: the same sums, multiplied by the `A_e`, then by
          `W_ih`;
        - `"per_direction"`: the messages `h_u A_e` already summed per
          direction, `(B * N, D * units)`, multiplied by `W_ih`.

        The message biases, the same at every step, enter through
        `type_counts` (`(B * N, T)`, the edges of each type into each
        node), once per call.
        """
        input_kernel = self.gru.kernel
        input_bias = message_bias = message_kernel = None
        if self.use_bias:
            input_bias = self.gru.bias[0] if self.reset_after else self.gru.bias
            message_bias = ops.matmul(
                type_counts,
                self._stack_by_direction(ops.expand_dims(self.message_bias, 1)),
            )
        if sums != "per_direction":  # Else applied before the sums.
            message_kernel = self._stack_by_direction(self.message_kernel)
        if sums == "fused":
            if self.use_bias:
                input_bias = ops.matmul(message_bias, input_kernel) + input_bias
            input_kernel = ops.matmul(message_kernel, input_kernel)
            message_kernel = message_bias = None
        gates = _gate_product(input_kernel, input_bias, per_gate)

        def project(values):
            if message_kernel is not None:
                values = ops.matmul(values, message_kernel)
            return gates(_add_bias(values, message_bias))

        return project

    def _gru_update(self, per_gate):
        """The function `(input projections, states) -> new states`: one
        step of the `gru` sublayer, given its input's `x W_ih + b` per gate
        (`_input_projection`), with the math of `keras.layers.GRUCell.call`.
        """
        kernel, units = self.gru.recurrent_kernel, self.units
        if self.reset_after:
            bias = self.gru.bias[1] if self.use_bias else None
            recurrent = _gate_product(kernel, bias, per_gate)
        else:
            recurrent = _gate_product(
                kernel[:, : 2 * units], None, per_gate, parts=2
            )
            candidate_kernel = kernel[:, 2 * units :]

        def update(inputs, states):
            input_update, input_reset, input_candidate = inputs
            if self.reset_after:
                recurrent_update, recurrent_reset, candidate = recurrent(states)
            else:
                recurrent_update, recurrent_reset = recurrent(states)
            update = self.recurrent_activation(input_update + recurrent_update)
            reset = self.recurrent_activation(input_reset + recurrent_reset)
            if self.reset_after:
                candidate = reset * candidate
            else:
                candidate = ops.matmul(reset * states, candidate_kernel)
            candidate = self.activation(input_candidate + candidate)
            # `z h + (1 - z) h~`, in three ops instead of four.
            return candidate + update * (states - candidate)

        return update

    def _propagate_dense(self, node_states, edges, edge_types, per_gate):
        """Propagation with dense per-graph edge-count matmuls.

        `counts[b, v, e, u]` is the number of edges `u → v` of message type
        `e` in graph `b` (multi-edges counted, padding rows dropped),
        built once by a segment sum. Each step is then dense matmuls:
        `counts @ h`, `(B, N * T, units)`, reshaped to `(B * N, T * units)`,
        times the `T` kernels stacked to `(T * units, units)`: exactly
        `Σ_{(u→v) of type e} h_u A_e` (per direction with
        `concatenate_directions`, see `_stack_by_direction`), then times
        the GRU's input kernel (the two products fused when
        `_fuses_kernels`).
        """
        batch_size, num_nodes = ops.shape(node_states)[:2]
        units, num_types = self.units, self.num_message_types
        is_edge = ops.greater_equal(edges[..., 0], 0)
        sources = ops.where(is_edge, edges[..., 0], 0)
        targets = ops.where(is_edge, edges[..., 1], 0)
        types = ops.where(is_edge, edge_types, 0)
        graphs = ops.expand_dims(ops.arange(batch_size, dtype="int32"), 1)
        num_cells = batch_size * num_nodes * num_types * num_nodes

        def cell(source, target, message_type):
            index = (graphs * num_nodes + target) * num_types + message_type
            index = index * num_nodes + source
            # Padding rows land in the extra cell `num_cells`, dropped.
            return ops.reshape(ops.where(is_edge, index, num_cells), (-1,))

        cells = [cell(sources, targets, types)]
        if self.add_reverse_edges:
            cells.append(cell(targets, sources, types + self.num_edge_types))
        cells = ops.concatenate(cells)
        counts = _segment_sum(
            ops.ones(ops.shape(cells), dtype=self.compute_dtype),
            cells,
            num_segments=num_cells + 1,
        )[:num_cells]
        counts = ops.reshape(
            counts, (batch_size, num_nodes * num_types, num_nodes)
        )
        type_counts = None
        if self.use_bias:
            type_counts = ops.sum(
                ops.reshape(
                    counts, (batch_size * num_nodes, num_types, num_nodes)
                ),
                axis=-1,
            )
        fused = self._fuses_kernels(dense=True)
        project = self._input_projection(
            type_counts, "fused" if fused else "per_type", per_gate
        )
        update = self._gru_update(per_gate)

        node_states, poisoned = _confine_non_finite(
            node_states, counts, num_types, self.propagation_steps
        )
        states = ops.reshape(node_states, (-1, units))
        for _ in range(self.propagation_steps):
            sums = ops.matmul(
                counts, ops.reshape(states, (batch_size, num_nodes, units))
            )
            sums = ops.reshape(sums, (-1, num_types * units))
            states = update(project(sums), states)
        states = ops.reshape(states, (batch_size, num_nodes, units))
        # A scalar fill, not `full_like`: PyTorch's shape inference runs
        # this on the "meta" device, where `full_like` cannot read its fill.
        return ops.where(poisoned, float("nan"), states)

    def _propagate_sparse(self, node_states, edges, edge_types, per_gate):
        """Propagation with a gather and a segment sum per step.

        Unless `_fuses_kernels`, the states are transformed by every
        type's kernel before the gather (`h_u A_e`, then summed per
        direction); when fused, the raw states are summed per (node, type)
        and the step's one matmul applies `A_e W_ih`.
        """
        batch_size, num_nodes = ops.shape(node_states)[:2]
        total_nodes = batch_size * num_nodes

        # Disjoint union: node v of graph b is row b * N + v. Padding edges
        # read row 0 and write to the extra segment `total_nodes`, which is
        # dropped, so no per-step masking is needed.
        offsets = ops.expand_dims(ops.arange(batch_size, dtype="int32"), 1)
        offsets = offsets * num_nodes
        is_edge = ops.reshape(ops.greater_equal(edges[..., 0], 0), (-1,))
        sources = ops.reshape(edges[..., 0] + offsets, (-1,))
        targets = ops.reshape(edges[..., 1] + offsets, (-1,))
        types = ops.reshape(edge_types, (-1,))
        senders = [ops.where(is_edge, sources, 0)]
        receivers = [ops.where(is_edge, targets, total_nodes)]
        message_types = [ops.where(is_edge, types, 0)]
        if self.add_reverse_edges:
            senders.append(ops.where(is_edge, targets, 0))
            receivers.append(ops.where(is_edge, sources, total_nodes))
            message_types.append(message_types[0] + self.num_edge_types)
        sources = ops.concatenate(senders)
        targets = ops.concatenate(receivers)
        types = ops.concatenate(message_types)
        units, num_types = self.units, self.num_message_types
        type_counts = None
        if self.use_bias:
            # Σ_{edges into v} b_e = (edge counts per type of v) · b,
            # the same at every step.
            type_counts = _segment_sum(
                ops.one_hot(types, num_types, dtype=self.compute_dtype),
                targets,
                num_segments=total_nodes + 1,
            )[:total_nodes]
        fused = self._fuses_kernels(dense=False)
        project = self._input_projection(
            type_counts, "fused" if fused else "per_direction", per_gate
        )
        update = self._gru_update(per_gate)

        if fused:
            # Segment v * T + e sums the states sent to v along type e;
            # padding edges go to the dropped segment `total_nodes * T`.
            rows, width = sources, num_types
            segments = targets * num_types + types
            kernel = None
        else:
            # Row u * T + e of the transformed states is h_u A_e.
            rows, width = sources * num_types + types, self.num_directions
            segments = targets
            if width == 2:
                # Forward messages into segment 2 v, reverse ones into
                # 2 v + 1, so that row v of the sums reshaped to
                # (N, 2 * units) is [forward sum, reverse sum].
                reverse = ops.greater_equal(types, self.num_edge_types)
                segments = 2 * targets + ops.cast(reverse, "int32")
            # (units, T * units): column block e is A_e.
            kernel = ops.reshape(
                ops.transpose(self.message_kernel, (1, 0, 2)),
                (units, num_types * units),
            )
        num_segments = width * total_nodes

        states = ops.reshape(node_states, (-1, units))
        for _ in range(self.propagation_steps):
            sent = states
            if kernel is not None:
                sent = ops.reshape(ops.matmul(states, kernel), (-1, units))
            sums = _segment_sum(
                ops.take(sent, rows, axis=0),
                segments,
                num_segments=num_segments + width,
            )[:num_segments]
            sums = ops.reshape(sums, (-1, width * units))
            states = update(project(sums), states)
        return ops.reshape(states, (batch_size, num_nodes, units))

    def _stack_by_direction(self, blocks):
        """Stacks per-type blocks `(T, rows, units)` into the matrix
        `(T * rows, D * units)` that sums them per direction.

        Row block `e` is type `e`'s block. With `concatenate_directions`
        (`D = 2`) the forward types' blocks sit in the first `units`
        columns and the reverse types' in the last, zeros elsewhere, so
        that a row of counts or states times it gives `[forward sum,
        reverse sum]`; otherwise (`D = 1`) the blocks are just stacked.
        """
        num_types, rows, units = blocks.shape
        stacked = ops.reshape(blocks, (num_types * rows, units))
        if self.num_directions == 1:
            return stacked
        half = num_types // 2 * rows
        zeros = ops.zeros((half, units), dtype=stacked.dtype)
        return ops.concatenate(
            [
                ops.concatenate([stacked[:half], zeros], axis=1),
                ops.concatenate([zeros, stacked[half:]], axis=1),
            ]
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
        base_config = super().get_config()
        return {**base_config, **config}


def _add_bias(values, bias):
    return values if bias is None else values + bias


def _gate_product(kernel, bias, per_gate, parts=3):
    """The function `values -> values @ kernel + bias`, split into the
    `parts` gates of `kernel`'s columns (`[update, reset, candidate]`).

    With `per_gate`, the kernel and bias are split once, here, and each
    gate takes a matmul of its own; else one matmul is split after. Outside
    XLA (TensorFlow graphs, PyTorch) the first was 2-6% faster per train
    step: a split's gradient is a concatenation, one per step. XLA fuses
    the split away, and there the one wide matmul was up to 20% faster
    (docs/design/gated_graph.md).
    """
    if not per_gate:

        def product(values):
            return ops.split(
                _add_bias(ops.matmul(values, kernel), bias), parts, -1
            )

        return product
    kernels = ops.split(kernel, parts, axis=-1)
    biases = [None] * parts if bias is None else ops.split(bias, parts, -1)

    def product(values):
        return [
            _add_bias(ops.matmul(values, gate_kernel), gate_bias)
            for gate_kernel, gate_bias in zip(kernels, biases)
        ]

    return product


def _confine_non_finite(node_states, counts, num_types, steps):
    """Keeps a non-finite node state to the nodes it has a path of edges to.

    In `counts @ h`, a NaN or infinite state of node `u` would reach every
    row through the zero counts of the nodes without an edge from `u`
    (`0 * NaN`). The GRU keeps finite states finite, so only the initial
    states can hold one: they are zeroed, and the nodes within
    `propagation_steps` edges of one (following the messages, `u` itself
    included) are found by as many boolean steps of `counts`, to be set to
    NaN at the end, as the sparse aggregation leaves them. The other nodes
    read no state of theirs, so their states are exact.

    Returns the zeroed `(B, N, units)` states and the `(B, N, 1)` mask of
    the nodes to poison.
    """
    finite = ops.all(ops.isfinite(node_states), axis=-1, keepdims=True)
    batch_size, num_nodes = ops.shape(node_states)[:2]
    reached = ops.cast(ops.logical_not(finite), counts.dtype)
    for _ in range(steps):
        # (B, N * T, 1) -> edges into each node from a reached one.
        incoming = ops.reshape(
            ops.matmul(counts, reached), (batch_size, num_nodes, num_types)
        )
        incoming = ops.sum(incoming, axis=-1, keepdims=True)
        reached = ops.cast(ops.greater(reached + incoming, 0), counts.dtype)
    safe = ops.where(finite, node_states, ops.zeros_like(node_states))
    return safe, ops.greater(reached, 0)


def _segment_sum(data, segment_ids, num_segments):
    """`ops.segment_sum`, written so that PyTorch can also trace it.

    Keras' PyTorch `segment_sum` cannot run on the `"meta"` device, on
    which Keras first tries to infer a layer's output shape (in `fit`,
    `evaluate`); it then falls back to tensors of ones, which are no valid
    graph when there is one edge type. A scatter-add does the same sum and
    runs there too.
    """
    if keras.backend.backend() != "torch":
        return ops.segment_sum(data, segment_ids, num_segments=num_segments)
    zeros = ops.zeros((num_segments, *data.shape[1:]), dtype=data.dtype)
    return ops.scatter_update(
        zeros, ops.expand_dims(segment_ids, -1), data, reduction="add"
    )


def _initial_states(node_inputs, node_mask, units, dtype, features):
    """`h^(1) = [x_v, 0]` (zero at padding nodes) and the real-node mask.

    Returns the states `(batch, N, units)` and a boolean mask
    `(batch, N, 1)`. Padding rows are zeroed, not multiplied, so that
    whatever they hold (even NaN) cannot leak. `features` is the width the
    layer was built for (a retraced function may not know it statically).
    """
    node_inputs = ops.cast(node_inputs, dtype)
    is_real = ops.expand_dims(ops.cast(node_mask, "bool"), -1)
    if features < units:
        node_inputs = ops.pad(
            node_inputs, [[0, 0], [0, 0], [0, units - features]]
        )
    return ops.where(is_real, node_inputs, ops.zeros_like(node_inputs)), is_real
