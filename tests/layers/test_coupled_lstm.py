import keras

import keras_recurrent as kr
from tests.layers.cell_layer_api import LSTM_CELL_OVERRIDES
from tests.layers.cell_layer_api import check_cell_arguments_exposed
from tests.layers.lstm_reference import assert_learns_sequence_sum


def test_learns_a_sequence_sum():
    assert_learns_sequence_sum(kr.layers.CoupledLSTM(8))


def test_quarter_fewer_weights_than_lstm():
    coupled = kr.layers.CoupledLSTM(8)
    lstm = keras.layers.LSTM(8)
    for layer in (coupled, lstm):
        layer.build((None, None, 4))
    assert coupled.count_params() * 4 == lstm.count_params() * 3
    assert coupled.variant == "CIFG" and coupled.use_peepholes is False


def test_cell_arguments_are_explicit_properties():
    check_cell_arguments_exposed(
        kr.layers.CoupledLSTM,
        {"units": 7},
        {**LSTM_CELL_OVERRIDES, "use_peepholes": True},
    )
