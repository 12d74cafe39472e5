"""Every bad single tree, caught on the host before a batch reaches a model.

Two tables: `(labels, children)` pairs and parent lists given to the NumPy
encoders, and encoded trees streamed through `kr.trees.padded_batch`, where
a bad tree in the middle of a `tf.data` pipeline stops the iteration with
a message that names it (the good trees before it pass).
"""

import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_recurrent as kr

# name: (call, regex of the `ValueError`).
ENCODER_CASES = {
    "orphan": (
        lambda: kr.trees.encode_tree(([1, 2, 3], [[], [], [1]])),
        r"connect every real node to the root.*node 0",
    ),
    "fractional child": (
        lambda: kr.trees.encode_tree(([1, 2, 3], [[], [], [0, 1.7]])),
        r"`children\[2\]` must hold integer.*\[0.0, 1.7\]",
    ),
    "NaN child": (
        lambda: kr.trees.encode_tree(([1, 2, 3], [[], [], [0, np.nan]])),
        r"`children\[2\]` must hold integer",
    ),
    "child past the tree": (
        lambda: kr.trees.encode_tree(([1, 2, 3], [[], [], [0, 5]])),
        r"in \[0, 3\).*children\[0, 2\]=\[0, 5\]",
    ),
    "shared child": (
        lambda: kr.trees.encode_tree(([1, 2, 3, 4], [[], [0], [0], [1, 2]])),
        r"at most one node.*node 0 of tree 0 is a child of nodes \[1, 2\]",
    ),
    "cycle": (
        lambda: kr.trees.encode_tree(([1, 2, 3], [[2], [], [0, 1]])),
        r"topological order.*children\[0, 0\]=\[2, -1\]",
    ),
    "N = 0": (
        lambda: kr.trees.encode_tree(([], [])),
        r"at least one node.*tree=\(\[\], \[\]\)",
    ),
    "empty string": (
        lambda: kr.trees.encode_tree("()"),
        r"Empty '\(\)'.*text='\(\)'",
    ),
    "fractional parent": (
        lambda: kr.trees.from_parents([2, 2.5, -1]),
        r"`parents` must hold integer.*\[2.0, 2.5, -1.0\]",
    ),
    "no parents": (
        lambda: kr.trees.from_parents([]),
        r"exactly one root.*parents=\[\]",
    ),
}


@pytest.mark.parametrize("case", sorted(ENCODER_CASES))
def test_bad_trees_are_named_by_the_encoders(case):
    call, message = ENCODER_CASES[case]
    with pytest.raises(ValueError, match=message):
        call()


def test_whole_float_children_are_the_integers():
    # Floats without a fractional part are accepted as the indices.
    floats = kr.trees.encode_tree(([1, 2, 3], [[], [], [0.0, 1.0]]))
    ints = kr.trees.encode_tree(([1, 2, 3], [[], [], [0, 1]]))
    for name, value in ints.items():
        np.testing.assert_array_equal(floats[name], value)
    assert kr.trees.from_parents([2.0, 2.0, -1.0]) == kr.trees.from_parents(
        [2, 2, -1]
    )


def _tree():
    """Leaves 0, 1 under node 2 (the root), 2 features per node."""
    return {
        "node_inputs": np.arange(6, dtype="float32").reshape(3, 2),
        "children": np.array([[-1, -1], [-1, -1], [0, 1]], "int32"),
        "node_mask": np.ones(3, "int32"),
    }


def _set(name, index, value):
    def corrupt(tree):
        tree[name][index] = value
        return tree

    return corrupt


# name: (corruption, regex of the `InvalidArgumentError`).
STREAM_CASES = {
    "orphan": (_set("children", (2, 1), -1), r"connect every real node"),
    "child past the tree": (_set("children", (2, 1), 3), r"in \[0, 3\)"),
    "cycle": (_set("children", (0, 0), 2), r"topological order"),
    "NaN node input": (
        _set("node_inputs", (1, 0), np.nan),
        r"`node_inputs` of real nodes must be finite.*\[1, 0\]=nan",
    ),
    "infinite node input": (
        _set("node_inputs", (2, 1), np.inf),
        r"must be finite.*\[2, 1\]=inf",
    ),
}


def _stream(bad):
    trees = [_tree(), _tree(), bad, _tree()]

    def generate():
        yield from trees

    spec = {
        name: tf.TensorSpec((None,) + value.shape[1:], value.dtype)
        for name, value in bad.items()
    }
    dataset = tf.data.Dataset.from_generator(generate, output_signature=spec)
    return kr.trees.padded_batch(dataset, 2)


def test_good_trees_stream_unchanged():
    batches = list(_stream(_tree()))
    assert len(batches) == 2
    for name, value in _tree().items():
        np.testing.assert_array_equal(batches[1][name][1], value)


@pytest.mark.parametrize("case", sorted(STREAM_CASES))
def test_bad_tree_stops_a_tf_data_pipeline(case):
    corrupt, message = STREAM_CASES[case]
    batches = iter(_stream(corrupt(_tree())))
    assert next(batches)["children"].shape[0] == 2
    with pytest.raises(tf.errors.InvalidArgumentError, match=message):
        next(batches)


def test_an_integer_node_mask_counts_nonzero_as_real():
    # Documented for trees (`validate_tree_tensors`: "nonzero for real
    # nodes"): a mask entry of 2 is a real node, in validation and in the
    # layer alike. Float masks are refused by dtype (see the layer tests).
    tree = _tree()
    inputs = [tree["node_inputs"][None], tree["children"][None]]
    ones = tree["node_mask"][None]
    twos = _set("node_mask", 0, 2)(_tree())["node_mask"][None]
    kr.trees.validate_tree_tensors(inputs[1], twos)
    layer = kr.layers.ChildSumTreeLSTM(3)
    np.testing.assert_array_equal(
        np.asarray(layer(inputs + [twos])), np.asarray(layer(inputs + [ones]))
    )


def test_float_children_into_an_int32_model_are_truncated_by_keras():
    # Documented in `kr.trees.tree_inputs`: Keras casts the data to the
    # model's int32 `children` before any layer runs, so a child 1.7 is
    # child 1; the eager layer and the host-side checks refuse floats.
    tree = _tree()
    inputs = kr.trees.tree_inputs(2, node_features=2, levels=False)
    layer = kr.layers.ChildSumTreeLSTM(3)
    model = keras.Model(inputs, layer(list(inputs.values())))
    batch = {name: value[None] for name, value in tree.items()}
    fractional = dict(batch, children=batch["children"].astype("float32"))
    fractional["children"][0, 2, 1] = 1.7
    np.testing.assert_array_equal(
        model.predict(fractional, verbose=0), model.predict(batch, verbose=0)
    )
    with pytest.raises(ValueError, match=r"children.dtype=float32"):
        layer(list(fractional.values()))
    with pytest.raises(ValueError, match=r"children.*float32"):
        kr.trees.validate_tree_tensors(
            fractional["children"], fractional["node_mask"]
        )
