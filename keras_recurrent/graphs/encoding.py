"""Encoding Python graphs into the padded graph tensors of the graph layers."""

from collections.abc import Mapping

import numpy as np

from keras_recurrent._batching import INT32_MAX
from keras_recurrent._checks import check_dtype
from keras_recurrent._checks import check_not_empty
from keras_recurrent._checks import check_positive_int
from keras_recurrent.graphs.validation import GRAPH_TENSOR_NAMES

_NODE_MASK_DTYPES = ("int32", "bool")
_GRAPH_KEYS = ("edges", "num_nodes", "node_inputs", "edge_types")


def encode_graph(
    edges,
    *,
    num_nodes=None,
    node_inputs=None,
    edge_types=None,
    num_edge_types=None,
):
    """Encodes one graph as unpadded arrays.

    A graph is `num_nodes` nodes numbered `0 .. num_nodes - 1`, optional node
    annotations and a list of directed, typed edges. The result is the
    single-graph form of the graph tensors (no batch axis, no padding): feed
    such dicts to `encode_graphs` to pad and stack a batch, or yield them from
    a generator into `tf.data` and batch with `kr.graphs.padded_batch`.

    Args:
        edges: The directed edges: an iterable of `(source, target)` pairs or
            `(source, target, edge_type)` triples, or an integer array of
            shape `(num_edges, 2)` or `(num_edges, 3)`. Pairs have type 0
            unless `edge_types` is given.
        num_nodes: Optional non-negative integer, the number of nodes.
            Defaults to the number of rows of `node_inputs`, else to the
            largest node index in `edges` plus one.
        node_inputs: Optional float array-like `(num_nodes, D)`, the node
            annotations (a 1D array is one feature per node). Defaults to a
            single feature equal to 1 for every node.
        edge_types: Optional integers, one per edge, when `edges` holds pairs.
        num_edge_types: Optional positive integer. When given, every edge
            type must be in `[0, num_edge_types)`.

    Returns:
        A dict of NumPy arrays:

        - `"node_inputs"`: float32 `(num_nodes, D)`,
        - `"edges"`: int32 `(num_edges, 2)`, `(source, target)` rows,
        - `"edge_types"`: int32 `(num_edges,)`,
        - `"node_mask"`: int32 `(num_nodes,)`, all ones.

    Raises:
        ValueError: If a node index is outside `[0, num_nodes)`, an edge type
            is negative or not below `num_edge_types`, `node_inputs` holds a
            NaN or an infinity, or the arguments do not agree in shape.

    Example:

    >>> graph = kr.graphs.encode_graph(
    ...     [(0, 1, 0), (1, 2, 1)], node_inputs=[[1.0], [0.0], [0.0]]
    ... )
    >>> graph["edges"].tolist(), graph["edge_types"].tolist()
    ([[0, 1], [1, 2]], [0, 1])
    >>> graph["node_inputs"].shape, graph["node_mask"].tolist()
    ((3, 1), [1, 1, 1])
    """
    pairs, types = _pairs_and_types(_edge_array(edges), edge_types)
    node_inputs = _node_input_array(node_inputs)
    num_nodes = _num_nodes(num_nodes, node_inputs, pairs)
    if node_inputs is None:
        node_inputs = np.ones((num_nodes, 1), dtype="float32")
    elif node_inputs.shape[0] != num_nodes:
        raise ValueError(
            f"Argument `node_inputs` must have one row per node ({num_nodes})."
            f" Received: node_inputs.shape={node_inputs.shape}"
        )
    if pairs.size and (pairs.min() < 0 or pairs.max() >= num_nodes):
        bad = np.argwhere((pairs < 0) | (pairs >= num_nodes))[0][0]
        raise ValueError(
            f"Argument `edges` must hold node indices in [0, {num_nodes}). "
            f"Received: edge {int(bad)} = {pairs[bad].tolist()}"
        )
    _check_edge_types(types, num_edge_types)
    return {
        "node_inputs": node_inputs,
        "edges": pairs.astype("int32"),
        "edge_types": types.astype("int32"),
        "node_mask": np.ones((num_nodes,), dtype="int32"),
    }


def _pairs_and_types(edge_array, edge_types):
    """The `(source, target)` rows of `edge_array` and one type per edge.

    The types come from `edge_types`, else from the third column of
    `edge_array`, else are 0.
    """
    if edge_types is not None:
        if edge_array.shape[1] == 3:
            raise ValueError(
                "Pass edge types either in `edges` triples or in "
                "`edge_types`, not both. Received: edges with 3 columns and "
                f"edge_types={edge_types!r}"
            )
        types = np.asarray(edge_types)
        if types.shape != (edge_array.shape[0],) or (
            types.size and not np.issubdtype(types.dtype, np.integer)
        ):
            raise ValueError(
                "Argument `edge_types` must hold one integer per edge "
                f"({edge_array.shape[0]}). Received: edge_types={edge_types!r}"
            )
    elif edge_array.shape[1] == 3:
        types = edge_array[:, 2]
    else:
        types = np.zeros((edge_array.shape[0],), dtype="int32")
    return edge_array[:, :2], types


def _node_input_array(node_inputs):
    """`node_inputs` as a finite float32 `(num_nodes, features)` array, or
    `None` when not given."""
    if node_inputs is None:
        return None
    node_inputs = np.asarray(node_inputs, dtype="float32")
    if node_inputs.ndim == 1:
        node_inputs = node_inputs[:, None]
    if node_inputs.ndim != 2:
        raise ValueError(
            "Argument `node_inputs` must be `(num_nodes, features)`. "
            f"Received: node_inputs.shape={node_inputs.shape}"
        )
    if not np.isfinite(node_inputs).all():
        bad = tuple(np.argwhere(~np.isfinite(node_inputs))[0].tolist())
        raise ValueError(
            "Argument `node_inputs` must be finite. Received: "
            f"node_inputs[{bad[0]}, {bad[1]}]={node_inputs[bad].item()}"
        )
    return node_inputs


def _num_nodes(num_nodes, node_inputs, pairs):
    """`num_nodes`, checked, or its default: the rows of `node_inputs`, else
    the largest node index in `pairs` plus one."""
    if num_nodes is None:
        if node_inputs is not None:
            num_nodes = node_inputs.shape[0]
        elif pairs.size:
            num_nodes = int(pairs.max()) + 1
        else:
            raise ValueError(
                "Pass `num_nodes` (or `node_inputs`) for a graph without "
                "edges. Received: edges=[], num_nodes=None, node_inputs=None"
            )
    num_nodes = check_positive_int("num_nodes", num_nodes, allow_zero=True)
    if num_nodes > INT32_MAX:
        raise ValueError(
            "Argument `num_nodes` must fit the int32 node indices of the "
            f"model's inputs (at most 2**31 - 1). Received: num_nodes="
            f"{num_nodes}"
            + (
                ", the largest node index in `edges` plus one"
                if pairs.size and num_nodes == int(pairs.max()) + 1
                else ""
            )
        )
    return num_nodes


def _check_edge_types(types, num_edge_types):
    """Checks that every edge type is `>= 0` and below `num_edge_types`."""
    if num_edge_types is not None:
        check_positive_int("num_edge_types", num_edge_types)
    # Checked on the values as given, before the int32 cast (which would
    # read a type 2**32 as type 0).
    stop = INT32_MAX + 1 if num_edge_types is None else num_edge_types
    bad_types = (types < 0) | (types >= stop)
    if bad_types.any():
        bad = np.argwhere(bad_types)[0][0]
        allowed = (
            f"[0, {num_edge_types})"
            if num_edge_types is not None
            else "[0, 2**31) (the int32 range of the model's inputs)"
        )
        raise ValueError(
            f"Edge types must be in {allowed}. "
            f"Received: type {int(types[bad])} for edge {int(bad)}"
        )


def encode_graphs(
    graphs,
    *,
    num_nodes=None,
    num_edges=None,
    num_edge_types=None,
    node_mask_dtype="int32",
):
    """Pads and stacks graphs into the graph tensors of the graph layers.

    The graphs of the batch are padded to `N` nodes and `E` edges: padding
    nodes have zero `node_inputs` and zero `node_mask`, padding edges are
    `(-1, -1)` rows of type 0. These four arrays are what
    `kr.layers.GatedGraph` takes, as the list
    `[node_inputs, edges, edge_types, node_mask]` or as this dict (e.g. to
    `model.fit` a model built on `kr.graphs.graph_inputs`).

    Args:
        graphs: A non-empty iterable of graphs, each one of:

            - a dict as `encode_graph` returns,
            - a dict of `encode_graph` arguments: `"edges"` and optionally
              `"num_nodes"`, `"node_inputs"`, `"edge_types"`,
            - a networkx graph, encoded with `kr.graphs.from_networkx` and
              its defaults.

            All graphs must have the same number of node features `D`.
        num_nodes: Optional positive integer, the padded number of nodes `N`.
            Defaults to the largest graph's.
        num_edges: Optional non-negative integer, the padded number of edges
            `E`. Defaults to the largest number of edges of a graph.
        num_edge_types: Optional positive integer. When given, every edge
            type must be in `[0, num_edge_types)`.
        node_mask_dtype: `"int32"` (default) or `"bool"`. Keras 3's `fit`
            under `MirroredStrategy` cannot take boolean inputs, so int32 is
            the safe choice for training.

    Returns:
        A dict of NumPy arrays with `B = len(graphs)`:

        - `"node_inputs"`: float32 `(B, N, D)`,
        - `"edges"`: int32 `(B, E, 2)`, `(source, target)` node indices
          within the graph, `-1` rows for padding,
        - `"edge_types"`: int32 `(B, E)`,
        - `"node_mask"`: `(B, N)`, 1 (or `True`) for real nodes.

    Raises:
        ValueError: If a graph is invalid (see `encode_graph`), is larger
            than `num_nodes` or `num_edges`, or the graphs disagree on `D`.

    Example:

    >>> batch = kr.graphs.encode_graphs(
    ...     [{"edges": [(0, 1, 0), (1, 2, 1)]}, {"edges": [(1, 0, 1)]}],
    ...     num_nodes=4,
    ... )
    >>> {name: array.shape for name, array in batch.items()}
    {'node_inputs': (2, 4, 1), 'edges': (2, 2, 2), 'edge_types': (2, 2),
     'node_mask': (2, 4)}
    >>> batch["edges"][1].tolist(), batch["node_mask"][1].tolist()
    ([[1, 0], [-1, -1]], [1, 1, 0, 0])
    """
    node_mask_dtype = check_dtype(
        "node_mask_dtype", node_mask_dtype, _NODE_MASK_DTYPES
    )
    if isinstance(graphs, Mapping) or _is_networkx_graph(graphs):
        raise ValueError(
            "Argument `graphs` must be an iterable of graphs (wrap a single "
            f"graph in a list). Received: graphs of type {type(graphs)}"
        )
    encoded = [
        _encode_one(graph, index, num_edge_types)
        for index, graph in enumerate(graphs)
    ]
    check_not_empty("graphs", encoded)
    check_positive_int("num_nodes", num_nodes, allow_none=True)
    check_positive_int("num_edges", num_edges, allow_none=True, allow_zero=True)
    sizes = [graph["node_mask"].shape[0] for graph in encoded]
    edge_counts = [graph["edges"].shape[0] for graph in encoded]
    features = {graph["node_inputs"].shape[1] for graph in encoded}
    if len(features) > 1:
        raise ValueError(
            "All graphs must have the same number of node features. "
            f"Received: node_inputs widths {sorted(features)}"
        )
    (feature_size,) = features
    padded_nodes = max(max(sizes), 1) if num_nodes is None else num_nodes
    padded_edges = max(edge_counts) if num_edges is None else num_edges
    for index, (size, count) in enumerate(zip(sizes, edge_counts, strict=True)):
        if size > padded_nodes:
            raise ValueError(
                f"Graph {index} has {size} nodes, more than "
                f"num_nodes={padded_nodes}."
            )
        if count > padded_edges:
            raise ValueError(
                f"Graph {index} has {count} edges, more than "
                f"num_edges={padded_edges}."
            )

    batch_size = len(encoded)
    batch = {
        "node_inputs": np.zeros(
            (batch_size, padded_nodes, feature_size), dtype="float32"
        ),
        "edges": np.full((batch_size, padded_edges, 2), -1, dtype="int32"),
        "edge_types": np.zeros((batch_size, padded_edges), dtype="int32"),
        "node_mask": np.zeros((batch_size, padded_nodes), dtype="int32"),
    }
    for index, graph in enumerate(encoded):
        size, count = sizes[index], edge_counts[index]
        batch["node_inputs"][index, :size] = graph["node_inputs"]
        batch["edges"][index, :count] = graph["edges"]
        batch["edge_types"][index, :count] = graph["edge_types"]
        batch["node_mask"][index, :size] = 1
    batch["node_mask"] = batch["node_mask"].astype(node_mask_dtype)
    return {name: batch[name] for name in GRAPH_TENSOR_NAMES}


def _encode_one(graph, index, num_edge_types):
    if _is_networkx_graph(graph):
        # Imported here: the networkx conversion imports this module.
        from keras_recurrent.graphs.networkx_conversion import from_networkx

        return from_networkx(graph, num_edge_types=num_edge_types)
    if not isinstance(graph, Mapping):
        raise ValueError(
            "Each graph must be a dict (see `kr.graphs.encode_graph`) or a "
            f"networkx graph. Received: graphs[{index}] of type {type(graph)}"
        )
    if "node_mask" in graph:
        node_mask = np.asarray(graph["node_mask"])
        if node_mask.ndim != 1 or not (node_mask == 1).all():
            raise ValueError(
                "An encoded single graph has only real nodes, so its "
                "`node_mask` must be all ones. Received: "
                f"graphs[{index}]['node_mask']={node_mask.tolist()}"
            )
    unknown = sorted(set(graph) - set(_GRAPH_KEYS) - {"node_mask"})
    if unknown or "edges" not in graph:
        raise ValueError(
            f"A graph dict needs `edges` and may have {list(_GRAPH_KEYS[1:])}"
            f" or `node_mask`. Received: graphs[{index}] with keys "
            f"{sorted(graph)}"
        )
    arguments = {key: graph[key] for key in _GRAPH_KEYS if key in graph}
    if "num_nodes" not in arguments and "node_mask" in graph:
        arguments["num_nodes"] = len(graph["node_mask"])
    try:
        return encode_graph(**arguments, num_edge_types=num_edge_types)
    except ValueError as error:
        raise ValueError(f"Graph {index} is invalid: {error}") from None


def _is_networkx_graph(graph):
    """Duck-typed check, so that networkx stays an optional dependency."""
    return all(
        hasattr(graph, attribute)
        for attribute in ("nodes", "edges", "is_directed", "adj")
    )


def _edge_array(edges):
    if isinstance(edges, np.ndarray):
        array = edges
    else:
        rows = [tuple(edge) for edge in edges]
        if rows and len({len(row) for row in rows}) > 1:
            raise ValueError(
                "Argument `edges` must hold only pairs or only triples. "
                f"Received rows of lengths {sorted({len(r) for r in rows})}"
            )
        array = np.asarray(rows).reshape(
            (len(rows), len(rows[0]) if rows else 2)
        )
    if array.ndim != 2 or array.shape[1] not in (2, 3):
        raise ValueError(
            "Argument `edges` must be `(source, target)` pairs or `(source, "
            "target, edge_type)` triples. Received: edges.shape="
            f"{array.shape}"
        )
    if array.size and array.dtype == object:
        wide = [
            value
            for value in array.reshape(-1)
            if isinstance(value, int) and not isinstance(value, bool)
        ]
        if len(wide) == array.size:
            raise ValueError(
                "Argument `edges` must hold node indices and edge types in "
                "the int32 range of the model's inputs. Received: "
                f"{max(wide, key=abs)} in edges"
            )
    if array.size and not np.issubdtype(array.dtype, np.integer):
        raise ValueError(
            "Argument `edges` must hold integers. "
            f"Received: edges.dtype={array.dtype}"
        )
    # Kept in their own dtype until checked: an int64 cast would turn a
    # uint64 `2**64 - 1` into -1, an int32 cast `2**32 + 1` into node 1.
    return array if array.size else array.astype("int64")
