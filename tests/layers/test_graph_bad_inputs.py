"""Every bad graph input, eagerly, in `predict`, served, and under XLA.

One table: each case corrupts the small batch of `graph_reference.
random_graphs` (3 graphs, `N = 6`, `E = 8`, 3 features, 2 edge types) and
says what each way of running `GatedGraph` must answer. A case gets a named
error everywhere an error can be raised; under XLA, where run-time
assertions compile to nothing, the graph that holds a bad value gets NaN
outputs and the other graphs keep theirs.
"""

import dataclasses

import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_recurrent as kr
from tests.layers import graph_reference as reference

NUM_EDGE_TYPES = 2


@dataclasses.dataclass
class Case:
    """A corruption and the messages it must give.

    `eager`: regex of the `ValueError` of an eager call. `runtime`: regex
    of the error of `predict` and of the served SavedModel (`None`: the
    mode does not apply). `bad_graph`: the graph that must be NaN under
    XLA (`None`: the case cannot reach a compiled model with the same
    shapes).
    """

    corrupt: object
    eager: str
    runtime: str = None
    bad_graph: int = None
    fit: bool = False


def _set(name, index, value, dtype=None):
    def corrupt(graphs):
        array = np.array(graphs[name], dtype=dtype)
        array[index] = value
        graphs[name] = array

    return corrupt


def _replace(name, make):
    def corrupt(graphs):
        graphs[name] = make(graphs[name])

    return corrupt


def _first_bad(graph, index):
    return f"\\(graph, (edge|node)\\).*\\[{graph}\\] \\[{index}\\]"


NODES_RANGE = r"node indices in \[0, num_nodes\)"
SHAPES = r"Received:.*node_inputs.shape=.*edges.shape="

CASES = {
    # Values: named errors where they can be raised, NaN under XLA.
    "edge_at_N": Case(
        _set("edges", (1, 0), [0, 6]),
        r"in \[0, 6\).*edges\[1, 0\]=\[0, 6\]",
        NODES_RANGE + ".*" + _first_bad(1, 0),
        bad_graph=1,
        fit=True,
    ),
    "edge_to_400": Case(
        _set("edges", (1, 0), [0, 400]),
        r"edges\[1, 0\]=\[0, 400\]",
        NODES_RANGE + ".*" + _first_bad(1, 0),
        bad_graph=1,
        fit=True,
    ),
    "edge_into_own_padding": Case(
        _set("edges", (0, 1), [1, 4]),
        r"real nodes.*edges\[0, 1\]=\[1, 4\]",
        "must only join real nodes.*" + _first_bad(0, 1),
        bad_graph=0,
    ),
    "negative_source": Case(
        _set("edges", (0, 2), [-2, 1]),
        r"edges\[0, 2\]=\[-2, 1\]",
        NODES_RANGE + ".*" + _first_bad(0, 2),
        bad_graph=0,
    ),
    "half_padding_row": Case(
        _set("edges", (2, 7), [1, -1]),
        r"edges\[2, 7\]=\[1, -1\]",
        NODES_RANGE + ".*" + _first_bad(2, 7),
        bad_graph=2,
    ),
    "edge_type_too_large": Case(
        _set("edge_types", (2, 3), NUM_EDGE_TYPES),
        r"in \[0, 2\).*edge_types\[2, 3\]=2",
        r"edge_types. of real edges must be in \[0, 2\).*" + _first_bad(2, 3),
        bad_graph=2,
    ),
    "negative_edge_type": Case(
        _set("edge_types", (1, 0), -1),
        r"edge_types\[1, 0\]=-1",
        r"edge_types. of real edges must be in \[0, 2\).*" + _first_bad(1, 0),
        bad_graph=1,
    ),
    "node_mask_2": Case(
        _set("node_mask", (0, 0), 2),
        r"node_mask. must be 1.*node_mask\[0, 0\]=2",
        r"node_mask. must be 1.*" + _first_bad(0, 0),
        bad_graph=0,
    ),
    "node_mask_minus_1": Case(
        _set("node_mask", (2, 1), -1),
        r"node_mask\[2, 1\]=-1",
        r"node_mask. must be 1.*" + _first_bad(2, 1),
        bad_graph=2,
    ),
    # Values only an eager call (or a float or int64 model input) can see:
    # a model on `kr.graphs.graph_inputs` takes int32 (see
    # `test_float_edges_into_an_int32_model_are_truncated_by_keras`).
    "fractional_edge": Case(
        _set("edges", (0, 0), [2, 2.5], dtype="float32"),
        r"whole node indices.*edges\[0, 0\]=\[2.0, 2.5\]",
    ),
    "nan_edge": Case(
        _set("edges", (1, 2), [np.nan, 1], dtype="float32"),
        r"whole node indices.*edges\[1, 2\]=\[nan, 1.0\]",
    ),
    "fractional_edge_type": Case(
        _set("edge_types", (0, 1), 0.5, dtype="float32"),
        r"whole numbers.*edge_types\[0, 1\]=0.5",
    ),
    "int64_edge_past_int32": Case(
        _set("edges", (2, 0), [2**32 + 1, 0], dtype="int64"),
        r"edges\[2, 0\]=\[4294967297, 0\]",
    ),
    "float_node_mask_half": Case(
        _set("node_mask", (1, 0), 0.5, dtype="float32"),
        r"node_mask\[1, 0\]=0.5",
    ),
    # Shapes: static `ValueError`s, run-time assertions where unknown.
    "edges_triples": Case(
        _replace(
            "edges",
            lambda e: np.concatenate([e, np.zeros_like(e[..., :1])], -1),
        ),
        r"edges. must be .\(batch, num_edges, 2\).*edges.shape=\(3, 8, 3\)",
        r"edges. must be .\(batch, num_edges, 2\).*" + SHAPES + r".*\[3 8 3\]",
    ),
    "edges_rank_2": Case(
        _replace("edges", lambda e: e[..., 0]),
        r"edges. must have rank 3.*edges.shape=\(3, 8\)",
        # A signature's static rank hides the wrong rank from `tf.rank`;
        # the sizes name the problem.
        r"edges. must be .\(batch, num_edges, 2\).*" + SHAPES + r".*\[3 8\]",
    ),
    "node_mask_rank_3": Case(
        _replace("node_mask", lambda m: m[:, None]),
        r"node_mask. must have rank 2.*node_mask.shape=\(3, 1, 6\)",
        r"disagree on the number of nodes.*node_mask.shape=.*\[3 1 6\]",
    ),
    "edge_types_other_E": Case(
        _replace("edge_types", lambda t: t[:, :5]),
        r"number of edges.*edge_types.shape=\(3, 5\)",
        r"disagree on the number of edges.*edge_types.shape=.*\[3 5\]",
    ),
    "node_mask_other_N": Case(
        _replace("node_mask", lambda m: m[:, :5]),
        r"number of nodes.*node_mask.shape=\(3, 5\)",
        r"disagree on the number of nodes.*node_mask.shape=.*\[3 5\]",
    ),
    "edges_other_batch": Case(
        _replace("edges", lambda e: e[:2]),
        r"batch size.*edges.shape=\(2, 8, 2\)",
        r"disagree on the batch size.*edges.shape=.*\[2 8 2\]",
    ),
    "node_inputs_other_width": Case(
        _replace("node_inputs", lambda x: x[..., :2]),
        r"node_inputs. must have 3 features.*shape=\(3, 6, 2\)",
        r"node_inputs. must have 3 features.*node_inputs.shape=.*\[3 6 2\]",
    ),
    "no_node_slot": Case(
        lambda graphs: graphs.update(
            node_inputs=graphs["node_inputs"][:, :0],
            node_mask=graphs["node_mask"][:, :0],
            edges=graphs["edges"][:, :0],
            edge_types=graphs["edge_types"][:, :0],
        ),
        r"at least one node.*node_inputs.shape=\(3, 0, 3\)",
        r"at least one node.*node_inputs.shape=.*\[3 0 3\]",
    ),
    "no_node_slot_but_edges": Case(
        lambda graphs: graphs.update(
            node_inputs=graphs["node_inputs"][:, :0],
            node_mask=graphs["node_mask"][:, :0],
        ),
        r"at least one node.*node_inputs.shape=\(3, 0, 3\)",
        r"at least one node.*node_mask.shape=.*\[3 0\]",
    ),
    "bool_edges": Case(
        _replace("edges", lambda e: e > 0),
        r"edges. must be numeric. Received: edges.dtype=bool",
    ),
}


# Shape cases that Keras' functional model itself refuses, naming the input
# and both shapes, before `GatedGraph` runs.
KERAS_PREDICT_ERRORS = {
    "edges_rank_2": r"Invalid input shape .* name 'edges'.*incompatible shape "
    r"\(3, 8\)",
    "node_mask_rank_3": r"Invalid input shape .* name 'node_mask'.*"
    r"incompatible shape \(3, 1, 6\)",
    "edges_triples": r"name 'edges' .* expected shape=\(None, None, 2\), "
    r"found shape=\(3, 8, 3\)",
    "node_inputs_other_width": r"name 'node_inputs' .* expected shape="
    r"\(None, None, 3\), found shape=\(3, 6, 2\)",
}


def _graphs(case=None):
    graphs = {
        name: np.array(array)
        for name, array in reference.random_graphs(
            num_edge_types=NUM_EDGE_TYPES
        ).items()
    }
    if case is not None:
        case.corrupt(graphs)
    return graphs


def _layer(name="gg"):
    return kr.layers.GatedGraph(
        4, NUM_EDGE_TYPES, propagation_steps=2, name=name
    )


def _model(jit_compile=False):
    inputs = kr.graphs.graph_inputs(3)
    model = keras.Model(inputs, _layer()(inputs))
    model.compile(jit_compile=jit_compile)
    return model


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """One SavedModel for every case: its signature has unknown sizes, so
    the run-time assertions (not the static checks) must catch them."""
    path = str(tmp_path_factory.mktemp("graph_bad_inputs"))
    model = _model()
    kr.export.export_saved_model(model, path)
    return tf.saved_model.load(path).signatures["serve"]


@pytest.fixture(scope="module")
def compiled():
    """One XLA model, and its outputs on the clean batch."""
    model = _model(jit_compile=True)
    return model, model.predict(_graphs(), verbose=0)


@pytest.mark.parametrize("name", list(CASES))
def test_eager_call_names_the_problem(name):
    graphs = _graphs(CASES[name])
    layer = _layer()
    layer.build([array.shape for array in reference.as_list(_graphs())])
    with pytest.raises(ValueError, match=CASES[name].eager):
        layer(graphs)


@pytest.mark.parametrize(
    "name", [name for name, case in CASES.items() if case.bad_graph is not None]
)
def test_validate_graph_tensors_names_the_problem(name):
    with pytest.raises(ValueError, match=CASES[name].eager):
        kr.graphs.validate_graph_tensors(
            **_graphs(CASES[name]), num_edge_types=NUM_EDGE_TYPES
        )


@pytest.mark.parametrize(
    "name", [name for name, case in CASES.items() if case.runtime is not None]
)
def test_predict_names_the_problem(name):
    case = CASES[name]
    # A fresh model: its function is traced for these very shapes, so the
    # static checks (a `ValueError` naming the shapes) answer shape cases.
    pattern = case.runtime if case.bad_graph is not None else case.eager
    error = (
        tf.errors.InvalidArgumentError
        if case.bad_graph is not None
        else ValueError
    )
    pattern = KERAS_PREDICT_ERRORS.get(name, pattern)
    model = _model()
    run = model.predict
    if name == "edges_other_batch":
        # Keras' `predict` refuses inputs of different lengths before any
        # layer runs (with an `AttributeError` in Keras 3.x), so this case
        # runs the model in a traced function, as `predict` would.
        run = tf.function(model)
    with pytest.raises(error, match=pattern):
        run(_graphs(case), verbose=0) if run is model.predict else run(
            _graphs(case)
        )


@pytest.mark.parametrize(
    "name", [name for name, case in CASES.items() if case.fit]
)
def test_fit_names_the_problem_before_any_segment_op(name):
    # TensorFlow's own `segment_ids[...] is out of range` used to win.
    model = _model()
    model.compile("sgd", "mse")
    with pytest.raises(
        tf.errors.InvalidArgumentError, match="(?s)" + CASES[name].runtime
    ):
        model.fit(
            _graphs(CASES[name]),
            np.zeros((3, 6, 4)),
            shuffle=False,
            verbose=0,
        )


@pytest.mark.parametrize(
    "name", [name for name, case in CASES.items() if case.runtime is not None]
)
def test_served_saved_model_names_the_problem(served, name):
    feeds = {
        key: tf.constant(value) for key, value in _graphs(CASES[name]).items()
    }
    with pytest.raises(
        tf.errors.InvalidArgumentError,
        match=f"GatedGraph .{{1,3}}gg.{{1,3}}: .*{CASES[name].runtime}",
    ):
        served(**feeds)


@pytest.mark.parametrize(
    "name", [name for name, case in CASES.items() if case.bad_graph is not None]
)
def test_xla_gives_nan_to_the_bad_graph_only(compiled, name):
    model, clean = compiled
    outputs = model.predict(_graphs(CASES[name]), verbose=0)
    bad = CASES[name].bad_graph
    assert np.isnan(outputs[bad]).all()
    others = [graph for graph in range(3) if graph != bad]
    np.testing.assert_allclose(outputs[others], clean[others], atol=1e-6)


def test_xla_edge_past_its_graph_leaves_the_other_graph_unchanged():
    # The reported leak: a 4-node and a 2-node graph, and an edge of graph
    # 0 to node 5, which in the disjoint union is node 1 of graph 1.
    graphs = kr.graphs.encode_graphs(
        [{"edges": [(0, 1), (1, 2), (2, 3)]}, {"edges": [(0, 1), (1, 0)]}],
        num_edges=3,
    )
    inputs = kr.graphs.graph_inputs(1)
    layer = kr.layers.GatedGraph(
        4, 1, propagation_steps=2, aggregation="sparse"
    )
    model = keras.Model(inputs, layer(inputs))
    model.compile(jit_compile=True)
    clean = model.predict(graphs, verbose=0)
    graphs["edges"][0, 2] = [2, 5]
    outputs = model.predict(graphs, verbose=0)
    assert np.isnan(outputs[0]).all()
    np.testing.assert_array_equal(outputs[1], clean[1])


def test_float_edges_into_an_int32_model_are_truncated_by_keras():
    # Documented in `kr.graphs.graph_inputs`: Keras casts inputs to the
    # model's int32 before any layer runs, so no layer can see the `.6`;
    # `kr.graphs.validate_graph_tensors` refuses float edges up front.
    graphs = _graphs()
    model = _model()
    truncated = dict(graphs, edges=graphs["edges"].astype("float32"))
    truncated["edges"][0, 0] = [2, 2.6]
    whole = dict(graphs, edges=graphs["edges"].copy())
    whole["edges"][0, 0] = [2, 2]
    np.testing.assert_array_equal(
        model.predict(truncated, verbose=0), model.predict(whole, verbose=0)
    )
    with pytest.raises(ValueError, match=r"edges.dtype=float32"):
        kr.graphs.validate_graph_tensors(**truncated)


def test_float_edges_into_a_float_model_are_refused_or_nan():
    inputs = dict(
        kr.graphs.graph_inputs(3),
        edges=keras.Input((None, 2), name="edges"),
    )
    graphs = _graphs(CASES["fractional_edge"])
    model = keras.Model(inputs, _layer()(inputs))
    with pytest.raises(
        tf.errors.InvalidArgumentError, match=NODES_RANGE + ".*\\[0\\] \\[0\\]"
    ):
        model.predict(graphs, verbose=0)
    model.compile(jit_compile=True)
    outputs = model.predict(graphs, verbose=0)
    assert np.isnan(outputs[0]).all() and not np.isnan(outputs[1:]).any()


def test_empty_batch_is_empty_everywhere(served):
    # Keras' own `predict` cannot run on zero samples; the layer, a traced
    # and an XLA-compiled call of the model and the SavedModel all give an
    # empty `(0, N, units)`.
    graphs = {name: array[:0] for name, array in _graphs().items()}
    model = _model()
    results = [
        _layer()(graphs),
        tf.function(model)(graphs),
        tf.function(model, jit_compile=True)(graphs),
        served(**{k: tf.constant(v) for k, v in graphs.items()})["gg"],
    ]
    for result in results:
        assert tuple(result.shape) == (0, 6, 4)


@pytest.mark.parametrize(
    "layer",
    [
        lambda: kr.layers.GatedGraph(4, 2),
        lambda: kr.layers.GGSNN(4, 2, 2),
        lambda: kr.layers.GraphReadout(4),
        lambda: kr.layers.NodeSelection(),
    ],
    ids=["gated_graph", "ggsnn", "readout", "node_selection"],
)
def test_single_tensor_for_a_list_is_named(layer):
    with pytest.raises(
        ValueError, match=r"takes the list.*single tensor.*\(3, 6, 3\)"
    ):
        layer()(_graphs()["node_inputs"])


def test_ggsnn_refuses_eagerly_and_gives_nan_under_xla():
    inputs = kr.graphs.graph_inputs(3)
    layer = kr.layers.GGSNN(4, NUM_EDGE_TYPES, 2, propagation_steps=1)
    model = keras.Model(inputs, layer(inputs))
    model.compile(jit_compile=True)
    clean = model.predict(_graphs(), verbose=0)
    for name in ("edge_to_400", "edge_type_too_large", "node_mask_2"):
        case = CASES[name]
        with pytest.raises(ValueError, match="GGSNN.*" + case.eager):
            layer(_graphs(case))
        outputs = model.predict(_graphs(case), verbose=0)
        others = [graph for graph in range(3) if graph != case.bad_graph]
        assert np.isnan(outputs[case.bad_graph]).all()
        np.testing.assert_allclose(outputs[others], clean[others], atol=1e-6)
