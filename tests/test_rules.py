"""The tree and graph rule tables: the eager executor (NumPy, a message)
and the compiled one (`keras.ops`, a per-example flag) judge every example
alike, GGSNN checks its graph once per call, and the checks trace under
`torch.export`."""

import numpy as np
import pytest
from keras import ops

import keras_recurrent as kr
from keras_recurrent._rules import sizes_differ
from keras_recurrent.graphs.validation import find_graph_problem
from keras_recurrent.graphs.validation import graph_flags
from keras_recurrent.layers import _graph_checks
from keras_recurrent.layers import gated_graph
from keras_recurrent.layers import ggsnn
from keras_recurrent.layers._tree_checks import bad_trees
from keras_recurrent.trees.validation import find_tree_problem
from tests._subprocess import run_backend_module
from tests._subprocess import skip_unless_installed
from tests.layers import graph_reference


def _corrupt(rng, array, values, count):
    array = array.copy()
    for _ in range(count):
        array[tuple(rng.integers(0, size) for size in array.shape)] = (
            rng.choice(values)
        )
    return array


def test_tree_rules_flag_the_trees_the_eager_check_names():
    rng = np.random.default_rng(0)
    trees = kr.trees.encode_trees(
        ["(1 (2 3 4) 5)", "(1 2)", "(1 (2 (3 4)))", "1"] * 16,
        num_children=2,
    )
    children = _corrupt(rng, trees["children"], [-2, -1, 0, 1, 2, 3, 5], 40)
    node_mask = _corrupt(rng, trees["node_mask"], [0, 1], 8)
    expected = [
        find_tree_problem(children[[tree]], node_mask[[tree]]) is not None
        for tree in range(len(children))
    ]
    flags = bad_trees(
        ops.convert_to_tensor(children, "int32"),
        ops.cast(ops.convert_to_tensor(node_mask), "bool"),
    )
    assert 0 < sum(expected) < len(expected)
    np.testing.assert_array_equal(ops.convert_to_numpy(flags), expected)


@pytest.mark.parametrize("dtype", ["int32", "float32"])
def test_graph_rules_flag_the_graphs_the_eager_check_names(dtype):
    rng = np.random.default_rng(1)
    graphs = {
        name: np.concatenate([array] * 16)
        for name, array in graph_reference.random_graphs().items()
    }
    edges = _corrupt(
        rng, graphs["edges"].astype(dtype), [-2, -1, 0, 3, 6, 9], 12
    )
    edge_types = _corrupt(rng, graphs["edge_types"].astype(dtype), [-1, 2], 6)
    node_mask = _corrupt(rng, graphs["node_mask"], [0, 1, 2], 6)
    if dtype == "float32":
        edges = _corrupt(rng, edges, [0.5, np.nan], 4)
    expected = [
        find_graph_problem(
            edges[[graph]], edge_types[[graph]], node_mask[[graph]], 2
        )
        is not None
        for graph in range(len(edges))
    ]
    tensors = [ops.convert_to_tensor(a) for a in (edges, edge_types, node_mask)]
    bad_nodes, bad_edges, _ = graph_flags(ops, *tensors, 2)
    flags = np.any(ops.convert_to_numpy(bad_nodes), axis=1)
    for bad in bad_edges:
        flags |= np.any(ops.convert_to_numpy(bad), axis=1)
    assert 0 < sum(expected) < len(expected)
    np.testing.assert_array_equal(flags, expected)


def test_ggsnn_checks_the_graph_once_per_call(monkeypatch):
    graphs = graph_reference.random_graphs()
    layer = kr.layers.GGSNN(4, 2, 3, propagation_steps=2)
    expected = np.asarray(layer(graphs))
    calls = []

    def counted(*args, **kwargs):
        calls.append(type(args[0]).__name__)
        return _graph_checks.prepare_graph_inputs(*args, **kwargs)

    monkeypatch.setattr(ggsnn, "prepare_graph_inputs", counted)
    monkeypatch.setattr(gated_graph, "prepare_graph_inputs", counted)
    np.testing.assert_allclose(np.asarray(layer(graphs)), expected)
    assert calls == ["GGSNN"]
    # A GatedGraph of its own still checks its inputs.
    graph_layer = kr.layers.GatedGraph(4, 2, propagation_steps=1)
    graph_layer(graphs)
    assert calls == ["GGSNN", "GatedGraph"]


def test_sizes_differ_compares_known_sizes_by_value():
    assert not sizes_differ([None, 3, None, 3])
    assert sizes_differ([3, None, 4])
    assert not sizes_differ([None, None])
    # Equal sizes as distinct 0-d arrays (as TorchScript traces sizes):
    # compared by value, not as set members.
    assert not sizes_differ([np.array(3), np.array(3)])
    assert sizes_differ([np.array(3), np.array(4)])


def test_tree_and_graph_checks_trace_under_torch_export():
    """`torch.export` of a graph layer and of the tree layers' checks, with
    static and `Dim.AUTO` sizes: fake tensors have no values to check
    eagerly, and an open size (a `SymInt`) cannot be a set member."""
    skip_unless_installed("torch")
    report = run_backend_module("tests.torch_export_cases", "torch")
    assert report["backend"] == "torch"
    assert len(report["cases"]) == 4
    wrong = {
        case: difference
        for case, difference in report["cases"].items()
        if isinstance(difference, str) or not difference < 1e-6
    }
    assert not wrong, wrong
