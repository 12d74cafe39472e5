import json

import keras
import numpy as np
import pytest

import keras_recurrent as kr
from tests.layers.cell_layer_api import check_cell_arguments_exposed
from tests.layers.dropout_reference import check_per_sequence_dropout
from tests.layers.gated_feedback_reference import gf_reference
from tests.layers.gated_feedback_reference import gf_sequence
from tests.layers.gated_feedback_reference import gf_step
from tests.layers.gated_feedback_reference import named_weights
from tests.layers.gated_feedback_reference import randomize_weights

BATCH, STEPS, FEATURES = 3, 5, 4


def _data(seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(BATCH, STEPS, FEATURES)).astype("float32")
    mask = np.ones((BATCH, STEPS), dtype=bool)
    mask[0, 3:] = False
    mask[1, 0] = False
    return x, mask


def _layer(**kwargs):
    kwargs = {"return_sequences": True, "return_state": True, **kwargs}
    layer = kr.layers.GatedFeedbackRNN(**kwargs)
    layer.build((None, None, FEATURES))
    randomize_weights(layer)
    return layer


@pytest.mark.parametrize(
    ("cell_type", "feedback"),
    [("simple", "gated"), ("gru", "fixed"), ("lstm", "gated")],
)
def test_layer_matches_numpy_reference(cell_type, feedback):
    x, mask = _data()
    layer = _layer(
        units=3, num_layers=3, cell_type=cell_type, feedback=feedback
    )
    sequence, *states = layer(x, mask=mask)
    expected, expected_states, expected_gates = gf_sequence(
        x.astype("float64"),
        named_weights(layer),
        [3, 3, 3],
        cell_type,
        feedback,
        mask=mask,
    )
    np.testing.assert_allclose(sequence, expected, atol=1e-5)
    for state, expected_state in zip(states, expected_states, strict=True):
        np.testing.assert_allclose(state, expected_state, atol=1e-5)
    gates = layer.gate_values(x, mask=mask)
    assert gates.shape == (BATCH, STEPS, 3, 3)
    np.testing.assert_allclose(gates, expected_gates, atol=1e-5)


@pytest.mark.parametrize("feedback", ["gated", "fixed", "none"])
def test_layer_equals_plain_rnn_of_the_cell(feedback):
    # The layer arranges the feedback matrices before the time loop (and on
    # PyTorch layer 0's input terms); a plain `keras.layers.RNN` of the same
    # cell computes them step by step.
    x, mask = _data(8)
    layer = _layer(units=[4, 3], cell_type="lstm", feedback=feedback)
    plain = keras.layers.RNN(
        kr.layers.GatedFeedbackCell.from_config(layer.cell.get_config()),
        return_sequences=True,
        return_state=True,
    )
    plain.build(x.shape)
    plain.set_weights(layer.get_weights())
    for ours, theirs in zip(layer(x, mask=mask), plain(x, mask=mask)):
        np.testing.assert_allclose(ours, theirs, atol=1e-6)


def test_layer_dropout_matches_reference():
    x, mask = _data(9)
    layer = _layer(
        units=[3, 2],
        cell_type="gru",
        dropout=0.5,
        recurrent_dropout=0.25,
        seed=2,
    )
    # The input mask covers the inputs of layers 0 and 1 (x, h_0), the
    # recurrent one h*_{t-1}; the layer drops x before its time loop and
    # h_0 inside it, from the same mask.
    check_per_sequence_dropout(
        layer,
        gf_reference(layer, [3, 2], "gru"),
        x,
        mask,
        widths=(FEATURES + 3, 3 + 2),
        rates=(0.5, 0.25),
    )
    # After the layer's loop, the cell alone reads `x_t` again.
    output, _ = layer.cell(x[:, 0], layer.cell.get_initial_state(BATCH))
    expected_h, _, _ = gf_step(
        x[:, 0].astype("float64"),
        [np.zeros((BATCH, 3)), np.zeros((BATCH, 2))],
        None,
        named_weights(layer),
        "gru",
        "gated",
    )
    np.testing.assert_allclose(output, expected_h[-1], atol=1e-5)


def test_go_backwards_and_gate_values_in_input_time_order():
    x, mask = _data(1)
    layer = _layer(units=[4, 2], cell_type="gru", go_backwards=True)
    sequence, *states = layer(x, mask=mask)
    flipped_x, flipped_mask = x[:, ::-1], mask[:, ::-1]
    expected, expected_states, expected_gates = gf_sequence(
        flipped_x.astype("float64"),
        named_weights(layer),
        [4, 2],
        "gru",
        "gated",
        mask=flipped_mask,
    )
    np.testing.assert_allclose(sequence, expected, atol=1e-5)
    for state, expected_state in zip(states, expected_states, strict=True):
        np.testing.assert_allclose(state, expected_state, atol=1e-5)
    np.testing.assert_allclose(
        layer.gate_values(x, mask=mask), expected_gates[:, ::-1], atol=1e-5
    )


def test_output_mode_and_return_options():
    x, _ = _data(2)
    top = kr.layers.GatedFeedbackRNN([4, 2, 3], cell_type="lstm")
    assert top(x).shape == (BATCH, 3)
    every = kr.layers.GatedFeedbackRNN(
        [4, 2, 3], output_mode="all", return_sequences=True, return_state=True
    )
    sequence, *states = every(x)
    assert sequence.shape == (BATCH, STEPS, 9)
    np.testing.assert_allclose(
        sequence[:, -1], np.concatenate(states, axis=-1), atol=1e-6
    )
    assert (every.units, every.num_layers, every.output_mode) == (
        [4, 2, 3],
        3,
        "all",
    )


def test_stateful_continues_across_calls():
    x, _ = _data(3)
    options = {"units": 3, "num_layers": 2, "cell_type": "lstm"}
    stateful = kr.layers.GatedFeedbackRNN(
        return_sequences=True, stateful=True, **options
    )
    model = keras.Sequential(
        [keras.Input(batch_shape=(BATCH, None, FEATURES)), stateful]
    )
    randomize_weights(stateful)
    whole = kr.layers.GatedFeedbackRNN(return_sequences=True, **options)
    whole.build(x.shape)
    whole.set_weights(stateful.get_weights())
    chunks = [model(x[:, :2]), model(x[:, 2:])]
    np.testing.assert_allclose(np.concatenate(chunks, 1), whole(x), atol=1e-5)
    stateful.reset_state()
    np.testing.assert_allclose(model(x[:, :2]), chunks[0], atol=1e-6)


def test_bidirectional_equals_forward_and_backward_layers():
    x, mask = _data(4)
    options = {"units": [3, 2], "cell_type": "gru", "return_sequences": True}
    bidirectional = keras.layers.Bidirectional(
        kr.layers.GatedFeedbackRNN(**options)
    )
    bidirectional.build(x.shape)
    randomize_weights(bidirectional)
    forward = kr.layers.GatedFeedbackRNN(zero_output_for_mask=True, **options)
    backward = kr.layers.GatedFeedbackRNN(
        zero_output_for_mask=True, go_backwards=True, **options
    )
    for layer, source in (
        (forward, bidirectional.forward_layer),
        (backward, bidirectional.backward_layer),
    ):
        layer.build(x.shape)
        layer.set_weights(source.get_weights())
    expected = np.concatenate(
        [forward(x, mask=mask), np.flip(backward(x, mask=mask), 1)], -1
    )
    np.testing.assert_allclose(bidirectional(x, mask=mask), expected, atol=1e-5)


def test_seeded_dropout_is_reproducible():
    x, _ = _data(5)
    options = {"units": 3, "num_layers": 2, "cell_type": "simple"}
    outputs = []
    for _ in range(2):
        layer = _layer(dropout=0.3, recurrent_dropout=0.3, seed=5, **options)
        outputs.append(np.array(layer(x, training=True)[0]))
    np.testing.assert_array_equal(outputs[0], outputs[1])
    layer = _layer(dropout=0.3, recurrent_dropout=0.3, seed=6, **options)
    assert not np.allclose(outputs[0], layer(x, training=True)[0])


def test_get_config_round_trip():
    layer = kr.layers.GatedFeedbackRNN(
        [4, 3],
        cell_type="lstm",
        feedback="fixed",
        output_mode="all",
        return_sequences=True,
        go_backwards=True,
        dropout=0.2,
        recurrent_dropout=0.1,
        seed=1,
        kernel_regularizer="l2",
        name="gf",
    )
    config = layer.get_config()
    assert "cell" not in config
    clone = kr.layers.GatedFeedbackRNN.from_config(config)
    assert clone.get_config() == config
    assert (clone.units, clone.cell_type, clone.feedback) == (
        [4, 3],
        "lstm",
        "fixed",
    )


def test_save_and_load_keras_file_without_custom_objects(tmp_path):
    x, _ = _data(6)
    inputs = keras.Input((None, FEATURES))
    y = keras.layers.Masking(0.0)(inputs)
    y = kr.layers.GatedFeedbackRNN(
        [4, 3], cell_type="gru", return_sequences=True
    )(y)
    y = keras.layers.Bidirectional(
        kr.layers.GatedFeedbackRNN(2, num_layers=2, cell_type="lstm")
    )(y)
    model = keras.Model(inputs, y)
    for layer in model.layers:
        if layer.weights:
            randomize_weights(layer, scale=0.3)
    path = tmp_path / "model.keras"
    model.save(path)
    loaded = keras.saving.load_model(path)
    np.testing.assert_array_equal(
        model.predict(x, verbose=0), loaded.predict(x, verbose=0)
    )
    assert json.dumps(loaded.get_config(), sort_keys=True) == json.dumps(
        model.get_config(), sort_keys=True
    )


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"units": 4, "num_layers": 0}, "num_layers=0"),
        ({"units": [4, 4], "num_layers": 3}, r"units=\[4, 4\].*num_layers=3"),
        ({"units": 4, "cell_type": "rnn"}, "cell_type='rnn'"),
        ({"units": 4, "feedback": "full"}, "feedback='full'"),
    ],
)
def test_layer_rejects_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        kr.layers.GatedFeedbackRNN(**kwargs)


def test_layer_rejects_bad_inputs():
    with pytest.raises(ValueError, match=r"rank 3.*inputs.shape=\(2, 4\)"):
        kr.layers.GatedFeedbackRNN(3)(np.ones((2, 4), "float32"))
    with pytest.raises(ValueError, match="inputs.dtype=complex64"):
        kr.layers.GatedFeedbackRNN(3)(np.ones((2, 3, 4), "complex64"))


def test_cell_arguments_are_explicit_properties():
    check_cell_arguments_exposed(
        kr.layers.GatedFeedbackRNN,
        {"units": 7},
        {
            "num_layers": 2,
            "cell_type": "lstm",
            "feedback": "fixed",
            "output_mode": "all",
            "activation": "relu",
            "recurrent_activation": "hard_sigmoid",
            "use_bias": False,
            "kernel_initializer": "ones",
            "recurrent_initializer": "zeros",
            "bias_initializer": "ones",
            "unit_forget_bias": False,
            "kernel_regularizer": "l2",
            "recurrent_regularizer": "l1",
            "bias_regularizer": "l2",
            "kernel_constraint": "non_neg",
            "recurrent_constraint": "unit_norm",
            "bias_constraint": "max_norm",
            "dropout": 0.1,
            "recurrent_dropout": 0.2,
            "seed": 5,
        },
    )


def test_cell_type_tanh_is_the_old_name_of_simple():
    with pytest.warns(DeprecationWarning, match="cell_type='simple'"):
        old = kr.layers.GatedFeedbackRNN(3, num_layers=2, cell_type="TANH")
    new = kr.layers.GatedFeedbackRNN(3, num_layers=2)
    assert old.cell_type == new.cell_type == "simple"
    assert old.get_config() | {"name": None} == new.get_config() | {
        "name": None
    }
    x = np.random.default_rng(0).normal(size=(2, 4, 3)).astype("float32")
    old.build(x.shape)
    new.build(x.shape)
    new.set_weights(old.get_weights())
    np.testing.assert_array_equal(old(x), new(x))


def test_carry_last_valid_matches_a_loop():
    """JAX's masked path carries each sequence's last kept output (pointer
    jumping, no sort: a SavedModel made on JAX converts to LiteRT); against
    a plain loop, long masked runs and empty sequences included."""
    from keras_recurrent.layers.gated_feedback_rnn import _carry_last_valid

    rng = np.random.default_rng(3)
    mask = rng.random((6, 37)) < 0.3
    mask[0] = False  # nothing kept
    mask[1] = True
    mask[2] = False
    mask[2, [0, 36]] = True  # a masked run of 35 steps
    mask[3] = False
    mask[3, 20] = True
    outputs = rng.normal(size=(6, 37, 2)).astype("float32")
    expected = np.zeros_like(outputs)
    for b in range(6):
        last = None
        for t in range(37):
            last = t if mask[b, t] else last
            if last is not None:
                expected[b, t] = outputs[b, last]
    carried = keras.ops.convert_to_numpy(_carry_last_valid(outputs, mask))
    np.testing.assert_array_equal(carried, expected)
