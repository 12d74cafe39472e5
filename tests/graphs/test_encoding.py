import numpy as np
import pytest

import keras_recurrent as kr


def test_encode_graph_from_triples_pairs_and_arrays():
    graph = kr.graphs.encode_graph(
        [(0, 1, 0), (1, 2, 1)], node_inputs=[[1.0], [0.0], [0.0]]
    )
    assert graph["edges"].tolist() == [[0, 1], [1, 2]]
    assert graph["edge_types"].tolist() == [0, 1]
    assert graph["node_inputs"].dtype == np.float32
    assert graph["node_mask"].tolist() == [1, 1, 1]
    assert [graph[name].dtype for name in ("edges", "edge_types")] == [
        np.int32,
        np.int32,
    ]

    pairs = kr.graphs.encode_graph([(0, 1), (1, 2)], edge_types=[0, 1])
    array = kr.graphs.encode_graph(np.array([[0, 1, 0], [1, 2, 1]]))
    for other in (pairs, array):
        assert other["edges"].tolist() == graph["edges"].tolist()
        assert other["edge_types"].tolist() == [0, 1]
    # Without annotations every node gets the single feature 1; without
    # num_nodes the graph ends at the largest index.
    np.testing.assert_array_equal(pairs["node_inputs"], np.ones((3, 1)))
    untyped = kr.graphs.encode_graph([(2, 0)], num_nodes=5)
    assert untyped["edge_types"].tolist() == [0]
    assert untyped["node_mask"].shape == (5,)
    lonely = kr.graphs.encode_graph([], num_nodes=2)
    assert lonely["edges"].shape == (0, 2) and lonely["edge_types"].shape == (
        0,
    )
    one_feature = kr.graphs.encode_graph([(0, 1)], node_inputs=[0.5, 1.5])
    assert one_feature["node_inputs"].shape == (2, 1)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"edges": [(0, 3)], "num_nodes": 3}, r"\[0, 3\).*\[0, 3\]"),
        ({"edges": [(-1, 0)], "num_nodes": 3}, r"\[0, 3\)"),
        ({"edges": [(0, 1, 2)], "num_edge_types": 2}, r"\[0, 2\).*type 2"),
        ({"edges": [(0, 1, -1)]}, "type -1"),
        ({"edges": [(0, 1), (0, 1, 1)]}, "only pairs or only triples"),
        ({"edges": [(0, 1, 0, 1)]}, "pairs or"),
        ({"edges": [(0.5, 1)]}, "must hold integers"),
        ({"edges": []}, "Pass `num_nodes`"),
        (
            {"edges": [(0, 1)], "num_nodes": 2, "node_inputs": [[1.0]]},
            "one row per node",
        ),
        ({"edges": [(0, 1)], "node_inputs": np.ones((2, 1, 1))}, "features"),
        ({"edges": [(0, 1, 0)], "edge_types": [1]}, "not both"),
        ({"edges": [(0, 1)], "edge_types": [1, 0]}, "one integer per edge"),
        ({"edges": [(0, 1)], "num_nodes": -1}, "num_nodes=-1"),
        ({"edges": [(0, 1)], "num_edge_types": 0}, "num_edge_types=0"),
    ],
)
def test_encode_graph_rejects_bad_graphs(arguments, message):
    with pytest.raises(ValueError, match=message):
        kr.graphs.encode_graph(**arguments)


def test_encode_graphs_pads_and_stacks():
    batch = kr.graphs.encode_graphs(
        [
            {"edges": [(0, 1, 0), (1, 2, 1)]},
            {"edges": [(1, 0, 1)]},
            kr.graphs.encode_graph([], num_nodes=1),
        ],
        num_nodes=4,
    )
    assert list(batch) == list(kr.graphs.GRAPH_TENSOR_NAMES)
    assert {name: array.shape for name, array in batch.items()} == {
        "node_inputs": (3, 4, 1),
        "edges": (3, 2, 2),
        "edge_types": (3, 2),
        "node_mask": (3, 4),
    }
    assert batch["edges"].tolist() == [
        [[0, 1], [1, 2]],
        [[1, 0], [-1, -1]],
        [[-1, -1], [-1, -1]],
    ]
    assert batch["edge_types"].tolist() == [[0, 1], [1, 0], [0, 0]]
    assert batch["node_mask"].tolist() == [
        [1, 1, 1, 0],
        [1, 1, 0, 0],
        [1, 0, 0, 0],
    ]
    assert batch["node_inputs"][:, :, 0].tolist() == batch["node_mask"].tolist()
    assert batch["node_mask"].dtype == np.int32
    kr.graphs.validate_graph_tensors(**batch, num_edge_types=2)

    tight = kr.graphs.encode_graphs(
        [{"edges": [(0, 1)]}, {"edges": [(0, 2)]}],
        num_edges=3,
        node_mask_dtype="bool",
    )
    assert tight["node_mask"].dtype == bool
    assert tight["node_mask"].tolist() == [[True, True, False], [True] * 3]
    assert tight["edges"].shape == (2, 3, 2)


@pytest.mark.parametrize(
    ("graphs", "kwargs", "message"),
    [
        ([], {}, "must not be empty"),
        ({"edges": [(0, 1)]}, {}, "wrap a single graph"),
        ([{"edges": [(0, 3)]}], {"num_nodes": 3}, "Graph 0 has 4 nodes"),
        ([{"edges": [(0, 1), (1, 0)]}], {"num_edges": 1}, "2 edges"),
        ([{"edges": [(0, 1, 3)]}], {"num_edge_types": 3}, "Graph 0 is invalid"),
        ([{"edges": [(0, 1)]}, (0, 1)], {}, r"graphs\[1\]"),
        ([{"edge": [(0, 1)]}], {}, "needs `edges`"),
        (
            [
                {"edges": [(0, 1)], "node_inputs": np.ones((2, 1))},
                {"edges": [(0, 1)], "node_inputs": np.ones((2, 2))},
            ],
            {},
            r"same number of node features.*\[1, 2\]",
        ),
        ([{"edges": [(0, 1)]}], {"node_mask_dtype": "float32"}, "node_mask"),
        ([{"edges": [(0, 1)], "node_mask": [1, 0]}], {}, "all ones"),
    ],
)
def test_encode_graphs_rejects_bad_batches(graphs, kwargs, message):
    with pytest.raises(ValueError, match=message):
        kr.graphs.encode_graphs(graphs, **kwargs)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda b: b.update(edges=b["edges"][..., :1]),
            r"\(batch, num_edges, 2\)",
        ),
        (
            lambda b: b.update(node_mask=b["node_mask"][:, :2]),
            "number of nodes",
        ),
        (lambda b: b.update(edge_types=b["edge_types"][:1]), "batch size"),
        (lambda b: b.update(node_inputs=b["node_inputs"][0]), "rank 3"),
        (lambda b: b.update(edges=b["edges"] * 1.0), "must be integer"),
        (lambda b: b.update(node_inputs=b["node_inputs"] > 0), "floating"),
        (lambda b: b.update(node_mask=b["node_mask"] * 1.0), "boolean or"),
    ],
)
def test_validate_graph_tensors_rejects_bad_shapes_and_dtypes(change, message):
    batch = kr.graphs.encode_graphs([{"edges": [(0, 1)]}, {"edges": [(0, 2)]}])
    change(batch)
    with pytest.raises(ValueError, match=message):
        kr.graphs.validate_graph_tensors(**batch)


WIDE = 2**32 + 1  # As int32: 1, a valid node.


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (
            {"edges": np.array([[0, WIDE]]), "num_nodes": 3},
            r"\[0, 3\).*edge 0 = \[0, 4294967297\]",
        ),
        (
            {"edges": np.array([[0, 2**64 - 1]], "uint64"), "num_nodes": 3},
            r"edge 0 = \[0, 18446744073709551615\]",
        ),
        (
            {"edges": [(0, 1, 2**32)], "num_nodes": 3},
            r"\[0, 2\*\*31\).*type 4294967296 for edge 0",
        ),
        (
            {"edges": [(0, 1)], "edge_types": [2**32], "num_nodes": 3},
            r"type 4294967296 for edge 0",
        ),
        (
            {
                "edges": [(0, 1)],
                "edge_types": np.array([2**64 - 1], "uint64"),
                "num_nodes": 3,
            },
            r"type 18446744073709551615 for edge 0",
        ),
        (
            {"edges": [(0, 1, 2**32)], "num_edge_types": 2},
            r"\[0, 2\).*type 4294967296",
        ),
        ({"edges": [(0, 2**70)]}, r"int32 range.*1180591620717411303424"),
        ({"edges": [(0, WIDE)]}, r"num_nodes=4294967298, the largest node"),
    ],
    ids=[
        "int64 node",
        "uint64 node",
        "type in triple",
        "type in edge_types",
        "uint64 type",
        "type with num_edge_types",
        "beyond int64",
        "implied num_nodes",
    ],
)
def test_encode_graph_never_wraps_an_index(arguments, message):
    with pytest.raises(ValueError, match=message):
        kr.graphs.encode_graph(**arguments)
    # The batch encoder says the same, naming the graph.
    if "num_edge_types" not in arguments:
        with pytest.raises(
            ValueError, match=f"Graph 0 is invalid: .*{message}"
        ):
            kr.graphs.encode_graphs([arguments])


def test_encode_graph_takes_wide_dtypes_as_their_values():
    narrow = kr.graphs.encode_graph([(0, 1, 1), (1, 2, 0)])
    for dtype in ("int64", "uint64", "uint8"):
        wide = kr.graphs.encode_graph(
            np.array([(0, 1, 1), (1, 2, 0)], dtype), num_nodes=3
        )
        for key, value in narrow.items():
            assert wide[key].dtype == value.dtype, (dtype, key)
            np.testing.assert_array_equal(wide[key], value)
