import keras_recurrent as kr
from tests.layers import addons_checks as checks
from tests.layers.cell_layer_api import check_cell_arguments_exposed
from tests.layers.lstm_reference import assert_learns_sequence_sum


def test_cell_arguments_are_explicit_properties():
    check_cell_arguments_exposed(
        kr.layers.LayerNormSimpleRNN,
        {"units": 3},
        {
            "activation": "relu",
            "use_bias": False,
            "layernorm_epsilon": 0.01,
            "kernel_initializer": "ones",
            "recurrent_initializer": "zeros",
            "bias_initializer": "ones",
            "gamma_initializer": "zeros",
            "kernel_regularizer": "l2",
            "recurrent_regularizer": "l1",
            "bias_regularizer": "l2",
            "gamma_regularizer": "l1",
            "kernel_constraint": "non_neg",
            "recurrent_constraint": "unit_norm",
            "bias_constraint": "max_norm",
            "gamma_constraint": "non_neg",
            "dropout": 0.1,
            "recurrent_dropout": 0.2,
            "seed": 5,
        },
    )


def test_learns_a_sequence_sum():
    assert_learns_sequence_sum(kr.layers.LayerNormSimpleRNN(8))


def test_keras_file_and_mixed_float16(tmp_path):
    checks.check_layer_saving_and_mixed_precision(
        lambda: kr.layers.LayerNormSimpleRNN(3, dropout=0.1, seed=2), tmp_path
    )
