import json

import keras
import numpy as np
import pytest

import keras_recurrent as kr
import keras_recurrent.testing
from tests.layers import graph_reference as reference


def _selection(**kwargs):
    layer = kr.layers.NodeSelection(**kwargs)
    layer.build([(None, 5, 4), (None, 5, 2), (None, 5)])
    reference.randomize_weights(layer)
    return layer


def _numpy(variable):
    return keras.ops.convert_to_numpy(variable).astype("float64")


@pytest.mark.parametrize("hidden_units", [None, 3])
def test_matches_numpy_reference(hidden_units):
    states, node_inputs, node_mask = reference.node_data()
    layer = _selection(hidden_units=hidden_units)
    hidden = None
    if hidden_units:
        hidden = (_numpy(layer.hidden_kernel), _numpy(layer.hidden_bias))
    expected = reference.node_selection(
        states.astype("float64"),
        node_inputs.astype("float64"),
        node_mask,
        _numpy(layer.kernel),
        _numpy(layer.bias),
        hidden=hidden,
    )
    logits = layer([states, node_inputs, node_mask])
    assert logits.shape == (3, 5)
    np.testing.assert_allclose(logits, expected, rtol=1e-6, atol=1e-5)


def test_padding_can_never_be_selected():
    states, node_inputs, node_mask = reference.node_data(1)
    states[node_mask == 0] = 1e4  # would win if padding were scored
    layer = _selection(use_bias=False)
    logits = layer([states, node_inputs, node_mask.astype(bool)])
    probabilities = np.asarray(keras.ops.softmax(logits, axis=-1))
    np.testing.assert_array_equal(probabilities[node_mask == 0], 0.0)
    np.testing.assert_allclose(probabilities.sum(-1), 1.0, rtol=1e-6)
    assert np.all(node_mask[np.arange(3), logits.numpy().argmax(-1)] == 1)
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    assert np.isfinite(float(loss(np.array([0, 1, 2]), logits)))

    half = kr.layers.NodeSelection(dtype="mixed_float16")
    half_logits = half([states, node_inputs, node_mask])
    assert half_logits.dtype == "float16"
    assert np.all(np.isfinite(np.asarray(half_logits, dtype="float32")))


def test_scores_follow_a_node_relabelling():
    graphs = reference.random_graphs(7)
    inputs = kr.graphs.graph_inputs(3)
    states = kr.layers.GatedGraph(6, 2, propagation_steps=3)(inputs)
    logits = kr.layers.NodeSelection(hidden_units=4)(
        [states, inputs["node_inputs"], inputs["node_mask"]]
    )
    model = keras.Model(inputs, logits)
    outputs = np.asarray(model(graphs))
    permutation = np.array([3, 1, 4, 0, 2, 5])
    permuted = np.asarray(
        model(reference.permute_nodes(graphs, 2, permutation))
    )
    np.testing.assert_allclose(permuted[2][permutation], outputs[2], atol=1e-5)


def _pointer_task(num_graphs, seed):
    """Select the target of the only type-1 edge: needs message passing.

    Every node is annotated with the same constant, so the answer node can
    only be found through its incoming type-1 edge.
    """
    rng = np.random.default_rng(seed)
    graphs, targets = [], []
    for _ in range(num_graphs):
        num_nodes = int(rng.integers(3, 6))
        order = rng.permutation(num_nodes)
        edges = [
            (int(order[v]), int(order[v + 1]), 0) for v in range(num_nodes - 1)
        ]
        source, target = rng.choice(num_nodes, 2, replace=False)
        edges.append((int(source), int(target), 1))
        graphs.append({"edges": edges, "node_inputs": np.ones((num_nodes, 1))})
        targets.append(target)
    return (
        kr.graphs.encode_graphs(graphs, num_nodes=5, num_edges=5),
        np.array(targets),
    )


def _selection_model(units=8, steps=2):
    inputs = kr.graphs.graph_inputs(1, num_nodes=5)
    states = kr.layers.GatedGraph(units, 2, propagation_steps=steps)(inputs)
    logits = kr.layers.NodeSelection()(
        [states, inputs["node_inputs"], inputs["node_mask"]]
    )
    return keras.Model(inputs, logits)


def test_learns_to_select_the_pointed_node():
    graphs, targets = _pointer_task(128, seed=0)
    keras.utils.set_random_seed(0)
    model = _selection_model()
    model.compile(
        keras.optimizers.Adam(0.03),
        keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    model.fit(graphs, targets, epochs=25, batch_size=32, verbose=0)
    test_graphs, test_targets = _pointer_task(64, seed=1)
    _, accuracy = model.evaluate(test_graphs, test_targets, verbose=0)
    assert accuracy > 0.95


def test_weights_and_config():
    layer = kr.layers.NodeSelection(hidden_units=5, name="select")
    layer.build([(None, None, 6), (None, None, 3), (None, None)])
    assert [(w.path, tuple(w.shape)) for w in layer.weights] == [
        ("select/hidden_kernel", (9, 5)),
        ("select/hidden_bias", (5,)),
        ("select/kernel", (5, 1)),
        ("select/bias", (1,)),
    ]
    config = layer.get_config()
    json.dumps(config)
    assert kr.layers.NodeSelection.from_config(config).get_config() == config
    linear = kr.layers.NodeSelection(use_bias=False)
    linear.build([(None, None, 6), (None, None, 3), (None, None)])
    assert [w.name for w in linear.weights] == ["kernel"]


def test_bad_input():
    with pytest.raises(ValueError, match="hidden_units=0"):
        kr.layers.NodeSelection(hidden_units=0)
    with pytest.raises(ValueError, match="takes the list"):
        kr.layers.NodeSelection().build([(2, 5, 4), (2, 5)])
    with pytest.raises(ValueError, match="batch size"):
        kr.layers.NodeSelection().build([(2, 5, 4), (3, 5, 2), (2, 5)])


def test_trains_under_mirrored_strategy_like_on_one_device():
    graphs, targets = _pointer_task(16, seed=2)
    keras_recurrent.testing.assert_mirrored_equivalence(
        lambda: _selection_model(units=4),
        graphs,
        targets,
        steps=2,
        global_batch_size=8,
        compile_kwargs={
            "loss": keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        },
    )


def _with_an_empty_graph():
    """Graph 1 of three has no real node: nothing to select."""
    states, node_inputs, node_mask = reference.node_data()
    empty_mask = node_mask.copy()
    empty_mask[1] = 0
    return states, node_inputs, node_mask, empty_mask


def test_a_graph_without_real_nodes_is_refused_eagerly():
    states, node_inputs, _, empty_mask = _with_an_empty_graph()
    layer = _selection()
    with pytest.raises(ValueError, match=r"graph 1 has no real node"):
        layer([states, node_inputs, empty_mask])
    with pytest.raises(ValueError, match=r"graph 0 has no real node"):
        layer([states, node_inputs, np.zeros_like(empty_mask).astype(bool)])
    # An empty batch has no empty graph.
    assert layer([states[:0], node_inputs[:0], empty_mask[:0]]).shape == (0, 5)


@pytest.mark.skipif(
    keras.backend.backend() != "tensorflow", reason="tf.function"
)
@pytest.mark.parametrize("jit_compile", [False, True])
def test_a_graph_without_real_nodes_gets_nan_when_traced(jit_compile):
    import tensorflow as tf

    states, node_inputs, node_mask, empty_mask = _with_an_empty_graph()
    layer = _selection()
    expected = np.asarray(layer([states, node_inputs, node_mask]))
    traced = tf.function(lambda *x: layer(list(x)), jit_compile=jit_compile)
    logits = np.asarray(traced(states, node_inputs, empty_mask))
    # NaN for graph 1, not a uniform softmax over its padding; the other
    # graphs are untouched.
    assert np.all(np.isnan(logits[1]))
    np.testing.assert_allclose(logits[[0, 2]], expected[[0, 2]], rtol=1e-6)


def test_a_graph_without_real_nodes_gets_nan_in_predict():
    states, node_inputs, node_mask, empty_mask = _with_an_empty_graph()
    inputs = [
        keras.Input((5, 4)),
        keras.Input((5, 2)),
        keras.Input((5,), dtype="int32"),
    ]
    layer = kr.layers.NodeSelection()
    model = keras.Model(inputs, layer(inputs))
    reference.randomize_weights(layer)
    expected = keras.ops.convert_to_numpy(
        model([states, node_inputs, node_mask])
    )
    if keras.backend.backend() == "torch":
        # PyTorch's `predict` runs eagerly: the values are checked.
        with pytest.raises(ValueError, match="graph 1 has no real node"):
            model.predict([states, node_inputs, empty_mask], verbose=0)
        return
    logits = model.predict([states, node_inputs, empty_mask], verbose=0)
    assert np.all(np.isnan(logits[1]))
    np.testing.assert_allclose(logits[[0, 2]], expected[[0, 2]], rtol=1e-5)
