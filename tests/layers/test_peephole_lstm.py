import pytest

import keras_recurrent as kr
from tests.layers.cell_layer_api import LSTM_CELL_OVERRIDES
from tests.layers.cell_layer_api import check_cell_arguments_exposed
from tests.layers.lstm_reference import assert_learns_sequence_sum


def test_learns_a_sequence_sum():
    assert_learns_sequence_sum(kr.layers.PeepholeLSTM(8))


def test_layer_properties_and_weight_count():
    layer = kr.layers.PeepholeLSTM(7, projection_units=3, dropout=0.1)
    layer.build((None, None, 2))
    assert (layer.units, layer.variant, layer.use_peepholes) == (7, "V", True)
    assert layer.projection_units == 3 and layer.dropout == 0.1
    assert len(layer.trainable_weights) == 7  # 3 matrices, 3 peepholes, P


def test_cell_arguments_are_explicit_properties():
    check_cell_arguments_exposed(
        kr.layers.PeepholeLSTM, {"units": 7}, LSTM_CELL_OVERRIDES
    )


@pytest.mark.parametrize(
    "fixed", [{"variant": "V"}, {"variant": "NP"}, {"use_peepholes": True}]
)
def test_refuses_what_the_cell_refuses(fixed):
    # Once accepted silently when equal to the default (`variant="V"`).
    with pytest.raises(ValueError) as cell_error:
        kr.layers.PeepholeLSTMCell(4, **fixed)
    with pytest.raises(ValueError) as layer_error:
        kr.layers.PeepholeLSTM(4, **fixed)
    assert str(layer_error.value) == str(cell_error.value)
    name, value = next(iter(fixed.items()))
    assert f"Received: {name}={value!r}" in str(layer_error.value)
