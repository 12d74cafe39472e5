"""Checks shared by the Child-Sum and N-ary Tree-LSTM tests."""

import json

import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_recurrent as kr
import keras_recurrent.testing
from tests.layers import tree_reference as reference

UNITS, FEATURES = 5, 3


def model_feeds(inputs):
    """What a model on `kr.trees.tree_inputs`' defaults takes: the tree
    tensors and their schedule `tree_levels`."""
    feeds = dict(zip(kr.trees.TREE_TENSOR_NAMES, inputs, strict=True))
    feeds["tree_levels"] = kr.trees.tree_levels(inputs[1], inputs[2])
    return feeds


def make_layer(cls, inputs, seed=0, **kwargs):
    layer = cls(UNITS, **kwargs)
    layer.build([array.shape for array in inputs])
    weights = reference.random_weights(layer, seed=seed)
    return layer, weights


def check_matches_reference(cls, kind, inputs, **kwargs):
    layer, weights = make_layer(
        cls, inputs, return_nodes=True, return_state=True, **kwargs
    )
    expected_h, expected_c = reference.expected_states(
        inputs, weights, kind, UNITS
    )
    traced = tf.function(lambda *tensors: layer(list(tensors)))
    for h, c in (layer(inputs), traced(*inputs)):
        np.testing.assert_allclose(h, expected_h, atol=1e-5)
        np.testing.assert_allclose(c, expected_c, atol=1e-5)
    # The root of each tree is its last real node.
    root_layer = cls.from_config(
        {**layer.get_config(), "return_nodes": False, "return_state": False}
    )
    root_layer.build([array.shape for array in inputs])
    root_layer.set_weights(layer.get_weights())
    roots = inputs[2].sum(axis=1) - 1
    np.testing.assert_allclose(
        root_layer(inputs),
        expected_h[np.arange(len(roots)), roots],
        atol=1e-5,
    )


def check_padding_and_batching(cls, inputs, **kwargs):
    layer, _ = make_layer(cls, inputs, return_nodes=True, **kwargs)
    expected = np.asarray(layer(inputs))
    node_inputs, children, node_mask = (np.array(a) for a in inputs)
    node_inputs[node_mask == 0] = np.nan
    np.testing.assert_allclose(
        layer([node_inputs, children, node_mask.astype(bool)]),
        expected,
        atol=1e-6,
    )
    wider = [
        np.pad(inputs[0], [(0, 0), (0, 3), (0, 0)]),
        np.pad(inputs[1], [(0, 0), (0, 3), (0, 0)], constant_values=-1),
        np.pad(inputs[2], [(0, 0), (0, 3)]),
    ]
    outputs = np.asarray(layer(wider))
    np.testing.assert_allclose(outputs[:, :-3], expected, atol=1e-6)
    np.testing.assert_array_equal(outputs[:, -3:], 0.0)
    for tree in range(len(inputs[2])):
        alone = [array[tree : tree + 1] for array in inputs]
        np.testing.assert_allclose(layer(alone)[0], expected[tree], atol=1e-6)
    as_dict = dict(zip(kr.trees.TREE_TENSOR_NAMES, inputs, strict=True))
    np.testing.assert_allclose(layer(as_dict), expected, atol=1e-6)


def check_dynamic_shapes(cls, make_inputs, **kwargs):
    """One trace with unknown B, N and K serves batches of any shape."""
    small = make_inputs(["x", ("a", "b")])
    large = make_inputs([("a", ("b", ("c", ("d", "e")))), "x", "y"])
    layer, _ = make_layer(cls, large, **kwargs)
    width = large[1].shape[2]
    traced = tf.function(
        lambda *tensors: layer(list(tensors)),
        input_signature=[
            tf.TensorSpec((None, None, FEATURES), tf.float32),
            tf.TensorSpec((None, None, width), tf.int32),
            tf.TensorSpec((None, None), tf.int32),
        ],
    )
    for inputs in (small, large):
        np.testing.assert_allclose(traced(*inputs), layer(inputs), atol=1e-6)
    assert len(traced._list_all_concrete_functions()) == 1


def check_config_and_saving(cls, inputs, tmp_path, **kwargs):
    layer = cls(
        6,
        return_nodes=True,
        dropout=0.25,
        recurrent_dropout=0.5,
        seed=3,
        use_bias=False,
        kernel_regularizer="l2",
        name="tree",
        **kwargs,
    )
    config = layer.get_config()
    json.dumps(config)
    clone = cls.from_config(config)
    assert clone.get_config() == config
    assert (clone.units, clone.dropout, clone.recurrent_dropout) == (
        6,
        0.25,
        0.5,
    )
    assert clone.seed == 3 and not clone.use_bias and clone.return_nodes

    model_inputs = kr.trees.tree_inputs(
        inputs[1].shape[2], node_features=FEATURES
    )
    outputs = cls(4, name="tree_lstm", **kwargs)(list(model_inputs.values()))
    model = keras.Model(model_inputs, outputs)
    path = tmp_path / "model.keras"
    model.save(path)
    loaded = keras.saving.load_model(path)
    feeds = model_feeds(inputs)
    np.testing.assert_allclose(loaded(feeds), model(feeds), atol=1e-6)


def check_dropout(cls, inputs, **kwargs):
    layer, _ = make_layer(
        cls, inputs, dropout=0.5, recurrent_dropout=0.5, seed=1, **kwargs
    )
    plain = cls.from_config(
        {**layer.get_config(), "dropout": 0.0, "recurrent_dropout": 0.0}
    )
    plain.build([array.shape for array in inputs])
    plain.set_weights(layer.get_weights())
    np.testing.assert_allclose(layer(inputs), plain(inputs), atol=1e-6)
    first = np.asarray(layer(inputs, training=True))
    second = np.asarray(layer(inputs, training=True))
    assert not np.allclose(first, np.asarray(plain(inputs)))
    assert not np.allclose(first, second)
    assert np.all(np.isfinite(first))


def check_gradients_and_training(cls, inputs, **kwargs):
    layer, _ = make_layer(cls, inputs, **kwargs)
    tensors = [tf.constant(array) for array in inputs]
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(layer(tensors) ** 2)
    gradients = tape.gradient(loss, layer.trainable_variables)
    for variable, gradient in zip(
        layer.trainable_variables, gradients, strict=True
    ):
        assert gradient is not None, variable.path
        assert np.all(np.isfinite(gradient)) and np.any(gradient != 0.0)

    model_inputs = kr.trees.tree_inputs(
        inputs[1].shape[2], node_features=FEATURES
    )
    states = cls(4, **kwargs)(list(model_inputs.values()))
    model = keras.Model(model_inputs, keras.layers.Dense(1)(states))
    model.compile(optimizer=keras.optimizers.Adam(0.05), loss="mse")
    feeds = model_feeds(inputs)
    targets = np.linspace(-1, 1, len(inputs[2]), dtype="float32")[:, None]
    losses = [
        model.train_on_batch(feeds, targets, return_dict=True)["loss"]
        for _ in range(6)
    ]
    assert np.isfinite(losses[0]) and losses[-1] < losses[0]


def check_mixed_precision(cls, inputs, **kwargs):
    layer, _ = make_layer(cls, inputs, **kwargs)
    mixed = cls.from_config({**layer.get_config(), "dtype": "mixed_float16"})
    mixed.build([array.shape for array in inputs])
    mixed.set_weights(layer.get_weights())
    outputs = mixed(inputs)
    assert keras.backend.standardize_dtype(outputs.dtype) == "float16"
    assert mixed.kernel.dtype == "float32"
    np.testing.assert_allclose(
        np.asarray(outputs, dtype="float32"), layer(inputs), atol=5e-3
    )


def check_bad_children(cls, inputs, **kwargs):
    """Eager `ValueError`s and in-graph `InvalidArgumentError`s."""
    layer, _ = make_layer(cls, inputs, name="tree", **kwargs)
    traced = tf.function(lambda *tensors: layer(list(tensors)))
    traced(*inputs)
    num_nodes = inputs[2].shape[1]
    cases = [
        (
            ("children", 0, 1, 0, num_nodes),
            "in \\[0, .*\\)",
            "children\\[0, 1\\]",
        ),
        (("children", 0, 2, 0, -3), "in \\[0, .*\\)", "children\\[0, 2\\]"),
        (("children", 0, 4, 0, 5), "only point to real", "children\\[0, 4\\]"),
        (
            ("children", 0, 1, 0, 1),
            "topological order",
            "children\\[0, 1\\]",
        ),
        (("children", 0, 0, 0, 3), "topological order", "children\\[0, 0\\]"),
        (
            ("children", 3, num_nodes - 1, 0, 0),
            "padding node",
            "children\\[3, ",
        ),
        (("node_mask", 0, 0, None, 0), "real nodes first", "node_mask\\[0\\]"),
    ]
    for (name, tree, node, slot, value), message, where in cases:
        corrupt = [np.array(array) for array in inputs]
        index = kr.trees.TREE_TENSOR_NAMES.index(name)
        if slot is None:
            corrupt[index][tree, node] = value
        else:
            corrupt[index][tree, node, slot] = value
        with pytest.raises(ValueError, match=f"{message}.*{where}"):
            layer(corrupt)
        with pytest.raises(ValueError, match=message):
            kr.trees.validate_tree_tensors(corrupt[1], corrupt[2])
        with pytest.raises(
            tf.errors.InvalidArgumentError,
            match=f"{cls.__name__} .*tree.*{message}.*"
            f"\\(tree, node\\).*\\[{tree}\\] \\[{node}\\]",
        ):
            traced(*corrupt)


def check_shared_child(cls, **kwargs):
    """A node that is the child of two nodes is not a tree: the level
    loop would order it below one parent only."""
    inputs = [
        np.array(array)
        for array in encode_small(
            [("r", ("p", "a", "b"), "c"), ("d", "e")], **kwargs
        )
    ]
    # Tree 0: nodes a, b, p, c, r; leaf c (node 3) also gets a (node 0).
    inputs[1][0, 3, 0] = 0
    layer, _ = make_layer(cls, inputs, name="tree", **kwargs)
    with pytest.raises(ValueError, match="at most one node.*node 0 of tree 0"):
        layer(inputs)
    with pytest.raises(ValueError, match="nodes \\[2, 3\\]"):
        kr.trees.validate_tree_tensors(inputs[1], inputs[2])
    traced = tf.function(lambda *tensors: layer(list(tensors)))
    with pytest.raises(
        tf.errors.InvalidArgumentError,
        match=f"{cls.__name__} .*tree.*at most one node.*"
        "\\(tree, node\\).*\\[0\\] \\[0\\]",
    ):
        traced(*inputs)
    # The same in the second tree, after the first one's padding rows: the
    # traced check names the right node (the layer's parents are per real
    # node, and mapped back to rows for the message).
    inputs = [
        np.array(array)
        for array in encode_small(
            [("d", "e"), ("r", ("p", "a", "b"), "c")], **kwargs
        )
    ]
    inputs[1][1, 3, 0] = 0
    with pytest.raises(
        tf.errors.InvalidArgumentError,
        match="at most one node.*\\(tree, node\\).*\\[1\\] \\[0\\]",
    ):
        traced(*inputs)


def encode_small(trees, arity=None):
    batch = kr.trees.encode_trees(
        trees, vocabulary=lambda label: 0, num_children=2
    )
    node_inputs = np.ones(batch["node_mask"].shape + (FEATURES,), "float32")
    return [node_inputs, batch["children"], batch["node_mask"]]


def mirrored_trees():
    return [
        ("a", ("b", "c", "d"), "e"),
        ("a", "b"),
        "x",
        ("r", ("p", "1", "2"), ("q", "3", "4")),
    ] * 4


def check_mirrored(cls, make_inputs, **kwargs):
    inputs = make_inputs(mirrored_trees())
    width = inputs[1].shape[2]
    targets = np.linspace(-1, 1, len(inputs[2]), dtype="float32")[:, None]

    def build_model():
        model_inputs = kr.trees.tree_inputs(width, node_features=FEATURES)
        states = cls(4, name="tree_lstm", **kwargs)(list(model_inputs.values()))
        return keras.Model(
            model_inputs, keras.layers.Dense(1, name="score")(states)
        )

    feeds = model_feeds(inputs)
    keras_recurrent.testing.assert_mirrored_equivalence(
        build_model, feeds, targets, steps=2, global_batch_size=8
    )


TORCH_SCRIPT = """
import keras
import numpy as np

import keras_recurrent as kr
from tests.layers import tree_lstm_cases as cases
from tests.layers import tree_reference as reference

trees = reference.mixed_trees()
for cls, kind, kwargs, encoding in (
    (kr.layers.ChildSumTreeLSTM, "child_sum", {}, (None, {})),
    (kr.layers.NaryTreeLSTM, "nary", {"arity": 2}, (2, {"binarize": "left"})),
):
    inputs = reference.encode(
        trees, encoding[0], cases.FEATURES, seed=0, **encoding[1]
    )
    layer, weights = cases.make_layer(
        cls, inputs, return_nodes=True, return_state=True, **kwargs
    )
    expected_h, expected_c = reference.expected_states(
        inputs, weights, kind, cases.UNITS
    )
    h, c = layer(inputs)
    np.testing.assert_allclose(
        keras.ops.convert_to_numpy(h), expected_h, atol=1e-5
    )
    np.testing.assert_allclose(
        keras.ops.convert_to_numpy(c), expected_c, atol=1e-5
    )
    # `fit` first infers output shapes on PyTorch's "meta" device (before
    # the fix, on tensors of ones: children that are not a tree, an error).
    model_inputs = kr.trees.tree_inputs(
        inputs[1].shape[2], node_features=cases.FEATURES
    )
    states = cls(4, **kwargs)(list(model_inputs.values()))
    model = keras.Model(model_inputs, keras.layers.Dense(1)(states))
    model.compile(optimizer="adam", loss="mse")
    feeds = cases.model_feeds(inputs)
    target = np.ones((len(inputs[2]), 1), "float32")
    direct = np.mean(
        (keras.ops.convert_to_numpy(model(feeds)) - target) ** 2
    )
    np.testing.assert_allclose(
        model.evaluate(feeds, target, verbose=0), direct, rtol=1e-5
    )
    model.fit(feeds, target, epochs=1, verbose=0)
print("ok", keras.backend.backend())
"""
