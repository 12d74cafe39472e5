"""Checking padded graph tensors before they reach a model."""

import numpy as np

from keras_recurrent._checks import check_positive_int

# Names and order of the four graph tensors, as the graph layers take them.
GRAPH_TENSOR_NAMES = ("node_inputs", "edges", "edge_types", "node_mask")


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
    node_inputs = np.asarray(node_inputs)
    edges = np.asarray(edges)
    edge_types = np.asarray(edge_types)
    node_mask = np.asarray(node_mask)
    check_graph_shapes(
        node_inputs.shape,
        edges.shape,
        edge_types.shape,
        node_mask.shape,
    )
    if not np.issubdtype(node_inputs.dtype, np.floating):
        raise ValueError(
            "`node_inputs` must be floating-point. "
            f"Received: node_inputs.dtype={node_inputs.dtype}"
        )
    for name, array in (("edges", edges), ("edge_types", edge_types)):
        if not np.issubdtype(array.dtype, np.integer):
            raise ValueError(
                f"`{name}` must hold integers. "
                f"Received: {name}.dtype={array.dtype}"
            )
    if not (
        node_mask.dtype == bool or np.issubdtype(node_mask.dtype, np.integer)
    ):
        raise ValueError(
            "`node_mask` must be boolean or integer. "
            f"Received: node_mask.dtype={node_mask.dtype}"
        )
    if num_edge_types is not None:
        check_positive_int("num_edge_types", num_edge_types)
    problem = find_node_mask_problem(node_mask)
    if problem is None:
        problem = find_edge_problem(
            edges, edge_types, node_mask, num_edge_types
        )
    if problem is None:
        problem = find_node_inputs_problem(node_inputs, node_mask)
    if problem is not None:
        raise ValueError(problem)


def find_edge_problem(edges, edge_types, node_mask, num_edge_types=None):
    """Describes the first bad edge of a padded batch, or returns `None`.

    Args:
        edges: NumPy array `(batch, E, 2)`: integers, or floats, of which
            a real edge's must be whole numbers.
        edge_types: NumPy array `(batch, E)`, integers or whole floats.
        node_mask: Bool or integer NumPy array `(batch, N)`.
        num_edge_types: Optional positive integer, the number of edge types.

    Returns:
        A message naming the graph, the edge and the offending values, or
        `None` when every real edge is valid: whole numbers, node indices
        in `[0, N)` of real nodes, and types in range.
    """
    num_nodes = node_mask.shape[1]
    sources, targets = edges[..., 0], edges[..., 1]
    padding = (sources == -1) & (targets == -1)
    real = ~padding
    fractional = real & (_fractional(sources) | _fractional(targets))
    if fractional.any():
        graph, edge = np.argwhere(fractional)[0]
        return (
            "`edges` must hold whole node indices (an integer dtype, or "
            "floats without a fractional part). "
            f"Received: edges[{graph}, {edge}]={edges[graph, edge].tolist()}"
        )
    fractional = real & _fractional(edge_types)
    if fractional.any():
        graph, edge = np.argwhere(fractional)[0]
        return (
            "`edge_types` must hold whole numbers. Received: "
            f"edge_types[{graph}, {edge}]={edge_types[graph, edge].item()}"
        )
    out_of_range = real & (
        (sources < 0)
        | (sources >= num_nodes)
        | (targets < 0)
        | (targets >= num_nodes)
    )
    if out_of_range.any():
        graph, edge = np.argwhere(out_of_range)[0]
        return (
            f"`edges` must hold node indices in [0, {num_nodes}) (the padded "
            "number of nodes), or `-1` in both columns of a padding row. "
            f"Received: edges[{graph}, {edge}]={edges[graph, edge].tolist()}"
        )
    real_node = node_mask.astype(bool)
    graph_index = np.broadcast_to(
        np.arange(edges.shape[0])[:, None], sources.shape
    )
    safe_sources = np.where(real, sources, 0).astype(np.int64)
    safe_targets = np.where(real, targets, 0).astype(np.int64)
    on_padding = real & ~(
        real_node[graph_index, safe_sources]
        & real_node[graph_index, safe_targets]
    )
    if on_padding.any():
        graph, edge = np.argwhere(on_padding)[0]
        return (
            "`edges` must only join real nodes (nonzero `node_mask`). "
            f"Received: edges[{graph}, {edge}]={edges[graph, edge].tolist()}"
            f", where node_mask[{graph}]="
            f"{node_mask[graph].astype(int).tolist()}"
        )
    bad_type = real & (edge_types < 0)
    if num_edge_types is not None:
        bad_type |= real & (edge_types >= num_edge_types)
    if bad_type.any():
        graph, edge = np.argwhere(bad_type)[0]
        allowed = (
            f"[0, {num_edge_types})" if num_edge_types is not None else ">= 0"
        )
        return (
            f"`edge_types` of real edges must be in {allowed}. Received: "
            f"edge_types[{graph}, {edge}]={int(edge_types[graph, edge])}"
        )
    return None


def find_node_inputs_problem(node_inputs, node_mask):
    """Describes the first NaN or infinite input of a real node, or `None`.

    A model would propagate it along every edge of the graph, to a NaN
    output that no error explains.
    """
    bad = ~np.isfinite(node_inputs) & (node_mask != 0)[..., None]
    if not bad.any():
        return None
    graph, node, feature = np.argwhere(bad)[0]
    value = node_inputs[graph, node, feature].item()
    return (
        "`node_inputs` of real nodes must be finite. "
        f"Received: node_inputs[{graph}, {node}, {feature}]={value}"
    )


def find_node_mask_problem(node_mask):
    """Describes the first `node_mask` entry other than 0 or 1, or `None`.

    A mask of `0.5` or `2` has no meaning the layers could agree on (a cast
    to bool and a cast to int read it differently), so it is refused.

    Args:
        node_mask: Bool or numeric NumPy array `(batch, N)`.

    Returns:
        A message naming the graph, the node and the value, or `None`.
    """
    if node_mask.dtype == bool:
        return None
    bad = ~((node_mask == 0) | (node_mask == 1))
    if not bad.any():
        return None
    graph, node = np.argwhere(bad)[0]
    return (
        "`node_mask` must be 1 (or True) for real nodes and 0 for padding. "
        f"Received: node_mask[{graph}, {node}]={node_mask[graph, node].item()}"
    )


def _fractional(values):
    """Entries of a float array that are not whole numbers (NaN included)."""
    if not np.issubdtype(values.dtype, np.floating):
        return np.zeros(values.shape, dtype=bool)
    with np.errstate(invalid="ignore"):
        return ~(values == np.floor(values))


def check_graph_shapes(
    node_inputs_shape, edges_shape, edge_types_shape, node_mask_shape
):
    """Checks ranks and matching sizes of the four graph tensor shapes.

    `None` sizes (unknown while tracing) match anything.

    Raises:
        ValueError: If a rank is wrong, `edges` is not `(..., 2)`, the
            batch, node or edge sizes disagree, or there are no nodes.
    """
    shapes = dict(
        zip(
            GRAPH_TENSOR_NAMES,
            (node_inputs_shape, edges_shape, edge_types_shape, node_mask_shape),
            strict=True,
        )
    )
    ranks = {"node_inputs": 3, "edges": 3, "edge_types": 2, "node_mask": 2}
    layouts = {
        "node_inputs": "(batch, num_nodes, features)",
        "edges": "(batch, num_edges, 2)",
        "edge_types": "(batch, num_edges)",
        "node_mask": "(batch, num_nodes)",
    }
    for name, shape in shapes.items():
        if shape is None or len(shape) != ranks[name]:
            raise ValueError(
                f"`{name}` must have rank {ranks[name]}, "
                f"{layouts[name]}. Received: {name}.shape={_shape(shape)}"
            )
    if edges_shape[-1] is not None and edges_shape[-1] != 2:
        raise ValueError(
            "`edges` must be `(batch, num_edges, 2)`: (source, target) rows. "
            f"Received: edges.shape={_shape(edges_shape)}"
        )
    for axis, label, names in (
        (0, "batch size", GRAPH_TENSOR_NAMES),
        (1, "number of nodes", ("node_inputs", "node_mask")),
        (1, "number of edges", ("edges", "edge_types")),
    ):
        sizes = {name: shapes[name][axis] for name in names}
        known = {size for size in sizes.values() if size is not None}
        if len(known) > 1:
            raise ValueError(
                f"The graph tensors disagree on the {label}. Received shapes: "
                + ", ".join(
                    f"{name}.shape={_shape(shapes[name])}" for name in names
                )
            )
    if node_inputs_shape[1] == 0 or node_mask_shape[1] == 0:
        raise ValueError(
            "The graph tensors must have at least one node slot (pad a batch "
            "of empty graphs to one padding node). Received shapes: "
            f"node_inputs.shape={_shape(node_inputs_shape)}, "
            f"node_mask.shape={_shape(node_mask_shape)}"
        )


def _shape(shape):
    return None if shape is None else tuple(shape)
