import json

import keras
import numpy as np
import pytest

import keras_recurrent as kr
from tests.layers.lstm_reference import lstm_sequence
from tests.layers.lstm_reference import named_weights
from tests.layers.lstm_reference import randomize_weights

BATCH, STEPS, FEATURES = 4, 5, 3
EPSILON = 1e-3


def _data(seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(BATCH, STEPS, FEATURES)).astype("float32")
    mask = np.ones((BATCH, STEPS), dtype=bool)
    mask[0, 3:] = False
    mask[1, 2] = False  # a hole
    mask[3, :] = False  # fully masked
    return x, mask


def _sublayers(form):
    """Three LSTMs, 3 -> 4 -> 4 -> 2 wide, and their reference variants."""
    if form == "cells":
        items = [
            keras.layers.LSTMCell(4),
            kr.layers.PeepholeLSTMCell(4),
            keras.layers.LSTMCell(2),
        ]
    else:
        items = [
            keras.layers.LSTM(4, return_sequences=True),
            kr.layers.PeepholeLSTM(4, return_sequences=True),
            keras.layers.LSTM(2, return_sequences=True),
        ]
    return items, ["NP", "V", "NP"]


def _stack(form="cells", **kwargs):
    items, variants = _sublayers(form)
    stack = kr.layers.ResidualStack(items, layer_norm_epsilon=EPSILON, **kwargs)
    stack.build((None, None, FEATURES))
    randomize_weights(stack, scale=0.4)
    return stack, variants


def _layer_norm(y, norm):
    w = named_weights(norm)
    mean = y.mean(axis=-1, keepdims=True)
    var = y.var(axis=-1, keepdims=True)
    return (y - mean) / np.sqrt(var + EPSILON) * w["gamma"] + w["beta"]


def _reference(stack, variants, x, mask):
    """The stack composed by hand in NumPy from its sublayers' weights."""
    y = x.astype("float64")
    for index, (rnn, variant) in enumerate(zip(stack.rnn_layers, variants)):
        branch = y
        if stack.layer_norm:
            branch = _layer_norm(branch, stack.layer_norms[index])
        branch, _ = lstm_sequence(branch, named_weights(rnn), variant, mask)
        if not stack.residual:
            y = branch
        elif stack.projections[index] is None:
            y = y + branch
        else:
            y = y @ np.array(stack.projections[index].kernel) + branch
    if stack.layer_norm:
        y = _layer_norm(y, stack.final_layer_norm)
    if stack.return_sequences:
        return y
    last = np.zeros((y.shape[0], y.shape[2]))
    for row in range(y.shape[0]):
        steps = np.flatnonzero(mask[row])
        if steps.size:
            last[row] = y[row, steps[-1]]
    return last


@pytest.mark.parametrize("form", ["cells", "layers"])
@pytest.mark.parametrize(
    "options",
    [
        {},
        {"layer_norm": True},
        {"residual": False},
        {"layer_norm": True, "return_sequences": False},
    ],
    ids=["residual", "layer_norm", "plain", "layer_norm_last"],
)
def test_matches_manual_composition(form, options):
    x, mask = _data()
    stack, variants = _stack(form, **options)
    expected = _reference(stack, variants, x, mask)
    np.testing.assert_allclose(stack(x, mask=mask), expected, atol=1e-5)
    # Projections exactly where the widths change: 3 -> 4 and 4 -> 2.
    has_projection = [p is not None for p in stack.projections]
    residual = options.get("residual", True)
    assert has_projection == [residual, False, residual]
    if stack.return_sequences:
        np.testing.assert_array_equal(stack.compute_mask(x, mask), mask)
    else:
        assert stack.compute_mask(x, mask) is None


def test_without_mask_and_last_step():
    x, _ = _data(1)
    stack, variants = _stack(return_sequences=False)
    expected = _reference(stack, variants, x, np.ones((BATCH, STEPS), bool))
    np.testing.assert_allclose(stack(x), expected, atol=1e-5)
    assert stack.compute_output_shape((None, 7, FEATURES)) == (None, 2)


def test_last_step_ignores_padding():
    x, mask = _data(2)
    stack, _ = _stack(layer_norm=True, return_sequences=False)
    changed = np.where(mask[..., None], x, 1e3).astype("float32")
    np.testing.assert_allclose(
        stack(x, mask=mask), stack(changed, mask=mask), atol=1e-6
    )
    np.testing.assert_array_equal(np.array(stack(x, mask=mask))[3], 0.0)


def test_dropout_only_in_training():
    x, mask = _data(3)
    stack, variants = _stack(dropout=0.5, seed=1)
    expected = _reference(stack, variants, x, mask)
    np.testing.assert_allclose(
        stack(x, mask=mask, training=False), expected, atol=1e-5
    )
    assert not np.allclose(stack(x, mask=mask, training=True), expected)


def test_bidirectional_and_functional_mask():
    x, mask = _data(4)
    x = np.where(mask[..., None], x, 0.0).astype("float32")
    inputs = keras.Input((None, FEATURES))
    masked = keras.layers.Masking(0.0)(inputs)
    stack = kr.layers.ResidualStack(
        [
            keras.layers.Bidirectional(
                keras.layers.GRU(3, return_sequences=True)
            ),
            keras.layers.GRUCell(6),
        ],
        name="stack",
    )
    outputs = kr.layers.SequencePooling("mean")(stack(masked))
    model = keras.Model(inputs, outputs)
    assert stack.projections[0].kernel.shape == (FEATURES, 6)
    assert stack.projections[1] is None
    expected = kr.layers.SequencePooling("mean")(stack(x, mask=mask), mask=mask)
    np.testing.assert_allclose(model.predict(x, verbose=0), expected, atol=1e-6)


def test_save_and_load_keras_file_without_custom_objects(tmp_path):
    x, mask = _data(5)
    x = np.where(mask[..., None], x, 0.0).astype("float32")
    inputs = keras.Input((None, FEATURES))
    y = keras.layers.Masking(0.0)(inputs)
    y = kr.layers.ResidualStack(
        [
            kr.layers.CoupledLSTMCell(4),
            keras.layers.LSTM(4, return_sequences=True),
        ],
        layer_norm=True,
        dropout=0.1,
        seed=2,
    )(y)
    y = kr.layers.ResidualStack(
        [kr.layers.PeepholeLSTMCell(2)], return_sequences=False
    )(y)
    model = keras.Model(inputs, y)
    for layer in model.layers:
        if layer.weights:
            randomize_weights(layer, scale=0.4)
    path = tmp_path / "model.keras"
    model.save(path)
    loaded = keras.saving.load_model(path)
    np.testing.assert_array_equal(
        model.predict(x, verbose=0), loaded.predict(x, verbose=0)
    )
    assert json.dumps(loaded.get_config(), sort_keys=True) == json.dumps(
        model.get_config(), sort_keys=True
    )


def test_get_config_round_trip():
    stack = kr.layers.ResidualStack(
        [
            kr.layers.LSTMVariantCell(4, variant="NFG"),
            keras.layers.GRU(4, return_sequences=True, name="gru"),
        ],
        residual=False,
        layer_norm=True,
        return_sequences=False,
        dropout=0.2,
        layer_norm_epsilon=1e-3,
        projection_regularizer="l2",
        seed=3,
        name="stack",
    )
    config = stack.get_config()
    clone = kr.layers.ResidualStack.from_config(config)
    assert clone.get_config() == config
    assert isinstance(clone.rnn_layers[0].cell, kr.layers.LSTMVariantCell)
    assert clone.rnn_layers[0].cell.variant == "NFG"
    assert clone.rnn_layers[1].name == "gru"
    assert (clone.residual, clone.layer_norm, clone.dropout) == (
        False,
        True,
        0.2,
    )


def test_rejects_bad_arguments_and_inputs():
    cell = keras.layers.LSTMCell(2)
    with pytest.raises(ValueError, match=r"non-empty.*Received: layers=\[\]"):
        kr.layers.ResidualStack([])
    with pytest.raises(ValueError, match="Received: layers=<LSTMCell"):
        kr.layers.ResidualStack(cell)
    with pytest.raises(ValueError, match=r"Received: layers\[1\]=<Dense"):
        kr.layers.ResidualStack([cell, keras.layers.Dense(2)])
    with pytest.raises(ValueError, match=r"layers\[0\].*return_sequences=Fal"):
        kr.layers.ResidualStack([keras.layers.LSTM(2)])
    with pytest.raises(ValueError, match="return_state=True"):
        kr.layers.ResidualStack(
            [keras.layers.GRU(2, return_sequences=True, return_state=True)]
        )
    with pytest.raises(ValueError, match="go_backwards=True"):
        kr.layers.ResidualStack(
            [keras.layers.GRU(2, return_sequences=True, go_backwards=True)]
        )
    with pytest.raises(ValueError, match="merge_mode=None"):
        kr.layers.ResidualStack(
            [
                keras.layers.Bidirectional(
                    keras.layers.GRU(2, return_sequences=True),
                    merge_mode=None,
                )
            ]
        )
    with pytest.raises(ValueError, match="dropout=1.5"):
        kr.layers.ResidualStack([cell], dropout=1.5)
    with pytest.raises(ValueError, match="layer_norm_epsilon=0"):
        kr.layers.ResidualStack([cell], layer_norm_epsilon=0)
    with pytest.raises(ValueError, match=r"rank 3.*inputs.shape=\(2, 4\)"):
        kr.layers.ResidualStack([keras.layers.LSTMCell(2)])(
            np.ones((2, 4), "float32")
        )


def test_mixed_float16():
    x, mask = _data(6)
    reference, _ = _stack(layer_norm=True)
    keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        items, _ = _sublayers("cells")
        stack = kr.layers.ResidualStack(
            items, layer_norm=True, layer_norm_epsilon=EPSILON
        )
        stack.build((None, None, FEATURES))
    finally:
        keras.mixed_precision.set_global_policy("float32")
    stack.set_weights(reference.get_weights())
    outputs = stack(x, mask=mask)
    assert keras.backend.standardize_dtype(outputs.dtype) == "float16"
    np.testing.assert_allclose(
        np.array(outputs, "float32"), reference(x, mask=mask), atol=3e-2
    )
