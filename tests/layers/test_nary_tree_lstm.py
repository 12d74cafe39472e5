import keras
import numpy as np
import pytest

import keras_recurrent as kr
from tests.layers import tree_lstm_cases as cases
from tests.layers import tree_reference as reference

LAYER = kr.layers.NaryTreeLSTM


def _inputs(trees=None, arity=2, binarize="left", seed=0):
    trees = reference.mixed_trees() if trees is None else trees
    return reference.encode(
        trees, arity, cases.FEATURES, seed=seed, binarize=binarize
    )


@pytest.mark.parametrize(
    ("arity", "binarize"),
    [(2, "left"), (2, "right"), (4, None)],
)
def test_matches_numpy_reference(arity, binarize):
    # A chain, a star of 4 leaves, a full binary tree and a single node.
    inputs = _inputs(arity=arity, binarize=binarize)
    cases.check_matches_reference(LAYER, "nary", inputs, arity=arity)


def test_empty_slots_are_zero_states():
    # A node whose only child sits in slot 2 differs from one with it in
    # slot 1: the slots are ordered.
    inputs = _inputs([("a", "b")])
    swapped = [np.array(array) for array in inputs]
    swapped[1][0, 1] = [-1, 0]
    layer, weights = cases.make_layer(LAYER, inputs, return_nodes=True)
    expected, _ = reference.expected_states(swapped, weights, "nary", 5)
    outputs = np.asarray(layer(swapped))
    np.testing.assert_allclose(outputs, expected, atol=1e-5)
    assert not np.allclose(outputs, layer(inputs))


def _chain(arity):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(3, 6, cases.FEATURES)).astype("float32")
    children = np.full((3, 6, arity), -1, dtype="int32")
    children[:, 1:, 0] = np.arange(5)
    return x, children, np.ones((3, 6), dtype="int32")


def _lstm(weights, units, arity):
    def keras_order(blocks):
        i, f, o, u = blocks
        return np.concatenate([i, f, u, o], axis=-1)

    kernel = keras_order(np.split(weights["kernel"], 4, axis=-1))
    bias = keras_order(np.split(weights["bias"], 4, axis=-1))
    # Slot 1 rows; columns [i, f_1, o, u] (the other forget gates multiply
    # empty slots, whose c is zero).
    blocks = np.split(weights["recurrent_kernel"][:units], 3 + arity, axis=-1)
    recurrent = keras_order([blocks[0], blocks[1], blocks[-2], blocks[-1]])
    lstm = keras.layers.LSTM(units, return_sequences=True)
    lstm.build((None, None, kernel.shape[0]))
    lstm.set_weights([kernel, recurrent, bias])
    return lstm


@pytest.mark.parametrize("arity", [1, 2])
def test_chain_equals_a_sequence_lstm(arity):
    # A chain (node t has the one child t - 1, in slot 1) is Keras' LSTM
    # with the gate blocks reordered from [i, f, o, u] to [i, f, c, o]:
    # exactly for arity 1, and for any arity with the slot-1 rows and the
    # f_1 columns of the recurrent kernel.
    x, children, mask = _chain(arity)
    layer, weights = cases.make_layer(
        LAYER, [x, children, mask], return_nodes=True, arity=arity
    )
    lstm = _lstm(weights, cases.UNITS, arity)
    np.testing.assert_allclose(layer([x, children, mask]), lstm(x), atol=1e-5)


def test_padding_does_not_leak_and_pad_size_does_not_matter():
    cases.check_padding_and_batching(LAYER, _inputs())


def test_dynamic_shapes_in_one_trace():
    cases.check_dynamic_shapes(LAYER, lambda trees: _inputs(trees))


def test_weights_config_and_saving(tmp_path):
    layer, _ = cases.make_layer(LAYER, _inputs(arity=3), arity=3)
    assert [(w.name, tuple(w.shape)) for w in layer.weights] == [
        ("kernel", (3, 20)),
        ("recurrent_kernel", (15, 30)),
        ("bias", (20,)),
    ]
    assert LAYER(4).arity == 2
    assert LAYER.from_config(layer.get_config()).arity == 3
    cases.check_config_and_saving(LAYER, _inputs(), tmp_path, arity=2)


def test_dropout():
    cases.check_dropout(LAYER, _inputs())


def test_gradients_and_training():
    cases.check_gradients_and_training(LAYER, _inputs())


def test_mixed_precision():
    cases.check_mixed_precision(LAYER, _inputs())


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"units": -1}, "units=-1"),
        ({"arity": 0}, "arity=0"),
        ({"arity": 2.0}, "arity=2.0"),
        ({"dropout": "0.1"}, "dropout='0.1'"),
        ({"return_state": None}, "return_state=None"),
    ],
)
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        LAYER(**{"units": 4, **kwargs})


def test_arity_must_match_the_child_slots():
    with pytest.raises(
        ValueError, match=r"arity=2 .*children.shape=\(4, 7, 3\)"
    ):
        LAYER(4, arity=2)(_inputs(arity=3))
    with pytest.raises(ValueError, match="arity=3"):
        LAYER(4, arity=3).build(
            [(None, None, 2), (None, None, None), (None, None)]
        )


def test_bad_children_raise_eagerly_and_at_run_time():
    cases.check_bad_children(LAYER, _inputs())


def test_a_shared_child_is_an_error():
    cases.check_shared_child(LAYER, arity=2)


def test_trains_under_mirrored_strategy_like_on_one_device():
    cases.check_mirrored(LAYER, lambda trees: _inputs(trees))
