import keras
import numpy as np
import pytest

import keras_recurrent as kr
from tests.layers import addons_checks as checks
from tests.layers.cell_layer_api import check_cell_arguments_exposed
from tests.layers.lstm_reference import assert_learns_sequence_sum


def _numpy(tensor):
    return keras.ops.convert_to_numpy(tensor)


def test_cell_arguments_are_explicit_properties():
    check_cell_arguments_exposed(
        kr.layers.LayerNormLSTM,
        {"units": 3},
        {
            "activation": "relu",
            "recurrent_activation": "hard_sigmoid",
            "use_bias": False,
            "kernel_initializer": "ones",
            "recurrent_initializer": "zeros",
            "bias_initializer": "ones",
            "unit_forget_bias": False,
            "kernel_regularizer": "l2",
            "recurrent_regularizer": "l1",
            "bias_regularizer": "l2",
            "kernel_constraint": "non_neg",
            "recurrent_constraint": "unit_norm",
            "bias_constraint": "max_norm",
            "dropout": 0.1,
            "recurrent_dropout": 0.2,
            "norm_gamma_initializer": "zeros",
            "norm_beta_initializer": "ones",
            "norm_epsilon": 0.01,
            "seed": 5,
        },
    )


def test_learns_a_sequence_sum():
    assert_learns_sequence_sum(kr.layers.LayerNormLSTM(8))


def test_keras_file_and_mixed_float16(tmp_path):
    checks.check_layer_saving_and_mixed_precision(
        lambda: kr.layers.LayerNormLSTM(3, return_sequences=True), tmp_path
    )


def test_gradients_equal_plain_rnn_of_the_cell():
    if keras.backend.backend() != "tensorflow":
        pytest.skip("gradients taken with tf.GradientTape")
    import tensorflow as tf

    x, mask = checks.data(3)
    layer = kr.layers.LayerNormLSTM(3, return_sequences=True)
    plain = keras.layers.RNN(
        kr.layers.LayerNormLSTMCell(3), return_sequences=True
    )
    for each in (layer, plain):
        each.build(x.shape)
    checks.randomize(layer)
    plain.set_weights(layer.get_weights())

    def gradients(rnn):
        with tf.GradientTape() as tape:
            loss = keras.ops.sum(keras.ops.square(rnn(x, mask=mask)))
        return tape.gradient(loss, rnn.trainable_weights)

    ours, theirs = gradients(layer), gradients(plain)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, atol=1e-5)


def test_stateful_and_bidirectional():
    x, mask = checks.data(4)
    stateful = kr.layers.LayerNormLSTM(3, return_sequences=True, stateful=True)
    model = keras.Sequential([keras.Input(batch_shape=x.shape), stateful])
    checks.randomize(stateful)
    whole = kr.layers.LayerNormLSTM(3, return_sequences=True)
    whole.build(x.shape)
    whole.set_weights(stateful.get_weights())
    chunks = [model(x[:, :2]), model(x[:, 2:])]
    np.testing.assert_allclose(
        np.concatenate([_numpy(c) for c in chunks], 1),
        _numpy(whole(x)),
        atol=1e-5,
    )

    bidirectional = keras.layers.Bidirectional(
        kr.layers.LayerNormLSTM(3, return_sequences=True)
    )
    bidirectional.build(x.shape)
    checks.randomize(bidirectional)
    backward = kr.layers.LayerNormLSTM(
        3, return_sequences=True, go_backwards=True, zero_output_for_mask=True
    )
    backward.build(x.shape)
    backward.set_weights(bidirectional.backward_layer.get_weights())
    np.testing.assert_allclose(
        _numpy(bidirectional(x, mask=mask))[..., 3:],
        np.flip(_numpy(backward(x, mask=mask)), 1),
        atol=1e-5,
    )
