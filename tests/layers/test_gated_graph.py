import importlib.util
import json
import os
import pathlib
import subprocess
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_recurrent as kr
import keras_recurrent.testing
from tests.layers import graph_reference as reference

UNITS, NUM_EDGE_TYPES, STEPS = 5, 2, 3


def _layer(graphs, seed=0, **kwargs):
    kwargs = {"propagation_steps": STEPS, **kwargs}
    layer = kr.layers.GatedGraph(UNITS, NUM_EDGE_TYPES, **kwargs)
    layer.build([array.shape for array in reference.as_list(graphs)])
    reference.randomize_weights(layer, seed=seed)
    return layer


def _expected(layer, graphs):
    return reference.gated_graph(
        *(np.asarray(array) for array in reference.as_list(graphs)),
        reference.gated_graph_weights(layer),
        num_edge_types=layer.num_edge_types,
        propagation_steps=layer.propagation_steps,
        add_reverse_edges=layer.add_reverse_edges,
        reset_after=layer.reset_after,
        concatenate_directions=layer.concatenate_directions,
    )


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"add_reverse_edges": False},
        {"reset_after": False},
        {"use_bias": False, "add_reverse_edges": False},
        {"concatenate_directions": True, "reset_after": False},
        {"concatenate_directions": True, "use_bias": False},
    ],
    ids=[
        "default",
        "no_reverse",
        "reset_before",
        "no_bias",
        "paper_directions",
        "directions_no_bias",
    ],
)
@pytest.mark.parametrize("aggregation", ["dense", "sparse"])
def test_matches_numpy_reference(options, aggregation):
    graphs = reference.random_graphs()
    layer = _layer(graphs, aggregation=aggregation, **options)
    outputs = layer(reference.as_list(graphs))
    assert outputs.shape == (3, 6, UNITS)
    np.testing.assert_allclose(outputs, _expected(layer, graphs), atol=1e-5)


ONE_TYPE_OPTIONS = {
    "no_reverse": {"add_reverse_edges": False},
    "no_reverse_reset_before_no_bias": {
        "add_reverse_edges": False,
        "reset_after": False,
        "use_bias": False,
    },
    "paper_directions": {"concatenate_directions": True},
    "paper_directions_reset_before": {
        "concatenate_directions": True,
        "reset_after": False,
    },
}


def _one_type_layer(graphs, aggregation, options):
    layer = kr.layers.GatedGraph(
        UNITS, 1, propagation_steps=STEPS, aggregation=aggregation, **options
    )
    layer.build([array.shape for array in reference.as_list(graphs)])
    reference.randomize_weights(layer, seed=3)
    return layer


@pytest.mark.parametrize(
    "options", ONE_TYPE_OPTIONS.values(), ids=list(ONE_TYPE_OPTIONS)
)
@pytest.mark.parametrize("aggregation", ["dense", "sparse"])
def test_fused_kernels_match_reference_and_unfused_gradients(
    monkeypatch, options, aggregation
):
    # One edge type (and one plus its reverse, summed per direction) is
    # where a step's single matmul by `A_e W_ih` costs less than two.
    from keras_recurrent.layers import _graph_gru_cell

    graphs = reference.random_graphs(7, num_edge_types=1)
    inputs = [tf.constant(array) for array in reference.as_list(graphs)]
    fuses_kernels = _graph_gru_cell.fuses_kernels
    results = []
    for fused in (True, False):
        layer = _one_type_layer(graphs, aggregation, options)
        if fused:
            num_types = layer.num_message_types
            directions = layer.num_directions
            assert fuses_kernels(num_types, directions, aggregation == "dense")
        else:
            # The unfused products, for comparison: `A_e` then `W_ih`.
            monkeypatch.setattr(
                _graph_gru_cell, "fuses_kernels", lambda *args: False
            )
        sources = [inputs[0], *layer.trainable_variables]
        with tf.GradientTape() as tape:
            tape.watch(inputs[0])
            outputs = layer(inputs)
            loss = tf.reduce_sum(outputs * tf.sin(outputs + 1.0))
        np.testing.assert_allclose(outputs, _expected(layer, graphs), atol=1e-5)
        results.append([np.asarray(g) for g in tape.gradient(loss, sources)])
    assert np.abs(results[0][0]).max() > 1e-3
    for fused, unfused in zip(*results, strict=True):
        np.testing.assert_allclose(fused, unfused, atol=1e-5)


GATE_PRODUCT_OPTIONS = {
    **ONE_TYPE_OPTIONS,
    "one_type_default": {},
    "one_type_reset_before": {"reset_after": False},
}


@pytest.mark.parametrize(
    "options", GATE_PRODUCT_OPTIONS.values(), ids=list(GATE_PRODUCT_OPTIONS)
)
@pytest.mark.parametrize("aggregation", ["dense", "sparse"])
def test_per_gate_and_wide_gru_products_agree(
    monkeypatch, options, aggregation
):
    # Outside XLA each gate takes a matmul of its own; under XLA one wide
    # matmul is split after. Same values and gradients, fused or not,
    # with and without biases, both GRU variants.
    from keras_recurrent.layers import _graph_gru_cell
    from keras_recurrent.layers import gated_graph

    graphs = reference.random_graphs(7, num_edge_types=1)
    inputs = [tf.constant(array) for array in reference.as_list(graphs)]
    product = _graph_gru_cell.gate_product
    results = []
    for xla in (False, True):
        seen = []

        def spy(*args, seen=seen, **kwargs):
            seen.append(args[2])  # per_gate
            return product(*args, **kwargs)

        monkeypatch.setattr(gated_graph, "in_xla_context", lambda xla=xla: xla)
        monkeypatch.setattr(_graph_gru_cell, "gate_product", spy)
        layer = _one_type_layer(graphs, aggregation, options)
        sources = [inputs[0], *layer.trainable_variables]
        with tf.GradientTape() as tape:
            tape.watch(inputs[0])
            outputs = layer(inputs)
            loss = tf.reduce_sum(outputs * tf.sin(outputs + 1.0))
        assert seen == [not xla, not xla]  # Input and recurrent products.
        np.testing.assert_allclose(outputs, _expected(layer, graphs), atol=1e-5)
        results.append([np.asarray(g) for g in tape.gradient(loss, sources)])
    assert np.abs(results[0][0]).max() > 1e-3
    for per_gate, wide in zip(*results, strict=True):
        np.testing.assert_allclose(per_gate, wide, atol=1e-5)


def test_kernels_are_fused_only_where_one_matmul_is_cheaper():
    # (num_edge_types, add_reverse_edges, concatenate_directions):
    # (sparse, dense) fusion. Fused: 3 T columns of units² per node;
    # unfused: T + 3 D (sparse), T * D + 3 D (dense).
    cases = {
        (1, False, False): (True, True),  # 3 < 4
        (1, True, False): (False, False),  # 6 > 5
        (1, True, True): (True, True),  # 6 < 8, 6 < 10
        (2, False, False): (False, False),  # 6 > 5
        (2, True, True): (False, True),  # 12 > 10, 12 < 14
        (4, True, True): (False, False),  # 24 > 14, 24 > 22
    }
    from keras_recurrent.layers._graph_gru_cell import fuses_kernels

    for (types, reverse, directions), expected in cases.items():
        num_types = types * (2 if reverse else 1)
        num_directions = 2 if directions else 1
        assert (
            fuses_kernels(num_types, num_directions, dense=False),
            fuses_kernels(num_types, num_directions, dense=True),
        ) == expected


def test_one_step_by_hand():
    # 0 -> 1 of type 1, no bias: a_1 = x_0 A_1, a_0 = x_1 A_3 (the reverse
    # of type 1), then one GRU step each.
    graphs = kr.graphs.encode_graphs(
        [{"edges": [(0, 1, 1)], "node_inputs": [[1.0, 2.0], [3.0, 0.0]]}]
    )
    layer = kr.layers.GatedGraph(2, 2, propagation_steps=1, use_bias=False)
    layer.build([array.shape for array in reference.as_list(graphs)])
    reference.randomize_weights(layer)
    weights = reference.gated_graph_weights(layer)
    x = np.array([[1.0, 2.0], [3.0, 0.0]])
    incoming = np.stack(
        [
            x[1] @ weights["message_kernel"][3],
            x[0] @ weights["message_kernel"][1],
        ]
    )
    expected = reference.gru_step(
        incoming, x, weights["kernel"], weights["recurrent_kernel"], None, True
    )
    np.testing.assert_allclose(
        layer(reference.as_list(graphs))[0], expected, atol=1e-5
    )


def test_input_forms_agree():
    graphs = reference.random_graphs(1)
    layer = _layer(graphs)
    expected = layer(reference.as_list(graphs))
    as_dict = layer(graphs)
    bool_mask = dict(graphs, node_mask=graphs["node_mask"].astype(bool))
    int64 = dict(
        graphs,
        edges=graphs["edges"].astype("int64"),
        edge_types=graphs["edge_types"].astype("int64"),
    )
    for outputs in (as_dict, layer(bool_mask), layer(tuple(int64.values()))):
        np.testing.assert_allclose(outputs, expected, atol=1e-6)


def test_padding_does_not_leak_and_pad_size_does_not_matter():
    graphs = reference.random_graphs(2)
    layer = _layer(graphs)
    expected = np.asarray(layer(graphs))
    dirty = {name: np.array(array) for name, array in graphs.items()}
    padding = dirty["node_mask"] == 0
    dirty["node_inputs"][padding] = np.nan
    dirty["edge_types"][dirty["edges"][..., 0] == -1] = 99
    np.testing.assert_allclose(layer(dirty), expected, atol=1e-6)

    wider = {
        "node_inputs": np.pad(graphs["node_inputs"], [(0, 0), (0, 3), (0, 0)]),
        "edges": np.pad(
            graphs["edges"], [(0, 0), (0, 4), (0, 0)], constant_values=-1
        ),
        "edge_types": np.pad(graphs["edge_types"], [(0, 0), (0, 4)]),
        "node_mask": np.pad(graphs["node_mask"], [(0, 0), (0, 3)]),
    }
    outputs = np.asarray(layer(wider))
    np.testing.assert_allclose(outputs[:, :6], expected, atol=1e-6)
    np.testing.assert_array_equal(outputs[:, 6:], 0.0)
    # Each graph alone gives what it gives in the batch.
    for graph in range(3):
        alone = {
            name: array[graph : graph + 1] for name, array in graphs.items()
        }
        np.testing.assert_allclose(layer(alone)[0], expected[graph], atol=1e-6)


@pytest.mark.parametrize("aggregation", ["dense", "sparse"])
def test_graphs_without_edges(aggregation):
    graphs = kr.graphs.encode_graphs(
        [
            {"edges": [], "node_inputs": np.ones((2, 3))},
            {"edges": [], "node_inputs": np.full((3, 3), 0.5)},
        ]
    )
    assert graphs["edges"].shape == (2, 0, 2)
    layer = _layer(graphs, aggregation=aggregation)
    expected = _expected(layer, graphs)
    np.testing.assert_allclose(layer(graphs), expected, atol=1e-5)
    inputs = kr.graphs.graph_inputs(3)
    model = keras.Model(inputs, layer(inputs))
    np.testing.assert_allclose(
        model.predict(graphs, verbose=0), expected, atol=1e-5
    )


@pytest.mark.parametrize("aggregation", ["dense", "sparse"])
def test_empty_batch(aggregation):
    layer = kr.layers.GatedGraph(4, 2, aggregation=aggregation)
    outputs = layer(
        [
            np.zeros((0, 3, 2), "float32"),
            np.zeros((0, 2, 2), "int32"),
            np.zeros((0, 2), "int32"),
            np.zeros((0, 3), "int32"),
        ]
    )
    assert tuple(outputs.shape) == (0, 3, 4)


def test_auto_aggregation_choice():
    layer = kr.layers.GatedGraph(4, 2)  # T = 4 message types
    dense = layer._uses_dense_aggregation
    # Under XLA, T * N * N <= 32 * 2 * E: 4 * 8 * 8 = 256 <= 64 * 4.
    assert dense((None, 8, 4), (None, 4, 2), xla=True)
    assert not dense((None, 8, 4), (None, 3, 2), xla=True)
    # Otherwise, T * N * N <= 96 * 2 * E: 4 * 8 * 8 = 256 <= 192 * 2.
    assert dense((None, 8, 4), (None, 2, 2), xla=False)
    assert not dense((None, 8, 4), (None, 1, 2), xla=False)
    # Unknown N or E (a dynamic signature): always the sparse path.
    for xla in (True, False):
        assert not dense((None, None, 4), (None, 4, 2), xla=xla)
        assert not dense((None, 8, 4), (None, None, 2), xla=xla)
    # The benchmark's graphs: one type dense on both; four types with
    # reverse edges (66.7 entries per message) dense outside XLA only.
    one_way = kr.layers.GatedGraph(4, 1, add_reverse_edges=False)
    assert one_way._uses_dense_aggregation((None, 50, 4), (None, 150, 2))
    assert not one_way._uses_dense_aggregation(
        (None, 70, 4), (None, 150, 2), xla=True
    )
    typed = kr.layers.GatedGraph(4, 4)
    assert typed._uses_dense_aggregation(
        (None, 50, 4), (None, 150, 2), xla=False
    )
    assert not typed._uses_dense_aggregation(
        (None, 50, 4), (None, 150, 2), xla=True
    )
    # By default the context decides: TensorFlow eagerly is not XLA.
    assert dense((None, 8, 4), (None, 2, 2)) == (
        keras.backend.backend() in ("tensorflow", "torch")
    )
    for aggregation, expected in (("dense", True), ("sparse", False)):
        forced = kr.layers.GatedGraph(4, 2, aggregation=aggregation)
        for shapes in (((None, 8, 4), (None, 3, 2)), ((None, None, 4), None)):
            nodes, edges = shapes
            edges = edges or (None, None, 2)
            assert forced._uses_dense_aggregation(nodes, edges) is expected


@pytest.mark.parametrize("concatenate_directions", [False, True])
def test_dense_and_sparse_paths_agree_in_gradients(concatenate_directions):
    graphs = reference.random_graphs(5)
    inputs = [tf.constant(array) for array in reference.as_list(graphs)]
    results = []
    for aggregation in ("dense", "sparse"):
        layer = _layer(
            graphs,
            aggregation=aggregation,
            concatenate_directions=concatenate_directions,
        )
        sources = [inputs[0], *layer.trainable_variables]
        with tf.GradientTape() as tape:
            tape.watch(inputs[0])
            outputs = layer(inputs)
            loss = tf.reduce_sum(outputs * tf.sin(outputs + 1.0))
        results.append([np.asarray(g) for g in tape.gradient(loss, sources)])
    assert len(results[0]) == 6  # node_inputs, message_kernel/bias, GRU x3
    assert np.abs(results[0][0]).max() > 1e-3
    for dense, sparse in zip(*results, strict=True):
        np.testing.assert_allclose(dense, sparse, atol=1e-5)


@pytest.mark.parametrize("aggregation", ["auto", "dense", "sparse"])
def test_traced_with_dynamic_shapes(aggregation):
    graphs = reference.random_graphs(6)
    layer = _layer(graphs, aggregation=aggregation)
    expected = _expected(layer, graphs)
    signature = [
        tf.TensorSpec((None, None, 3), "float32"),
        tf.TensorSpec((None, None, 2), "int32"),
        tf.TensorSpec((None, None), "int32"),
        tf.TensorSpec((None, None), "int32"),
    ]
    function = tf.function(lambda *inputs: layer(list(inputs)))
    concrete = function.get_concrete_function(*signature)
    inputs = [tf.constant(array) for array in reference.as_list(graphs)]
    np.testing.assert_allclose(concrete(*inputs), expected, atol=1e-5)
    # Other sizes through the same trace: one graph, more padding.
    wider = [
        np.pad(graphs["node_inputs"][1:2], [(0, 0), (0, 2), (0, 0)]),
        np.pad(
            graphs["edges"][1:2], [(0, 0), (0, 3), (0, 0)], constant_values=-1
        ),
        np.pad(graphs["edge_types"][1:2], [(0, 0), (0, 3)]),
        np.pad(graphs["node_mask"][1:2], [(0, 0), (0, 2)]),
    ]
    outputs = concrete(*[tf.constant(array) for array in wider])
    np.testing.assert_allclose(outputs[0, :6], expected[1], atol=1e-5)
    np.testing.assert_array_equal(outputs[0, 6:], 0.0)


_TORCH_SCRIPT = """
import numpy as np
import keras
import keras_recurrent as kr
from tests.layers import graph_reference as reference

graphs = reference.random_graphs(7)
for aggregation in ("dense", "sparse"):
    layer = kr.layers.GatedGraph(5, 2, 3, aggregation=aggregation)
    layer.build([a.shape for a in reference.as_list(graphs)])
    reference.randomize_weights(layer, seed=3)
    expected = reference.gated_graph(
        *reference.as_list(graphs),
        reference.gated_graph_weights(layer),
        num_edge_types=2,
        propagation_steps=3,
        add_reverse_edges=True,
        reset_after=True,
    )
    outputs = keras.ops.convert_to_numpy(layer(graphs))
    np.testing.assert_allclose(outputs, expected, atol=1e-5)

# `fit` and `evaluate` first infer output shapes on PyTorch's "meta" device
# (before the fix, on tensors of ones: edge type 1 of 1 type, an error).
one_type = kr.graphs.encode_graphs(
    [{"edges": [(0, 1, 0), (1, 2, 0)]}, {"edges": [(1, 0, 0)]}]
)
inputs = kr.graphs.graph_inputs(one_type["node_inputs"].shape[-1])
target = np.ones((2, 3, 4), "float32")
# With and without reverse edges: the second takes the fused kernels.
for reverse in (True, False):
    layer = kr.layers.GatedGraph(4, 1, 2, add_reverse_edges=reverse)
    model = keras.Model(inputs, layer(inputs))
    model.compile("sgd", "mse")
    outputs = keras.ops.convert_to_numpy(model(one_type))
    direct = np.mean((outputs - target) ** 2)
    np.testing.assert_allclose(
        model.evaluate(one_type, target, verbose=0), direct, rtol=1e-5
    )
    model.fit(one_type, target, epochs=1, verbose=0)
print("ok", keras.backend.backend())
"""


@pytest.mark.slow  # a fresh process importing PyTorch: ~30 s
@pytest.mark.skipif(
    importlib.util.find_spec("torch") is None,
    reason="needs PyTorch (`pip install -e .[bench]`)",
)
def test_both_paths_run_eagerly_under_torch():
    root = pathlib.Path(__file__).resolve().parents[2]
    result = subprocess.run(
        [sys.executable, "-c", _TORCH_SCRIPT],
        capture_output=True,
        text=True,
        env={**os.environ, "KERAS_BACKEND": "torch", "PYTHONPATH": str(root)},
        cwd=root,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().endswith("ok torch"), result.stdout


def test_node_permutation_permutes_the_outputs():
    graphs = reference.random_graphs(3)
    layer = _layer(graphs)
    outputs = np.asarray(layer(graphs))
    permutation = np.array([4, 0, 5, 1, 3, 2])
    permuted = reference.permute_nodes(graphs, 2, permutation)
    permuted_outputs = np.asarray(layer(permuted))
    np.testing.assert_allclose(
        permuted_outputs[2][permutation], outputs[2], atol=1e-5
    )
    np.testing.assert_allclose(permuted_outputs[:2], outputs[:2], atol=1e-6)


def test_weights_and_config():
    layer = kr.layers.GatedGraph(
        6,
        3,
        propagation_steps=2,
        kernel_initializer=keras.initializers.GlorotUniform(seed=1),
        name="propagation",
    )
    layer.build([(None, 4, 2), (None, 5, 2), (None, 5), (None, 4)])
    shapes = {weight.path: tuple(weight.shape) for weight in layer.weights}
    assert shapes == {
        "propagation/message_kernel": (6, 6, 6),
        "propagation/message_bias": (6, 6),
        "propagation/gru/kernel": (6, 18),
        "propagation/gru/recurrent_kernel": (6, 18),
        "propagation/gru/bias": (2, 18),
    }
    kernel = keras.ops.convert_to_numpy(layer.message_kernel)
    # A seeded initializer still gives each type its own (units, units)
    # Glorot matrix, not one slice of a (T, units, units) tensor.
    assert not np.allclose(kernel[0], kernel[1])
    assert np.abs(kernel).max() <= np.sqrt(6.0 / 12.0)
    assert np.abs(kernel).max() > np.sqrt(6.0 / 72.0)

    config = layer.get_config()
    json.dumps(config)
    clone = kr.layers.GatedGraph.from_config(config)
    assert clone.get_config() == config
    assert (clone.units, clone.num_edge_types, clone.propagation_steps) == (
        6,
        3,
        2,
    )
    no_reverse = kr.layers.GatedGraph(4, 3, add_reverse_edges=False)
    no_reverse.build([(None, 4, 2), (None, 5, 2), (None, 5), (None, 4)])
    assert tuple(no_reverse.message_kernel.shape) == (3, 4, 4)
    directions = kr.layers.GatedGraph(4, 3, concatenate_directions=True)
    directions.build([(None, 4, 2), (None, 5, 2), (None, 5), (None, 4)])
    assert tuple(directions.message_kernel.shape) == (6, 4, 4)
    assert tuple(directions.gru.kernel.shape) == (8, 12)
    assert tuple(directions.gru.recurrent_kernel.shape) == (4, 12)
    no_bias = kr.layers.GatedGraph(4, 1, use_bias=False)
    no_bias.build([(None, 4, 2), (None, 5, 2), (None, 5), (None, 4)])
    assert [weight.name for weight in no_bias.weights] == [
        "message_kernel",
        "kernel",
        "recurrent_kernel",
    ]


def test_model_save_and_load(tmp_path):
    graphs = reference.random_graphs(4)
    inputs = kr.graphs.graph_inputs(3)
    model = keras.Model(inputs, kr.layers.GatedGraph(4, 2)(inputs))
    path = tmp_path / "model.keras"
    model.save(path)
    loaded = keras.saving.load_model(path)
    np.testing.assert_allclose(loaded(graphs), model(graphs), atol=1e-6)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"units": 0}, "units=0"),
        ({"num_edge_types": 0}, "num_edge_types=0"),
        ({"propagation_steps": 1.5}, "propagation_steps=1.5"),
        ({"add_reverse_edges": "yes"}, "add_reverse_edges='yes'"),
        ({"reset_after": None}, "reset_after=None"),
        ({"aggregation": "scatter"}, "aggregation='scatter'"),
        ({"concatenate_directions": 1}, "concatenate_directions=1"),
        (
            {"concatenate_directions": True, "add_reverse_edges": False},
            "needs `add_reverse_edges=True`",
        ),
    ],
)
def test_bad_arguments(kwargs, message):
    arguments = {"units": 4, "num_edge_types": 2, **kwargs}
    with pytest.raises(ValueError, match=message):
        kr.layers.GatedGraph(**arguments)


@pytest.mark.parametrize(
    ("shapes", "message"),
    [
        (
            [(2, 4, 5), (2, 3, 2), (2, 3), (2, 4)],
            "5 features, more than units=4",
        ),
        ([(2, 4), (2, 3, 2), (2, 3), (2, 4)], "`node_inputs` must have rank 3"),
        ([(2, 4, 2), (2, 3, 3), (2, 3), (2, 4)], r"edges.shape=\(2, 3, 3\)"),
        ([(2, 4, 2), (2, 3, 2), (2, 3), (2, 5)], "number of nodes"),
        ([(2, 4, 2), (2, 3, 2), (2, 7), (2, 4)], "number of edges"),
        ([(2, 4, 2), (2, 3, 2), (3, 3), (2, 4)], "batch size"),
        ([(2, 4, None), (2, 3, 2), (2, 3), (2, 4)], "must be defined"),
    ],
)
def test_bad_shapes(shapes, message):
    with pytest.raises(ValueError, match=message):
        kr.layers.GatedGraph(4, 2).build(shapes)


def test_bad_call_structure():
    layer = kr.layers.GatedGraph(4, 2)
    graphs = reference.random_graphs()
    with pytest.raises(ValueError, match="takes the list"):
        layer(reference.as_list(graphs)[:3])
    with pytest.raises(ValueError, match="Received keys"):
        layer({"node_inputs": graphs["node_inputs"], "edges": graphs["edges"]})


def _corrupt(name, graph, edge, value):
    graphs = reference.random_graphs()
    graphs[name] = np.array(graphs[name])
    graphs[name][graph, edge] = value
    return graphs


BAD_EDGES = [
    (("edges", 1, 0, [0, 6]), r"in \[0, 6\).*edges\[1, 0\]=\[0, 6\]"),
    (("edges", 0, 2, [-2, 1]), r"edges\[0, 2\]=\[-2, 1\]"),
    (("edges", 0, 7, [1, -1]), r"edges\[0, 7\]=\[1, -1\]"),
    (("edges", 0, 1, [1, 4]), r"real nodes.*edges\[0, 1\]=\[1, 4\]"),
    (("edge_types", 2, 3, 2), r"in \[0, 2\).*edge_types\[2, 3\]=2"),
    (("edge_types", 1, 0, -1), r"edge_types\[1, 0\]=-1"),
]


@pytest.mark.parametrize(("corruption", "message"), BAD_EDGES)
def test_bad_edges_raise_eagerly(corruption, message):
    graphs = _corrupt(*corruption)
    with pytest.raises(ValueError, match=message):
        kr.layers.GatedGraph(4, 2)(graphs)
    with pytest.raises(ValueError, match=message):
        kr.graphs.validate_graph_tensors(**graphs, num_edge_types=2)


def test_bad_edges_raise_at_run_time_in_a_graph():
    inputs = kr.graphs.graph_inputs(3)
    model = keras.Model(inputs, kr.layers.GatedGraph(4, 2, name="gg")(inputs))
    model.predict(reference.random_graphs(), verbose=0)
    runtime_messages = [
        "node indices in \\[0, num_nodes\\)",
        "node indices in \\[0, num_nodes\\)",
        "node indices in \\[0, num_nodes\\)",
        "must only join real nodes",
        "in \\[0, 2\\)",
        "in \\[0, 2\\)",
    ]
    for (corruption, _), message in zip(
        BAD_EDGES, runtime_messages, strict=True
    ):
        graphs = _corrupt(*corruption)
        graph, edge = corruption[1], corruption[2]
        with pytest.raises(
            tf.errors.InvalidArgumentError,
            match=f"GatedGraph .*gg.*{message}.*"
            f"\\(graph, edge\\).*\\[{graph}\\] \\[{edge}\\]",
        ):
            model.predict(graphs, verbose=0)


@pytest.fixture
def float64_floatx():
    floatx, policy = keras.config.floatx(), keras.config.dtype_policy()
    keras.config.set_floatx("float64")
    keras.config.set_dtype_policy("float64")
    yield
    keras.config.set_floatx(floatx)
    keras.config.set_dtype_policy(policy)


def test_float64_model_matches_reference_and_checks_edges(float64_floatx):
    # With a float64 `floatx`, Keras made the traced edge check's row
    # length an int64, which its int32 (graph, edge) arithmetic refused.
    graphs = reference.random_graphs()
    inputs = kr.graphs.graph_inputs(3)
    layer = kr.layers.GatedGraph(UNITS, NUM_EDGE_TYPES, STEPS, name="gg")
    model = keras.Model(inputs, layer(inputs))
    reference.randomize_weights(layer)
    assert layer.message_kernel.dtype == "float64"
    outputs = model.predict(graphs, verbose=0)
    assert outputs.dtype == "float64"
    np.testing.assert_allclose(outputs, _expected(layer, graphs), atol=1e-6)
    (corruption, _), *_ = BAD_EDGES
    message = (
        "GatedGraph .*gg.*node indices.*\\(graph, edge\\).*\\[1\\] \\[0\\]"
    )
    with pytest.raises(tf.errors.InvalidArgumentError, match=message):
        model.predict(_corrupt(*corruption), verbose=0)


def test_trains_under_mirrored_strategy_like_on_one_device():
    graphs = kr.graphs.encode_graphs(
        [
            {
                "edges": [(v, (v + 1 + index) % 4, v % 2) for v in range(4)],
                "node_inputs": np.eye(4, 3)[(np.arange(4) + index) % 4],
            }
            for index in range(16)
        ],
        num_nodes=5,
    )
    targets = np.linspace(-1, 1, 16, dtype="float32")[:, None]

    def build_model():
        inputs = kr.graphs.graph_inputs(3, num_nodes=5)
        states = kr.layers.GatedGraph(4, 2, propagation_steps=2)(inputs)
        graph = kr.layers.GraphReadout(3)(
            [states, inputs["node_inputs"], inputs["node_mask"]]
        )
        return keras.Model(inputs, keras.layers.Dense(1)(graph))

    keras_recurrent.testing.assert_mirrored_equivalence(
        build_model, graphs, targets, steps=2, global_batch_size=8
    )


def _torch_gru_rows(kernel, units):
    """Keras' `[z | r | h]` columns as PyTorch's `[r | z | n]` rows."""
    z, r, h = (kernel[:, i * units : (i + 1) * units] for i in range(3))
    return np.concatenate([r, z, h], axis=1).T


def _gated_graph_conv(torch, units, steps, message_kernel, gru_kernels):
    """PyG's `GatedGraphConv(aggr="add", bias=False)` with our weights: the
    real one when PyG is installed, else its forward pass in PyTorch."""
    gru = torch.nn.GRUCell(units, units, bias=False)
    with torch.no_grad():
        gru.weight_ih.copy_(torch.from_numpy(gru_kernels[0]))
        gru.weight_hh.copy_(torch.from_numpy(gru_kernels[1]))
    weight = torch.from_numpy(np.stack([message_kernel] * steps))
    if importlib.util.find_spec("torch_geometric") is not None:
        from torch_geometric.nn import GatedGraphConv

        conv = GatedGraphConv(units, num_layers=steps, aggr="add", bias=False)
        with torch.no_grad():
            conv.weight.copy_(weight)
            conv.rnn.load_state_dict(gru.state_dict())
        return conv

    def conv(x, edge_index):
        x = torch.cat([x, x.new_zeros(x.size(0), units - x.size(1))], 1)
        for step in range(steps):
            messages = (x @ weight[step])[edge_index[0]]
            summed = torch.zeros_like(x).index_add_(0, edge_index[1], messages)
            x = gru(summed, x)
        return x

    return conv


@pytest.mark.skipif(
    importlib.util.find_spec("torch") is None, reason="needs PyTorch"
)
@pytest.mark.parametrize("aggregation", ["dense", "sparse"])
def test_equals_pyg_gated_graph_conv_with_the_same_weights(aggregation):
    # PyG's GatedGraphConv is what our users would otherwise pick: one edge
    # type, no reverse edges, no biases, and the GRU of PyTorch.
    import torch

    units, steps = 16, 4
    rng = np.random.default_rng(11)
    num_graphs, num_nodes, num_edges = 3, 7, 12
    node_inputs = rng.normal(size=(num_graphs, num_nodes, 5))
    edges = rng.integers(0, num_nodes, (num_graphs, num_edges, 2))
    layer = kr.layers.GatedGraph(
        units,
        1,
        propagation_steps=steps,
        add_reverse_edges=False,
        use_bias=False,
        aggregation=aggregation,
    )
    outputs = layer(
        [
            node_inputs.astype("float32"),
            edges.astype("int32"),
            np.zeros((num_graphs, num_edges), "int32"),
            np.ones((num_graphs, num_nodes), "int32"),
        ]
    )
    message_kernel = np.asarray(layer.message_kernel)[0]
    conv = _gated_graph_conv(
        torch,
        units,
        steps,
        message_kernel,
        [
            _torch_gru_rows(np.asarray(layer.gru.kernel), units),
            _torch_gru_rows(np.asarray(layer.gru.recurrent_kernel), units),
        ],
    )
    offsets = (np.arange(num_graphs) * num_nodes)[:, None, None]
    edge_index = (edges + offsets).reshape(-1, 2).T
    with torch.no_grad():
        expected = conv(
            torch.from_numpy(node_inputs.reshape(-1, 5).astype("float32")),
            torch.from_numpy(edge_index.astype("int64")),
        ).numpy()
    np.testing.assert_allclose(
        np.reshape(outputs, (-1, units)), expected, atol=1e-5
    )


# `update_cell`: any Keras recurrent cell whose first state has `units`
# entries updates the nodes.


@keras.saving.register_keras_serializable(package="test_gated_graph")
class TwoStateCell(keras.layers.Layer):
    """`h' = tanh(x W + h U + m V)`, `m' = m + x P`: a second state of
    another size than `units`, to check that it starts at zero."""

    def __init__(self, units, memory=2, **kwargs):
        super().__init__(**kwargs)
        self.units, self.memory = units, memory
        self.state_size = [units, memory]
        self.output_size = units

    def build(self, input_shape):
        width = input_shape[-1]
        self.kernel = self.add_weight(shape=(width, self.units), name="kernel")
        self.recurrent_kernel = self.add_weight(
            shape=(self.units, self.units), name="recurrent_kernel"
        )
        self.memory_kernel = self.add_weight(
            shape=(self.memory, self.units), name="memory_kernel"
        )
        self.memory_input = self.add_weight(
            shape=(width, self.memory), name="memory_input"
        )

    def call(self, inputs, states):
        h, m = states
        h = keras.ops.tanh(
            inputs @ self.kernel
            + h @ self.recurrent_kernel
            + m @ self.memory_kernel
        )
        return h, [h, m + inputs @ self.memory_input]

    def get_config(self):
        return {
            **super().get_config(),
            "units": self.units,
            "memory": self.memory,
        }


def _value(tensor):
    return keras.ops.convert_to_numpy(tensor)


def _numpy(variable):
    return keras.ops.convert_to_numpy(variable).astype("float64")


def _numpy_update(cell):
    """The NumPy step of `cell`, for `reference.gated_graph(update=...)`."""
    if isinstance(cell, keras.layers.LSTMCell):
        weights = [_numpy(w) for w in (cell.kernel, cell.recurrent_kernel)]
        bias = _numpy(cell.bias)
        return lambda x, states: reference.lstm_step(x, states, *weights, bias)
    kernel, recurrent, memory_kernel, memory_input = (
        _numpy(w)
        for w in (
            cell.kernel,
            cell.recurrent_kernel,
            cell.memory_kernel,
            cell.memory_input,
        )
    )

    def update(x, states):
        h, m = states
        h_new = np.tanh(x @ kernel + h @ recurrent + m @ memory_kernel)
        return [h_new, m + x @ memory_input]

    return update


CELLS = {
    "lstm": lambda: keras.layers.LSTMCell(UNITS),
    "two_states": lambda: TwoStateCell(UNITS),
}


def _cell_layer(graphs, cell, **kwargs):
    layer = _layer(graphs, seed=4, update_cell=CELLS[cell](), **kwargs)
    return layer, _cell_expected(layer, graphs)


def _cell_expected(layer, graphs):
    return reference.gated_graph(
        *(np.asarray(array) for array in reference.as_list(graphs)),
        reference.gated_graph_weights(layer),
        num_edge_types=layer.num_edge_types,
        propagation_steps=layer.propagation_steps,
        add_reverse_edges=layer.add_reverse_edges,
        concatenate_directions=layer.concatenate_directions,
        update=_numpy_update(layer.update_cell),
        state_sizes=layer.update_cell.state_size,
    )


UPDATE_CELL_OPTIONS = {
    "default": {},
    "no_reverse_no_bias": {"add_reverse_edges": False, "use_bias": False},
    "paper_directions": {"concatenate_directions": True},
}


@pytest.mark.parametrize(
    "options", UPDATE_CELL_OPTIONS.values(), ids=list(UPDATE_CELL_OPTIONS)
)
@pytest.mark.parametrize("aggregation", ["dense", "sparse"])
@pytest.mark.parametrize("cell", list(CELLS))
def test_update_cell_matches_numpy_reference(cell, aggregation, options):
    graphs = reference.random_graphs(8)
    layer, expected = _cell_layer(
        graphs, cell, aggregation=aggregation, **options
    )
    width = 2 * UNITS if options.get("concatenate_directions") else UNITS
    assert tuple(layer.update_cell.kernel.shape)[0] == width
    np.testing.assert_allclose(_value(layer(graphs)), expected, atol=1e-5)


@pytest.mark.parametrize("aggregation", ["dense", "sparse"])
@pytest.mark.parametrize("cell", list(CELLS))
def test_update_cell_compiled_matches_numpy_reference(cell, aggregation):
    # `jit_compile=True`: XLA on TensorFlow, `jax.jit` on JAX.
    graphs = reference.random_graphs(9)
    inputs = kr.graphs.graph_inputs(3)
    layer = kr.layers.GatedGraph(
        UNITS,
        NUM_EDGE_TYPES,
        STEPS,
        aggregation=aggregation,
        update_cell=CELLS[cell](),
    )
    model = keras.Model(inputs, layer(inputs))
    reference.randomize_weights(layer, seed=5)
    model.compile(jit_compile=True)
    np.testing.assert_allclose(
        model.predict(graphs, verbose=0),
        _cell_expected(layer, graphs),
        atol=1e-5,
    )


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"reset_after": False},
        {"num_edge_types": 1, "add_reverse_edges": False},  # fused kernels
        {"concatenate_directions": True, "use_bias": False},
    ],
    ids=["default", "reset_before", "fused", "directions_no_bias"],
)
@pytest.mark.parametrize("aggregation", ["dense", "sparse"])
def test_keras_gru_cell_as_update_cell_is_the_default(options, aggregation):
    # The default GRU's fast path (per-gate products, fused kernels) and a
    # plain `keras.layers.GRUCell` called step by step: one result.
    options = {"num_edge_types": NUM_EDGE_TYPES, **options}
    graphs = reference.random_graphs(
        10, num_edge_types=options["num_edge_types"]
    )
    shapes = [array.shape for array in reference.as_list(graphs)]
    default = kr.layers.GatedGraph(
        UNITS, propagation_steps=STEPS, aggregation=aggregation, **options
    )
    default.build(shapes)
    reference.randomize_weights(default, seed=6)
    reset_after = options.pop("reset_after", True)
    use_bias = options.get("use_bias", True)
    plain = kr.layers.GatedGraph(
        UNITS,
        propagation_steps=STEPS,
        aggregation=aggregation,
        update_cell=keras.layers.GRUCell(
            UNITS, reset_after=reset_after, use_bias=use_bias
        ),
        **options,
    )
    plain.build(shapes)
    plain.set_weights(default.get_weights())
    np.testing.assert_allclose(
        _value(plain(graphs)), _value(default(graphs)), atol=1e-5
    )


def test_update_cell_trains_with_dropout_and_keeps_its_weights():
    graphs = reference.random_graphs(11)
    inputs = kr.graphs.graph_inputs(3)
    cell = keras.layers.LSTMCell(UNITS, dropout=0.3, recurrent_dropout=0.3)
    layer = kr.layers.GatedGraph(UNITS, NUM_EDGE_TYPES, STEPS, update_cell=cell)
    model = keras.Model(inputs, layer(inputs))
    model.compile("adam", "mse")
    assert [w.path for w in layer.weights] == [
        f"{layer.name}/message_kernel",
        f"{layer.name}/message_bias",
        f"{layer.name}/{cell.name}/kernel",
        f"{layer.name}/{cell.name}/recurrent_kernel",
        f"{layer.name}/{cell.name}/bias",
    ]
    before = keras.ops.convert_to_numpy(cell.kernel)
    target = np.ones((3, 6, UNITS), "float32")
    model.fit(graphs, target, epochs=2, verbose=0)
    assert not np.allclose(keras.ops.convert_to_numpy(cell.kernel), before)
    # Without training, no dropout: the NumPy reference holds.
    np.testing.assert_allclose(
        model.predict(graphs, verbose=0),
        _cell_expected(layer, graphs),
        atol=1e-5,
    )


def test_update_cell_config_round_trip():
    layer = kr.layers.GatedGraph(
        4, 2, update_cell=keras.layers.LSTMCell(4, unit_forget_bias=False)
    )
    config = layer.get_config()
    json.dumps(config)
    assert config["update_cell"]["class_name"] == "LSTMCell"
    clone = kr.layers.GatedGraph.from_config(config)
    assert isinstance(clone.update_cell, keras.layers.LSTMCell)
    assert clone.update_cell.unit_forget_bias is False
    assert clone.get_config() == config
    # The default GRU keeps the configs of earlier releases.
    assert "update_cell" not in kr.layers.GatedGraph(4, 2).get_config()


def test_update_cell_model_save_and_load(tmp_path):
    graphs = reference.random_graphs(12)
    inputs = kr.graphs.graph_inputs(3)
    layer = kr.layers.GatedGraph(
        UNITS, NUM_EDGE_TYPES, STEPS, update_cell=TwoStateCell(UNITS)
    )
    model = keras.Model(inputs, layer(inputs))
    reference.randomize_weights(layer, seed=7)
    path = tmp_path / "model.keras"
    model.save(path)
    loaded = keras.saving.load_model(path)
    loaded_layer = loaded.layers[-1]
    assert isinstance(loaded_layer.update_cell, TwoStateCell)
    np.testing.assert_allclose(
        _value(loaded(graphs)), _value(model(graphs)), atol=1e-6
    )
    np.testing.assert_allclose(
        _value(loaded(graphs)), _cell_expected(layer, graphs), atol=1e-5
    )


@pytest.mark.parametrize(
    ("update_cell", "message"),
    [
        (keras.layers.LSTMCell(5), r"units=4 .*state_size=\[5, 5\]"),
        (keras.layers.Dense(4), "Keras recurrent cell.*Received: update_cell"),
        ("lstm", "Keras recurrent cell.*Received: update_cell='lstm'"),
        (TwoStateCell(4, memory=0), r"Received: update_cell=<TwoStateCell"),
    ],
    ids=["state_size", "no_state", "string", "zero_state"],
)
def test_bad_update_cell(update_cell, message):
    with pytest.raises(ValueError, match=f"`update_cell`.*{message}"):
        kr.layers.GatedGraph(4, 2, update_cell=update_cell)


@pytest.mark.parametrize(
    "option",
    [
        {"reset_after": False},
        {"activation": "relu"},
        {"recurrent_initializer": "zeros"},
        {"recurrent_regularizer": "l2"},
    ],
)
def test_gru_options_are_refused_with_update_cell(option):
    [(name, _)] = option.items()
    with pytest.raises(ValueError, match=f"`{name}` configures the default"):
        kr.layers.GatedGraph(
            4, 2, update_cell=keras.layers.LSTMCell(4), **option
        )


def test_propagate_is_call_on_a_checked_graph():
    # `propagate` (what `GGSNN` runs) takes the prepared tensors.
    graphs = reference.random_graphs(13)
    layer = _layer(graphs)
    expected = layer(graphs)
    propagated = layer.propagate(
        graphs["node_inputs"],
        keras.ops.cast(graphs["edges"], "int32"),
        keras.ops.cast(graphs["edge_types"], "int32"),
        keras.ops.cast(graphs["node_mask"], "bool"),
    )
    np.testing.assert_allclose(_value(propagated), _value(expected), atol=1e-6)


@pytest.mark.parametrize("aggregation", ["dense", "sparse"])
def test_mixed_float16_large_inputs_stay_finite(aggregation):
    # Node inputs of some 3e4 (float16 holds them) overflowed float16 in
    # the message sums and the GRU's `r * (h U)` (0 * inf = NaN), where
    # keras.layers.LSTM stays finite: the propagation now runs in float32.
    rng = np.random.default_rng(0)
    edges = [
        (i, j, int(rng.integers(2)))
        for i in range(10)
        for j in range(10)
        if i != j and rng.random() < 0.6
    ]
    node_inputs = 3e4 * rng.uniform(-1, 1, (10, 6))
    graphs = kr.graphs.encode_graphs(
        [{"edges": edges, "node_inputs": node_inputs}], num_edge_types=2
    )

    def run(policy):
        previous = keras.mixed_precision.global_policy()
        keras.mixed_precision.set_global_policy(policy)
        try:
            keras.utils.set_random_seed(0)
            layer = kr.layers.GatedGraph(
                16,
                num_edge_types=2,
                propagation_steps=3,
                aggregation=aggregation,
            )
            return layer, keras.ops.convert_to_numpy(layer(graphs))
        finally:
            keras.mixed_precision.set_global_policy(previous)

    layer, mixed = run("mixed_float16")
    _, reference_outputs = run("float32")
    assert mixed.dtype == np.float16 and layer.compute_dtype == "float16"
    assert np.isfinite(mixed).all()
    # Within float16's rounding of the inputs (a spacing of 16 at 3e4).
    np.testing.assert_allclose(
        mixed.astype("float32"), reference_outputs, rtol=2e-3, atol=16
    )
