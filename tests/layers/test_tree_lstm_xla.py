"""The Tree-LSTMs under XLA (`jit_compile=True`, what Keras picks on a GPU)
and on the JAX backend: the static-shape path gives the numbers of the
dynamic one and of the NumPy reference."""

import importlib.util
import os
import pathlib
import subprocess
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_recurrent as kr
from tests.layers import tree_lstm_cases as cases
from tests.layers import tree_reference as reference

LAYERS = {
    "child_sum": (kr.layers.ChildSumTreeLSTM, {}, None, {}),
    "nary": (kr.layers.NaryTreeLSTM, {"arity": 2}, 2, {"binarize": "left"}),
}


def _inputs(kind, trees=None):
    _, _, width, encoding = LAYERS[kind]
    trees = cases.mirrored_trees() if trees is None else trees
    return reference.encode(trees, width, cases.FEATURES, **encoding)


def _model(kind, width, **layer_kwargs):
    cls, kwargs, _, _ = LAYERS[kind]
    model_inputs = kr.trees.tree_inputs(width, node_features=cases.FEATURES)
    states = cls(4, name="tree_lstm", **kwargs, **layer_kwargs)(
        list(model_inputs.values())
    )
    return keras.Model(
        model_inputs, keras.layers.Dense(1, name="score")(states)
    )


@pytest.mark.parametrize("kind", sorted(LAYERS))
def test_nodes_under_xla_match_the_reference(kind):
    cls, kwargs, _, _ = LAYERS[kind]
    inputs = _inputs(kind, reference.mixed_trees())
    layer, weights = cases.make_layer(
        cls, inputs, return_nodes=True, return_state=True, **kwargs
    )
    assert layer.supports_jit
    expected = reference.expected_states(inputs, weights, kind, cases.UNITS)
    compiled = tf.function(lambda *t: layer(list(t)), jit_compile=True)
    for state, expected_state in zip(compiled(*inputs), expected, strict=True):
        np.testing.assert_allclose(state, expected_state, atol=1e-5)


@pytest.mark.parametrize(
    "kind",
    # N-ary's XLA path is the same loop with another cell (checked by the
    # other tests here); its whole `fit` run (~13 s) is slow.
    ["child_sum", pytest.param("nary", marks=pytest.mark.slow)],
)
def test_fit_predict_evaluate_under_xla_match_without(kind):
    inputs = _inputs(kind)
    width = inputs[1].shape[2]
    feeds = cases.model_feeds(inputs)
    targets = np.linspace(-1, 1, len(inputs[2]), dtype="float32")[:, None]
    keras.utils.set_random_seed(0)
    plain = _model(kind, width)
    compiled = _model(kind, width)
    initial = plain.get_weights()
    compiled.set_weights(initial)
    results = []
    for model, jit in ((plain, False), (compiled, True)):
        model.compile(
            optimizer=keras.optimizers.Adam(0.05), loss="mse", jit_compile=jit
        )
        history = model.fit(
            feeds, targets, batch_size=8, epochs=2, shuffle=False, verbose=0
        )
        results.append(
            (
                history.history["loss"],
                model.get_weights(),
                model.predict(feeds, batch_size=8, verbose=0),
                model.evaluate(feeds, targets, batch_size=8, verbose=0),
            )
        )
    assert compiled.jit_compile and not plain.jit_compile
    (losses, weights, predictions, loss), expected = results[1], results[0]
    np.testing.assert_allclose(losses, expected[0], atol=1e-5)
    for weight, expected_weight in zip(weights, expected[1], strict=True):
        np.testing.assert_allclose(weight, expected_weight, atol=1e-5)
    np.testing.assert_allclose(predictions, expected[2], atol=1e-5)
    np.testing.assert_allclose(loss, expected[3], atol=1e-5)
    # Training moved the weights, so the comparison is not of the start.
    assert not np.allclose(weights[0], initial[0])
    assert losses[-1] < losses[0]


@pytest.mark.slow  # XLA compiles a training step with dropout: ~25 s
def test_dropout_trains_under_xla():
    inputs = _inputs("child_sum")
    feeds = cases.model_feeds(inputs)
    model = _model(
        "child_sum", inputs[1].shape[2], dropout=0.3, recurrent_dropout=0.3
    )
    model.compile(optimizer="adam", loss="mse", jit_compile=True)
    history = model.fit(feeds, np.ones((16, 1), "float32"), epochs=2, verbose=0)
    assert np.all(np.isfinite(history.history["loss"]))


def test_auto_jit_compile_on_a_gpu_machine_turns_xla_on(monkeypatch):
    # Keras' `jit_compile="auto"` (`Trainer._resolve_auto_jit_compile`)
    # turns XLA on when `tf.config.list_physical_devices()` lists a
    # non-CPU device and every layer `supports_jit` (`model_supports_jit`).
    inputs = _inputs("nary")
    feeds = cases.model_feeds(inputs)
    model = _model("nary", 2)
    expected = np.asarray(model(feeds))
    listed = tf.config.list_physical_devices()
    fake_gpu = tf.config.PhysicalDevice("/physical_device:GPU:0", "GPU")
    monkeypatch.setattr(
        tf.config,
        "list_physical_devices",
        lambda device_type=None: (
            [fake_gpu]
            if device_type == "GPU"
            else listed + [fake_gpu]
            if device_type is None
            else listed
        ),
    )
    model.compile(optimizer="adam", loss="mse")
    monkeypatch.undo()
    assert model.jit_compile is True
    np.testing.assert_allclose(
        model.predict(feeds, verbose=0), expected, atol=1e-5
    )
    history = model.fit(feeds, np.ones((16, 1), "float32"), verbose=0)
    assert np.isfinite(history.history["loss"][0])


def test_a_bad_tree_under_xla_is_nan_and_alone():
    inputs = [np.array(a) for a in _inputs("nary", reference.mixed_trees())]
    layer, _ = cases.make_layer(kr.layers.NaryTreeLSTM, inputs, arity=2)
    expected = np.asarray(layer(inputs))
    compiled = tf.function(lambda *t: layer(list(t)), jit_compile=True)
    inputs[1][2, 3, 0] = 40  # Tree 2: a child past N.
    outputs = np.asarray(compiled(*inputs))
    assert np.all(np.isnan(outputs[2]))
    others = [0, 1, 3]
    np.testing.assert_allclose(outputs[others], expected[others], atol=1e-6)


JAX_SCRIPT = """
import keras
import numpy as np

import keras_recurrent as kr
from tests.layers import tree_lstm_cases as cases
from tests.layers import tree_reference as reference

assert keras.backend.backend() == "jax"
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
    np.testing.assert_allclose(np.asarray(h), expected_h, atol=1e-5)
    np.testing.assert_allclose(np.asarray(c), expected_c, atol=1e-5)
    model_inputs = kr.trees.tree_inputs(
        inputs[1].shape[2], node_features=cases.FEATURES
    )
    states = cls(4, **kwargs)(list(model_inputs.values()))
    model = keras.Model(model_inputs, keras.layers.Dense(1)(states))
    model.compile(optimizer=keras.optimizers.Adam(0.05), loss="mse")
    feeds = cases.model_feeds(inputs)
    target = np.linspace(-1, 1, len(inputs[2]), dtype="float32")[:, None]
    direct = np.mean((np.asarray(model(feeds)) - target) ** 2)
    np.testing.assert_allclose(
        model.evaluate(feeds, target, verbose=0), direct, rtol=1e-5
    )
    losses = model.fit(feeds, target, epochs=5, verbose=0).history["loss"]
    assert losses[-1] < losses[0], losses
print("ok", keras.backend.backend())
"""


@pytest.mark.slow  # a fresh process importing JAX, compiling: ~60 s
@pytest.mark.skipif(
    importlib.util.find_spec("jax") is None,
    reason="JAX is not installed in this environment",
)
def test_both_tree_lstms_match_the_reference_and_fit_under_jax():
    root = pathlib.Path(__file__).resolve().parents[2]
    result = subprocess.run(
        [sys.executable, "-c", JAX_SCRIPT],
        cwd=root,
        env={
            **os.environ,
            "KERAS_BACKEND": "jax",
            "PYTHONPATH": str(root),
            "JAX_PLATFORMS": "cpu",
        },
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "ok jax" in result.stdout
