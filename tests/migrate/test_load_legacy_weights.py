"""`kr.migrate.load_legacy_weights`: tf.keras 2 weights files, in both
layouts, into a Keras 3 model of the same architecture (TensorFlow
backend; tests/migrate/test_backends.py runs them on JAX and PyTorch)."""

import keras
import pytest
from keras import layers

import keras_recurrent as kr
from tests.migrate.legacy_cases import FIXTURES
from tests.migrate.legacy_cases import WEIGHTS_CASES
from tests.migrate.legacy_cases import max_difference
from tests.migrate.legacy_cases import run_case
from tests.migrate.legacy_cases import tfa_model
from tests.migrate.legacy_cases import weights_model


@pytest.mark.parametrize("case", WEIGHTS_CASES)
def test_weights_match_the_original(case):
    assert run_case(case) < 1e-5


def test_full_model_file_gives_its_weights():
    # The `model_weights` group of `model.save("m.h5")` is the legacy
    # layout too.
    x = layers.Input((5, 4), name="x")
    m = layers.Masking(0.0)(x)
    h = layers.RNN(layers.LSTMCell(3), return_sequences=True)(m)
    outputs = layers.RNN(
        [layers.GRUCell(3, reset_after=False), layers.SimpleRNNCell(2)],
        return_state=True,
    )(h)
    model = keras.Model(x, outputs)
    kr.migrate.load_legacy_weights(model, FIXTURES / "rnn_cells.h5")
    assert max_difference(model, "rnn_cells") < 1e-5


def _other_model():
    x = layers.Input((5, 4))
    h = layers.Bidirectional(layers.LSTM(4, return_sequences=True))(x)
    h = layers.RNN([layers.GRUCell(3), layers.LSTMCell(2)])(h)
    h = layers.Dense(3, activation="relu")(h)
    return keras.Model(x, layers.Dense(2)(h))


def test_legacy_layout_mismatch_names_layer_and_shapes():
    with pytest.raises(ValueError) as error:
        kr.migrate.load_legacy_weights(_other_model(), FIXTURES / "weights.h5")
    message = str(error.value)
    assert "layer 'bidirectional" in message
    assert "(4, 16)" in message and "(4, 12)" in message


def test_new_layout_mismatch_names_layer_and_shapes():
    with pytest.raises(ValueError) as error:
        kr.migrate.load_legacy_weights(
            _other_model(), FIXTURES / "weights.weights.h5"
        )
    message = str(error.value)
    assert "layers/bidirectional/" in message
    assert "(4, 16)" in message and "(4, 12)" in message


def test_layer_count_mismatch_lists_the_layers():
    x = layers.Input((5, 4))
    model = keras.Model(x, layers.Dense(2)(layers.LSTM(3)(x)))
    with pytest.raises(ValueError, match=r"4 layers \(bidirectional"):
        kr.migrate.load_legacy_weights(model, FIXTURES / "weights.h5")
    with pytest.raises(ValueError, match="holds no weights for"):
        kr.migrate.load_legacy_weights(model, FIXTURES / "weights.weights.h5")


def test_unbuilt_model_is_refused():
    model = keras.Sequential([layers.LSTM(3)])
    with pytest.raises(ValueError, match="not built"):
        kr.migrate.load_legacy_weights(model, FIXTURES / "weights.h5")


def test_fixture_architecture_is_the_files():
    # The check above fails on the wrong model, not on every model.
    kr.migrate.load_legacy_weights(
        weights_model(), FIXTURES / "weights.weights.h5"
    )


@pytest.mark.parametrize(
    "name", ["tfa_layer_norm_lstm.h5", "tfa_layer_norm_lstm.weights.h5"]
)
def test_addons_weights_load_into_keras_recurrent_cells(name):
    if not hasattr(kr.layers, "LayerNormLSTMCell"):
        pytest.skip("kr.layers.LayerNormLSTMCell is not on this branch")
    # In the `.weights.h5` layout TFA keeps the cell's layer norms in
    # sublayers (kernel_norm, ...).
    model = kr.migrate.load_legacy_weights(tfa_model(), FIXTURES / name)
    assert max_difference(model, "tfa_layer_norm_lstm") < 1e-5
