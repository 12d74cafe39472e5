import keras
import pytest

import keras_recurrent as kr
from tests.layers import addons_checks as checks
from tests.layers.addons_reference import nas_step
from tests.layers.addons_reference import weights_by_path


@pytest.mark.parametrize("projection", [None, 2])
def test_weights_exactly_as_documented(projection):
    cell = kr.layers.NASCell(3, projection=projection, use_bias=True)
    state = projection or 3
    expected = [
        ("recurrent_kernel", (state, 24), True),
        ("kernel", (2, 24), True),
        ("bias", (24,), True),
    ]
    if projection:
        expected.append(("projection_weights", (3, 2), True))
    checks.check_weights(cell, expected)
    # TFA's state order: the cell state, then the output.
    assert cell.state_size == [3, state] and cell.output_size == state


@pytest.mark.parametrize("projection", [None, 2])
def test_matches_reference_with_mask_and_initial_states(projection):
    cell = kr.layers.NASCell(3, projection=projection, use_bias=True)
    layer = keras.layers.RNN(cell)
    layer.build((None, None, 2))
    checks.randomize(layer)
    weights = weights_by_path(cell)
    if keras.backend.backend() == "jax":
        pytest.skip("Keras' JAX loop outputs the first state when masked")
    checks.check_reference(
        cell, lambda x, states: nas_step(x, states, weights), output_index=1
    )


def test_config_round_trips():
    checks.check_config_round_trip(
        kr.layers.NASCell,
        projection=2,
        use_bias=True,
        projection_initializer="zeros",
    )


@pytest.mark.parametrize(
    "kwargs, argument",
    [
        ({"units": 0}, "units=0"),
        ({"units": 2, "projection": 0}, "projection=0"),
        ({"units": 2, "use_bias": None}, "use_bias=None"),
    ],
)
def test_bad_arguments_raise_value_error(kwargs, argument):
    with pytest.raises(ValueError, match=f"Received: {argument}"):
        kr.layers.NASCell(**kwargs)
