import json
import pathlib
import warnings

import keras
import numpy as np
import pytest

import keras_recurrent as kr
import keras_recurrent.testing
from tests.layers import graph_reference as reference

UNITS, NUM_EDGE_TYPES, OUTPUT_STEPS = 5, 2, 3


def _layer(graphs, **kwargs):
    kwargs = {"propagation_steps": 2, **kwargs}
    layer = kr.layers.GGSNN(UNITS, NUM_EDGE_TYPES, OUTPUT_STEPS, **kwargs)
    layer.build([array.shape for array in reference.as_list(graphs)])
    reference.randomize_weights(layer, scale=0.4)
    return layer


def _numpy(variable):
    return keras.ops.convert_to_numpy(variable).astype("float64")


def _expected(layer, graphs):
    """The paper's output loop, in NumPy, from the layer's weights."""
    node_inputs, edges, edge_types, node_mask = (
        np.asarray(array) for array in reference.as_list(graphs)
    )
    real = node_mask.astype(bool)[..., None]

    def propagate(gated_graph, annotations):
        return reference.gated_graph(
            annotations,
            edges,
            edge_types,
            node_mask,
            reference.gated_graph_weights(gated_graph),
            num_edge_types=NUM_EDGE_TYPES,
            propagation_steps=gated_graph.propagation_steps,
            add_reverse_edges=gated_graph.add_reverse_edges,
            reset_after=gated_graph.reset_after,
            concatenate_directions=gated_graph.concatenate_directions,
        )

    def dense(layer, features, activation=None):
        if layer is None:
            return features
        outputs = features @ _numpy(layer.kernel) + _numpy(layer.bias)
        return outputs if activation is None else activation(outputs)

    annotations = np.where(real, node_inputs.astype("float64"), 0.0)
    outputs, read = [], []
    for step in range(layer.output_steps):
        read.append(annotations)
        states = propagate(layer.output_propagation, annotations)
        if layer.task == "node_selection":
            selection = layer.node_selection
            hidden = None
            if layer.hidden_units is not None:
                hidden = (
                    _numpy(selection.hidden_kernel),
                    _numpy(selection.hidden_bias),
                )
            outputs.append(
                reference.node_selection(
                    states,
                    annotations,
                    node_mask,
                    _numpy(selection.kernel),
                    _numpy(selection.bias),
                    hidden=hidden,
                )
            )
        else:
            graph = reference.graph_readout(
                states,
                annotations,
                node_mask,
                _numpy(layer.readout.kernel),
                _numpy(layer.readout.bias),
            )
            graph = dense(layer.classifier_hidden, graph, np.tanh)
            outputs.append(dense(layer.classifier, graph))
        if step == layer.output_steps - 1:
            break
        if not layer.share_propagation:
            states = propagate(layer.annotation_propagation, annotations)
        features = np.concatenate([states, annotations], axis=-1)
        features = dense(layer.annotation_hidden, features, np.tanh)
        annotations = dense(layer.annotation, features, reference.sigmoid)
        annotations = np.where(real, annotations, 0.0)
    return np.stack(outputs, axis=1), np.stack(read, axis=1)


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"share_propagation": True},
        {"task": "graph_classification", "num_classes": 4},
        {"hidden_units": 4},
        {"concatenate_directions": True, "reset_after": False},
        {
            "task": "graph_classification",
            "num_classes": 4,
            "hidden_units": 3,
            "share_propagation": True,
        },
    ],
    ids=[
        "node_selection",
        "shared",
        "graph_classification",
        "node_selection_hidden",
        "paper_directions",
        "graph_classification_hidden",
    ],
)
def test_matches_numpy_reference(options):
    graphs = reference.random_graphs(8)
    layer = _layer(graphs, return_annotations=True, **options)
    logits, annotations = layer(graphs)
    expected_logits, expected_annotations = _expected(layer, graphs)
    width = 6 if layer.task == "node_selection" else 4
    assert logits.shape == (3, OUTPUT_STEPS, width)
    assert annotations.shape == (3, OUTPUT_STEPS, 6, 3)
    np.testing.assert_allclose(logits, expected_logits, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(annotations, expected_annotations, atol=1e-5)
    np.testing.assert_allclose(
        annotations[:, 0],
        graphs["node_inputs"] * graphs["node_mask"][..., None],
        atol=1e-6,
    )


def test_one_output_step_is_gated_graph_then_node_selection():
    graphs = reference.random_graphs(9)
    layer = kr.layers.GGSNN(UNITS, NUM_EDGE_TYPES, 1, propagation_steps=2)
    layer.build([array.shape for array in reference.as_list(graphs)])
    reference.randomize_weights(layer)
    states = layer.output_propagation(graphs)
    expected = layer.node_selection(
        [states, graphs["node_inputs"], graphs["node_mask"]]
    )
    np.testing.assert_allclose(layer(graphs)[:, 0], expected, atol=1e-6)


def test_path_answers_follow_a_node_relabelling():
    graphs = reference.random_graphs(10)
    layer = _layer(graphs)
    outputs = np.asarray(layer(graphs))
    permutation = np.array([5, 3, 1, 0, 2, 4])
    permuted = np.asarray(
        layer(reference.permute_nodes(graphs, 1, permutation))
    )
    np.testing.assert_allclose(
        permuted[1][:, permutation], outputs[1], atol=1e-5
    )


def test_weights_and_config(tmp_path):
    layer = kr.layers.GGSNN(
        6,
        3,
        4,
        task="graph_classification",
        num_classes=5,
        readout_units=7,
        share_propagation=True,
        name="ggsnn",
    )
    layer.build([(None, 8, 2), (None, 9, 2), (None, 9), (None, 8)])
    shapes = {weight.path: tuple(weight.shape) for weight in layer.weights}
    assert shapes == {
        "ggsnn/output_propagation/message_kernel": (6, 6, 6),
        "ggsnn/output_propagation/message_bias": (6, 6),
        "ggsnn/output_propagation/gru/kernel": (6, 18),
        "ggsnn/output_propagation/gru/recurrent_kernel": (6, 18),
        "ggsnn/output_propagation/gru/bias": (2, 18),
        "ggsnn/annotation/kernel": (8, 2),
        "ggsnn/annotation/bias": (2,),
        "ggsnn/readout/kernel": (8, 14),
        "ggsnn/readout/bias": (14,),
        "ggsnn/classifier/kernel": (7, 5),
        "ggsnn/classifier/bias": (5,),
    }
    config = layer.get_config()
    json.dumps(config)
    assert kr.layers.GGSNN.from_config(config).get_config() == config
    assert config["hidden_units"] is None

    hidden = kr.layers.GGSNN(
        6,
        3,
        4,
        task="graph_classification",
        num_classes=5,
        readout_units=7,
        hidden_units=9,
        name="hidden",
    )
    hidden.build([(None, 8, 2), (None, 9, 2), (None, 9), (None, 8)])
    shapes = {weight.path: tuple(weight.shape) for weight in hidden.weights}
    assert {
        path: shape
        for path, shape in shapes.items()
        if "propagation" not in path
    } == {
        "hidden/annotation_hidden/kernel": (8, 9),
        "hidden/annotation_hidden/bias": (9,),
        "hidden/annotation/kernel": (9, 2),
        "hidden/annotation/bias": (2,),
        "hidden/readout/kernel": (8, 14),
        "hidden/readout/bias": (14,),
        "hidden/classifier_hidden/kernel": (7, 9),
        "hidden/classifier_hidden/bias": (9,),
        "hidden/classifier/kernel": (9, 5),
        "hidden/classifier/bias": (5,),
    }
    config = hidden.get_config()
    assert config["hidden_units"] == 9
    clone = kr.layers.GGSNN.from_config(json.loads(json.dumps(config)))
    assert clone.get_config() == config
    selection = kr.layers.GGSNN(6, 3, 2, hidden_units=4)
    assert selection.node_selection.hidden_units == 4

    graphs = reference.random_graphs(11)
    inputs = kr.graphs.graph_inputs(3)
    model = keras.Model(
        inputs, kr.layers.GGSNN(4, 2, 2, return_annotations=True)(inputs)
    )
    path = tmp_path / "ggsnn.keras"
    model.save(path)
    loaded = keras.saving.load_model(path)
    for got, expected in zip(loaded(graphs), model(graphs), strict=True):
        np.testing.assert_allclose(got, expected, atol=1e-6)


def test_initializers_reach_every_sublayer():
    constants = {
        "kernel": 0.5,
        "recurrent_kernel": 0.25,
        "bias": 0.125,
        "message_kernel": 0.5,
        "message_bias": 0.125,
    }
    for mode, classes in (
        ("node_selection", None),
        ("graph_classification", 3),
    ):
        layer = kr.layers.GGSNN(
            4,
            2,
            2,
            task=mode,
            num_classes=classes,
            hidden_units=5,
            kernel_initializer=keras.initializers.Constant(0.5),
            recurrent_initializer=keras.initializers.Constant(0.25),
            bias_initializer=keras.initializers.Constant(0.125),
        )
        layer.build([(None, 6, 2), (None, 7, 2), (None, 7), (None, 6)])
        assert len(layer.weights) >= 16
        for weight in layer.weights:
            name = weight.path.rsplit("/", 1)[1]
            expected = constants[name.replace("hidden_", "")]
            np.testing.assert_array_equal(
                keras.ops.convert_to_numpy(weight), expected, err_msg=name
            )
        config = layer.get_config()
        assert config["recurrent_initializer"]["config"] == {"value": 0.25}
        clone = kr.layers.GGSNN.from_config(json.loads(json.dumps(config)))
        assert clone.get_config() == config
    # Seeded initializers give the same weights again (each its own).
    seeded = [
        kr.layers.GGSNN(
            4,
            2,
            2,
            kernel_initializer=keras.initializers.GlorotUniform(3),
            recurrent_initializer=keras.initializers.Orthogonal(seed=4),
            bias_initializer=keras.initializers.RandomUniform(seed=5),
        )
        for _ in range(2)
    ]
    for layer in seeded:
        layer.build([(None, 6, 2), (None, 7, 2), (None, 7), (None, 6)])
    for first, second in zip(*(layer.weights for layer in seeded), strict=True):
        np.testing.assert_array_equal(first, second)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"output_steps": 0}, "output_steps=0"),
        ({"output_mode": "sequence"}, "output_mode='sequence'"),
        ({"output_mode": "graph_classification"}, "num_classes=None"),
        ({"num_classes": 3}, "num_classes=3, task='node_selection'"),
        ({"task": "sequence"}, "task='sequence'"),
        (
            {"output_mode": "node_selection", "num_classes": 3},
            "num_classes=3, output_mode='node_selection'",
        ),
        (
            {"task": "graph_classification", "output_mode": "node_selection"},
            "task='graph_classification', output_mode='node_selection'",
        ),
        ({"share_propagation": "no"}, "share_propagation='no'"),
        ({"readout_units": -1}, "readout_units=-1"),
        ({"hidden_units": 0}, "hidden_units=0"),
        ({"concatenate_directions": "yes"}, "concatenate_directions='yes'"),
    ],
)
def test_bad_arguments(kwargs, message):
    arguments = {"units": 4, "num_edge_types": 2, "output_steps": 2, **kwargs}
    with pytest.raises(ValueError, match=message):
        kr.layers.GGSNN(**arguments)


def test_bad_inputs():
    with pytest.raises(ValueError, match="more than units=4"):
        kr.layers.GGSNN(4, 2, 2).build([(2, 5, 6), (2, 3, 2), (2, 3), (2, 5)])
    graphs = reference.random_graphs()
    graphs["edges"][0, 0] = [0, 5]  # node 5 is padding in graph 0
    with pytest.raises(ValueError, match="must only join real nodes"):
        kr.layers.GGSNN(4, 2, 2)(graphs)


def test_graph_models_export_serve_the_same_predictions(tmp_path):
    # One SavedModel with every graph head (one export keeps the test short):
    # its signature takes the four graph tensors by name, which the serving
    # process feeds as `node_inputs=..., edges=..., ...`.
    graphs = reference.random_graphs(12)
    inputs = kr.graphs.graph_inputs(3)
    node_inputs, node_mask = inputs["node_inputs"], inputs["node_mask"]
    states = kr.layers.GatedGraph(6, 2, propagation_steps=2)(inputs)
    graph = kr.layers.GraphReadout(4)([states, node_inputs, node_mask])
    outputs = {
        "graph_logits": keras.layers.Dense(3, name="graph_logits")(graph),
        "node_logits": kr.layers.NodeSelection(name="node_logits")(
            [states, node_inputs, node_mask]
        ),
        "path_logits": kr.layers.GGSNN(
            6,
            2,
            2,
            propagation_steps=1,
            share_propagation=True,
            name="path_logits",
        )(inputs),
    }
    model = keras.Model(inputs, outputs)
    served = keras_recurrent.testing.assert_export_roundtrip(
        model, graphs, tmp_path=tmp_path
    )
    assert {name: array.shape for name, array in served.items()} == {
        "graph_logits": (3, 3),
        "node_logits": (3, 6),
        "path_logits": (3, 2, 6),
    }


def test_output_mode_is_the_deprecated_name_of_task():
    with pytest.warns(DeprecationWarning, match="use `task=...`"):
        layer = kr.layers.GGSNN(
            4, 2, 2, output_mode="graph_classification", num_classes=3
        )
    assert layer.task == "graph_classification"
    with pytest.warns(DeprecationWarning, match="GGSNN.task"):
        assert layer.output_mode == "graph_classification"
    config = layer.get_config()
    assert "output_mode" not in config
    assert config["task"] == "graph_classification"
    # A config saved under the old name loads, quietly, as the new one.
    old = {
        ("output_mode" if key == "task" else key): value
        for key, value in config.items()
    }
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        restored = kr.layers.GGSNN.from_config(old)
    assert restored.get_config() == config


def test_keras_file_saved_with_output_mode_loads():
    fixtures = pathlib.Path(__file__).parent / "fixtures"
    model = keras.saving.load_model(fixtures / "ggsnn_output_mode.keras")
    arrays = dict(np.load(fixtures / "ggsnn_output_mode.npz"))
    expected = arrays.pop("y")
    np.testing.assert_allclose(
        model.predict(arrays, verbose=0), expected, atol=1e-6
    )
    layer = model.get_layer(index=-1)
    assert (layer.task, layer.num_classes) == ("graph_classification", 3)
