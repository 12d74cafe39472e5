import keras
import numpy as np
import pytest

import keras_recurrent as kr
from tests.layers.lstm_reference import lstm_sequence
from tests.layers.lstm_reference import named_weights
from tests.layers.lstm_reference import randomize_weights


@pytest.mark.parametrize("use_peepholes", [False, True])
def test_matches_reference_with_input_gate_one_minus_forget(use_peepholes):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(3, 6, 4)).astype("float32")
    mask = np.ones((3, 6), bool)
    mask[0, 3:] = False
    layer = keras.layers.RNN(
        kr.layers.CoupledLSTMCell(5, use_peepholes=use_peepholes),
        return_sequences=True,
        return_state=True,
    )
    layer.build(x.shape)
    randomize_weights(layer)
    sequence, h, c = layer(x, mask=mask)
    weights = named_weights(layer)
    expected, (eh, ec) = lstm_sequence(
        x.astype("float64"), weights, "CIFG", mask=mask
    )
    np.testing.assert_allclose(sequence, expected, atol=1e-5)
    np.testing.assert_allclose(c, ec, atol=1e-5)
    names = [w.path.split("/")[-1] for w in layer.weights]
    expected_names = ["kernel", "recurrent_kernel", "bias"]
    if use_peepholes:
        expected_names += [
            "forget_gate_peephole_weights",
            "output_gate_peephole_weights",
        ]
    assert names == expected_names
    assert weights["kernel"].shape == (4, 15)


def test_defaults_follow_keras_and_tf1():
    cell = kr.layers.CoupledLSTMCell(3)
    keras.layers.RNN(cell).build((None, None, 2))
    assert cell.use_peepholes is False and cell.unit_forget_bias is True
    np.testing.assert_array_equal(
        np.array(cell.bias), [1, 1, 1, 0, 0, 0, 0, 0, 0]
    )
    config = cell.get_config()
    assert "variant" not in config and config["use_peepholes"] is False
    assert kr.layers.CoupledLSTMCell.from_config(config).get_config() == config
    with pytest.raises(ValueError, match="variant='V'"):
        kr.layers.CoupledLSTMCell(3, variant="V")
