import importlib.util
import os
import pathlib
import subprocess
import sys

import keras
import numpy as np
import pytest

import keras_recurrent as kr
from keras_recurrent.layers import _tree_levels
from tests.layers import tree_lstm_cases as cases
from tests.layers import tree_reference as reference

LAYER = kr.layers.ChildSumTreeLSTM


def _inputs(trees=None, seed=0):
    trees = reference.mixed_trees() if trees is None else trees
    return reference.encode(trees, None, cases.FEATURES, seed=seed)


def test_matches_numpy_reference():
    # A chain, a star of 4 leaves, a full binary tree and a single node.
    inputs = _inputs()
    assert inputs[1].shape == (4, 7, 4)
    cases.check_matches_reference(LAYER, "child_sum", inputs)


def test_matches_numpy_reference_with_empty_slots_anywhere():
    # Child-Sum ignores the slot order: children may sit in any slot.
    inputs = _inputs()
    inputs[1] = inputs[1][..., ::-1].copy()
    cases.check_matches_reference(LAYER, "child_sum", inputs)


def test_chain_equals_a_sequence_lstm():
    # On a chain (node t has the one child t - 1) h̃ = h_{t-1} and the one
    # forget gate reads h_{t-1}: exactly Keras' LSTM, with the gate blocks
    # reordered from [i, f, o, u] to Keras' [i, f, c, o].
    rng = np.random.default_rng(0)
    x = rng.normal(size=(3, 6, cases.FEATURES)).astype("float32")
    children = np.full((3, 6, 1), -1, dtype="int32")
    children[:, 1:, 0] = np.arange(5)
    mask = np.ones((3, 6), dtype="int32")
    layer, weights = cases.make_layer(
        LAYER, [x, children, mask], return_nodes=True
    )
    lstm = keras.layers.LSTM(cases.UNITS, return_sequences=True)
    lstm.build(x.shape)
    lstm.set_weights(
        [
            _keras_order(weights[name])
            for name in ("kernel", "recurrent_kernel", "bias")
        ]
    )
    np.testing.assert_allclose(layer([x, children, mask]), lstm(x), atol=1e-5)


def _keras_order(weight):
    i, f, o, u = np.split(weight, 4, axis=-1)
    return np.concatenate([i, f, u, o], axis=-1)


def test_node_levels():
    # Leaves at level 0; inner nodes by depth, deepest first, so that a
    # node's inner children are one level before it.
    batch = kr.trees.encode_trees(
        [("a", ("b", ("c", "d"))), ("s", "1", "2", "3"), "x"],
        vocabulary=lambda label: 0,
    )
    # The 9 real nodes, numbered in row order (rows 0-7, then row 8 of the
    # third tree's 4); 9 in empty slots.
    real_rows = np.flatnonzero(batch["node_mask"].reshape(-1))
    node_of_row = np.full(13, 9)
    node_of_row[real_rows] = np.arange(9)
    children = node_of_row[
        np.where(
            batch["children"] >= 0,
            batch["children"] + 4 * np.arange(3)[:, None, None],
            12,
        ).reshape(12, -1)[real_rows]
    ]
    parent = np.full(9, -1, "int32")
    for node, node_children in enumerate(children):
        parent[node_children[node_children < 9]] = node
    levels = _tree_levels.node_levels(children, parent)
    np.testing.assert_array_equal(levels, [0, 1, 2, 3, 0, 0, 0, 3, 0])


def test_padding_does_not_leak_and_pad_size_does_not_matter():
    cases.check_padding_and_batching(LAYER, _inputs())


def test_dynamic_shapes_in_one_trace():
    cases.check_dynamic_shapes(LAYER, lambda trees: _inputs(trees))


def test_weights_config_and_saving(tmp_path):
    layer, _ = cases.make_layer(LAYER, _inputs())
    assert [(w.name, tuple(w.shape)) for w in layer.weights] == [
        ("kernel", (3, 20)),
        ("recurrent_kernel", (5, 20)),
        ("bias", (20,)),
    ]
    fresh = LAYER(4)
    fresh.build([(None, None, 3), (None, None, 2), (None, None)])
    np.testing.assert_array_equal(
        np.asarray(fresh.bias), np.repeat([0.0, 1.0, 0.0, 0.0], 4)
    )
    cases.check_config_and_saving(LAYER, _inputs(), tmp_path)


def test_return_shapes():
    inputs = _inputs()
    for kwargs, shapes in (
        ({}, [(4, 5)]),
        ({"return_nodes": True}, [(4, 7, 5)]),
        ({"return_state": True}, [(4, 5), (4, 5)]),
        ({"return_nodes": True, "return_state": True}, [(4, 7, 5)] * 2),
    ):
        outputs = LAYER(5, **kwargs)(inputs)
        outputs = outputs if isinstance(outputs, list) else [outputs]
        assert [tuple(output.shape) for output in outputs] == shapes
        symbolic = LAYER(5, **kwargs)(
            [
                keras.Input((None, 3)),
                keras.Input((None, 4), dtype="int32"),
                keras.Input((None,), dtype="int32"),
            ]
        )
        symbolic = symbolic if isinstance(symbolic, list) else [symbolic]
        assert [tuple(s.shape)[1:] for s in symbolic] == [
            (None,) * (len(shape) - 2) + shape[-1:] for shape in shapes
        ]


def test_dropout():
    cases.check_dropout(LAYER, _inputs())


def test_gradients_and_training():
    cases.check_gradients_and_training(LAYER, _inputs())


def test_mixed_precision():
    cases.check_mixed_precision(LAYER, _inputs())


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"units": 0}, "units=0"),
        ({"dropout": 1.0}, "dropout=1.0"),
        ({"recurrent_dropout": -0.1}, "recurrent_dropout=-0.1"),
        ({"return_nodes": 1}, "return_nodes=1"),
        ({"seed": 1.5}, "seed=1.5"),
    ],
)
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        LAYER(**{"units": 4, **kwargs})


def test_bad_shapes_and_structure():
    with pytest.raises(ValueError, match="`children` must have rank 3"):
        LAYER(4).build([(2, 3, 1), (2, 3), (2, 3)])
    with pytest.raises(ValueError, match="number of nodes"):
        LAYER(4).build([(2, 3, 1), (2, 4, 2), (2, 3)])
    with pytest.raises(ValueError, match="must be defined"):
        LAYER(4).build([(2, 3, None), (2, 3, 2), (2, 3)])
    inputs = _inputs()
    with pytest.raises(ValueError, match="takes the list"):
        LAYER(4)(inputs[:2])
    with pytest.raises(ValueError, match="floating-point"):
        LAYER(4)([inputs[2][..., None], inputs[1], inputs[2]])


def test_bad_children_raise_eagerly_and_at_run_time():
    cases.check_bad_children(LAYER, _inputs())


def test_a_shared_child_is_an_error():
    cases.check_shared_child(LAYER)


def test_trains_under_mirrored_strategy_like_on_one_device():
    cases.check_mirrored(LAYER, lambda trees: _inputs(trees))


@pytest.mark.slow  # a fresh process importing PyTorch: ~30 s
@pytest.mark.skipif(
    importlib.util.find_spec("torch") is None,
    reason="needs PyTorch (`pip install -e .[bench]`)",
)
def test_both_tree_lstms_match_the_reference_and_fit_under_torch():
    root = pathlib.Path(__file__).resolve().parents[2]
    result = subprocess.run(
        [sys.executable, "-c", cases.TORCH_SCRIPT],
        capture_output=True,
        text=True,
        env={**os.environ, "KERAS_BACKEND": "torch", "PYTHONPATH": str(root)},
        cwd=root,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().endswith("ok torch"), result.stdout
