import json

import keras
import numpy as np
import pytest

import keras_recurrent as kr
from tests.layers import graph_reference as reference


def _readout(units=3, **kwargs):
    layer = kr.layers.GraphReadout(units, **kwargs)
    layer.build([(None, 5, 4), (None, 5, 2), (None, 5)])
    reference.randomize_weights(layer)
    return layer


@pytest.mark.parametrize("use_bias", [True, False])
def test_matches_numpy_reference(use_bias):
    states, node_inputs, node_mask = reference.node_data()
    layer = _readout(use_bias=use_bias)
    expected = reference.graph_readout(
        states.astype("float64"),
        node_inputs.astype("float64"),
        node_mask,
        keras.ops.convert_to_numpy(layer.kernel).astype("float64"),
        keras.ops.convert_to_numpy(layer.bias) if use_bias else None,
    )
    outputs = layer([states, node_inputs, node_mask])
    assert outputs.shape == (3, 3)
    np.testing.assert_allclose(outputs, expected, atol=1e-5)


def test_padding_is_ignored_and_empty_graphs_read_zero():
    states, node_inputs, node_mask = reference.node_data(1)
    layer = _readout()
    expected = np.asarray(layer([states, node_inputs, node_mask]))
    padding = node_mask == 0
    states[padding] = np.nan
    node_inputs[padding] = 1e6
    np.testing.assert_allclose(
        layer([states, node_inputs, node_mask.astype(bool)]),
        expected,
        atol=1e-6,
    )
    empty = np.zeros_like(node_mask)
    np.testing.assert_array_equal(layer([states, node_inputs, empty]), 0.0)


def test_graph_readout_is_invariant_to_node_relabelling():
    graphs = reference.random_graphs(5)
    inputs = kr.graphs.graph_inputs(3)
    states = kr.layers.GatedGraph(6, 2, propagation_steps=3)(inputs)
    readout = kr.layers.GraphReadout(4)(
        [states, inputs["node_inputs"], inputs["node_mask"]]
    )
    model = keras.Model(inputs, readout)
    for layer in model.layers:
        if layer.weights:
            reference.randomize_weights(layer, scale=0.4)
    outputs = np.asarray(model(graphs))
    permuted = reference.permute_nodes(graphs, 1, [2, 5, 0, 4, 1, 3])
    permuted = reference.permute_nodes(permuted, 0, [1, 0, 3, 2, 5, 4])
    np.testing.assert_allclose(model(permuted), outputs, atol=1e-5)


def test_weights_and_config():
    layer = kr.layers.GraphReadout(
        7, activation="relu", gate_activation="hard_sigmoid", name="readout"
    )
    layer.build([(None, None, 6), (None, None, 3), (None, None)])
    assert [(w.path, tuple(w.shape)) for w in layer.weights] == [
        ("readout/kernel", (9, 14)),
        ("readout/bias", (14,)),
    ]
    config = layer.get_config()
    json.dumps(config)
    assert kr.layers.GraphReadout.from_config(config).get_config() == config
    assert layer.compute_output_shape([(2, 5, 6), (2, 5, 3), (2, 5)]) == (2, 7)


@pytest.mark.parametrize(
    ("shapes", "message"),
    [
        ([(2, 5, 4), (2, 5, 2)], "takes the list"),
        ([(2, 5), (2, 5, 2), (2, 5)], "`node_states` must have rank 3"),
        ([(2, 5, 4), (2, 5, 2), (2, 5, 1)], "`node_mask` must have rank 2"),
        ([(2, 5, 4), (2, 6, 2), (2, 5)], "number of nodes"),
        ([(2, 5, 4), (2, 5, None), (2, 5)], "defined"),
    ],
)
def test_bad_inputs(shapes, message):
    with pytest.raises(ValueError, match=message):
        kr.layers.GraphReadout(3).build(shapes)


def test_bad_arguments():
    with pytest.raises(ValueError, match="units=0"):
        kr.layers.GraphReadout(0)
    with pytest.raises(ValueError, match="use_bias=1"):
        kr.layers.GraphReadout(3, use_bias=1)


# A `node_mask` entry other than 0 or 1 (issue 26): the readouts used to
# read 2, -1, 0.5 and NaN as a real node, without a word; `GatedGraph`
# refuses them. Now both readouts do too.


def _readouts():
    return [
        _readout(),
        kr.layers.NodeSelection(hidden_units=3),
    ]


@pytest.mark.parametrize("value", [2, -1, 0.5, np.nan])
def test_a_node_mask_other_than_0_or_1_is_refused(value):
    states, node_inputs, node_mask = reference.node_data(1)
    mask = node_mask.astype(
        "float32" if value in (0.5,) or value != value else "int32"
    )
    mask[1, 4] = value
    for layer in _readouts():
        name = type(layer).__name__
        with pytest.raises(ValueError, match=rf"{name} .*node_mask\[1, 4\]="):
            layer([states, node_inputs, mask])
        # 0 and 1 as floats, and a bool mask, are fine.
        layer([states, node_inputs, node_mask.astype("float32")])
        layer([states, node_inputs, node_mask.astype(bool)])


@pytest.mark.skipif(
    keras.backend.backend() != "tensorflow", reason="jit_compile on TF"
)
@pytest.mark.parametrize("value", [2.0, 0.5, np.nan])
def test_a_bad_node_mask_gives_nan_to_its_graph_only_under_xla(value):
    states, node_inputs, node_mask = reference.node_data(1)
    node_mask = node_mask.astype("float32")
    for layer in _readouts():
        inputs = [
            keras.Input((5, 4)),
            keras.Input((5, 2)),
            keras.Input((5,), dtype="float32"),
        ]
        model = keras.Model(inputs, layer(inputs))
        model.compile(jit_compile=True)
        clean = model.predict([states, node_inputs, node_mask], verbose=0)
        bad = node_mask.copy()
        bad[1, 4] = value
        outputs = model.predict([states, node_inputs, bad], verbose=0)
        assert np.isnan(outputs[1]).all()
        np.testing.assert_array_equal(outputs[[0, 2]], clean[[0, 2]])
