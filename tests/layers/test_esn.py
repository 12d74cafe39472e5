import keras
import numpy as np
import pytest

import keras_recurrent as kr
from tests.layers import addons_checks as checks
from tests.layers.cell_layer_api import check_cell_arguments_exposed


def test_cell_arguments_are_explicit_properties():
    check_cell_arguments_exposed(
        kr.layers.ESN,
        {"units": 3},
        {
            "connectivity": 0.3,
            "leaky": 0.5,
            "spectral_radius": 1.1,
            "use_norm2": True,
            "use_bias": False,
            "activation": "relu",
            "kernel_initializer": "ones",
            "recurrent_initializer": "orthogonal",
            "bias_initializer": "ones",
        },
    )


def test_keras_file_and_mixed_float16(tmp_path):
    checks.check_layer_saving_and_mixed_precision(
        lambda: kr.layers.ESN(4, leaky=0.5, return_sequences=True), tmp_path
    )


def test_readout_trains_with_the_reservoir_fixed_and_under_xla():
    x, _ = checks.data(5)
    y = x.sum(axis=(1, 2))[:, None]
    results = []
    for jit_compile in (False, True):
        keras.utils.set_random_seed(0)
        esn = kr.layers.ESN(8, connectivity=0.5)
        model = keras.Sequential(
            [keras.Input(x.shape[1:]), esn, keras.layers.Dense(1)]
        )
        model.compile(keras.optimizers.SGD(0.1), "mse", jit_compile=jit_compile)
        reservoir = [np.array(w) for w in esn.weights]
        model.fit(x, y, epochs=2, verbose=0)
        for before, after in zip(reservoir, esn.weights, strict=True):
            np.testing.assert_array_equal(before, after)
        results.append(model.predict(x, verbose=0))
    np.testing.assert_allclose(results[0], results[1], atol=1e-5)


def test_tfa_layer_config_with_time_major():
    config = kr.layers.ESN(3).get_config()
    assert kr.layers.ESN.from_config({**config, "time_major": False})
    with pytest.raises(ValueError, match="time_major=True"):
        kr.layers.ESN.from_config({**config, "time_major": True})
