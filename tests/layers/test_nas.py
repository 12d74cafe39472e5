import keras
import numpy as np

import keras_recurrent as kr
from tests.layers import addons_checks as checks
from tests.layers.addons_reference import nas_step
from tests.layers.addons_reference import sequence
from tests.layers.addons_reference import weights_by_path
from tests.layers.cell_layer_api import check_cell_arguments_exposed


def _numpy(tensor):
    return keras.ops.convert_to_numpy(tensor)


def test_cell_arguments_are_explicit_properties():
    check_cell_arguments_exposed(
        kr.layers.NAS,
        {"units": 3},
        {
            "projection": 2,
            "use_bias": True,
            "kernel_initializer": "ones",
            "recurrent_initializer": "zeros",
            "projection_initializer": "ones",
            "bias_initializer": "ones",
        },
    )


def test_masked_steps_repeat_the_output_on_every_backend():
    # The layer loops `[m, c]` for Keras (whose JAX loop outputs the first
    # state at masked steps) and returns TFA's `[c, m]`.
    x, mask = checks.data(6)
    layer = kr.layers.NAS(
        3, projection=2, return_sequences=True, return_state=True
    )
    layer.build(x.shape)
    checks.randomize(layer)
    outputs, c, m = (_numpy(t) for t in layer(x, mask=mask))
    weights = weights_by_path(layer.cell)
    expected, (expected_c, expected_m) = sequence(
        lambda x_t, states: nas_step(x_t, states, weights),
        x,
        [np.zeros((3, 3)), np.zeros((3, 2))],
        mask,
        output_index=1,
    )
    np.testing.assert_allclose(outputs, expected, atol=1e-5)
    np.testing.assert_allclose(c, expected_c, atol=1e-5)
    np.testing.assert_allclose(m, expected_m, atol=1e-5)


def test_keras_file_and_mixed_float16(tmp_path):
    checks.check_layer_saving_and_mixed_precision(
        lambda: kr.layers.NAS(3, projection=2), tmp_path
    )


def test_stateful_continues_across_calls():
    x, _ = checks.data(7)
    stateful = kr.layers.NAS(3, return_sequences=True, stateful=True)
    model = keras.Sequential([keras.Input(batch_shape=x.shape), stateful])
    checks.randomize(stateful)
    whole = kr.layers.NAS(3, return_sequences=True)
    whole.build(x.shape)
    whole.set_weights(stateful.get_weights())
    chunks = [model(x[:, :2]), model(x[:, 2:])]
    np.testing.assert_allclose(
        np.concatenate([_numpy(c) for c in chunks], 1),
        _numpy(whole(x)),
        atol=1e-5,
    )
