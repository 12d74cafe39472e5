"""The shared gate maths against NumPy and against Keras' own cells."""

import keras
import numpy as np
import pytest
from keras import ops

from keras_recurrent.layers import _gates


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _random(*shape, seed=0):
    return np.random.default_rng(seed).normal(size=shape).astype("float32")


def test_lstm_step_matches_numpy():
    z_i, z_f, z_g, z_o, c = (_random(3, 5, seed=s) for s in range(5))
    h, new_c = _gates.lstm_step(
        z_i, z_f, z_g, z_o, c, keras.activations.tanh, keras.activations.sigmoid
    )
    expected_c = _sigmoid(z_f) * c + _sigmoid(z_i) * np.tanh(z_g)
    expected_h = _sigmoid(z_o) * np.tanh(expected_c)
    np.testing.assert_allclose(ops.convert_to_numpy(new_c), expected_c, 1e-5)
    np.testing.assert_allclose(ops.convert_to_numpy(h), expected_h, 1e-5)


def test_lstm_cell_state_sums_over_children():
    i, g = _random(2, 4, seed=1), _random(2, 4, seed=2)
    f, c = _random(2, 3, 4, seed=3), _random(2, 3, 4, seed=4)
    result = _gates.lstm_cell_state(i, g, f, c)
    np.testing.assert_allclose(
        ops.convert_to_numpy(result), i * g + (f * c).sum(axis=1), 1e-5
    )


@pytest.mark.parametrize("gate", ["input_gate", "forget_gate", "previous_cell"])
def test_absent_gates_count_as_one(gate):
    arguments = {
        "input_gate": _random(2, 4, seed=1),
        "candidate": _random(2, 4, seed=2),
        "forget_gate": _random(2, 4, seed=3),
        "previous_cell": _random(2, 4, seed=4),
    }
    arguments[gate] = None
    i = arguments["input_gate"]
    f = arguments["forget_gate"]
    c = arguments["previous_cell"]
    expected = (1.0 if i is None else i) * arguments["candidate"]
    if c is not None:
        expected = expected + (1.0 if f is None else f) * c
    result = _gates.lstm_cell_state(**arguments)
    np.testing.assert_allclose(ops.convert_to_numpy(result), expected, 1e-5)
    np.testing.assert_allclose(
        ops.convert_to_numpy(_gates.lstm_output(None, expected, None)),
        expected,
    )


@pytest.mark.parametrize("reset_after", [True, False])
def test_gru_step_equals_keras_gru_cell(reset_after):
    units, features = 4, 3
    cell = keras.layers.GRUCell(units, reset_after=reset_after, seed=0)
    x, h = _random(2, features, seed=5), _random(2, units, seed=6)
    cell.build((None, features))
    cell.bias.assign(_random(*cell.bias.shape, seed=7))
    expected, _ = cell(x, [h])
    kernel = ops.convert_to_numpy(cell.kernel)
    recurrent = ops.convert_to_numpy(cell.recurrent_kernel)
    bias = ops.convert_to_numpy(cell.bias)
    input_bias, recurrent_bias = (
        (bias[0], bias[1])
        if reset_after
        else (
            bias,
            np.zeros_like(bias),
        )
    )
    x_z, x_r, x_h = np.split(x @ kernel + input_bias, 3, axis=-1)
    u_z, u_r, u_h = np.split(recurrent, 3, axis=-1)
    b_z, b_r, b_h = np.split(recurrent_bias, 3, axis=-1)
    if reset_after:
        candidate_recurrent = h @ u_h + b_h
    else:

        def candidate_recurrent(reset):
            return ops.matmul(reset * h, u_h)

    result = _gates.gru_step(
        x_z + h @ u_z + b_z,
        x_r + h @ u_r + b_r,
        x_h,
        candidate_recurrent,
        h,
        keras.activations.tanh,
        keras.activations.sigmoid,
    )
    np.testing.assert_allclose(
        ops.convert_to_numpy(result), ops.convert_to_numpy(expected), 1e-5
    )


@pytest.mark.parametrize("with_beta", [False, True])
def test_layer_norm_matches_numpy(with_beta):
    z = _random(4, 6) * 3.0 + 2.0
    gamma, beta = _random(6, seed=1), _random(6, seed=2)
    out = _gates.layer_norm(z, gamma, beta if with_beta else None, 1e-3)
    mean = z.mean(-1, keepdims=True)
    expected = (z - mean) / np.sqrt(z.var(-1, keepdims=True) + 1e-3) * gamma
    expected += beta if with_beta else 0.0
    np.testing.assert_allclose(out, expected, atol=1e-5)


def test_layer_norm_gradient_is_that_of_its_formula():
    # The written-out gradient against autodiff of the plain formula.
    tf = pytest.importorskip("tensorflow")
    if keras.backend.backend() != "tensorflow":
        pytest.skip("gradients taken with tf.GradientTape")
    z = tf.constant(_random(4, 6) * 3.0 + 2.0)
    gamma = tf.constant(_random(6, seed=1))
    upstream = tf.constant(_random(4, 6, seed=3))

    def plain(z, gamma):
        mean = ops.mean(z, axis=-1, keepdims=True)
        variance = ops.mean(ops.square(z - mean), axis=-1, keepdims=True)
        return (z - mean) * ops.rsqrt(variance + 1e-3) * gamma

    gradients = []
    for function in (plain, lambda z, g: _gates.layer_norm(z, g, None, 1e-3)):
        with tf.GradientTape() as tape:
            tape.watch([z, gamma])
            loss = ops.sum(function(z, gamma) * upstream)
        gradients.append(tape.gradient(loss, [z, gamma]))
    for ours, theirs in zip(*gradients, strict=True):
        np.testing.assert_allclose(ours, theirs, atol=1e-5)
