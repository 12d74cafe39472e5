"""Every sequence layer gives the same numbers with and without XLA.

Each case builds one model (a `Masking` layer, the layer under test and a
`Dense` head), and two clones of it with identical initial weights are
compiled with `jit_compile=False` and `True`. Both train a few steps on the
same minibatches (`shuffle=False`), then predict and evaluate: the losses,
the final weights and the outputs agree to 1e-5.
"""

import keras
import numpy as np
import pytest

import keras_recurrent as kr

BATCH, STEPS, FEATURES, UNITS = 8, 5, 3, 4
TOLERANCE = 1e-5


def _lstm_variant(variant, **kwargs):
    return lambda: kr.layers.LSTMVariant(UNITS, variant=variant, **kwargs)


def _residual_stack():
    return kr.layers.ResidualStack(
        [
            kr.layers.PeepholeLSTMCell(UNITS),
            keras.layers.LSTM(UNITS, return_sequences=True),
        ],
        layer_norm=True,
        return_sequences=False,
    )


def _stable_lstm():
    return keras.layers.LSTM(
        UNITS,
        kernel_constraint=kr.constraints.SpectralNorm(0.9),
        recurrent_constraint=kr.constraints.LSTMStability(0.9),
    )


# (name, layer factory): each layer maps (batch, steps, features) with a
# mask to (batch, outputs) or (batch, steps, outputs). A model of several
# layers compiles slower than its layers one by one (XLA's compile time grows
# faster than the graph), so each case is a model of its own.
CASES = [
    ("peephole", lambda: kr.layers.PeepholeLSTM(UNITS)),
    (
        "peephole_clip_proj",
        lambda: kr.layers.PeepholeLSTM(
            UNITS, cell_clip=0.5, projection_units=2
        ),
    ),
    ("coupled", lambda: kr.layers.CoupledLSTM(UNITS, return_sequences=True)),
    *[(f"variant_{name}", _lstm_variant(name)) for name in kr.layers.VARIANTS],
    (
        "variant_FGR_clip_proj",
        _lstm_variant(
            "FGR", cell_clip=0.3, projection_units=3, go_backwards=True
        ),
    ),
    ("variant_NOAF_clip", _lstm_variant("NOAF", cell_clip=0.2)),
    ("gf_tanh", lambda: kr.layers.GatedFeedbackRNN(UNITS, num_layers=2)),
    (
        "gf_gru",
        lambda: kr.layers.GatedFeedbackRNN(
            [UNITS, 3], cell_type="gru", output_mode="all"
        ),
    ),
    (
        "gf_lstm",
        lambda: kr.layers.GatedFeedbackRNN(
            UNITS, num_layers=2, cell_type="lstm", return_sequences=True
        ),
    ),
    ("residual_stack", _residual_stack),
    *[
        (f"pooling_{mode}", lambda mode=mode: kr.layers.SequencePooling(mode))
        for mode in kr.layers.sequence_pooling.MODES
    ],
    (
        "truncated",
        lambda: kr.layers.TruncatedRNN(
            kr.layers.PeepholeLSTM(UNITS), window=2, return_sequences=True
        ),
    ),
    (
        "truncated_last",
        lambda: kr.layers.TruncatedRNN(keras.layers.GRU(UNITS), window=3),
    ),
    ("stability_constraints", _stable_lstm),
    # The TensorFlow Addons cells (the ESN's reservoir is not trained:
    # tests/layers/test_esn.py).
    (
        "layer_norm_lstm",
        lambda: kr.layers.LayerNormLSTM(UNITS, return_sequences=True),
    ),
    ("layer_norm_simple_rnn", lambda: kr.layers.LayerNormSimpleRNN(UNITS)),
    ("nas", lambda: kr.layers.NAS(UNITS, projection=3, use_bias=True)),
]
# Compiling costs 10 to 30 s a case on a shared 2-core machine: the default
# run covers one case per family, `-m slow` all of them.
DEFAULT_CASES = (
    "variant_FGR_clip_proj",
    "gf_gru",
    "truncated",
    "layer_norm_lstm",
)


def _data():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(BATCH, STEPS, FEATURES)).astype("float32")
    # A hole-free mix of lengths, a fully masked row among them.
    lengths = np.array([5, 3, 1, 5, 4, 2, 5, 0])
    x[np.arange(STEPS)[None, :] >= lengths[:, None]] = 0.0
    y = rng.normal(size=(BATCH, 1)).astype("float32")
    return x, y


def _model(name, make_layer):
    keras.utils.set_random_seed(0)
    inputs = keras.Input((STEPS, FEATURES))
    x = make_layer()(keras.layers.Masking(0.0)(inputs))
    if len(x.shape) == 3:
        # Mask-exact, also for the fully masked row.
        x = kr.layers.SequencePooling("mean")(x)
    # Not the layer's own name, which `ResidualStack` uses already.
    output = f"out_{name}"
    return keras.Model(inputs, {output: keras.layers.Dense(1, name=output)(x)})


def _run(model, weights, jit_compile, x, y):
    clone = keras.models.clone_model(model)
    clone.set_weights(weights)
    clone.compile(
        # Plain SGD: Adam's m / sqrt(v) turns float rounding in a gradient
        # near 0 into a full step, which is no difference of the layer's.
        optimizer=keras.optimizers.SGD(0.1),
        loss="mse",
        jit_compile=jit_compile,
    )
    assert clone.jit_compile is jit_compile
    targets = {name: y for name in clone.output_names}
    history = clone.fit(
        x, targets, batch_size=4, epochs=2, shuffle=False, verbose=0
    ).history
    weights = {w.path: w.numpy() for w in clone.weights}
    predicted = clone.predict(x, batch_size=4, verbose=0)
    evaluated = clone.evaluate(
        x, targets, batch_size=4, verbose=0, return_dict=True
    )
    return history, weights, predicted, evaluated


@pytest.mark.parametrize(
    "name, make_layer",
    [
        pytest.param(
            name,
            make_layer,
            id=name,
            marks=() if name in DEFAULT_CASES else pytest.mark.slow,
        )
        for name, make_layer in CASES
    ],
)
def test_fit_predict_evaluate_match_without_xla(name, make_layer):
    x, y = _data()
    model = _model(name, make_layer)
    initial = model.get_weights()
    plain = _run(model, initial, False, x, y)
    xla = _run(model, initial, True, x, y)
    assert sorted(plain[0]) == sorted(xla[0])
    for key, losses in plain[0].items():
        np.testing.assert_allclose(
            xla[0][key], losses, rtol=TOLERANCE, err_msg=key
        )
    assert sorted(plain[1]) == sorted(xla[1])
    for path, value in plain[1].items():
        np.testing.assert_allclose(
            xla[1][path], value, rtol=TOLERANCE, atol=TOLERANCE, err_msg=path
        )
    for output, value in plain[2].items():
        np.testing.assert_allclose(
            xla[2][output], value, rtol=TOLERANCE, atol=1e-6, err_msg=output
        )
        assert np.isfinite(value).all(), output
    for key, value in plain[3].items():
        np.testing.assert_allclose(
            xla[3][key], value, rtol=TOLERANCE, err_msg=key
        )
    # Training moved every weight: no comparison of initial values.
    moved = [
        np.abs(after - before).max()
        for after, before in zip(plain[1].values(), initial)
    ]
    assert min(moved) > 0.0
