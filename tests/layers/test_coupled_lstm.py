import pathlib

import keras
import numpy as np
import pytest

import keras_recurrent as kr
from tests.layers.cell_layer_api import LSTM_CELL_OVERRIDES
from tests.layers.cell_layer_api import check_cell_arguments_exposed
from tests.layers.lstm_reference import assert_learns_sequence_sum


def test_learns_a_sequence_sum():
    assert_learns_sequence_sum(kr.layers.CoupledLSTM(8))


def test_quarter_fewer_weights_than_lstm():
    coupled = kr.layers.CoupledLSTM(8, use_peepholes=False)
    lstm = keras.layers.LSTM(8)
    for layer in (coupled, lstm):
        layer.build((None, None, 4))
    assert coupled.count_params() * 4 == lstm.count_params() * 3
    assert coupled.variant == "CIFG" and coupled.use_peepholes is False


def test_cell_arguments_are_explicit_properties():
    check_cell_arguments_exposed(
        kr.layers.CoupledLSTM,
        {"units": 7},
        {**LSTM_CELL_OVERRIDES, "use_peepholes": False},
    )


def test_keras_file_saved_with_the_old_default_loads():
    # Saved when `use_peepholes` defaulted to False: the config names it, so
    # the layer loads without peepholes and computes what it computed.
    fixtures = pathlib.Path(__file__).parent / "fixtures"
    model = keras.saving.load_model(fixtures / "coupled_lstm.keras")
    arrays = np.load(fixtures / "coupled_lstm_io.npz")
    np.testing.assert_allclose(
        model.predict(arrays["x"], verbose=0), arrays["y"], atol=1e-6
    )
    layer = model.layers[1]
    assert type(layer) is kr.layers.CoupledLSTM
    assert layer.use_peepholes is False
    names = [w.path.split("/")[-1] for w in layer.weights]
    assert names == ["kernel", "recurrent_kernel", "bias"]


@pytest.mark.parametrize("variant", ["CIFG", "V"])
def test_refuses_a_variant_as_the_cell_does(variant):
    with pytest.raises(ValueError) as cell_error:
        kr.layers.CoupledLSTMCell(4, variant=variant)
    with pytest.raises(ValueError) as layer_error:
        kr.layers.CoupledLSTM(4, variant=variant)
    assert str(layer_error.value) == str(cell_error.value)
    assert f"Received: variant={variant!r}" in str(layer_error.value)
