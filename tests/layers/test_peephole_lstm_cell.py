import keras
import numpy as np
import pytest

import keras_recurrent as kr
from tests.layers.lstm_reference import named_weights
from tests.layers.lstm_reference import randomize_weights


def _x(seed=0):
    return np.random.default_rng(seed).normal(size=(2, 6, 3)).astype("float32")


def test_weights_exactly_as_documented():
    cell = kr.layers.PeepholeLSTMCell(5)
    keras.layers.RNN(cell).build((None, None, 3))
    assert [(w.path.split("/")[-1], tuple(w.shape)) for w in cell.weights] == [
        ("kernel", (3, 20)),
        ("recurrent_kernel", (5, 20)),
        ("bias", (20,)),
        ("input_gate_peephole_weights", (5,)),
        ("forget_gate_peephole_weights", (5,)),
        ("output_gate_peephole_weights", (5,)),
    ]
    assert cell.state_size == [5, 5] and cell.output_size == 5


def test_zero_peepholes_equal_keras_lstm_cell():
    x = _x()
    ours = keras.layers.RNN(
        kr.layers.PeepholeLSTMCell(5, peephole_initializer="zeros"),
        return_sequences=True,
        return_state=True,
    )
    theirs = keras.layers.RNN(
        keras.layers.LSTMCell(5), return_sequences=True, return_state=True
    )
    ours.build(x.shape)
    theirs.build(x.shape)
    randomize_weights(theirs)
    cell = ours.cell
    for name in ("kernel", "recurrent_kernel", "bias"):
        getattr(cell, name).assign(getattr(theirs.cell, name))
    for a, b in zip(ours(x), theirs(x)):
        np.testing.assert_allclose(a, b, atol=1e-6)


def test_output_gate_reads_the_new_cell_state():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(2, 3)).astype("float32")
    h0, c0 = rng.normal(size=(2, 4)), rng.normal(size=(2, 4))
    cell = kr.layers.PeepholeLSTMCell(4)
    cell.build((None, 3))
    randomize_weights(cell)
    w = named_weights(cell)
    h, (_, c) = cell(x, [h0.astype("float32"), c0.astype("float32")])

    z = np.split(
        x @ w["kernel"] + h0 @ w["recurrent_kernel"] + w["bias"], 4, -1
    )
    z_i, z_f, z_c, z_o = z
    i = 1 / (1 + np.exp(-(z_i + w["input_gate_peephole_weights"] * c0)))
    f = 1 / (1 + np.exp(-(z_f + w["forget_gate_peephole_weights"] * c0)))
    c1 = f * c0 + i * np.tanh(z_c)
    p_o = w["output_gate_peephole_weights"]
    o_new = 1 / (1 + np.exp(-(z_o + p_o * c1)))
    o_old = 1 / (1 + np.exp(-(z_o + p_o * c0)))
    np.testing.assert_allclose(c, c1, atol=1e-5)
    np.testing.assert_allclose(h, o_new * np.tanh(c1), atol=1e-5)
    assert np.abs(o_old * np.tanh(c1) - np.array(h)).max() > 1e-3


def test_config_has_no_variant_and_round_trips():
    cell = kr.layers.PeepholeLSTMCell(4, cell_clip=1.5, projection_units=2)
    config = cell.get_config()
    assert "variant" not in config and "use_peepholes" not in config
    assert kr.layers.PeepholeLSTMCell.from_config(config).get_config() == config
    with pytest.raises(ValueError, match="variant='NP'"):
        kr.layers.PeepholeLSTMCell(4, variant="NP")
    with pytest.raises(ValueError, match="units=0"):
        kr.layers.PeepholeLSTMCell(0)
