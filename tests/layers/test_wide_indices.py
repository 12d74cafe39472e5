"""int64 indices at or above 2**31 are never read as another node, and a
non-finite node state stays confined with the dense aggregation."""

import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_recurrent as kr
from tests._subprocess import run_backend_module
from tests._subprocess import skip_unless_installed
from tests.layers import wide_index_cases as cases


def _tree_inputs():
    trees = kr.trees.encode_trees(["(1 2 3)", "(4 5 6)"])
    children = trees["children"].astype("int64")
    children[0, 2, 1] = cases.WIDE
    node_inputs = np.ones(children.shape[:2] + (4,), "float32")
    return [node_inputs, children, trees["node_mask"]]


def test_eager_wide_child_is_refused_with_its_value():
    with pytest.raises(ValueError, match="4294967297"):
        cases.tree_case()


def test_traced_wide_child_is_refused_by_the_assertion():
    layer = kr.layers.ChildSumTreeLSTM(3)
    node_inputs, children, node_mask = _tree_inputs()
    call = tf.function(lambda c: layer([node_inputs, c, node_mask]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="num_nodes"):
        call(tf.constant(children))


def test_xla_wide_child_gives_nan_to_its_tree_only():
    layer = kr.layers.ChildSumTreeLSTM(3)
    node_inputs, children, node_mask = _tree_inputs()
    valid = children.copy()
    valid[0, 2, 1] = 1
    expected = keras.ops.convert_to_numpy(
        layer([node_inputs, valid, node_mask])
    )
    call = tf.function(
        lambda c: layer([node_inputs, c, node_mask]), jit_compile=True
    )
    outputs = call(tf.constant(children)).numpy()
    assert np.isnan(outputs[0]).all()
    np.testing.assert_allclose(outputs[1], expected[1], atol=1e-6)


def test_eager_wide_edge_is_refused_with_its_value():
    with pytest.raises(ValueError, match="4294967297"):
        cases.graph_case()


@pytest.mark.parametrize("path", ["predict", "fit"])
@pytest.mark.parametrize("structure", ["tree", "graph"])
def test_models_on_the_input_helpers_never_narrow_a_wide_index(structure, path):
    # The int32 `keras.Input`s of `tree_inputs`/`graph_inputs` narrowed
    # 2**32 + 1 into node 1 before any layer ran: `predict` and `fit`
    # answered. The int64 inputs let the layer's assertion see it.
    make = cases.tree_model if structure == "tree" else cases.graph_model
    item = "children" if structure == "tree" else "edges"
    with pytest.raises(
        tf.errors.InvalidArgumentError,
        match=rf"`{item}` must hold node indices(.|\n)*First bad",
    ):
        cases.model_case(make, path, jit_compile=False)
    # Under XLA no assertion runs: the bad example gets NaN (the
    # documented outcome), not the numbers of node 1.
    assert cases.model_case(make, path, jit_compile=True) == "nan"


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_other_backends_refuse_wide_numpy_indices(backend):
    skip_unless_installed(backend)
    report = run_backend_module("tests.layers.wide_index_cases", backend)
    assert report["backend"] == backend
    for name, outcome in report["cases"].items():
        if backend == "jax" and name not in ("tree", "graph"):
            # `fit`/`predict` on JAX (64-bit types off) turn int64 data
            # into int32 before the model runs; the guides say so.
            continue
        assert outcome.startswith("ValueError"), (name, outcome)
        assert "4294967297" in outcome, (name, outcome)


@pytest.mark.parametrize("aggregation", ["dense", "sparse"])
def test_non_finite_node_state_reaches_only_its_neighbours(aggregation):
    # Node 0 holds NaN and has one edge, to node 1; nodes 2 and 3 have
    # no path from it.
    graphs = kr.graphs.encode_graphs([{"edges": [(0, 1)], "num_nodes": 4}])
    node_inputs = np.ones((1, 4, 2), "float32")
    node_inputs[0, 0, 0] = np.nan
    layer = kr.layers.GatedGraph(
        3, num_edge_types=1, propagation_steps=2, aggregation=aggregation
    )
    outputs = keras.ops.convert_to_numpy(
        layer(
            [
                node_inputs,
                graphs["edges"],
                graphs["edge_types"],
                graphs["node_mask"],
            ]
        )
    )
    assert np.isnan(outputs[0, :2]).all()
    assert np.isfinite(outputs[0, 2:]).all()
    clean = node_inputs.copy()
    clean[0, 0, 0] = 1.0
    expected = keras.ops.convert_to_numpy(
        layer(
            [clean, graphs["edges"], graphs["edge_types"], graphs["node_mask"]]
        )
    )
    np.testing.assert_allclose(outputs[0, 2:], expected[0, 2:], atol=1e-6)
