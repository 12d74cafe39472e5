"""Every bad single graph, caught on the host before a batch reaches a model.

One table: each case is one bad graph (a 4-node chain with 3 features and 2
edge types, corrupted) and the message that names it. It is run through
`encode_graphs` (the NumPy encoder), and through `padded_batch` of a
`tf.data` pipeline, where a bad graph in the middle of the stream stops
the iteration with the same message.
"""

import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_recurrent as kr

NUM_EDGE_TYPES = 2


def _graph():
    rng = np.random.default_rng(0)
    return {
        "node_inputs": rng.normal(size=(4, 3)).astype("float32"),
        "edges": np.array([[0, 1], [1, 2], [2, 3]], "int32"),
        "edge_types": np.array([0, 1, 0], "int32"),
        "node_mask": np.ones(4, "int32"),
    }


def _set(name, index, value, dtype=None):
    def corrupt(graph):
        array = np.array(graph[name], dtype=dtype)
        array[index] = value
        graph[name] = array
        return graph

    return corrupt


# name: (corruption, regex of `encode_graph`, regex of `padded_batch`).
CASES = {
    "edge at N": (
        _set("edges", (1, 1), 4),
        r"`edges` must hold node indices in \[0, 4\).*\[1, 4\]",
        r"node indices in \[0, 4\).*edges\[0, 1\]=\[1, 4\]",
    ),
    "edge to 400": (
        _set("edges", (0, 1), 400),
        r"in \[0, 4\).*\[0, 400\]",
        r"\[0, 400\]",
    ),
    "negative edge": (
        _set("edges", (2, 0), -2),
        r"in \[0, 4\).*\[-2, 3\]",
        r"\[-2, 3\]",
    ),
    "edge type at num_edge_types": (
        _set("edge_types", 1, 2),
        r"Edge types must be in \[0, 2\).*type 2 for edge 1",
        r"edge_types. of real edges must be in \[0, 2\).*edge_types\[0, 1\]=2",
    ),
    "negative edge type": (
        _set("edge_types", 2, -1),
        r"Edge types must be in \[0, 2\).*type -1",
        r"edge_types. of real edges must be in \[0, 2\)",
    ),
    "NaN node input": (
        _set("node_inputs", (2, 1), np.nan),
        r"`node_inputs` must be finite.*node_inputs\[2, 1\]=nan",
        r"`node_inputs` of real nodes must be finite.*\[0, 2, 1\]=nan",
    ),
    "infinite node input": (
        _set("node_inputs", (3, 0), -np.inf),
        r"`node_inputs` must be finite.*node_inputs\[3, 0\]=-inf",
        r"must be finite.*\[0, 3, 0\]=-inf",
    ),
    "node_mask 2": (
        _set("node_mask", 0, 2),
        r"`node_mask` must be all ones.*\[2, 1, 1, 1\]",
        r"`node_mask` must be 1 .*node_mask\[0, 0\]=2",
    ),
    "edge_types shorter": (
        lambda g: {**g, "edge_types": g["edge_types"][:2]},
        r"`edge_types` must hold one integer per edge \(3\)",
        r"edge_types.shape=\(1, 2\)",
    ),
}


def _encode(graph):
    return kr.graphs.encode_graphs([graph], num_edge_types=NUM_EDGE_TYPES)


def _stream(bad):
    """Two good graphs, the bad one, a good one: batches of 2."""
    graphs = [_graph(), _graph(), bad, _graph()]

    def generate():
        yield from graphs

    spec = {
        name: tf.TensorSpec(
            (None,) + np.asarray(value).shape[1:],
            tf.as_dtype(np.asarray(value).dtype),
        )
        for name, value in bad.items()
    }
    dataset = tf.data.Dataset.from_generator(generate, output_signature=spec)
    return kr.graphs.padded_batch(dataset, 2, num_edge_types=NUM_EDGE_TYPES)


def test_good_graphs_pass_both_ways_unchanged():
    graph = _graph()
    encoded = _encode(graph)
    for name, value in graph.items():
        np.testing.assert_array_equal(encoded[name][0], value)
    batches = list(_stream(_graph()))
    assert len(batches) == 2
    for name, value in graph.items():
        np.testing.assert_array_equal(batches[1][name][1], value)


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_graph_is_named_by_the_encoder(case):
    corrupt, message, _ = CASES[case]
    with pytest.raises(ValueError, match=message):
        _encode(corrupt(_graph()))


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_graph_stops_a_tf_data_pipeline(case):
    corrupt, _, message = CASES[case]
    batches = iter(_stream(corrupt(_graph())))
    first = next(batches)  # The good graphs before it pass.
    assert first["edges"].shape[0] == 2
    with pytest.raises(tf.errors.InvalidArgumentError, match=message):
        next(batches)


def _triples(graph):
    graph["edges"] = np.concatenate(
        [graph["edges"], graph["edge_types"][:, None]], axis=1
    )
    return graph


# Wrong in the dataset's spec: a `ValueError` when `padded_batch` is called.
SPEC_CASES = {
    "edge triples": (_triples, r"shape \(E, 2\).*shape=\(None, 3\)"),
    "fractional edge": (
        _set("edges", (0, 1), 1.5, dtype="float32"),
        r"`edges` must be integer.*float32",
    ),
    "float edge_types": (
        _set("edge_types", 0, 0.5, dtype="float32"),
        r"`edge_types` must be integer.*float32",
    ),
    "float node_mask": (
        _set("node_mask", 0, 0.5, dtype="float32"),
        r"`node_mask` must be integer or boolean.*float32",
    ),
    "int node_inputs": (
        _set("node_inputs", 0, 1, dtype="int32"),
        r"`node_inputs` must be floating-point.*int32",
    ),
}


@pytest.mark.parametrize("case", sorted(SPEC_CASES))
def test_bad_dataset_specs_are_refused_when_batching(case):
    corrupt, message = SPEC_CASES[case]
    with pytest.raises(ValueError, match=message):
        _stream(corrupt(_graph()))


def test_validation_can_be_turned_off():
    bad = CASES["edge at N"][0](_graph())
    dataset = tf.data.Dataset.from_tensors(bad)
    batch = next(iter(kr.graphs.padded_batch(dataset, 1, validate=False)))
    assert batch["edges"].numpy()[0, 1].tolist() == [1, 4]


def test_a_float_node_mask_into_an_int32_model_is_truncated_by_keras():
    # Documented in `kr.graphs.graph_inputs`: Keras casts the data to the
    # model's int32 `node_mask` before any layer runs, so 0.5 is padding;
    # the host-side checks refuse the float mask up front.
    graphs = kr.graphs.encode_graphs([_graph(), _graph()])
    inputs = kr.graphs.graph_inputs(3)
    layer = kr.layers.GatedGraph(4, NUM_EDGE_TYPES, propagation_steps=1)
    model = keras.Model(inputs, layer(inputs))
    half = dict(graphs, node_mask=graphs["node_mask"].astype("float32"))
    half["node_mask"][1, 3] = 0.5
    zero = dict(graphs, node_mask=graphs["node_mask"].copy())
    zero["node_mask"][1, 3] = 0
    # Node 3 of graph 1 as padding needs its edge 2 -> 3 gone too.
    zero["edges"] = graphs["edges"].copy()
    zero["edges"][1, 2] = [-1, -1]
    half["edges"] = zero["edges"]
    predicted = model.predict(half, verbose=0)
    np.testing.assert_array_equal(predicted, model.predict(zero, verbose=0))
    assert np.all(predicted[1, 3] == 0)
    with pytest.raises(ValueError, match=r"node_mask\[1, 3\]=0.5"):
        layer(half)
    with pytest.raises(ValueError, match=r"node_mask.dtype=float32"):
        kr.graphs.validate_graph_tensors(**half)
