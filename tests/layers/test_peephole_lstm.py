import keras
import numpy as np

import keras_recurrent as kr


def test_learns_a_sequence_sum():
    rng = np.random.default_rng(0)
    x = rng.uniform(size=(64, 8, 1)).astype("float32")
    y = x.sum(axis=1)
    keras.utils.set_random_seed(0)
    model = keras.Sequential(
        [keras.Input((8, 1)), kr.layers.PeepholeLSTM(8), keras.layers.Dense(1)]
    )
    model.compile(keras.optimizers.Adam(0.02), "mse")
    history = model.fit(x, y, epochs=30, batch_size=16, verbose=0)
    assert history.history["loss"][-1] < 0.1 * history.history["loss"][0]


def test_layer_properties_and_weight_count():
    layer = kr.layers.PeepholeLSTM(7, projection_units=3, dropout=0.1)
    layer.build((None, None, 2))
    assert (layer.units, layer.variant, layer.use_peepholes) == (7, "V", True)
    assert layer.projection_units == 3 and layer.dropout == 0.1
    assert len(layer.trainable_weights) == 7  # 3 matrices, 3 peepholes, P
