import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_recurrent as kr
from keras_recurrent.layers._tree_schedule import bad_schedules


def _dataset(sizes):
    def trees():
        for size in sizes:
            tree = str(size)
            for depth in range(size - 1):
                tree = (
                    (str(depth % 10), tree, "1")
                    if depth % 2
                    else (
                        str(depth % 10),
                        tree,
                    )
                )
            yield kr.trees.encode_tree(tree, num_children=2), size

    return tf.data.Dataset.from_generator(
        trees,
        output_signature=(kr.trees.tree_spec(2), tf.TensorSpec((), tf.int32)),
    )


def test_padded_batch_pads_like_encode_trees():
    batches = list(kr.trees.padded_batch(_dataset([1, 4, 3]), 2))
    (first, labels), (second, _) = batches
    assert first["children"].shape == (2, 5, 2)
    np.testing.assert_array_equal(labels, [1, 4])
    np.testing.assert_array_equal(first["node_mask"][0], [1, 0, 0, 0, 0])
    np.testing.assert_array_equal(first["children"][0], [[-1, -1]] * 5)
    kr.trees.validate_tree_tensors(first["children"], first["node_mask"])
    assert second["node_mask"].shape == (1, 4)
    fixed = next(iter(kr.trees.padded_batch(_dataset([2]), 4, num_nodes=6)))
    assert fixed[0]["node_tokens"].shape == (1, 6)


def test_bucketing_by_size():
    sizes = [1, 9, 2, 10, 3, 11, 1, 12]
    batched = kr.trees.padded_batch(_dataset(sizes), 2, bucket_boundaries=[5])
    batches = [labels.numpy().tolist() for _, labels in batched]
    assert sorted(sum(batches, [])) == sorted(sizes)
    for labels in batches:
        assert len({size < 5 for size in labels}) == 1


def test_a_model_fits_the_batched_dataset():
    dataset = kr.trees.padded_batch(
        _dataset([1, 4, 3, 6]).map(
            lambda tree, size: (tree, tf.cast(size, "float32"))
        ),
        2,
    )
    inputs = kr.trees.tree_inputs(2)
    embedded = keras.layers.Embedding(10, 4)(inputs["node_tokens"])
    tree_tensors = {**inputs, "node_inputs": embedded}
    del tree_tensors["node_tokens"]
    root = kr.layers.NaryTreeLSTM(4)(tree_tensors)
    model = keras.Model(inputs, keras.layers.Dense(1)(root))
    model.compile("sgd", "mse")
    history = model.fit(dataset, epochs=1, shuffle=False, verbose=0)
    assert np.isfinite(history.history["loss"][0])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"batch_size": 0}, "batch_size=0"),
        ({"batch_size": 2, "bucket_boundaries": [5, 3]}, "increasing"),
        ({"batch_size": 2, "bucket_boundaries": []}, "non-empty"),
        (
            {"batch_size": 2, "bucket_boundaries": [5], "num_nodes": 9},
            "exclude each other",
        ),
        ({"batch_size": 2, "level_shapes": (0, 2)}, "level_shapes=\\(0, 2\\)"),
        (
            {
                "batch_size": 2,
                "bucket_boundaries": [5, 9],
                "level_shapes": [(4, 2)],
            },
            "one pair per boundary \\(2\\)",
        ),
    ],
)
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        kr.trees.padded_batch(_dataset([1]), **kwargs)
    with pytest.raises(ValueError, match="tf.data.Dataset"):
        kr.trees.padded_batch([1, 2], 2)
    with pytest.raises(ValueError, match="one tree dict"):
        kr.trees.padded_batch(tf.data.Dataset.range(3), 2)


def test_padded_batch_stops_at_a_bad_tree():
    good = kr.trees.encode_tree("(1 2 3)", num_children=2)
    bad = {key: value.copy() for key, value in good.items()}
    bad["children"][2] = [0, -1]  # Node 1 is an orphan.

    def trees(*items):
        return tf.data.Dataset.from_generator(
            lambda: ((tree, 1) for tree in items),
            output_signature=(
                kr.trees.tree_spec(2),
                tf.TensorSpec((), tf.int32),
            ),
        )

    assert len(list(kr.trees.padded_batch(trees(good, good), 2))) == 1
    with pytest.raises(
        tf.errors.InvalidArgumentError, match="neither the root nor"
    ):
        list(kr.trees.padded_batch(trees(good, bad), 2))
    # Without the check, the bad tree passes (for data checked before).
    batches = list(kr.trees.padded_batch(trees(bad), 2, validate=False))
    np.testing.assert_array_equal(batches[0][0]["children"][0, 2], [0, -1])


def _wide_trees(children, dtype):
    tree = {
        "node_tokens": np.array([2, 3, 1], dtype),
        "children": np.array(children, dtype),
        "node_mask": np.ones(3, dtype),
    }
    return tf.data.Dataset.from_tensors((tree, 1))


@pytest.mark.parametrize("validate", [True, False])
def test_padded_batch_narrows_wide_indices_to_int32(validate):
    batched = kr.trees.padded_batch(
        _wide_trees([[-1, -1], [-1, -1], [0, 1]], "int64"),
        2,
        validate=validate,
    )
    batch, _ = next(iter(batched))
    expected = kr.trees.encode_trees(["(1 2 3)"])
    assert sorted(batch) == sorted(expected)
    for name, array in expected.items():
        assert batch[name].dtype == tf.int32, name
        np.testing.assert_array_equal(batch[name].numpy(), array)


@pytest.mark.parametrize("validate", [True, False])
@pytest.mark.parametrize(
    "dtype, children, message",
    [
        (
            "int64",
            [[-1, -1], [-1, -1], [0, 2**32 + 1]],
            r"`children`.*int32.*\[2, 1\]=4294967297",
        ),
        (
            # -1 is no uint64: 2**64 - 1 is no empty slot either.
            "uint64",
            [[2**64 - 1] * 2, [2**64 - 1] * 2, [0, 1]],
            r"`children`.*\[0, 0\]=18446744073709551615",
        ),
    ],
    ids=["int64", "uint64"],
)
def test_padded_batch_never_wraps_an_index(dtype, children, message, validate):
    batched = kr.trees.padded_batch(
        _wide_trees(children, dtype), 2, validate=validate
    )
    with pytest.raises(tf.errors.InvalidArgumentError, match=message):
        next(iter(batched))


def test_tree_larger_than_num_nodes_is_named():
    # Upstream: DataLossError "Attempted to pad to a smaller size than the
    # input element", naming neither the tree nor `num_nodes`.
    sizes = [1, 2, 6, 1]
    (tree, _), *_ = _dataset([6]).take(1)
    nodes = int(tree["node_mask"].shape[0])
    batched = kr.trees.padded_batch(_dataset(sizes), 2, num_nodes=nodes - 1)
    with pytest.raises(
        tf.errors.InvalidArgumentError,
        match=rf"tree\] \[2\] \[of the dataset.*\[{nodes}\] \[nodes, more "
        rf"than num_nodes={nodes - 1}",
    ):
        list(batched)


def _tree_model():
    inputs = kr.trees.tree_inputs(2)
    tokens = keras.layers.Embedding(10, 4)(inputs["node_tokens"])
    root = kr.layers.ChildSumTreeLSTM(4)(
        [tokens, inputs["children"], inputs["node_mask"], inputs["tree_levels"]]
    )
    model = keras.Model(inputs, keras.layers.Dense(1)(root))
    model.compile("sgd", "mse")
    return model


def test_empty_dataset_raises():
    # Upstream `fit` returned at once, trained nothing and said nothing.
    unknown_size = _dataset([2, 3]).filter(lambda tree, label: False)
    with pytest.raises(tf.errors.InvalidArgumentError, match="gives no batch"):
        _tree_model().fit(
            kr.trees.padded_batch(unknown_size, 2),
            shuffle=False,
            verbose=0,
        )
    known_size = _dataset([2, 3]).apply(
        tf.data.experimental.assert_cardinality(2)
    )
    with pytest.raises(ValueError, match="`dataset`.*gives no batch"):
        kr.trees.padded_batch(known_size, 4, drop_remainder=True)
    # A dataset that gives batches is unchanged.
    assert len(list(kr.trees.padded_batch(_dataset([2, 3]), 1))) == 2


def test_bool_node_mask_pads_with_false():
    def trees():
        for size in (2, 4):
            tree = kr.trees.encode_tree(
                ("1", *[str(i) for i in range(size - 1)]), num_children=3
            )
            yield {**tree, "node_mask": tree["node_mask"].astype(bool)}

    spec = {
        **kr.trees.tree_spec(3),
        "node_mask": tf.TensorSpec((None,), tf.bool),
    }
    dataset = tf.data.Dataset.from_generator(trees, output_signature=spec)
    batch = next(iter(kr.trees.padded_batch(dataset, 2, levels=False)))
    assert batch["node_mask"].dtype == tf.bool
    np.testing.assert_array_equal(
        batch["node_mask"], [[1, 1, 0, 0], [1, 1, 1, 1]]
    )


def test_level_shapes_fix_the_schedule_shape_per_bucket():
    sizes = [1, 9, 2, 10, 3, 11, 4, 12]
    options = {"bucket_boundaries": [8, 64], "pad_to_bucket_boundary": True}
    free = kr.trees.padded_batch(_dataset(sizes), 2, **options)
    fixed = kr.trees.padded_batch(
        _dataset(sizes), 2, level_shapes=[(4, 2), (16, 1)], **options
    )
    shapes = set()
    for (trees, _), (same, _) in zip(free, fixed, strict=True):
        levels = same["tree_levels"].numpy()
        num_nodes = trees["children"].shape[1]
        shapes.add((num_nodes, levels.shape[1:]))
        # A valid schedule of the batch (the layers' rule).
        bad = bad_schedules(
            keras.ops.convert_to_tensor(levels),
            keras.ops.convert_to_tensor(same["children"].numpy()),
            keras.ops.convert_to_tensor(same["node_mask"].numpy() != 0),
        )
        assert not np.asarray(bad).any()
    assert shapes == {(7, (4, 2)), (63, (16, 1))}
    too_few = kr.trees.padded_batch(
        _dataset(sizes), 2, level_shapes=[(4, 2), (2, 1)], **options
    )
    with pytest.raises(tf.errors.InvalidArgumentError, match="level_shapes"):
        list(too_few)
