"""MirroredStrategy equivalence of a GF-LSTM model (two logical CPUs)."""

import keras
import numpy as np

import keras_recurrent as kr
import keras_recurrent.testing

STEPS, FEATURES = 5, 4


def _mirrored_model():
    inputs = keras.Input((STEPS, FEATURES), name="sequences")
    y = keras.layers.Masking(0.0)(inputs)
    y = kr.layers.GatedFeedbackRNN(
        [4, 3], cell_type="lstm", feedback="gated", name="gf_lstm"
    )(y)
    return keras.Model(inputs, keras.layers.Dense(1, name="score")(y))


def test_mirrored_strategy_matches_single_device():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(24, STEPS, FEATURES)).astype("float32")
    y = rng.normal(size=(24, 1)).astype("float32")
    trained = keras_recurrent.testing.assert_mirrored_equivalence(
        _mirrored_model, x, y
    )
    assert trained["strategy"].num_replicas_in_sync == 2
