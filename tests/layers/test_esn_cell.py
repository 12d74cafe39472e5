import keras
import numpy as np
import pytest

import keras_recurrent as kr
from tests.layers import addons_checks as checks
from tests.layers.addons_reference import esn_step
from tests.layers.addons_reference import weights_by_path


def test_weights_exactly_as_documented_and_not_trainable():
    cell = kr.layers.ESNCell(3)
    checks.check_weights(
        cell,
        [
            ("recurrent_kernel", (3, 3), False),
            ("kernel", (2, 3), False),
            ("bias", (3,), False),
        ],
    )
    assert cell.state_size == [3] and cell.output_size == 3


def test_matches_reference_with_mask_and_initial_state():
    cell = kr.layers.ESNCell(3, leaky=0.4)
    layer = keras.layers.RNN(cell)
    layer.build((None, None, 2))
    checks.randomize(layer)
    weights = weights_by_path(cell)
    checks.check_reference(
        cell, lambda x, states: esn_step(x, states, weights, leaky=0.4)
    )


@pytest.mark.parametrize("use_norm2", [False, True])
def test_reservoir_has_the_spectral_radius_and_sparsity(use_norm2):
    keras.utils.set_random_seed(1)
    cell = kr.layers.ESNCell(
        60, connectivity=0.2, spectral_radius=0.8, use_norm2=use_norm2
    )
    keras.layers.RNN(cell).build((None, None, 2))
    reservoir = np.asarray(cell.recurrent_kernel)
    radius = np.abs(np.linalg.eigvals(reservoir)).max()
    if use_norm2:
        # The Frobenius norm, an upper bound of the radius, is scaled.
        np.testing.assert_allclose(np.linalg.norm(reservoir), 0.8, rtol=1e-5)
        assert radius < 0.8
    else:
        np.testing.assert_allclose(radius, 0.8, rtol=1e-4)
    assert 0.1 < np.mean(reservoir != 0) < 0.3


def test_no_connections_give_a_zero_reservoir():
    cell = kr.layers.ESNCell(4, connectivity=0.0)
    keras.layers.RNN(cell).build((None, None, 2))
    np.testing.assert_array_equal(cell.recurrent_kernel, np.zeros((4, 4)))


def test_config_round_trips():
    checks.check_config_round_trip(
        kr.layers.ESNCell,
        connectivity=0.3,
        leaky=0.5,
        spectral_radius=1.2,
        use_norm2=True,
        use_bias=False,
    )


@pytest.mark.parametrize(
    "kwargs, argument",
    [
        ({"units": 0}, "units=0"),
        ({"units": 2, "connectivity": 1.5}, "connectivity=1.5"),
        ({"units": 2, "leaky": 0}, "leaky=0"),
        ({"units": 2, "spectral_radius": -1.0}, "spectral_radius=-1.0"),
        ({"units": 2, "use_norm2": 1}, "use_norm2=1"),
    ],
)
def test_bad_arguments_raise_value_error(kwargs, argument):
    with pytest.raises(ValueError, match=f"Received: {argument}"):
        kr.layers.ESNCell(**kwargs)
