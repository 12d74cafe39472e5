"""Bad requests to a served sequence model (`lengths=True`): one table.

Each case sends one request to the SavedModel's signature, loaded with
plain TensorFlow, and must get an error naming the input and the value
(run-time assertions for `lengths`, the signature's specs for shapes and
dtypes); the good requests around them pin the numbers.
"""

import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_recurrent as kr

STEPS, FEATURES = 5, 3


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    keras.utils.set_random_seed(0)
    frames = keras.Input((None, FEATURES), name="frames")
    outputs = kr.layers.PeepholeLSTM(2, name="rnn")(
        keras.layers.Masking()(frames)
    )
    model = keras.Model(frames, outputs)
    path = str(tmp_path_factory.mktemp("served") / "model")
    kr.export.export_saved_model(model, path, lengths=True)
    serve = tf.saved_model.load(path).signatures["serve"]

    def call(frames, lengths):
        return next(iter(serve(frames=frames, lengths=lengths).values()))

    return model, call


def _request():
    x = np.random.default_rng(1).normal(size=(2, STEPS, FEATURES))
    return x.astype("float32"), np.array([STEPS, 2], "int32")


def _frames(make):
    def corrupt(x, lengths):
        return make(x), lengths

    return corrupt


def _lengths(values):
    def corrupt(x, lengths):
        return x, np.array(values, "int32")

    return corrupt


INVALID = tf.errors.InvalidArgumentError

# name: (corruption of (frames, lengths), error class, regex).
CASES = {
    "negative length": (
        _lengths([-3, 2]),
        INVALID,
        r"`lengths` must be >= 0.*\[-3 2\]",
    ),
    "length past T": (
        _lengths([9, 2]),
        INVALID,
        r"`lengths` must be at most the padded length.*\[9 2\].*5",
    ),
    "one length too many": (
        _lengths([5, 2, 1]),
        INVALID,
        r"`lengths` must hold one length per sequence.*3.*2",
    ),
    "T = 0": (
        lambda x, lengths: (x[:, :0], np.zeros(2, "int32")),
        INVALID,
        r"at least one timestep",
    ),
    "frames rank 2": (
        _frames(lambda x: x[..., 0]),
        TypeError,
        r"name='frames'",
    ),
    "frames width 4": (
        _frames(lambda x: np.ones((2, STEPS, 4), "float32")),
        TypeError,
        r"shape=\(2, 5, 4\).*name='frames'",
    ),
    "int32 tensor frames": (
        _frames(lambda x: tf.constant(x.astype("int32"))),
        TypeError,
        r"tf.int32.*name='frames'",
    ),
}


def test_good_requests_give_the_masked_model_numbers(served):
    model, call = served
    x, lengths = _request()
    mask = np.arange(STEPS)[None, :] < lengths[:, None]
    expected = np.asarray(model(np.where(mask[..., None], x, 0.0)))
    np.testing.assert_allclose(call(x, lengths), expected, atol=1e-5)
    # A length of 0 is the zero state; a batch of 0 gives 0 outputs.
    zero = call(x, np.array([0, 2], "int32")).numpy()
    np.testing.assert_allclose(zero[0], 0.0)
    np.testing.assert_allclose(zero[1], expected[1], atol=1e-5)
    assert call(x[:0], lengths[:0]).shape == (0, 2)
    # NumPy values are converted to the signature's dtype, as TensorFlow
    # converts any NumPy argument: integer frames act as their float values.
    rounded = np.round(x)
    np.testing.assert_allclose(
        call(rounded.astype("int32"), lengths), call(rounded, lengths)
    )


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_requests_name_the_input(case, served):
    _, call = served
    corrupt, error, message = CASES[case]
    with pytest.raises(error, match=message):
        call(*corrupt(*_request()))


def test_a_model_served_without_lengths_names_an_empty_sequence(tmp_path):
    frames = keras.Input((None, FEATURES), name="frames")
    model = keras.Model(frames, kr.layers.PeepholeLSTM(2)(frames))
    path = str(tmp_path / "model")
    kr.export.export_saved_model(model, path)
    serve = tf.saved_model.load(path).signatures["serve"]
    x, _ = _request()
    served = next(iter(serve(frames=x).values()))
    np.testing.assert_allclose(served, model(x), atol=1e-5)
    with pytest.raises(
        INVALID, match=r"`frames` must have at least one timestep"
    ):
        serve(frames=x[:, :0])


def test_the_wide_signature_takes_64_bit_frames_and_lengths(served, tmp_path):
    model, call = served
    path = str(tmp_path / "model")
    kr.export.export_saved_model(model, path, lengths=True)
    loaded = tf.saved_model.load(path)
    wide = loaded.signatures["serve_wide"]
    _, specs = wide.structured_input_signature
    assert {name: spec.dtype for name, spec in specs.items()} == {
        "frames": tf.float64,
        "lengths": tf.int64,
    }
    x, lengths = _request()
    expected = call(x, lengths).numpy()
    served_wide = wide(
        frames=tf.constant(x.astype("float64")),
        lengths=tf.constant(lengths.astype("int64")),
    )
    np.testing.assert_array_equal(next(iter(served_wide.values())), expected)
    # The first signature refuses 64-bit tensors, naming the input.
    with pytest.raises(TypeError, match=r"tf.float64.*name='frames'"):
        loaded.signatures["serve"](
            frames=tf.constant(x.astype("float64")), lengths=lengths
        )
    # 2**32 + 5 is no length 5; 1e300 is no float32.
    with pytest.raises(
        INVALID, match=r"`lengths` must hold values in the int32"
    ):
        wide(frames=x, lengths=np.array([2**32 + 5, 2], "int64"))
    with pytest.raises(
        INVALID, match=r"`frames` must hold values in the finite"
    ):
        wide(frames=x.astype("float64") * 1e300, lengths=lengths)


def _graph_model():
    keras.utils.set_random_seed(0)
    inputs = kr.graphs.graph_inputs(1, num_nodes=3)
    states = kr.layers.GatedGraph(4, 2, propagation_steps=2)(inputs)
    output = kr.layers.GraphReadout(2, name="readout")(
        [states, inputs["node_inputs"], inputs["node_mask"]]
    )
    return keras.Model(inputs, output)


def test_the_wide_signature_never_wraps_an_index(tmp_path):
    model = _graph_model()
    path = str(tmp_path / "model")
    kr.export.export_saved_model(model, path)
    loaded = tf.saved_model.load(path)
    graphs = kr.graphs.encode_graphs(
        [{"edges": [(0, 1, 1), (1, 2, 0)]}], num_nodes=3
    )
    expected = loaded.signatures["serve"](**graphs)["readout"].numpy()
    np.testing.assert_allclose(
        expected, keras.ops.convert_to_numpy(model(graphs)), atol=1e-5
    )
    wide = {
        name: array.astype("float64" if name == "node_inputs" else "int64")
        for name, array in graphs.items()
    }
    served = loaded.signatures["serve_wide"](**wide)["readout"].numpy()
    np.testing.assert_array_equal(served, expected)
    wrapped = dict(wide)
    wrapped["edges"] = wide["edges"].copy()
    wrapped["edges"][0, 0, 1] += 2**32  # 2**32 + 1: node 1 as int32.
    with pytest.raises(
        INVALID,
        match=r"`edges` must hold values in the int32 range.*4294967297",
    ):
        loaded.signatures["serve_wide"](**wrapped)
    with pytest.raises(TypeError, match=r"tf.int64.*name='edges'"):
        loaded.signatures["serve"](
            **{**graphs, "edges": tf.constant(wrapped["edges"])}
        )
    # Only tensors: TensorFlow's loader skips its dtype check, and its
    # runtime names the input by its position in sorted name order (what
    # the guide says; the exporter cannot change TensorFlow's loader).
    serve = loaded.signatures["serve"]
    order = sorted(serve.structured_input_signature[1])
    with pytest.raises(
        INVALID, match=rf"input #{order.index('edge_types')}\(zero-based\)"
    ):
        serve(**{name: tf.constant(array) for name, array in wide.items()})
    # What the guide warns of: TensorFlow converts a NumPy argument to the
    # first signature's int32 before any served op runs, so there
    # 2**32 + 1 is node 1, unseen. The wide signature is the one for int64.
    converted = loaded.signatures["serve"](
        **{**graphs, "edges": wrapped["edges"]}
    )
    np.testing.assert_array_equal(converted["readout"].numpy(), expected)


def _tree_model_and_request():
    keras.utils.set_random_seed(0)
    inputs = kr.trees.tree_inputs(2, node_features=3, levels=False)
    root = kr.layers.NaryTreeLSTM(2, arity=2, name="root")(
        [inputs["node_inputs"], inputs["children"], inputs["node_mask"]]
    )
    request = dict(
        node_inputs=np.random.default_rng(2).normal(size=(2, 3, 3)),
        children=np.array([[[-1, -1], [-1, -1], [0, 1]]] * 2, "int32"),
        node_mask=np.ones((2, 3), "int32"),
    )
    request["node_inputs"] = request["node_inputs"].astype("float32")
    return keras.Model(inputs, root), request, "children"


def _graph_model_and_request():
    graphs = kr.graphs.encode_graphs(
        [{"edges": [(0, 1, 1), (1, 2, 0)]}], num_nodes=3
    )
    return _graph_model(), graphs, "edges"


@pytest.mark.parametrize(
    "make", [_tree_model_and_request, _graph_model_and_request]
)
def test_serve_takes_64_bit_tensors_and_names_the_input(make, tmp_path):
    model, request, index_name = make()
    path = str(tmp_path / "model")
    kr.export.export_saved_model(model, path)
    loaded = tf.saved_model.load(path)
    # TF Serving's signatures keep the model's dtypes.
    for name in ("serve", "serving_default"):
        _, specs = loaded.signatures[name].structured_input_signature
        assert {spec.dtype for spec in specs.values()} <= {
            tf.int32,
            tf.float32,
        }, specs
    (expected,) = loaded.signatures["serve"](**request).values()
    np.testing.assert_allclose(
        expected, keras.ops.convert_to_numpy(model(request)), atol=1e-5
    )
    wide = {
        name: tf.constant(
            array.astype("float64" if array.dtype.kind == "f" else "int64")
        )
        for name, array in request.items()
    }
    # Called from Python, `serve` takes int64/float64 tensors (upstream:
    # "input #1 (zero-based) was expected to be a int32 tensor").
    for served in (
        loaded.serve(**wide),
        loaded.serve(**{n: tf.constant(a) for n, a in request.items()}),
    ):
        (served,) = served.values()
        np.testing.assert_array_equal(served, expected)
    # The wide trace checks the range: 2**32 + 1 is never node 1.
    wrapped = wide[index_name].numpy()
    wrapped[0, -1, 1] = 2**32 + 1  # node 1 as int32
    with pytest.raises(
        INVALID,
        match=rf"`{index_name}` must hold values in the int32 range"
        r".*4294967297",
    ):
        loaded.serve(**{**wide, index_name: tf.constant(wrapped)})
    # A mix of dtypes matches neither trace: TensorFlow's error lists both,
    # with the inputs' names.
    mixed = {**wide, "node_inputs": tf.constant(request["node_inputs"])}
    with pytest.raises(
        ValueError,
        match=r"(?s)Could not find matching concrete function.*2 option.*"
        r"dtype=tf.int32, name='node_mask'.*"
        r"dtype=tf.float64, name='node_inputs'",
    ):
        loaded.serve(**mixed)
