"""Every bad input of the sequence layers, eagerly and in `predict`.

One table: each case corrupts a small batch `(B, T, D) = (2, 5, 3)` and its
boolean mask, and every sequence layer family (a `CellRNN`, the GF-RNN, the
wrappers, the pooling) must answer with a `ValueError` naming the argument
and the value, at trace time. Through a SavedModel, the signature's fixed
specs stop these before the model (see `tests/export`).
"""

import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_recurrent as kr

BATCH, STEPS, FEATURES = 2, 5, 3


def _data():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(BATCH, STEPS, FEATURES)).astype("float32")
    mask = np.ones((BATCH, STEPS), bool)
    mask[1, 3:] = False
    return x, mask


LAYERS = {
    "peephole": lambda: kr.layers.PeepholeLSTM(4),
    "lstm_variant": lambda: kr.layers.LSTMVariant(4, variant="NIG"),
    "gated_feedback": lambda: kr.layers.GatedFeedbackRNN(4, num_layers=2),
    "residual_stack": lambda: kr.layers.ResidualStack(
        [kr.layers.PeepholeLSTM(3, return_sequences=True)]
    ),
    "truncated": lambda: kr.layers.TruncatedRNN(
        kr.layers.PeepholeLSTM(4), window=2
    ),
    "attention_pooling": lambda: kr.layers.SequencePooling("attention"),
}

# Drop-ins for `keras.layers.LSTM`, which casts integer and boolean inputs
# to its compute dtype (the others refuse them, naming the dtype).
CAST_INTEGERS = ("gated_feedback", "lstm_variant", "peephole")

# `predict` for every case on these by default, on the others with `slow`.
FAST_PREDICT = ("peephole",)


def _replace(x=None, mask=None):
    def corrupt(inputs, base_mask):
        return (
            inputs if x is None else x(inputs),
            base_mask if mask is None else mask(base_mask),
        )

    return corrupt


# name: (corruption of (x, mask), regex of the `ValueError`).
CASES = {
    "rank 2": (
        _replace(x=lambda x: x[..., 0]),
        r"`inputs` must have rank 3.*Received: inputs.shape=\(2, 5\)",
    ),
    "rank 4": (
        _replace(x=lambda x: x[..., None]),
        r"`inputs` must have rank 3.*Received: inputs.shape=\(2, 5, 3, 1\)",
    ),
    "int token ids": (
        _replace(x=lambda x: np.ones(x.shape, "int32")),
        r"`inputs` must be floating-point.*Received: inputs.dtype=int32",
    ),
    "width differs from build": (
        _replace(x=lambda x: np.concatenate([x, x], -1)),
        r"`inputs` must have 3 features.*inputs.shape=\(2, 5, 6\)",
    ),
    "T = 0": (
        _replace(x=lambda x: x[:, :0], mask=lambda m: m[:, :0]),
        r"at least one timestep.*inputs.shape=\(2, 0, 3\)",
    ),
    "mask rank 3": (
        _replace(mask=lambda m: m[..., None]),
        r"`mask` must have rank 2.*mask.shape=\(2, 5, 1\)",
    ),
    "mask shorter": (
        _replace(mask=lambda m: m[:, :4]),
        r"disagree on the number of timesteps.*mask.shape=\(2, 4\)",
    ),
    "float mask 0.5": (
        _replace(mask=lambda m: np.where(m, 0.5, 0.0).astype("float32")),
        r"`mask` must be boolean or integer.*Received: mask.dtype=float32",
    ),
}


class MaskedModel(keras.Model):
    """Runs a layer on `(x, mask)`, built with the good shapes first."""

    def __init__(self, layer):
        super().__init__()
        self.sequence_layer = layer

    def call(self, inputs):
        x, mask = inputs
        return self.sequence_layer(x, mask=mask)


def _built(kind):
    layer = LAYERS[kind]()
    x, mask = _data()
    expected = np.asarray(layer(x, mask=mask))
    return layer, expected


def _run(mode, layer, x, mask):
    if mode == "eager":
        return np.asarray(layer(x, mask=mask))
    return MaskedModel(layer).predict((x, mask), verbose=0, batch_size=BATCH)


def _params():
    for kind in sorted(LAYERS):
        for mode in ("eager", "predict"):
            marks = ()
            if mode == "predict" and kind not in FAST_PREDICT:
                marks = (pytest.mark.slow,)
            yield pytest.param(kind, mode, id=f"{kind}-{mode}", marks=marks)


@pytest.mark.parametrize("kind,mode", list(_params()))
def test_bad_sequence_inputs_name_the_argument(kind, mode):
    layer, expected = _built(kind)
    x, mask = _data()
    # The good batch runs in this mode, with the eager numbers.
    np.testing.assert_allclose(_run(mode, layer, x, mask), expected, atol=1e-5)
    for case, (corrupt, message) in CASES.items():
        if case == "int token ids" and kind in CAST_INTEGERS:
            continue  # taken, as by `keras.layers.LSTM`: see below
        bad_x, bad_mask = corrupt(*_data())
        if case == "T = 0" and mode == "predict":
            # Keras' data adapter stops first, naming the empty input.
            with pytest.raises(ValueError):
                _run(mode, layer, bad_x, bad_mask)
            continue
        with pytest.raises(ValueError, match=message):
            _run(mode, layer, bad_x, bad_mask)
        # The layer is unharmed: the good batch still gives its numbers.
    np.testing.assert_allclose(_run(mode, layer, x, mask), expected, atol=1e-5)


@pytest.mark.parametrize("kind", CAST_INTEGERS)
@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8", "bool"])
def test_integer_inputs_are_cast_as_keras_lstm_casts_them(kind, dtype):
    layer, _ = _built(kind)
    x, mask = _data()
    values = np.round(x * 3)
    if dtype == "uint8":
        values = np.abs(values)
    elif dtype == "bool":
        values = values > 0
    values = values.astype(dtype)
    expected = np.asarray(layer(values.astype("float32"), mask=mask))
    np.testing.assert_array_equal(_run("eager", layer, values, mask), expected)
    # Strings are no numbers.
    strings = np.full(x.shape, "a")
    with pytest.raises(ValueError, match=r"`inputs` must be numeric or bool"):
        layer(tf.constant(strings), mask=mask)


@pytest.mark.parametrize("kind", sorted(LAYERS))
def test_an_integer_mask_is_the_boolean_mask(kind):
    # `tf.distribute` cannot all-reduce booleans, so users feed int32 masks.
    layer, expected = _built(kind)
    x, mask = _data()
    for dtype in ("int32", "int64"):
        got = np.asarray(layer(x, mask=mask.astype(dtype)))
        np.testing.assert_allclose(got, expected, atol=1e-6)


@pytest.mark.parametrize(
    "kind",
    [
        pytest.param(kind, marks=pytest.mark.slow)  # tracing the GF-RNN: ~60 s
        if kind == "gated_feedback"
        else kind
        for kind in sorted(LAYERS)
    ],
)
def test_an_empty_batch_gives_empty_outputs_eagerly_and_traced(kind):
    layer, expected = _built(kind)
    x, mask = _data()
    eager = np.asarray(layer(x[:0], mask=mask[:0]))
    traced = tf.function(lambda x, m: layer(x, mask=m))(x[:0], mask[:0])
    assert eager.shape == tuple(traced.shape) == (0,) + expected.shape[1:]


@pytest.mark.parametrize("mode", ["last", "max", "mean"])
def test_pooling_an_empty_batch(mode):
    # `ops.max` refuses an empty tensor eagerly; the pooling does not use it.
    x, mask = _data()
    layer = kr.layers.SequencePooling(mode)
    assert np.asarray(layer(x[:0], mask=mask[:0])).shape == (0, FEATURES)
    # ... and keeps the numbers of a plain maximum / last step.
    pooled = np.asarray(layer(x, mask=mask))
    last_steps = [STEPS - 1, 2]
    if mode == "last":
        wanted = x[np.arange(BATCH), last_steps]
    elif mode == "max":
        wanted = np.stack([x[b, : s + 1].max(0) for b, s in enumerate([4, 2])])
    else:
        wanted = np.stack([x[b, : s + 1].mean(0) for b, s in enumerate([4, 2])])
    np.testing.assert_allclose(pooled, wanted, atol=1e-6)


@pytest.mark.parametrize(
    "sequences,message",
    [
        (
            np.ones((2, 5), "int32"),
            r"`sequences` must have rank 3.*shape=\(2, 5\)",
        ),
        (np.full((2, 5, 3), "a"), r"`sequences` must be numeric or boolean"),
        (np.ones((2, 5, 4), "float32"), r"`sequences` must have 3 features"),
    ],
    ids=["token ids", "strings", "width"],
)
def test_gate_values_checks_its_sequences(sequences, message):
    layer = kr.layers.GatedFeedbackRNN(4, num_layers=2)
    x, mask = _data()
    gates = np.asarray(layer.gate_values(x, mask=mask))
    assert gates.shape == (BATCH, STEPS, 2, 2)
    with pytest.raises(ValueError, match=message):
        layer.gate_values(sequences)
    with pytest.raises(ValueError, match="`mask` must be boolean or integer"):
        layer.gate_values(x, mask=mask.astype("float32"))
    # An integer mask is the boolean one (what `tf.distribute` can feed).
    np.testing.assert_allclose(
        layer.gate_values(x, mask=mask.astype("int32")), gates
    )
    # The checks change nothing for good inputs.
    np.testing.assert_allclose(layer.gate_values(x, mask=mask), gates)
    # Integers are cast, as the layer's call casts them.
    tokens = np.round(x * 3)
    np.testing.assert_array_equal(
        layer.gate_values(tokens.astype("int32"), mask=mask),
        layer.gate_values(tokens.astype("float32"), mask=mask),
    )


@pytest.mark.parametrize(
    "make_cell",
    [
        lambda: kr.layers.PeepholeLSTMCell(4),
        lambda: kr.layers.LSTMVariantCell(4, variant="NFG"),
        lambda: kr.layers.GatedFeedbackCell(4, num_layers=2),
    ],
    ids=["peephole", "lstm_variant", "gated_feedback"],
)
def test_a_cell_in_a_keras_rnn_names_a_width_change(make_cell):
    # A plain `keras.layers.RNN` runs no sequence checks: the cell names
    # the width it was built for instead of failing in a matmul.
    rnn = keras.layers.RNN(make_cell())
    x, mask = _data()
    expected = np.asarray(rnn(x, mask=mask))
    wider = np.concatenate([x, x], axis=-1)
    with pytest.raises(
        ValueError, match=r"`inputs` must have 3 features.*\(2, 6\)"
    ):
        rnn(wider)
    np.testing.assert_allclose(rnn(x, mask=mask), expected, atol=1e-6)
