"""Checking padded graph tensors before they reach a model.

`graph_flags` and `GRAPH_RULES` are the one table of the graph rules (see
`keras_recurrent._rules` for its executors).
"""

import numpy as np

from keras_recurrent._checks import DTYPE_KINDS
from keras_recurrent._checks import check_positive_int
from keras_recurrent._checks import check_tensor_dtype
from keras_recurrent._checks import dtype_name
from keras_recurrent._rules import FINITE_INPUTS_RULE
from keras_recurrent._rules import NUMPY
from keras_recurrent._rules import Rule
from keras_recurrent._rules import check_at_least_one
from keras_recurrent._rules import check_ranks
from keras_recurrent._rules import check_sizes
from keras_recurrent._rules import first_problem
from keras_recurrent._rules import raise_message
from keras_recurrent._rules import show

# The four graph tensors, in the order the graph layers take them.
GRAPH_LAYOUTS = {
    "node_inputs": "(batch, num_nodes, features)",
    "edges": "(batch, num_edges, 2)",
    "edge_types": "(batch, num_edges)",
    "node_mask": "(batch, num_nodes)",
}
GRAPH_TENSOR_NAMES = tuple(GRAPH_LAYOUTS)

# The rule of the last axis of `edges`.
EDGE_ROWS = "`edges` must be `(batch, num_edges, 2)`: (source, target) rows."

# The sizes that must agree: `(axis, label, names)`.
GRAPH_SIZE_GROUPS = (
    (0, "batch size", GRAPH_TENSOR_NAMES),
    (1, "number of nodes", ("node_inputs", "node_mask")),
    (1, "number of edges", ("edges", "edge_types")),
)


def validate_graph_tensors(
    node_inputs, edges, edge_types, node_mask, *, num_edge_types=None
):
    """Checks a padded batch of graph tensors and raises on bad input.

    The format is the one `kr.layers.GatedGraph` reads (see
    `kr.graphs.encode_graphs`): `node_inputs` `(batch, N, D)` floats,
    `edges` `(batch, E, 2)` integer `(source, target)` rows with `-1` rows
    for padding, `edge_types` `(batch, E)` integers and `node_mask`
    `(batch, N)`, bool or integer, 1 for real nodes and 0 for padding.
    Edges connect nodes of the same graph, so an index is a node position
    within its own graph.

    Args:
        node_inputs: Array-like `(batch, N, D)`.
        edges: Integer array-like `(batch, E, 2)`.
        edge_types: Integer array-like `(batch, E)`.
        node_mask: Bool or integer array-like `(batch, N)`.
        num_edge_types: Optional positive integer. When given, the types of
            real edges must lie in `[0, num_edge_types)`.

    Returns:
        `None`.

    Raises:
        ValueError: If a shape or dtype is wrong, `node_mask` holds a value
            other than 0 and 1, a real edge has an index outside `[0, N)`,
            joins a padding node, or has a type out of range, or a real
            node has a NaN or infinite input; the message names the graph
            and the edge or node.

    Example:

    >>> graphs = kr.graphs.encode_graphs([{"edges": [(0, 1)]}])
    >>> kr.graphs.validate_graph_tensors(**graphs, num_edge_types=1)
    """
    tensors = (node_inputs, edges, edge_types, node_mask)
    arrays = dict(zip(GRAPH_TENSOR_NAMES, map(np.asarray, tensors)))
    check_graph_shapes(*[array.shape for array in arrays.values()])
    kinds = ["floating-point", "integer", "integer", "boolean or integer"]
    for (name, array), kind in zip(arrays.items(), kinds, strict=True):
        check_tensor_dtype(name, array, kind)
    if num_edge_types is not None:
        check_positive_int("num_edge_types", num_edge_types)
    raise_message(find_graph_problem(**arrays, num_edge_types=num_edge_types))


def find_graph_problem(
    edges, edge_types, node_mask, num_edge_types=None, node_inputs=None
):
    """The message of the first problem of NumPy graph tensors, or `None`;
    `node_inputs` (optional) must be finite at real nodes."""
    mask_flags, edge_flags, _ = graph_flags(
        NUMPY, edges, edge_types, node_mask, num_edge_types
    )
    rules, flags = GRAPH_RULES, [mask_flags, *edge_flags]
    if node_inputs is not None:
        rules += (FINITE_INPUTS_RULE,)
        flags.append(~np.isfinite(node_inputs) & (node_mask != 0)[..., None])
    arrays = {"edges": edges, "edge_types": edge_types, "node_mask": node_mask}
    arrays["node_inputs"] = node_inputs
    allowed = ">= 0" if num_edge_types is None else f"[0, {num_edge_types})"
    return first_problem(
        rules, flags, arrays, num_nodes=node_mask.shape[1], allowed=allowed
    )


def find_node_mask_problem(node_mask):
    """The message of the first `node_mask` entry other than 0 or 1."""
    flags = [non_binary(NUMPY, node_mask)]
    return first_problem(GRAPH_RULES[:1], flags, {"node_mask": node_mask})


def non_binary(xp, node_mask):
    """`(batch, N)` bool: the `node_mask` entries other than 0 and 1."""
    if dtype_name(node_mask.dtype) == "bool":
        return xp.zeros_like(node_mask, dtype="bool")
    return xp.logical_and(
        xp.not_equal(node_mask, 0), xp.not_equal(node_mask, 1)
    )


def graph_flags(xp, edges, edge_types, node_mask, num_edge_types):
    """The flags of `GRAPH_RULES`: bad nodes `(batch, N)` of the first, a
    list of the bad edges `(batch, E)` of the others; and the real edges.

    Comparisons run on the input dtype, before any cast, so that a float
    `2.6` or an int64 `2**32 + 1` cannot turn into a valid-looking index.
    """
    num_nodes = xp.shape(node_mask)[1]
    ends = (edges[..., 0], edges[..., 1])  # sources, targets
    real = xp.logical_not(xp.logical_and(*(xp.equal(e, -1) for e in ends)))
    fractional = xp.logical_or(*(_fractional(xp, e) for e in ends))
    in_range = xp.logical_and(*(_in_range(xp, e, num_nodes) for e in ends))
    fits = xp.logical_and(
        xp.logical_and(real, in_range), xp.logical_not(fractional)
    )
    # A zero column after the last node: the reads of edges that do not
    # fit land there, so the gather never leaves the tensor.
    is_real_node = xp.cast(xp.cast(node_mask, "bool"), "int32")
    is_real_node = xp.pad(is_real_node, [[0, 0], [0, 1]])
    joins_real = fits
    for end in ends:
        index = xp.cast(xp.where(fits, end, num_nodes), "int32")
        ends_real = xp.take_along_axis(is_real_node, index, axis=1) > 0
        joins_real = xp.logical_and(joins_real, ends_real)
    fractional_types = _fractional(xp, edge_types)
    edge_flags = [
        fractional,
        fractional_types,
        # The traced assertions name whole numbers out of range or not
        # whole alike, by these two rules.
        xp.logical_not(fits),
        xp.logical_and(fits, xp.logical_not(joins_real)),
        xp.logical_or(
            fractional_types,
            xp.logical_not(_in_range(xp, edge_types, num_edge_types)),
        ),
    ]
    edge_flags = [xp.logical_and(real, flag) for flag in edge_flags]
    return non_binary(xp, node_mask), edge_flags, real


def _fractional(xp, values):
    """Entries that are not whole numbers (NaN included)."""
    if not DTYPE_KINDS["floating-point"](dtype_name(values.dtype)):
        return xp.zeros_like(values, dtype="bool")
    return xp.logical_not(xp.equal(values, xp.floor(values)))


def _in_range(xp, values, stop):
    """Whether `values` lie in `[0, stop)` (`stop=None`: `>= 0`)."""
    inside = xp.greater_equal(values, xp.cast(0, values.dtype))
    if stop is None:
        return inside
    return xp.logical_and(inside, xp.less(values, xp.cast(stop, values.dtype)))


def _edge(arrays, graph, edge):
    return show(arrays, "edges", graph, edge)


# In the order of `graph_flags`, which is the order they are reported in.
GRAPH_RULES = (
    Rule(
        "`node_mask` must be 1 (or True) for real nodes and 0 for padding.",
        lambda a, graph, node: show(a, "node_mask", graph, node),
    ),
    Rule(
        "`edges` must hold whole node indices (an integer dtype, or floats "
        "without a fractional part).",
        _edge,
        traced=False,
        item="edge",
    ),
    Rule(
        "`edge_types` must hold whole numbers.",
        lambda a, graph, edge: show(a, "edge_types", graph, edge),
        traced=False,
        item="edge",
    ),
    Rule(
        "`edges` must hold node indices in [0, {num_nodes}) (the padded "
        "number of nodes), or `-1` in both columns of a padding row.",
        _edge,
        item="edge",
    ),
    Rule(
        "`edges` must only join real nodes (nonzero `node_mask`).",
        lambda a, graph, edge: (
            f"{_edge(a, graph, edge)}, where node_mask[{graph}]="
            f"{a['node_mask'][graph].astype(int).tolist()}"
        ),
        item="edge",
    ),
    Rule(
        "`edge_types` of real edges must be in {allowed}.",
        lambda a, graph, edge: (
            f"edge_types[{graph}, {edge}]={int(a['edge_types'][graph, edge])}"
        ),
        item="edge",
    ),
)


def check_graph_shapes(
    node_inputs_shape, edges_shape, edge_types_shape, node_mask_shape
):
    """Checks ranks, `(..., 2)` edges, agreeing sizes (`None` matches any)
    and at least one node."""
    shapes = (node_inputs_shape, edges_shape, edge_types_shape, node_mask_shape)
    shapes = dict(zip(GRAPH_TENSOR_NAMES, shapes, strict=True))
    check_ranks(shapes, GRAPH_LAYOUTS)
    if edges_shape[-1] is not None and edges_shape[-1] != 2:
        raise ValueError(
            f"{EDGE_ROWS} Received: edges.shape={tuple(edges_shape)}"
        )
    check_sizes("graph", shapes, GRAPH_SIZE_GROUPS)
    # Their numbers of nodes agree: the one known, if any, is checked.
    for name in ("node_inputs", "node_mask"):
        check_at_least_one("node", name, shapes[name])
