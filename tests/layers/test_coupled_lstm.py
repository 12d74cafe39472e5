import keras
import numpy as np

import keras_recurrent as kr


def test_learns_a_sequence_sum():
    rng = np.random.default_rng(0)
    x = rng.uniform(size=(64, 8, 1)).astype("float32")
    y = x.sum(axis=1)
    keras.utils.set_random_seed(0)
    model = keras.Sequential(
        [keras.Input((8, 1)), kr.layers.CoupledLSTM(8), keras.layers.Dense(1)]
    )
    model.compile(keras.optimizers.Adam(0.02), "mse")
    history = model.fit(x, y, epochs=30, batch_size=16, verbose=0)
    assert history.history["loss"][-1] < 0.1 * history.history["loss"][0]


def test_quarter_fewer_weights_than_lstm():
    coupled = kr.layers.CoupledLSTM(8)
    lstm = keras.layers.LSTM(8)
    for layer in (coupled, lstm):
        layer.build((None, None, 4))
    assert coupled.count_params() * 4 == lstm.count_params() * 3
    assert coupled.variant == "CIFG" and coupled.use_peepholes is False
