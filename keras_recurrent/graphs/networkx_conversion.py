"""Encoding networkx graphs (networkx itself is optional)."""

import numpy as np

from keras_recurrent.graphs.encoding import encode_graph


def from_networkx(
    graph,
    *,
    nodes=None,
    node_inputs_attribute="node_inputs",
    edge_type_attribute="edge_type",
    num_edge_types=None,
):
    """Encodes a networkx graph like `kr.graphs.encode_graph` does.

    Node `i` of the encoding is the `i`-th node of `nodes` (default: the
    order of `graph.nodes`), whatever the networkx node keys are. Every edge
    of a directed graph (`DiGraph`, `MultiDiGraph`) becomes one edge; every
    edge of an undirected graph becomes two, one each way, of the same type
    (a self-loop stays one edge). Parallel edges of multigraphs are kept.

    networkx is not a dependency of this package: the graph is only read
    through `graph.nodes`, `graph.edges(data=True)` and `graph.is_directed()`.

    Args:
        graph: A networkx graph.
        nodes: Optional sequence of all the node keys of `graph`, in the
            order to number them.
        node_inputs_attribute: Name of the node attribute that holds the
            node's annotation (a number or a 1D sequence; all nodes must have
            one of the same size). If no node has this attribute, every node
            gets the single feature 1. Defaults to `"node_inputs"`.
        edge_type_attribute: Name of the edge attribute that holds the edge
            type, an integer; edges without it have type 0. Defaults to
            `"edge_type"`.
        num_edge_types: Optional positive integer. When given, every edge
            type must be in `[0, num_edge_types)`.

    Returns:
        The dict of unpadded arrays of `encode_graph`: `"node_inputs"`,
        `"edges"`, `"edge_types"` and `"node_mask"`.

    Raises:
        ValueError: If `nodes` is not a permutation of the nodes of `graph`,
            only some nodes have `node_inputs_attribute`, or an edge type is
            not a valid integer.

    Example:

    >>> graph = networkx.DiGraph()
    >>> graph.add_node("a", node_inputs=[1.0, 0.0])
    >>> graph.add_node("b", node_inputs=[0.0, 1.0])
    >>> graph.add_edge("a", "b", edge_type=1)
    >>> encoded = kr.graphs.from_networkx(graph)
    >>> encoded["edges"].tolist(), encoded["edge_types"].tolist()
    ([[0, 1]], [1])
    """
    keys = list(graph.nodes) if nodes is None else list(nodes)
    index = {key: position for position, key in enumerate(keys)}
    if len(index) != len(keys) or set(index) != set(graph.nodes):
        raise ValueError(
            "Argument `nodes` must list every node of `graph` once. "
            f"Received: nodes={keys!r} for graph nodes {list(graph.nodes)!r}"
        )
    attributes = dict(graph.nodes(data=True))
    annotated = [
        key for key in keys if node_inputs_attribute in attributes[key]
    ]
    node_inputs = None
    if annotated:
        if len(annotated) != len(keys):
            missing = [key for key in keys if key not in set(annotated)]
            raise ValueError(
                f"Either all or no nodes must have the attribute "
                f"{node_inputs_attribute!r}. Received: nodes {missing!r} "
                "without it"
            )
        rows = [
            np.atleast_1d(
                np.asarray(attributes[key][node_inputs_attribute], "float32")
            )
            for key in keys
        ]
        widths = {row.shape for row in rows}
        if len(widths) > 1 or rows[0].ndim != 1:
            raise ValueError(
                f"The node attribute {node_inputs_attribute!r} must be a "
                "number or a 1D sequence of one size for all nodes. "
                f"Received shapes {sorted(widths)}"
            )
        node_inputs = np.stack(rows)

    edges = []
    for source, target, data in graph.edges(data=True):
        edge_type = data.get(edge_type_attribute, 0)
        if isinstance(edge_type, bool) or not isinstance(
            edge_type, (int, np.integer)
        ):
            raise ValueError(
                f"The edge attribute {edge_type_attribute!r} must be an "
                f"integer edge type. Received: {edge_type!r} on edge "
                f"({source!r}, {target!r})"
            )
        edges.append((index[source], index[target], int(edge_type)))
        if not graph.is_directed() and source != target:
            edges.append((index[target], index[source], int(edge_type)))
    return encode_graph(
        np.asarray(edges, dtype="int64").reshape((len(edges), 3)),
        num_nodes=len(keys),
        node_inputs=node_inputs,
        num_edge_types=num_edge_types,
    )
