"""Message sums of the gated graph layers: sparse, dense, and the choice.

A propagation step sums, for every node `v`, what its incoming edges send.
Both ways below take the prepared tensors of `prepare_graph_inputs` (int32
`edges` with `-1` padding rows, int32 `edge_types`) and give the same
sums (multi-edges count once per edge):

- `SparseSums`: on the disjoint union of the batch (node `v` of graph `b`
  is row `b * N + v`), a gather per (edge, type) and a segment sum into the
  targets. Linear in nodes and edges, never `N²`.
- `DenseSums`: a tensor `counts` `(B, N * T, N)`, the edges `u → v` of each
  type in each graph, built once per call (one segment sum); each step is
  then a dense matmul `counts @ h` per graph. Faster on CPUs for small,
  dense-ish graphs (no gather and scatter in the backward pass), but
  `T * N²` per graph.

Message type `e + num_edge_types` is the reverse of type `e` (with
`add_reverse_edges`). Each class builds, once per call, the functions that
a step runs: `per_type_sums()` sums the raw states per (node, type), and
`message_sums(message_kernel, num_directions)` sums the messages `h_u A_e`
per direction. `uses_dense_aggregation` picks the way for `"auto"`; the
thresholds are measured in benchmarks/ggnn.py (docs/design/gated_graph.md).
"""

import keras
from keras import ops

# With `aggregation="auto"`, messages are summed with dense per-graph
# adjacency matmuls when the count tensor has at most this many entries per
# message (`T * N * N <= ratio * messages`); above, gather + segment sum.
# Compiled by XLA (JAX, TensorFlow with `jit_compile=True`) the sparse path
# wins sooner than in TensorFlow graphs and on PyTorch.
DENSE_AGGREGATION_RATIO = 96
XLA_DENSE_AGGREGATION_RATIO = 32
AGGREGATIONS = ("auto", "dense", "sparse")


def uses_dense_aggregation(
    aggregation, num_message_types, num_messages_per_edge, nodes, edges, xla
):
    """Whether messages are summed with dense adjacency matmuls.

    Decided on static sizes, so that it is fixed when tracing: with
    `"auto"`, the dense path is taken when `N` (`nodes`) and `E` (`edges`)
    are known ints and the per-graph count tensor (`T * N * N` entries) is
    at most `DENSE_AGGREGATION_RATIO` (`XLA_DENSE_AGGREGATION_RATIO` when
    `xla`) times the number of messages per graph
    (`E * num_messages_per_edge`), which keeps its memory and cost
    proportional to the edges.
    """
    if aggregation != "auto":
        return aggregation == "dense"
    # Open sizes are `None`, or symbols when jax2tf traces with
    # polymorphic shapes (the SavedModel from JAX): sparse either way.
    if not isinstance(nodes, int) or not isinstance(edges, int):
        return False
    cells = num_message_types * nodes * nodes
    ratio = XLA_DENSE_AGGREGATION_RATIO if xla else DENSE_AGGREGATION_RATIO
    return cells <= ratio * max(edges * num_messages_per_edge, 1)


class SparseSums:
    """Sums by gather and segment sum over the batch's disjoint union.

    Args:
        edges, edge_types: The prepared `(B, E, 2)` and `(B, E)` int32
            tensors.
        batch_size, num_nodes: `B` and `N`, static or dynamic.
        num_edge_types: The number of edge types before reversal.
        add_reverse_edges: Whether every edge also sends a message back,
            with type `e + num_edge_types`.
        dtype: The dtype of the sums.
    """

    def __init__(
        self,
        edges,
        edge_types,
        batch_size,
        num_nodes,
        num_edge_types,
        add_reverse_edges,
        dtype,
    ):
        self.total_nodes = total_nodes = batch_size * num_nodes
        self.num_edge_types = num_edge_types
        self.num_types = num_edge_types * (2 if add_reverse_edges else 1)
        self.dtype = dtype
        # Padding edges read row 0 and write to the extra segment
        # `total_nodes`, which is dropped, so no per-step masking is needed.
        offsets = ops.expand_dims(ops.arange(batch_size, dtype="int32"), 1)
        offsets = offsets * num_nodes
        is_edge = ops.reshape(ops.greater_equal(edges[..., 0], 0), (-1,))
        sources = ops.reshape(edges[..., 0] + offsets, (-1,))
        targets = ops.reshape(edges[..., 1] + offsets, (-1,))
        types = ops.reshape(edge_types, (-1,))
        senders = [ops.where(is_edge, sources, 0)]
        receivers = [ops.where(is_edge, targets, total_nodes)]
        message_types = [ops.where(is_edge, types, 0)]
        if add_reverse_edges:
            senders.append(ops.where(is_edge, targets, 0))
            receivers.append(ops.where(is_edge, sources, total_nodes))
            message_types.append(message_types[0] + num_edge_types)
        self.sources = ops.concatenate(senders)
        self.targets = ops.concatenate(receivers)
        self.types = ops.concatenate(message_types)

    def type_counts(self):
        """`(B * N, T)`: the edges of each message type into each node."""
        return segment_sum(
            ops.one_hot(self.types, self.num_types, dtype=self.dtype),
            self.targets,
            num_segments=self.total_nodes + 1,
        )[: self.total_nodes]

    def per_type_sums(self):
        """The function `h (B * N, units) -> (B * N, T * units)`, block `e`
        of row `v` holding `Σ_{(u→v) of type e} h_u`."""
        # Segment v * T + e; padding edges go to the dropped segment
        # `total_nodes * T`.
        segments = self.targets * self.num_types + self.types
        return self._sums(self.sources, segments, self.num_types, None)

    def message_sums(self, message_kernel, num_directions):
        """The function `h (B * N, units) -> (B * N, D * units)`: the
        messages `h_u A_e` summed per target, per direction if
        `num_directions` is 2 (forward sum, then reverse sum)."""
        num_types, units = self.num_types, message_kernel.shape[-1]
        # Row u * T + e of the transformed states is h_u A_e.
        rows = self.sources * num_types + self.types
        segments = self.targets
        if num_directions == 2:
            # Forward messages into segment 2 v, reverse ones into 2 v + 1,
            # so that row v of the sums reshaped to (N, 2 * units) is
            # [forward sum, reverse sum].
            reverse = ops.greater_equal(self.types, self.num_edge_types)
            segments = 2 * self.targets + ops.cast(reverse, "int32")
        # (units, T * units): column block e is A_e.
        kernel = ops.reshape(
            ops.transpose(message_kernel, (1, 0, 2)),
            (units, num_types * units),
        )
        return self._sums(rows, segments, num_directions, kernel)

    def _sums(self, rows, segments, width, kernel):
        num_segments = width * self.total_nodes

        def sums(states):
            units = states.shape[-1]
            if kernel is not None:
                states = ops.reshape(ops.matmul(states, kernel), (-1, units))
            summed = segment_sum(
                ops.take(states, rows, axis=0),
                segments,
                num_segments=num_segments + width,
            )[:num_segments]
            return ops.reshape(summed, (-1, width * units))

        return sums


class DenseSums:
    """Sums by dense per-graph edge-count matmuls.

    `counts[b, v * T + e, u]` is the number of edges `u → v` of message
    type `e` in graph `b` (multi-edges counted, padding rows dropped),
    built once by a segment sum. Each step is then `counts @ h`,
    `(B, N * T, units)`, reshaped to `(B * N, T * units)`. Takes the
    arguments of `SparseSums`.
    """

    def __init__(
        self,
        edges,
        edge_types,
        batch_size,
        num_nodes,
        num_edge_types,
        add_reverse_edges,
        dtype,
    ):
        self.batch_size, self.num_nodes = batch_size, num_nodes
        self.num_types = num_types = num_edge_types * (
            2 if add_reverse_edges else 1
        )
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
        if add_reverse_edges:
            cells.append(cell(targets, sources, types + num_edge_types))
        cells = ops.concatenate(cells)
        counts = segment_sum(
            ops.ones(ops.shape(cells), dtype=dtype),
            cells,
            num_segments=num_cells + 1,
        )[:num_cells]
        self.counts = ops.reshape(
            counts, (batch_size, num_nodes * num_types, num_nodes)
        )

    def type_counts(self):
        """`(B * N, T)`: the edges of each message type into each node."""
        return ops.sum(
            ops.reshape(
                self.counts,
                (
                    self.batch_size * self.num_nodes,
                    self.num_types,
                    self.num_nodes,
                ),
            ),
            axis=-1,
        )

    def per_type_sums(self):
        """The function `h (B * N, units) -> (B * N, T * units)`, block `e`
        of row `v` holding `Σ_{(u→v) of type e} h_u`."""

        def sums(states):
            units = states.shape[-1]
            summed = ops.matmul(
                self.counts,
                ops.reshape(states, (self.batch_size, self.num_nodes, units)),
            )
            return ops.reshape(summed, (-1, self.num_types * units))

        return sums

    def message_sums(self, message_kernel, num_directions):
        """The function `h (B * N, units) -> (B * N, D * units)`: the
        per-type sums times the `T` kernels stacked by direction."""
        per_type = self.per_type_sums()
        kernel = stack_by_direction(message_kernel, num_directions)
        return lambda states: ops.matmul(per_type(states), kernel)

    def confine_non_finite(self, node_states, steps):
        """Keeps a non-finite node state to the nodes it has a path to.

        In `counts @ h`, a NaN or infinite state of node `u` would reach
        every row through the zero counts of the nodes without an edge from
        `u` (`0 * NaN`). A cell keeps finite states finite, so only the
        initial states can hold one: they are zeroed, and the nodes within
        `steps` edges of one (following the messages, `u` itself included)
        are found by as many boolean steps of `counts`, to be set to NaN at
        the end, as the sparse aggregation leaves them. The other nodes
        read no state of theirs, so their states are exact.

        Returns the zeroed `(B, N, units)` states and the `(B, N, 1)` mask
        of the nodes to poison.
        """
        counts = self.counts
        finite = ops.all(ops.isfinite(node_states), axis=-1, keepdims=True)
        reached = ops.cast(ops.logical_not(finite), counts.dtype)
        for _ in range(steps):
            # (B, N * T, 1) -> edges into each node from a reached one.
            incoming = ops.reshape(
                ops.matmul(counts, reached),
                (self.batch_size, self.num_nodes, self.num_types),
            )
            incoming = ops.sum(incoming, axis=-1, keepdims=True)
            # Casts, not `greater(x, 0)`: PyTorch's ONNX exporter writes
            # that as a `Greater` of a float and an int32 zero, which
            # ONNX Runtime refuses to load. The counts are never negative.
            reached = ops.cast(
                ops.cast(reached + incoming, "bool"), counts.dtype
            )
        safe = ops.where(finite, node_states, ops.zeros_like(node_states))
        return safe, ops.cast(reached, "bool")


def stack_by_direction(blocks, num_directions):
    """Stacks per-type blocks `(T, rows, units)` into the matrix
    `(T * rows, D * units)` that sums them per direction.

    Row block `e` is type `e`'s block. With `num_directions=2` the forward
    types' blocks sit in the first `units` columns and the reverse types'
    in the last, zeros elsewhere, so that a row of counts or states times
    it gives `[forward sum, reverse sum]`; with 1 the blocks are stacked.
    """
    num_types, rows, units = blocks.shape
    stacked = ops.reshape(blocks, (num_types * rows, units))
    if num_directions == 1:
        return stacked
    half = num_types // 2 * rows
    zeros = ops.zeros((half, units), dtype=stacked.dtype)
    return ops.concatenate(
        [
            ops.concatenate([stacked[:half], zeros], axis=1),
            ops.concatenate([zeros, stacked[half:]], axis=1),
        ]
    )


def segment_sum(data, segment_ids, num_segments):
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
