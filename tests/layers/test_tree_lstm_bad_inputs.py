"""Every bad input of the Tree-LSTMs, eagerly, in `predict`, under XLA and
through a SavedModel: a named error, or NaN for the one bad tree where no
assertion can run (XLA), never a silent answer."""

import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_recurrent as kr
from tests.layers import tree_lstm_cases as cases
from tests.layers import tree_reference as reference

LAYER = kr.layers.ChildSumTreeLSTM


def base_inputs():
    """Four trees padded to N = 7; tree 0 is the chain
    `a(b(c(d e)))`: nodes d (0), e (1), c (2: children 0, 1), b (3: child
    2), a (4: child 3), then padding (5, 6)."""
    return [
        np.array(array)
        for array in reference.encode(
            reference.mixed_trees(), None, cases.FEATURES
        )
    ]


def _set(name, index, value):
    def corrupt(inputs):
        inputs[kr.trees.TREE_TENSOR_NAMES.index(name)][index] = value
        return inputs

    return corrupt


def _fractional_child(inputs):
    children = inputs[1].astype("float32")
    children[0, 3, 0] = 1.7
    return [inputs[0], children, inputs[2]]


def _half_mask(inputs):
    mask = inputs[2].astype("float32")
    mask[0, 4] = 0.5
    return [inputs[0], inputs[1], mask]


# The eager message gives N, the traced one the first bad (tree, node).
IN_RANGE = "in \\[0, (7|num_nodes)\\)"

# A bad value in tree 0 that only the values show: a named `ValueError`
# eagerly, a named `InvalidArgumentError` in a traced TensorFlow graph
# (`predict`, a SavedModel), NaN for tree 0 alone under XLA.
VALUE_CASES = {
    "child >= N": (_set("children", (0, 1, 0), 7), IN_RANGE),
    "negative child": (_set("children", (0, 2, 0), -3), IN_RANGE),
    "cycle": (_set("children", (0, 0, 0), 3), "topological order"),
    "shared child": (_set("children", (0, 3, 1), 0), "at most one node"),
    # b (3) lists c (2) in both slots: its state would be summed in twice.
    "repeated child": (
        _set("children", (0, 3, 1), 2),
        "lists each child once",
    ),
    "child of padding": (_set("children", (0, 5, 0), 0), "padding node"),
    "child is padding": (
        _set("children", (0, 4, 1), 5),
        "only point to real|topological",
    ),
    "padding first": (_set("node_mask", (0, 0), 0), "real nodes first"),
    "orphan": (_set("children", (0, 3, 0), -1), "connect every real node"),
}

# Problems of dtype, rank or shape: a `ValueError` when traced, in every
# mode.
STATIC_CASES = {
    "fractional float child": (_fractional_child, "children.dtype=float32"),
    "float node_mask 0.5": (_half_mask, "node_mask.dtype=float32"),
    "N = 0": (
        lambda x: [a[:, :0] for a in x],
        r"`children` must have at least one node",
    ),
    "children rank 2": (
        lambda x: [x[0], x[1][..., 0], x[2]],
        "`children` must have rank 3",
    ),
    "node_mask rank 3": (
        lambda x: [x[0], x[1], x[2][..., None]],
        "`node_mask` must have rank 2",
    ),
    "node_inputs rank 2": (
        lambda x: [x[0][..., 0], x[1], x[2]],
        "`node_inputs` must have rank 3",
    ),
    "N differs": (
        lambda x: [x[0][:, :6], x[1], x[2]],
        "disagree on the number of nodes",
    ),
    "B differs": (
        lambda x: [x[0], x[1][:3], x[2]],
        # `predict` stops first, with Keras' own message.
        "disagree on the batch size|cardinality is ambiguous",
    ),
    "plain tensor": (lambda x: x[0], "takes the list"),
    "int node_inputs": (
        lambda x: [x[2][..., None], x[1], x[2]],
        "floating-point",
    ),
}


class Wrapper(keras.Model):
    """A model that passes its inputs as they are (no `Input` dtypes)."""

    def __init__(self, layer):
        super().__init__()
        self.tree = layer

    def call(self, inputs):
        return self.tree(inputs)


@pytest.fixture(scope="module")
def layer_and_expected():
    inputs = base_inputs()
    layer, _ = cases.make_layer(LAYER, inputs, name="tree")
    return layer, np.asarray(layer(inputs))


@pytest.mark.parametrize("mode", ["eager", "predict", "xla"])
def test_a_plain_tensor_to_an_unbuilt_layer(mode):
    # Built on its first call, the layer sees one shape `(B, N, D)`: three
    # sizes, not three shapes.
    with pytest.raises(ValueError, match="takes the list"):
        _run(mode, LAYER(4), base_inputs()[0])


def _run(mode, layer, inputs):
    if mode == "eager":
        return np.asarray(layer(inputs))
    if mode == "predict":
        return Wrapper(layer).predict(inputs, verbose=0, batch_size=64)
    xla = tf.function(lambda tensors: layer(tensors), jit_compile=True)
    return np.asarray(xla(inputs))


@pytest.mark.parametrize("mode", ["eager", "predict", "xla"])
@pytest.mark.parametrize("case", sorted(VALUE_CASES))
def test_bad_values(case, mode, layer_and_expected):
    layer, expected = layer_and_expected
    corrupt, message = VALUE_CASES[case]
    inputs = corrupt(base_inputs())
    if mode == "xla":
        outputs = _run(mode, layer, inputs)
        assert np.all(np.isnan(outputs[0]))
        np.testing.assert_allclose(outputs[1:], expected[1:], atol=1e-6)
        return
    error = ValueError if mode == "eager" else tf.errors.InvalidArgumentError
    with pytest.raises(error, match=f"ChildSumTreeLSTM.*({message})"):
        _run(mode, layer, inputs)


@pytest.mark.parametrize("mode", ["eager", "predict", "xla"])
@pytest.mark.parametrize("case", sorted(STATIC_CASES))
def test_bad_dtypes_and_shapes(case, mode, layer_and_expected):
    layer, _ = layer_and_expected
    corrupt, message = STATIC_CASES[case]
    with pytest.raises(ValueError, match=message):
        _run(mode, layer, corrupt(base_inputs()))


@pytest.mark.parametrize("mode", ["eager", "traced", "xla"])
def test_an_empty_batch_gives_empty_outputs(mode, layer_and_expected):
    # B = 0 is no error: outputs of batch size 0, in every mode alike.
    layer, _ = layer_and_expected
    inputs = [array[:0] for array in base_inputs()]
    if mode == "traced":
        outputs = tf.function(lambda tensors: layer(tensors))(inputs)
    else:
        outputs = _run(mode, layer, inputs)
    assert tuple(outputs.shape) == (0, cases.UNITS)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    model_inputs = kr.trees.tree_inputs(
        4, node_features=cases.FEATURES, levels=False
    )
    outputs = LAYER(3, name="tree")(list(model_inputs.values()))
    model = keras.Model(model_inputs, outputs)
    path = str(tmp_path_factory.mktemp("served") / "model")
    kr.export.export_saved_model(model, path)
    serve = tf.saved_model.load(path).signatures["serve"]

    def call(inputs):
        feeds = dict(zip(kr.trees.TREE_TENSOR_NAMES, inputs, strict=True))
        return next(iter(serve(**feeds).values())).numpy()

    return call


@pytest.mark.parametrize(
    "case", ["child >= N", "cycle", "shared child", "repeated child", "orphan"]
)
def test_bad_values_in_a_saved_model(case, served):
    corrupt, message = VALUE_CASES[case]
    served(base_inputs())
    with pytest.raises(tf.errors.InvalidArgumentError, match=message):
        served(corrupt(base_inputs()))
    assert served([a[:0] for a in base_inputs()]).shape == (0, 3)


@pytest.mark.parametrize(
    "levels,message",
    [
        (np.zeros((4, 2), "int32"), r"`tree_levels` must have rank 3"),
        (
            np.zeros((3, 2, 2), "int32"),
            r"disagree on the batch size.*tree_levels.shape=\(3, 2, 2\)",
        ),
    ],
    ids=["rank 2", "batch differs"],
)
def test_a_bad_schedule_shape_is_named(levels, message):
    with pytest.raises(ValueError, match=message):
        LAYER(3)([*base_inputs(), levels])
