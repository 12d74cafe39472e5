import keras
import numpy as np
import pytest

import keras_recurrent as kr
from tests.layers.dropout_reference import check_per_sequence_dropout
from tests.layers.gated_feedback_reference import gf_reference
from tests.layers.gated_feedback_reference import gf_sequence
from tests.layers.gated_feedback_reference import keras_cells
from tests.layers.gated_feedback_reference import keras_stacked_weights
from tests.layers.gated_feedback_reference import named_weights
from tests.layers.gated_feedback_reference import randomize_weights

BATCH, STEPS, FEATURES = 3, 5, 4
WIDTHS = [5, 3, 4]
CELL_TYPES = ("simple", "gru", "lstm")
FEEDBACK = ("gated", "fixed", "none")


def _data(seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(BATCH, STEPS, FEATURES)).astype("float32")
    mask = np.ones((BATCH, STEPS), dtype=bool)
    mask[0, 3:] = False
    mask[2, 1] = False
    return x, mask


def _rnn(cell, **kwargs):
    layer = keras.layers.RNN(
        cell, return_sequences=True, return_state=True, **kwargs
    )
    layer.build((None, None, FEATURES))
    randomize_weights(layer)
    return layer


@pytest.mark.parametrize("feedback", FEEDBACK)
@pytest.mark.parametrize("cell_type", CELL_TYPES)
def test_cell_matches_numpy_reference(cell_type, feedback):
    _check_against_reference(WIDTHS, cell_type, feedback)


@pytest.mark.parametrize("cell_type", CELL_TYPES)
def test_equal_widths_match_numpy_reference(cell_type):
    # Equal widths broadcast the gates through a reshape, unequal ones
    # through a matmul: both must give the reference.
    _check_against_reference([4, 4, 4], cell_type, "gated")


def _check_against_reference(widths, cell_type, feedback):
    x, mask = _data()
    cell = kr.layers.GatedFeedbackCell(
        widths, cell_type=cell_type, feedback=feedback, output_mode="all"
    )
    layer = _rnn(cell)
    sequence, *states = layer(x, mask=mask)
    expected, expected_states, expected_gates = gf_sequence(
        x.astype("float64"),
        named_weights(layer),
        widths,
        cell_type,
        feedback,
        mask=mask,
        output_mode="all",
    )
    np.testing.assert_allclose(sequence, expected, atol=1e-5)
    assert len(states) == len(expected_states) == len(cell.state_size)
    for state, expected_state in zip(states, expected_states, strict=True):
        np.testing.assert_allclose(state, expected_state, atol=1e-5)
    gates = cell.gate_values(x, mask=mask)
    assert gates.shape == (BATCH, STEPS, 3, 3)
    np.testing.assert_allclose(gates, expected_gates, atol=1e-5)


def test_state_and_output_sizes():
    lstm = kr.layers.GatedFeedbackCell([4, 2], cell_type="lstm")
    assert lstm.state_size == [4, 4, 2, 2] and lstm.output_size == 2
    gru = kr.layers.GatedFeedbackCell(3, num_layers=3, output_mode="all")
    assert gru.state_size == [3, 3, 3] and gru.output_size == 9
    states = lstm.get_initial_state(5)
    assert [tuple(s.shape) for s in states] == [(5, 4), (5, 4), (5, 2), (5, 2)]


def test_weight_names_and_shapes():
    cell = kr.layers.GatedFeedbackCell(WIDTHS, cell_type="lstm")
    cell.build((None, FEATURES))
    shapes = {w.path.split("/")[-1]: tuple(w.shape) for w in cell.weights}
    assert shapes == {
        "kernel_0": (4, 20),
        "recurrent_kernel_0": (5, 15),
        "feedback_kernel_0": (12, 5),
        "bias_0": (20,),
        "gate_kernel_0": (4, 3),
        "kernel_1": (5, 12),
        "recurrent_kernel_1": (3, 9),
        "feedback_kernel_1": (12, 3),
        "bias_1": (12,),
        "gate_kernel_1": (5, 3),
        "kernel_2": (3, 16),
        "recurrent_kernel_2": (4, 12),
        "feedback_kernel_2": (12, 4),
        "bias_2": (16,),
        "gate_kernel_2": (3, 3),
        "gate_recurrent_kernel": (12, 9),
    }
    # unit_forget_bias: the f block of every LSTM bias starts at 1.
    np.testing.assert_array_equal(np.array(cell.biases[1])[3:6], 1.0)
    simple = kr.layers.GatedFeedbackCell([2, 3], feedback="none")
    simple.build((None, FEATURES))
    shapes = {w.path.split("/")[-1]: tuple(w.shape) for w in simple.weights}
    assert shapes == {
        "kernel_0": (4, 2),
        "feedback_kernel_0": (2, 2),
        "bias_0": (2,),
        "kernel_1": (2, 3),
        "feedback_kernel_1": (3, 3),
        "bias_1": (3,),
    }


@pytest.mark.parametrize("cell_type", CELL_TYPES)
def test_no_feedback_equals_keras_stacked_cells(cell_type):
    x, mask = _data(1)
    layer = _rnn(
        kr.layers.GatedFeedbackCell(
            WIDTHS, cell_type=cell_type, feedback="none"
        )
    )
    stacked = keras.layers.RNN(
        keras.layers.StackedRNNCells(keras_cells(WIDTHS, cell_type)),
        return_sequences=True,
        return_state=True,
    )
    stacked.build(x.shape)
    stacked.set_weights(keras_stacked_weights(layer, cell_type))
    ours = layer(x, mask=mask)
    theirs = stacked(x, mask=mask)
    theirs = [theirs[0], *keras.tree.flatten(theirs[1:])]
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, atol=1e-5)


# Every candidate pair of masks is tried (`per_sequence_masks`): 2 ** 12
# for these widths, where `WIDTHS` would need 2 ** 24.
DROPOUT_WIDTHS = [2, 1, 2]


@pytest.mark.parametrize("cell_type", ["gru", "lstm"])
def test_dropout_uses_one_mask_per_sequence(cell_type):
    x, mask = _data(2)
    cell = kr.layers.GatedFeedbackCell(
        DROPOUT_WIDTHS,
        cell_type=cell_type,
        dropout=0.5,
        recurrent_dropout=0.25,
        seed=3,
    )
    layer = _rnn(cell)
    # Inputs of layers 0, 1, 2 are x, h_0, h_1: one input mask covers all
    # three, one recurrent mask all of h*_{t-1}.
    check_per_sequence_dropout(
        layer,
        gf_reference(layer, DROPOUT_WIDTHS, cell_type),
        x,
        mask,
        widths=(FEATURES + 2 + 1, sum(DROPOUT_WIDTHS)),
        rates=(0.5, 0.25),
    )


def test_cell_in_bidirectional_and_initial_state():
    x, mask = _data(3)
    bidirectional = keras.layers.Bidirectional(
        keras.layers.RNN(
            kr.layers.GatedFeedbackCell([3, 2], cell_type="gru"),
            return_sequences=True,
        )
    )
    assert bidirectional(x, mask=mask).shape == (BATCH, STEPS, 4)
    layer = _rnn(kr.layers.GatedFeedbackCell([3, 2], cell_type="lstm"))
    rng = np.random.default_rng(4)
    initial = [
        rng.normal(size=(BATCH, n)).astype("float32")
        for n in layer.cell.state_size
    ]
    sequence, *_ = layer(x, mask=mask, initial_state=initial)
    expected, _, _ = gf_sequence(
        x.astype("float64"),
        named_weights(layer),
        [3, 2],
        "lstm",
        "gated",
        mask=mask,
        initial_states=initial,
    )
    np.testing.assert_allclose(sequence, expected, atol=1e-5)


def test_cell_get_config_round_trip():
    cell = kr.layers.GatedFeedbackCell(
        [4, 3],
        cell_type="lstm",
        feedback="fixed",
        output_mode="all",
        dropout=0.1,
        recurrent_dropout=0.2,
        seed=7,
        kernel_regularizer="l2",
        name="gf",
    )
    config = cell.get_config()
    clone = kr.layers.GatedFeedbackCell.from_config(config)
    assert clone.get_config() == config
    assert clone.layer_units == [4, 3] and clone.num_layers == 2


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"units": 4, "num_layers": 0}, "num_layers=0"),
        ({"units": [4, 4], "num_layers": 3}, r"units=\[4, 4\].*num_layers=3"),
        ({"units": 0}, "units=0"),
        ({"units": []}, r"units=\[\]"),
        ({"units": 4, "cell_type": "rnn"}, "cell_type='rnn'"),
        ({"units": 4, "feedback": "full"}, "feedback='full'"),
        ({"units": 4, "output_mode": "last"}, "output_mode='last'"),
        ({"units": 4, "dropout": 1.0}, "dropout=1.0"),
    ],
)
def test_cell_rejects_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        kr.layers.GatedFeedbackCell(**kwargs)


@pytest.mark.parametrize("cell_type", CELL_TYPES)
def test_prepare_loop_and_step_equal_call(cell_type):
    cell = kr.layers.GatedFeedbackCell(WIDTHS, cell_type=cell_type)
    _rnn(cell)
    x, _ = _data()
    rng = np.random.default_rng(1)
    states = [
        rng.normal(size=(BATCH, n)).astype("float32") for n in cell.state_size
    ]
    before = {name: id(value) for name, value in vars(cell).items()}
    step_inputs, loop_state = cell.prepare_loop(x)
    output, new_states = cell.step(step_inputs[:, 0], states, loop_state)
    # The cell keeps nothing of a loop.
    assert {name: id(value) for name, value in vars(cell).items()} == before
    expected, expected_states = cell(x[:, 0], states)
    np.testing.assert_allclose(output, expected, atol=1e-5)
    for state, expected_state in zip(new_states, expected_states):
        np.testing.assert_allclose(state, expected_state, atol=1e-5)


def test_loop_reads_the_dropout_masks_of_the_sequence():
    cell = kr.layers.GatedFeedbackCell(
        WIDTHS, dropout=0.5, recurrent_dropout=0.5, seed=2
    )
    _rnn(cell)
    x, _ = _data()
    assert cell.prepare_loop(x)[1]["input_masks"] is None
    # What `keras.layers.RNN` does before its loop.
    cell.get_dropout_mask(x[:, 0])
    cell.get_recurrent_dropout_mask(x[:, 0])
    _, loop_state = cell.prepare_loop(x, training=True)
    call_state = cell._loop_state(x[:, 0], training=True)
    cell.reset_dropout_mask()
    cell.reset_recurrent_dropout_mask()
    _, fresh = cell.prepare_loop(x, training=True)
    for key, widths in (
        ("input_masks", [FEATURES] + WIDTHS[:-1]),
        ("recurrent_masks", WIDTHS),
    ):
        assert [m.shape[1] for m in loop_state[key]] == widths
        for ours, calls in zip(loop_state[key], call_state[key]):
            np.testing.assert_array_equal(ours, calls)
        # Without masks made for the sequence, new ones (not kept).
        assert any(
            not np.array_equal(ours, new)
            for ours, new in zip(loop_state[key], fresh[key])
        )


def test_dropout_uses_no_private_keras_attribute():
    cell = kr.layers.GatedFeedbackCell(
        WIDTHS, dropout=0.3, recurrent_dropout=0.3, seed=1
    )
    layer = _rnn(cell)
    x, mask = _data()
    layer(x, mask=mask, training=True)
    names = set(vars(cell))
    assert not names & {"_dropout_mask", "_recurrent_dropout_mask"}
    # Keras' RNN made the masks through our methods and cleared them.
    assert cell.sequence_dropout_masks(x[:, 0], training=False) == (None, None)
    assert cell.get_dropout_mask(x[:, 0]).shape == (BATCH, FEATURES + 8)
    cell.reset_dropout_mask()
