import keras
import numpy as np
import pytest

import keras_recurrent as kr
from tests.layers import addons_checks as checks
from tests.layers.addons_reference import layer_norm_simple_rnn_step
from tests.layers.addons_reference import weights_by_path


def test_weights_exactly_as_documented():
    cell = kr.layers.LayerNormSimpleRNNCell(3)
    checks.check_weights(
        cell,
        [
            ("kernel", (2, 3), True),
            ("recurrent_kernel", (3, 3), True),
            ("bias", (3,), True),
            ("gamma", (3,), True),
        ],
    )
    assert cell.state_size == [3] and cell.output_size == 3
    np.testing.assert_array_equal(cell.gamma, np.ones(3))


def test_matches_reference_with_mask_and_initial_state():
    cell = kr.layers.LayerNormSimpleRNNCell(3)
    layer = keras.layers.RNN(cell)
    layer.build((None, None, 2))
    checks.randomize(layer)
    weights = weights_by_path(cell)
    checks.check_reference(
        cell, lambda x, states: layer_norm_simple_rnn_step(x, states, weights)
    )


def test_dropout_is_per_sequence_and_seeded():
    checks.check_dropout(
        kr.layers.LayerNormSimpleRNN,
        lambda x, states, w, masks: layer_norm_simple_rnn_step(
            x, states, w, dropout_masks=masks
        ),
    )


def test_gamma_regularizer_and_constraint_reach_gamma():
    cell = kr.layers.LayerNormSimpleRNNCell(
        3, gamma_regularizer="l2", gamma_constraint="non_neg"
    )
    keras.layers.RNN(cell).build((None, None, 2))
    assert cell.gamma.constraint is cell.gamma_constraint
    assert len(cell.losses) == 1


def test_config_round_trips():
    checks.check_config_round_trip(
        kr.layers.LayerNormSimpleRNNCell,
        layernorm_epsilon=0.01,
        dropout=0.1,
        recurrent_dropout=0.2,
        seed=3,
        use_bias=False,
        gamma_regularizer=None,
    )


@pytest.mark.parametrize(
    "kwargs, argument",
    [
        ({"units": -1}, "units=-1"),
        ({"units": 2, "recurrent_dropout": -0.1}, "recurrent_dropout=-0.1"),
        ({"units": 2, "layernorm_epsilon": "small"}, "layernorm_epsilon="),
    ],
)
def test_bad_arguments_raise_value_error(kwargs, argument):
    with pytest.raises(ValueError, match=f"Received: {argument}"):
        kr.layers.LayerNormSimpleRNNCell(**kwargs)
