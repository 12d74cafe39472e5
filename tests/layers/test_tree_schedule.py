"""The host schedule `tree_levels` in the Tree-LSTM layers."""

import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_recurrent as kr
from keras_recurrent.layers import tree_rnn

pytestmark = pytest.mark.skipif(
    keras.backend.backend() != "tensorflow", reason="tf.function and XLA"
)

TREES = ["(1 2 3)", "(4 (5 6) (7 (8 9) 1) 2)", "5", "(3 (4 (5 (6 7))))"]


def _batch(binary):
    if binary:
        trees = kr.trees.encode_trees(
            TREES, binarize="left", num_children=2, labeled=False
        )
    else:
        trees = kr.trees.encode_trees(TREES)
    x = np.random.default_rng(0).normal(size=trees["children"].shape[:2] + (3,))
    return x.astype("float32"), trees


def _layer(binary):
    if binary:
        return kr.layers.NaryTreeLSTM(4, arity=2, return_nodes=True)
    return kr.layers.ChildSumTreeLSTM(4, return_nodes=True)


@pytest.mark.slow
@pytest.mark.parametrize("binary", [False, True])
def test_schedule_under_xla_matches_the_dynamic_path(binary):
    x, trees = _batch(binary)
    layer = _layer(binary)
    tensors = [x, trees["children"], trees["node_mask"]]
    levels = trees["tree_levels"]
    expected = np.asarray(layer(tensors))

    def loss_and_gradients(*inputs):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(layer(list(inputs)) ** 2)
        return loss, tape.gradient(loss, layer.trainable_variables)

    loss, gradients = tf.function(loss_and_gradients)(*tensors)
    with_levels = tf.function(loss_and_gradients, jit_compile=True)
    xla_loss, xla_gradients = with_levels(*tensors, levels)
    np.testing.assert_allclose(xla_loss, loss, rtol=1e-5)
    for got, want in zip(xla_gradients, gradients, strict=True):
        np.testing.assert_allclose(got, want, atol=1e-5)
    forward = tf.function(lambda *a: layer(list(a)), jit_compile=True)
    np.testing.assert_allclose(forward(*tensors, levels), expected, atol=1e-5)
    # Any valid schedule gives the same states, e.g. one node per step.
    one = kr.trees.tree_levels(
        trees["children"], trees["node_mask"], level_width=1
    )
    np.testing.assert_allclose(forward(*tensors, one), expected, atol=1e-5)
    # The trees' nodes packed into shared slots: the same states.
    packed = kr.trees.tree_levels(
        trees["children"], trees["node_mask"], pack=True
    )
    np.testing.assert_allclose(forward(*tensors, packed), expected, atol=1e-5)
    xla_loss, xla_gradients = with_levels(*tensors, packed)
    np.testing.assert_allclose(xla_loss, loss, rtol=1e-5)
    for got, want in zip(xla_gradients, gradients, strict=True):
        np.testing.assert_allclose(got, want, atol=1e-5)


def _wrong_schedule(trees):
    levels = kr.trees.tree_levels(
        trees["children"], trees["node_mask"], level_width=1, round_up=False
    )
    # Tree 1: its root first, before its inner children.
    wrong = levels.copy()
    real = wrong[1, :, 0] >= 0
    wrong[1, real, 0] = wrong[1, real, 0][::-1]
    return wrong


def test_a_wrong_schedule_raises_eagerly_and_gives_nan_under_xla():
    x, trees = _batch(False)
    layer = _layer(False)
    tensors = [x, trees["children"], trees["node_mask"]]
    expected = np.asarray(layer(tensors))
    wrong = _wrong_schedule(trees)
    forward = tf.function(lambda *a: layer(list(a)), jit_compile=True)
    got = np.asarray(forward(*tensors, wrong))
    assert np.isnan(got[1]).all()
    good = [0, 2, 3]
    np.testing.assert_allclose(got[good], expected[good], atol=1e-5)
    missing = trees["tree_levels"].copy()
    missing[3] = -1  # Tree 3's inner nodes are never computed.
    got = np.asarray(forward(*tensors, missing))
    assert np.isnan(got[3]).all() and not np.isnan(got[:3]).any()


def _static_path(monkeypatch):
    # The layer eagerly on its static-shape path, as JAX runs it.
    monkeypatch.setattr(tree_rnn, "in_xla_context", lambda: True)


def test_a_wrong_schedule_raises_on_jax_style_eager_static_path(monkeypatch):
    # Eagerly, the checks run where the schedule is read (the static path,
    # as JAX runs it): a `ValueError` naming the tree.
    x, trees = _batch(False)
    layer = _layer(False)
    layer([x, trees["children"], trees["node_mask"]])
    _static_path(monkeypatch)
    with pytest.raises(ValueError, match=r"tree_levels\[1\]"):
        layer(
            [x, trees["children"], trees["node_mask"], _wrong_schedule(trees)]
        )


@pytest.mark.slow
def test_a_model_takes_the_schedule_from_padded_batch():
    def generate():
        for text in TREES * 2:
            yield kr.trees.encode_tree(text, num_children=3), 1.0

    dataset = tf.data.Dataset.from_generator(
        generate,
        output_signature=(kr.trees.tree_spec(3), tf.TensorSpec((), tf.float32)),
    )
    batched = kr.trees.padded_batch(dataset, 4)
    trees, _ = next(iter(batched))
    np.testing.assert_array_equal(
        trees["tree_levels"],
        kr.trees.tree_levels(trees["children"], trees["node_mask"], pack=True),
    )
    inputs = kr.trees.tree_inputs(3, levels=True)
    x = keras.layers.Embedding(10, 4)(inputs["node_tokens"])
    root = kr.layers.ChildSumTreeLSTM(4)(
        [x, inputs["children"], inputs["node_mask"], inputs["tree_levels"]]
    )
    model = keras.Model(inputs, keras.layers.Dense(1)(root))
    model.compile("sgd", "mse", jit_compile=True)
    history = model.fit(batched, epochs=1, verbose=0)
    assert np.isfinite(history.history["loss"][0])
    plain = model.predict(batched, verbose=0)
    model.compile("sgd", "mse", jit_compile=False)
    np.testing.assert_allclose(
        model.predict(batched, verbose=0), plain, atol=1e-5
    )


def test_a_packed_schedule_shuffled_with_its_batch_is_caught(monkeypatch):
    # `fit` shuffling the rows of a packed schedule: the trees whose nodes
    # sat in other rows lose them. Eagerly a `ValueError` names packing;
    # under XLA those trees get NaN and the others stay exact.
    x, trees = _batch(False)
    layer = _layer(False)
    packed = kr.trees.tree_levels(
        trees["children"], trees["node_mask"], pack=True, level_width=1
    )
    assert (packed >= trees["children"].shape[1]).any()  # Borrowed slots.
    order = [1, 0, 2, 3]
    tensors = [x[order], trees["children"][order], trees["node_mask"][order]]
    expected = np.asarray(layer(tensors))
    with monkeypatch.context() as patch:
        _static_path(patch)
        with pytest.raises(ValueError, match="packed schedule only fits"):
            layer([*tensors, packed[order]])
    forward = tf.function(lambda *a: layer(list(a)), jit_compile=True)
    got = np.asarray(forward(*tensors, packed[order]))
    bad = np.isnan(got).all(axis=(1, 2))
    assert bad.any()
    np.testing.assert_allclose(got[~bad], expected[~bad], atol=1e-5)
    # Unshuffled, the same schedule is exact.
    got = np.asarray(forward(x, trees["children"], trees["node_mask"], packed))
    np.testing.assert_allclose(
        got,
        np.asarray(layer([x, trees["children"], trees["node_mask"]])),
        atol=1e-5,
    )


def test_the_loop_stops_after_the_last_step_that_updates_a_node():
    # Under XLA the padding steps of a host schedule (rounding,
    # `pad_tree_levels`, `level_shapes`) are not run: the loop's `stop` is
    # the last step that lists a node, its `most` the schedule's `L`.
    from keras_recurrent.layers._tree_schedule import host_schedule

    _, trees = _batch(False)
    children, node_mask = trees["children"], trees["node_mask"]
    levels = kr.trees.tree_levels(children, node_mask, round_up=False)
    padded = kr.trees.pad_tree_levels(levels, (levels.shape[1] + 5, 3))
    real = node_mask.astype(bool)
    bad = np.zeros(len(real), bool)
    for schedule in (levels, padded):
        first, stop, most = host_schedule(schedule, children, real, bad)[
            "bounds"
        ]
        assert (first, int(stop), most) == (
            0,
            levels.shape[1],
            schedule.shape[1],
        )
    # A batch of leaves alone: no step at all.
    leaves = kr.trees.encode_trees(["5", "7"])
    _, stop, most = host_schedule(
        leaves["tree_levels"],
        leaves["children"],
        leaves["node_mask"].astype(bool),
        np.zeros(2, bool),
    )["bounds"]
    assert (int(stop), most) == (0, 1)
