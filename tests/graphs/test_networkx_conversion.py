import networkx
import numpy as np
import pytest

import keras_recurrent as kr


def _graph(nodes, edges, directed=True):
    """A networkx `DiGraph` (or `Graph`) with these nodes and edges, in order.

    `nodes` maps each node to its attributes; `edges` are `(u, v, attrs)`.
    """
    graph = networkx.DiGraph() if directed else networkx.Graph()
    graph.add_nodes_from(nodes.items())
    graph.add_edges_from(edges)
    return graph


def test_nodes_edges_types_and_annotations():
    graph = _graph(
        {"a": {"node_inputs": [1.0, 0.0]}, "b": {"node_inputs": [0.0, 1.0]}},
        [("a", "b", {"edge_type": 1}), ("b", "b", {})],
    )
    encoded = kr.graphs.from_networkx(graph)
    assert encoded["edges"].tolist() == [[0, 1], [1, 1]]
    assert encoded["edge_types"].tolist() == [1, 0]
    np.testing.assert_array_equal(encoded["node_inputs"], np.eye(2))
    reordered = kr.graphs.from_networkx(graph, nodes=["b", "a"])
    assert reordered["edges"].tolist() == [[1, 0], [0, 0]]
    np.testing.assert_array_equal(reordered["node_inputs"], np.eye(2)[::-1])


def test_undirected_edges_go_both_ways_and_attributes_are_optional():
    graph = _graph(
        {0: {}, 1: {}, 2: {}},
        [(0, 1, {"kind": 2}), (2, 2, {"kind": 1})],
        directed=False,
    )
    encoded = kr.graphs.from_networkx(graph, edge_type_attribute="kind")
    assert encoded["edges"].tolist() == [[0, 1], [1, 0], [2, 2]]
    assert encoded["edge_types"].tolist() == [2, 2, 1]
    np.testing.assert_array_equal(encoded["node_inputs"], np.ones((3, 1)))


@pytest.mark.parametrize(
    ("graph", "kwargs", "message"),
    [
        (_graph({0: {}, 1: {}}, []), {"nodes": [0]}, "every node"),
        (_graph({0: {}, 1: {}}, []), {"nodes": [0, 0]}, "every node"),
        (
            _graph({0: {"node_inputs": 1.0}, 1: {}}, []),
            {},
            r"all or no nodes.*\[1\]",
        ),
        (
            _graph({0: {"node_inputs": 1.0}, 1: {"node_inputs": [1, 2]}}, []),
            {},
            "one size",
        ),
        (_graph({0: {}}, [(0, 0, {"edge_type": "x"})]), {}, "'x'"),
        (
            _graph({0: {}}, [(0, 0, {"edge_type": 3})]),
            {"num_edge_types": 2},
            "3",
        ),
    ],
)
def test_bad_graphs(graph, kwargs, message):
    with pytest.raises(ValueError, match=message):
        kr.graphs.from_networkx(graph, **kwargs)


def test_multigraph_and_undirected_batch():
    graph = networkx.MultiDiGraph()
    graph.add_node("x", node_inputs=[1.0])
    graph.add_node("y", node_inputs=[0.0])
    graph.add_edge("x", "y", edge_type=0)
    graph.add_edge("x", "y", edge_type=1)
    undirected = networkx.path_graph(3)
    batch = kr.graphs.encode_graphs([graph, undirected], num_edge_types=2)
    assert batch["edges"].tolist() == [
        [[0, 1], [0, 1], [-1, -1], [-1, -1]],
        [[0, 1], [1, 0], [1, 2], [2, 1]],
    ]
    assert batch["edge_types"][0, :2].tolist() == [0, 1]
    assert batch["node_mask"].tolist() == [[1, 1, 0], [1, 1, 1]]
    assert batch["node_inputs"][:, :, 0].tolist() == [
        [1.0, 0.0, 0.0],
        [1.0, 1.0, 1.0],
    ]
