"""Our LSTMs are drop-ins for `keras.layers.LSTM`: Keras' own tests pass.

The cases (tests/layers/keras_conformance_cases.py) port Keras 3.15.1's
LSTM, RNN, Bidirectional, StackedRNNCells and DropoutRNNCell tests onto
`LSTMVariant(variant="NP")` and zero-peephole `PeepholeLSTM`; here they run
on TensorFlow in-process and on JAX and PyTorch in processes of their own.
The rest checks when a layer runs Keras' fused LSTM kernel (`use_cudnn`).
"""

import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_recurrent as kr
from keras_recurrent.layers import _cell_rnn
from tests._subprocess import run_backend_module
from tests._subprocess import skip_unless_installed
from tests.layers import keras_conformance_cases as cases

# Over ~2 s each on TensorFlow: run with `-m slow`.
_SLOW_CASES = ("bidirectional", "stacked_cells", "lstm_basics")


@pytest.mark.parametrize("name", sorted(cases.DROP_INS))
@pytest.mark.parametrize(
    "case",
    [
        pytest.param(case, marks=pytest.mark.slow)
        if case in _SLOW_CASES
        else case
        for case in cases.CASES
    ],
)
def test_keras_lstm_tests_pass_on_tensorflow(case, name):
    cases.run_case(case, name)


# On PyTorch, `use_cudnn="auto"` runs Keras' fused loop on the CPU too:
# these cases run by default there; every case runs with `slow`.
_TORCH_DEFAULT = ("lstm_correctness", "use_cudnn_true")


@pytest.mark.parametrize(
    "backend, subset",
    [
        ("torch", _TORCH_DEFAULT),
        pytest.param("torch", (), marks=pytest.mark.slow),
        pytest.param("jax", (), marks=pytest.mark.slow),  # ~3 minutes
    ],
    ids=["torch-fused", "torch-all", "jax-all"],
)
def test_keras_lstm_tests_pass_on_other_backends(backend, subset):
    skip_unless_installed(backend)
    report = run_backend_module(
        "tests.layers.keras_conformance_cases", backend, *subset
    )
    assert report["backend"] == backend
    expected = subset or tuple(cases.CASES)
    assert sorted(report["cases"]) == sorted(
        f"{case}/{name}" for case in expected for name in cases.DROP_INS
    )
    failed = {
        key: value for key, value in report["cases"].items() if value != "ok"
    }
    assert not failed, failed


# Which configurations Keras' fused kernel computes exactly: the LSTM of
# `keras.layers.LSTMCell`, with its weights.
FUSED = {
    "NP": lambda **kw: kr.layers.LSTMVariant(3, variant="NP", **kw),
    "V without peepholes": lambda **kw: kr.layers.LSTMVariant(
        3, variant="V", use_peepholes=False, **kw
    ),
    "NP, relu, no bias": lambda **kw: kr.layers.LSTMVariant(
        3, variant="NP", activation="relu", use_bias=False, **kw
    ),
    "NP, dropout": lambda **kw: kr.layers.LSTMVariant(
        3, variant="NP", dropout=0.3, **kw
    ),
}
NOT_FUSED = {
    "V": (lambda **kw: kr.layers.LSTMVariant(3, **kw), "use_peepholes=True"),
    "PeepholeLSTM": (
        lambda **kw: kr.layers.PeepholeLSTM(3, **kw),
        r"use_peepholes=True \(fixed by this class\)",
    ),
    "CoupledLSTM": (
        lambda **kw: kr.layers.CoupledLSTM(3, **kw),
        r"variant='CIFG' \(fixed by this class\)",
    ),
    "CoupledLSTM without peepholes": (
        lambda **kw: kr.layers.CoupledLSTM(3, use_peepholes=False, **kw),
        "variant='CIFG'",
    ),
    **{
        f"{variant} without peepholes": (
            lambda variant=variant, **kw: kr.layers.LSTMVariant(
                3, variant=variant, use_peepholes=False, **kw
            ),
            f"variant='{variant}'",
        )
        for variant in ("NIG", "NFG", "NOG", "NIAF", "NOAF", "CIFG", "FGR")
    },
    "NP, cell_clip": (
        lambda **kw: kr.layers.LSTMVariant(
            3, variant="NP", cell_clip=2.0, **kw
        ),
        "cell_clip=2.0",
    ),
    "NP, projection": (
        lambda **kw: kr.layers.LSTMVariant(
            3, variant="NP", projection_units=2, **kw
        ),
        "projection_units=2",
    ),
    "NP, recurrent_dropout": (
        lambda **kw: kr.layers.LSTMVariant(
            3, variant="NP", recurrent_dropout=0.2, **kw
        ),
        "recurrent_dropout=0.2",
    ),
    "GatedFeedbackRNN": (
        lambda **kw: kr.layers.GatedFeedbackRNN(3, num_layers=1, **kw),
        "GatedFeedbackCell is not the LSTM cell",
    ),
}


@pytest.mark.parametrize("config", sorted(FUSED))
def test_the_standard_lstm_configs_would_use_the_fused_kernel(config):
    layer = FUSED[config]()
    assert layer._fused_blocker(mask=None) is None
    # A mask always runs the layer's own loop.
    mask = np.ones((2, 4), bool)
    assert "mask" in layer._fused_blocker(mask=mask)


def test_backwards_sequences_on_jax_keep_the_loops_order(monkeypatch):
    # Keras' JAX cuDNN kernel flips backwards outputs to the input's order;
    # its loop and ours keep the reversed order: those calls run the loop.
    options = {"go_backwards": True, "return_sequences": True}
    monkeypatch.setattr(keras.backend, "backend", lambda: "jax")
    assert "go_backwards" in FUSED["NP"](**options)._fused_blocker(None)
    assert FUSED["NP"](go_backwards=True)._fused_blocker(None) is None
    monkeypatch.setattr(keras.backend, "backend", lambda: "tensorflow")
    assert FUSED["NP"](**options)._fused_blocker(None) is None


@pytest.mark.parametrize("config", sorted(NOT_FUSED))
def test_other_configs_name_what_makes_them_non_standard(config):
    make, reason = NOT_FUSED[config]
    assert layer_reason(make()) is not None
    with pytest.raises(ValueError, match=rf"use_cudnn=True.*{reason}"):
        make(use_cudnn=True)
    # "auto" falls back silently, False never tries.
    x = np.random.default_rng(0).normal(size=(2, 4, 5)).astype("float32")
    auto = make(use_cudnn="auto")
    auto(x)
    off = make(use_cudnn=False)
    off(x)
    off.set_weights(auto.get_weights())
    np.testing.assert_array_equal(np.asarray(auto(x)), np.asarray(off(x)))


def layer_reason(layer):
    return layer._fused_blocker(mask=None)


def _reference_lstm(calls):
    """A stand-in for Keras' fused kernel (none runs on this CPU): the LSTM
    of `keras.layers.LSTMCell` over all steps, recording each call."""

    def fused_lstm(sequences, h, c, mask, **kwargs):
        calls.append(kwargs)
        assert mask is None
        kernel = kwargs["kernel"]
        recurrent_kernel = kwargs["recurrent_kernel"]
        bias = kwargs["bias"]
        activation = kwargs["activation"]
        sigmoid = kwargs["recurrent_activation"]
        steps = range(sequences.shape[1])
        if kwargs["go_backwards"]:
            steps = reversed(steps)
        outputs = []
        for t in steps:
            z = sequences[:, t] @ kernel + h @ recurrent_kernel
            if bias is not None:
                z = z + bias
            i, f, g, o = tf.split(z, 4, axis=-1)
            c = sigmoid(f) * c + sigmoid(i) * activation(g)
            h = sigmoid(o) * activation(c)
            outputs.append(h)
        outputs = tf.stack(outputs, axis=1)
        if not kwargs["return_sequences"]:
            outputs = outputs[:, -1:]
        return h, outputs, [h, c]

    return fused_lstm


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"go_backwards": True, "return_sequences": True},
        {"return_state": True, "use_bias": False},
        {"dropout": 0.4},
    ],
    ids=["plain", "backwards", "no bias", "dropout"],
)
def test_the_fused_path_gets_the_cells_weights_and_gives_the_loops_numbers(
    monkeypatch, options
):
    calls = []
    monkeypatch.setattr(_cell_rnn, "fused_lstm", _reference_lstm(calls))
    x = np.random.default_rng(1).normal(size=(2, 5, 4)).astype("float32")
    fused = kr.layers.LSTMVariant(3, variant="NP", seed=7, **options)
    loop = kr.layers.LSTMVariant(
        3, variant="NP", seed=7, use_cudnn=False, **options
    )
    fused.build(x.shape)
    loop.build(x.shape)
    loop.set_weights(fused.get_weights())
    training = "dropout" in options
    got = keras.tree.flatten(fused(x, training=training))
    want = keras.tree.flatten(loop(x, training=training))
    assert len(calls) == 1
    # The cell's own weights, in Keras' layout.
    np.testing.assert_array_equal(calls[0]["kernel"], fused.cell.kernel.numpy())
    assert fused.supports_jit is False  # as keras.layers.LSTM on cuDNN
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, atol=1e-6)
    # A mask runs the loop.
    mask = np.ones((2, 5), bool)
    mask[0, 3:] = False
    np.testing.assert_allclose(
        keras.tree.flatten(fused(x, mask=mask))[0],
        keras.tree.flatten(loop(x, mask=mask))[0],
        atol=1e-6,
    )
    assert len(calls) == 1


def test_auto_on_a_cpu_is_the_loop_and_true_fails_as_keras_lstm_does():
    x = np.random.default_rng(2).normal(size=(2, 5, 4)).astype("float32")
    auto = kr.layers.LSTMVariant(3, variant="NP")
    loop = kr.layers.LSTMVariant(3, variant="NP", use_cudnn=False)
    auto.build(x.shape)
    loop.build(x.shape)
    loop.set_weights(auto.get_weights())
    # No GPU here: TensorFlow has no fused kernel, the numbers are the loop's.
    np.testing.assert_array_equal(np.asarray(auto(x)), np.asarray(loop(x)))
    assert auto.supports_jit is True
    with pytest.raises(ValueError, match="use_cudnn=True") as keras_error:
        keras.layers.LSTM(3, use_cudnn=True)(x)
    assert "not supported" in str(keras_error.value)
    message = (
        r"LSTMVariant 'strict': use_cudnn=True was specified, but Keras' "
        r"fused \(cuDNN\) LSTM kernel cannot run this layer: Keras' "
        r"tensorflow backend has no fused LSTM kernel for it here \(cuDNN "
        r"needs a GPU.*Pass use_cudnn='auto'"
    )
    strict = kr.layers.LSTMVariant(
        3, variant="NP", use_cudnn=True, name="strict"
    )
    with pytest.raises(ValueError, match=message):
        strict(x)


@pytest.mark.parametrize("value", ["yes", None, 2])
def test_a_bad_use_cudnn_is_refused_as_keras_refuses_it(value):
    message = rf"`use_cudnn`.*Received: use_cudnn={value!r}"
    with pytest.raises(ValueError, match=message):
        kr.layers.LSTMVariant(3, use_cudnn=value)
    with pytest.raises(ValueError, match="use_cudnn"):
        keras.layers.LSTM(3, use_cudnn=value)


def test_integer_inputs_under_jit_compile_and_mixed_precision():
    values = np.random.default_rng(3).integers(0, 5, size=(4, 6, 3))
    layer = kr.layers.LSTMVariant(4, variant="NP")
    inputs = keras.Input((6, 3), dtype="int32")
    model = keras.Model(inputs, layer(inputs))
    model.compile(jit_compile=True)
    np.testing.assert_allclose(
        model.predict(values, verbose=0),
        np.asarray(layer(values.astype("float32"))),
        atol=1e-6,
    )
    mixed = kr.layers.PeepholeLSTM(4, dtype="mixed_float16")
    output = mixed(values.astype("int32"))
    assert keras.backend.standardize_dtype(output.dtype) == "float16"
    np.testing.assert_array_equal(
        np.asarray(output), np.asarray(mixed(values.astype("float16")))
    )
