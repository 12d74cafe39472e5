"""The layers take their arguments, properties and signature from their
cell (`keras_recurrent.layers._cell_rnn.CellRNN`): an argument added to a
cell reaches its layer without touching the layer."""

import inspect

import keras
import numpy as np
import pytest

import keras_recurrent as kr
from keras_recurrent.layers._cell_layer import cell_parameters
from keras_recurrent.layers._cell_rnn import RNN_OPTIONS


class _ScaledCell(kr.layers.PeepholeLSTMCell):
    """A cell with one more argument than its base."""

    def __init__(self, units, input_scale=1.0, **kwargs):
        super().__init__(units, **kwargs)
        self.input_scale = input_scale

    def step(self, inputs, states, loop_state):
        return super().step(inputs * self.input_scale, states, loop_state)

    def get_config(self):
        return {**super().get_config(), "input_scale": self.input_scale}


class _ScaledLSTM(kr.layers.PeepholeLSTM):
    cell_class = _ScaledCell


def test_an_argument_added_to_the_cell_reaches_the_layer():
    layer = _ScaledLSTM(4, input_scale=0.0, cell_clip=2.0, name="scaled")
    signature = inspect.signature(_ScaledLSTM)
    assert signature.parameters["input_scale"].default == 1.0
    assert layer.input_scale == 0.0 and layer.cell.input_scale == 0.0
    assert layer.cell_clip == 2.0
    config = layer.get_config()
    assert config["input_scale"] == 0.0 and config["name"] == "scaled"
    restored = _ScaledLSTM.from_config(config)
    assert restored.input_scale == 0.0
    # Zero inputs: the output is that of a zero sequence.
    x = np.random.default_rng(0).normal(size=(2, 3, 5)).astype("float32")
    np.testing.assert_allclose(
        keras.ops.convert_to_numpy(layer(x)),
        keras.ops.convert_to_numpy(layer(0 * x)),
    )


def test_signature_is_the_cells_then_the_rnn_options():
    names = [p.name for p in cell_parameters(kr.layers.CoupledLSTMCell)]
    assert names[:3] == ["units", "use_peepholes", "activation"]
    assert "variant" not in names  # fixed by the cell class
    parameters = inspect.signature(kr.layers.CoupledLSTM).parameters
    assert list(parameters) == [*names, *RNN_OPTIONS, "use_cudnn", "kwargs"]
    for name in RNN_OPTIONS:
        assert parameters[name].default is False
    # As in `keras.layers.LSTM`.
    assert parameters["use_cudnn"].default == "auto"
    # Positional arguments keep the cell's order.
    assert kr.layers.LSTMVariant(3, "nfg").variant == "NFG"
    assert kr.layers.CoupledLSTM(3, False).use_peepholes is False


def test_unknown_and_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="Unrecognized keyword arguments"):
        kr.layers.LSTMVariant(3, not_an_argument=1)
    with pytest.raises(ValueError, match="return_sequences"):
        kr.layers.GatedFeedbackRNN(3, return_sequences="no")
    with pytest.raises(TypeError, match="units"):
        kr.layers.PeepholeLSTM()
