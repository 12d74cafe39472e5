"""SavedModel export of a GF-LSTM model, served without keras_recurrent."""

import keras
import numpy as np

import keras_recurrent as kr
import keras_recurrent.testing

BATCH, STEPS, FEATURES = 3, 5, 4


def _model(timesteps=STEPS):
    inputs = keras.Input((timesteps, FEATURES), name="sequences")
    y = keras.layers.Masking(0.0)(inputs)
    y = kr.layers.GatedFeedbackRNN(
        [4, 3], cell_type="lstm", feedback="gated", name="gf_lstm"
    )(y)
    return keras.Model(inputs, keras.layers.Dense(1, name="score")(y))


def test_saved_model_export_serves_predictions(tmp_path):
    x = np.random.default_rng(7).normal(size=(BATCH, STEPS, FEATURES))
    x[0, 3:] = 0.0
    served = keras_recurrent.testing.assert_export_roundtrip(
        _model(timesteps=None),
        x,
        tmp_path=tmp_path,
        lengths=np.array([5, 3, 1]),
    )
    assert served["score"].shape == (BATCH, 1)
