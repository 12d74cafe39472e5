import keras
import numpy as np
import pytest

import keras_recurrent as kr
from tests.layers.lstm_reference import BLOCKS
from tests.layers.lstm_reference import lstm_sequence
from tests.layers.lstm_reference import named_weights
from tests.layers.lstm_reference import randomize_weights

VARIANTS = sorted(BLOCKS)
BATCH, STEPS, FEATURES, UNITS = 3, 5, 4, 6


def _data(seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(BATCH, STEPS, FEATURES)).astype("float32")
    mask = np.ones((BATCH, STEPS), dtype=bool)
    mask[1, 3:] = False  # padded at the end
    mask[2, 1] = False  # a hole in the middle
    return x, mask


def _run_cell(cell, x, mask=None, **rnn_kwargs):
    layer = keras.layers.RNN(
        cell, return_sequences=True, return_state=True, **rnn_kwargs
    )
    layer.build(x.shape)
    randomize_weights(layer)
    outputs = layer(x, mask=mask)
    return layer, [np.array(o) for o in outputs]


@pytest.mark.parametrize("variant", VARIANTS)
def test_matches_numpy_reference_with_mask(variant):
    x, mask = _data()
    cell = kr.layers.LSTMVariantCell(UNITS, variant=variant)
    layer, (sequence, *states) = _run_cell(cell, x, mask)
    expected, expected_states = lstm_sequence(
        x.astype("float64"), named_weights(layer), variant, mask=mask
    )
    np.testing.assert_allclose(sequence, expected, atol=1e-5)
    assert len(states) == len(expected_states)
    for state, expected_state in zip(states, expected_states):
        np.testing.assert_allclose(state, expected_state, atol=1e-5)


@pytest.mark.parametrize("variant", VARIANTS)
def test_weights_follow_documented_layout(variant):
    cell = kr.layers.LSTMVariantCell(UNITS, variant=variant)
    keras.layers.RNN(cell).build((None, None, FEATURES))
    weights = named_weights(cell)
    n_blocks = len(BLOCKS[variant])
    assert weights["kernel"].shape == (FEATURES, n_blocks * UNITS)
    assert weights["recurrent_kernel"].shape == (UNITS, n_blocks * UNITS)
    assert weights["bias"].shape == (n_blocks * UNITS,)
    peepholes = sorted(k for k in weights if k.endswith("_peephole_weights"))
    expected = sorted(
        f"{name}_gate_peephole_weights"
        for gate, name in (("i", "input"), ("f", "forget"), ("o", "output"))
        if variant != "NP"
        and (gate in BLOCKS[variant] or (variant == "CIFG" and gate == "f"))
    )
    assert peepholes == expected
    for name in peepholes:
        assert weights[name].shape == (UNITS,)
    if variant == "FGR":
        assert weights["gate_recurrent_kernel"].shape == (3 * UNITS, 3 * UNITS)
        assert cell.state_size == [UNITS, UNITS, 3 * UNITS]
    else:
        assert cell.state_size == [UNITS, UNITS]


def test_unit_forget_bias_sets_only_the_forget_block():
    cell = kr.layers.LSTMVariantCell(UNITS, variant="NIG")  # blocks [f, c, o]
    keras.layers.RNN(cell).build((None, None, FEATURES))
    bias = np.array(cell.bias).reshape(3, UNITS)
    np.testing.assert_array_equal(
        bias, [[1.0] * UNITS, [0.0] * UNITS, [0.0] * UNITS]
    )
    cell = kr.layers.LSTMVariantCell(
        UNITS, variant="NFG", unit_forget_bias=True
    )
    keras.layers.RNN(cell).build((None, None, FEATURES))
    np.testing.assert_array_equal(np.array(cell.bias), 0.0)  # no forget gate


def test_projection_and_cell_clip_match_reference():
    x, mask = _data(1)
    cell = kr.layers.LSTMVariantCell(
        UNITS, variant="V", projection_units=3, cell_clip=0.3
    )
    layer, (sequence, h, c) = _run_cell(cell, x, mask)
    weights = named_weights(layer)
    assert weights["projection_kernel"].shape == (UNITS, 3)
    assert weights["recurrent_kernel"].shape == (3, 4 * UNITS)
    expected, (eh, ec) = lstm_sequence(
        x.astype("float64"), weights, "V", mask=mask, cell_clip=0.3
    )
    assert sequence.shape == (BATCH, STEPS, 3)
    np.testing.assert_allclose(sequence, expected, atol=1e-5)
    np.testing.assert_allclose(h, eh, atol=1e-5)
    np.testing.assert_allclose(c, ec, atol=1e-5)
    assert np.abs(c).max() <= 0.3 + 1e-7


def test_np_variant_equals_keras_lstm_cell():
    x, mask = _data(2)
    ours = keras.layers.RNN(
        kr.layers.LSTMVariantCell(UNITS, variant="NP"), return_sequences=True
    )
    theirs = keras.layers.RNN(
        keras.layers.LSTMCell(UNITS), return_sequences=True
    )
    ours.build(x.shape)
    theirs.build(x.shape)
    randomize_weights(ours)
    theirs.set_weights(ours.get_weights())
    np.testing.assert_allclose(
        ours(x, mask=mask), theirs(x, mask=mask), atol=1e-6
    )


def test_use_peepholes_overrides_the_variant():
    cell = kr.layers.LSTMVariantCell(UNITS, variant="CIFG", use_peepholes=False)
    keras.layers.RNN(cell).build((None, None, FEATURES))
    assert not [w for w in cell.weights if "peephole" in w.path]
    with pytest.raises(ValueError, match="use_peepholes"):
        kr.layers.LSTMVariantCell(UNITS, variant="NP", use_peepholes=True)


def test_variant_names_are_case_insensitive_with_vanilla_alias():
    assert kr.layers.LSTMVariantCell(2, variant="vanilla").variant == "V"
    assert kr.layers.LSTMVariantCell(2, variant="cifg").variant == "CIFG"


@pytest.mark.parametrize(
    "kwargs, argument",
    [
        ({"units": 0}, "units=0"),
        ({"units": -3}, "units=-3"),
        ({"units": 2.5}, "units=2.5"),
        ({"units": 4, "variant": "XYZ"}, "variant='XYZ'"),
        ({"units": 4, "variant": None}, "variant=None"),
        ({"units": 4, "projection_units": 0}, "projection_units=0"),
        ({"units": 4, "dropout": 1.5}, "dropout=1.5"),
        ({"units": 4, "recurrent_dropout": -0.1}, "recurrent_dropout=-0.1"),
        ({"units": 4, "cell_clip": -1.0}, "cell_clip=-1.0"),
    ],
)
def test_bad_arguments_raise_value_error(kwargs, argument):
    with pytest.raises(ValueError, match=argument.replace("(", r"\(")):
        kr.layers.LSTMVariantCell(**kwargs)


def test_bad_inputs_raise_value_error():
    cell = kr.layers.LSTMVariantCell(UNITS)
    with pytest.raises(ValueError, match=r"rank 2.*inputs.shape=\(2, 3, 4\)"):
        cell.build((2, 3, 4))
    layer = keras.layers.RNN(kr.layers.LSTMVariantCell(UNITS))
    with pytest.raises(ValueError, match="inputs.dtype=complex64"):
        layer(np.ones((2, 3, 4), dtype="complex64"))


def test_get_config_round_trips_every_argument():
    cell = kr.layers.LSTMVariantCell(
        5,
        variant="FGR",
        activation="softsign",
        recurrent_activation="hard_sigmoid",
        use_bias=False,
        kernel_initializer="ones",
        recurrent_initializer="zeros",
        peephole_initializer="he_normal",
        projection_initializer="lecun_normal",
        unit_forget_bias=False,
        kernel_regularizer="l2",
        peephole_regularizer="l1",
        projection_regularizer="l1",
        peephole_constraint="non_neg",
        projection_constraint="unit_norm",
        dropout=0.25,
        recurrent_dropout=0.125,
        cell_clip=3.0,
        projection_units=2,
        seed=7,
    )
    config = cell.get_config()
    clone = kr.layers.LSTMVariantCell.from_config(config)
    assert clone.get_config() == config
    assert config["variant"] == "FGR" and config["projection_units"] == 2
    assert config["peephole_constraint"]["class_name"] == "NonNeg"
