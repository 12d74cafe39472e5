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


def test_defaults_follow_keras_and_greff_et_al():
    cell = kr.layers.CoupledLSTMCell(3)
    keras.layers.RNN(cell).build((None, None, 2))
    assert cell.use_peepholes is True and cell.unit_forget_bias is True
    np.testing.assert_array_equal(
        np.array(cell.bias), [1, 1, 1, 0, 0, 0, 0, 0, 0]
    )
    config = cell.get_config()
    assert "variant" not in config and config["use_peepholes"] is True
    assert kr.layers.CoupledLSTMCell.from_config(config).get_config() == config
    with pytest.raises(ValueError, match="variant='V'"):
        kr.layers.CoupledLSTMCell(3, variant="V")


def test_default_is_the_cifg_variant():
    # One meaning of CIFG in the package: Greff et al.'s, with peepholes.
    x = np.random.default_rng(1).normal(size=(2, 4, 3)).astype("float32")
    coupled = keras.layers.RNN(kr.layers.CoupledLSTMCell(5))
    variant = keras.layers.RNN(kr.layers.LSTMVariantCell(5, variant="CIFG"))
    for layer in (coupled, variant):
        layer.build(x.shape)
    randomize_weights(coupled)
    assert [w.path.split("/")[-1] for w in coupled.weights] == [
        w.path.split("/")[-1] for w in variant.weights
    ]
    variant.set_weights(coupled.get_weights())
    config = coupled.cell.get_config()
    del config["name"]
    assert config == {
        key: value
        for key, value in variant.cell.get_config().items()
        if key not in ("name", "variant")
    }
    np.testing.assert_allclose(coupled(x), variant(x), atol=1e-6)
    layer = kr.layers.CoupledLSTM(5)
    assert layer.use_peepholes is True
    assert layer.get_config()["use_peepholes"] is True
