import keras
import numpy as np
import pytest

import keras_recurrent as kr
from tests.layers import addons_checks as checks
from tests.layers.addons_reference import layer_norm_lstm_step
from tests.layers.addons_reference import weights_by_path


def test_weights_exactly_as_documented():
    cell = kr.layers.LayerNormLSTMCell(3)
    checks.check_weights(
        cell,
        [
            ("kernel", (2, 12), True),
            ("recurrent_kernel", (3, 12), True),
            ("bias", (12,), True),
            ("kernel_norm/gamma", (12,), True),
            ("kernel_norm/beta", (12,), True),
            ("recurrent_norm/gamma", (12,), True),
            ("recurrent_norm/beta", (12,), True),
            ("state_norm/gamma", (3,), True),
            ("state_norm/beta", (3,), True),
        ],
    )
    assert cell.state_size == [3, 3] and cell.output_size == 3
    # Keras' unit forget bias; gammas 1 and betas 0 (TFA's defaults).
    np.testing.assert_array_equal(cell.bias, [0] * 3 + [1] * 3 + [0] * 6)
    np.testing.assert_array_equal(cell.kernel_norm.gamma, np.ones(12))


def test_matches_reference_with_mask_and_initial_states():
    cell = kr.layers.LayerNormLSTMCell(3, norm_epsilon=0.01)
    layer = keras.layers.RNN(cell)
    layer.build((None, None, 2))
    checks.randomize(layer)
    weights = weights_by_path(cell)
    checks.check_reference(
        cell,
        lambda x, states: layer_norm_lstm_step(x, states, weights, 0.01),
    )


def test_dropout_is_per_sequence_and_seeded():
    checks.check_dropout(
        kr.layers.LayerNormLSTM,
        lambda x, states, w, masks: layer_norm_lstm_step(
            x, states, w, dropout_masks=masks
        ),
    )


def test_config_round_trips():
    checks.check_config_round_trip(
        kr.layers.LayerNormLSTMCell,
        norm_epsilon=0.01,
        dropout=0.1,
        recurrent_dropout=0.2,
        seed=3,
        use_bias=False,
        unit_forget_bias=False,
        norm_gamma_initializer="zeros",
    )


@pytest.mark.parametrize(
    "kwargs, argument",
    [
        ({"units": 0}, "units=0"),
        ({"units": 2, "dropout": 1.0}, "dropout=1.0"),
        ({"units": 2, "norm_epsilon": 0}, "norm_epsilon=0"),
        ({"units": 2, "use_bias": "yes"}, "use_bias='yes'"),
    ],
)
def test_bad_arguments_raise_value_error(kwargs, argument):
    with pytest.raises(ValueError, match=f"Received: {argument}"):
        kr.layers.LayerNormLSTMCell(**kwargs)


def test_implementation_is_taken_and_ignored_as_by_keras_lstm():
    cell = kr.layers.LayerNormLSTMCell(2, implementation=1)
    assert cell.implementation == 1
    assert "implementation" not in cell.get_config()
    layer = kr.layers.LayerNormLSTM(2, implementation=1)
    assert layer.cell.implementation == 1
    assert "implementation" not in layer.get_config()
