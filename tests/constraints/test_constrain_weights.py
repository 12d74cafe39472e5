"""Under mixed_float16 the bounds hold after `fit`, even when the
`LossScaleOptimizer` skips every step."""

import keras
import numpy as np
import pytest

import keras_recurrent as kr


@pytest.fixture
def mixed_float16():
    previous = keras.mixed_precision.global_policy()
    keras.mixed_precision.set_global_policy("mixed_float16")
    yield
    keras.mixed_precision.set_global_policy(previous)


def _model():
    keras.utils.set_random_seed(0)
    inputs = keras.Input((5, 3))
    lstm = keras.layers.LSTM(
        8,
        recurrent_constraint=kr.constraints.LSTMStability(0.6),
        return_sequences=True,
        name="lstm",
    )
    rnn = keras.layers.SimpleRNN(
        8, recurrent_constraint=kr.constraints.SpectralNorm(0.9), name="rnn"
    )
    model = keras.Model(inputs, keras.layers.Dense(1)(rnn(lstm(inputs))))
    model.compile(keras.optimizers.Adam(0.05), "mse")
    return model


def _bound_ratios(model):
    """How far each kernel is from its bound (at most 1 inside)."""
    lstm = model.get_layer("lstm")
    kernel = keras.ops.convert_to_numpy(lstm.cell.recurrent_kernel)
    bounds = lstm.cell.recurrent_constraint.gate_bounds
    ratios = [
        np.abs(block).sum(axis=0).max() / bounds[gate]
        for block, gate in zip(np.split(kernel, 4, axis=1), "ifco")
    ]
    kernel = model.get_layer("rnn").cell.recurrent_kernel
    spectral = np.linalg.norm(keras.ops.convert_to_numpy(kernel), 2) / 0.9
    return max(ratios), spectral


def _fit_skipping_every_step(model):
    # Large targets: every scaled gradient overflows float16, so the loss
    # scale optimizer skips every step (and halves its scale).
    x = np.random.default_rng(0).normal(size=(32, 5, 3)).astype("float32")
    y = 1e4 * x.sum(axis=(1, 2))[:, None]
    model.fit(x * 100, y, epochs=1, batch_size=16, verbose=0)
    assert int(model.optimizer.iterations) == 0


def test_upstream_leaves_the_initial_weights_unconstrained(mixed_float16):
    model = _model()
    _fit_skipping_every_step(model)
    lstm_ratio, spectral_ratio = _bound_ratios(model)
    assert lstm_ratio > 2 and spectral_ratio > 1.05


def test_bounds_hold_after_fit_under_mixed_float16(mixed_float16):
    model = _model()
    constrained = kr.constraints.constrain_weights(model)
    assert [variable.path for variable in constrained] == [
        "lstm/lstm_cell/recurrent_kernel",
        "rnn/simple_rnn_cell/recurrent_kernel",
    ]
    _fit_skipping_every_step(model)
    lstm_ratio, spectral_ratio = _bound_ratios(model)
    assert lstm_ratio <= 1 + 1e-5 and spectral_ratio <= 1 + 1e-5
    # Steps that are applied keep them too.
    x = np.random.default_rng(1).normal(size=(32, 5, 3)).astype("float32")
    model.fit(x, x.sum(axis=(1, 2))[:, None], epochs=2, verbose=0)
    assert int(model.optimizer.iterations) > 0
    lstm_ratio, spectral_ratio = _bound_ratios(model)
    assert lstm_ratio <= 1 + 1e-5 and spectral_ratio <= 1 + 1e-5


def test_needs_a_built_layer():
    with pytest.raises(ValueError, match="must be built"):
        kr.constraints.constrain_weights(keras.layers.LSTM(2))
    with pytest.raises(ValueError, match="keras.Layer"):
        kr.constraints.constrain_weights("model")


def _our_model():
    keras.utils.set_random_seed(0)
    inputs = keras.Input((5, 3))
    lstm = kr.layers.LSTMVariant(
        8,
        recurrent_constraint=kr.constraints.LSTMStability(0.6),
        return_sequences=True,
        name="lstm",
    )
    rnn = kr.layers.LSTMVariant(
        8, recurrent_constraint=kr.constraints.SpectralNorm(0.9), name="rnn"
    )
    model = keras.Model(inputs, keras.layers.Dense(1)(rnn(lstm(inputs))))
    model.compile(keras.optimizers.Adam(0.05), "mse")
    return model


def test_our_layers_hold_the_bounds_without_constrain_weights(
    mixed_float16,
):
    # The package's layers constrain each weight when they create it, so
    # a `fit` whose steps the LossScaleOptimizer all skips leaves weights
    # inside the bounds with nothing done by the user.
    model = _our_model()
    _fit_skipping_every_step(model)
    assert isinstance(model.optimizer, keras.optimizers.LossScaleOptimizer)
    lstm_ratio, spectral_ratio = _bound_ratios(model)
    assert lstm_ratio <= 1 + 1e-5 and spectral_ratio <= 1 + 1e-5
    x = np.random.default_rng(1).normal(size=(32, 5, 3)).astype("float32")
    model.fit(x, x.sum(axis=(1, 2))[:, None], epochs=2, verbose=0)
    assert int(model.optimizer.iterations) > 0
    lstm_ratio, spectral_ratio = _bound_ratios(model)
    assert lstm_ratio <= 1 + 1e-5 and spectral_ratio <= 1 + 1e-5


@pytest.mark.parametrize(
    "make",
    [
        lambda c: kr.layers.ChildSumTreeLSTM(4, recurrent_constraint=c),
        lambda c: kr.layers.GatedFeedbackRNN(
            [4, 4], cell_type="lstm", recurrent_constraint=c
        ),
        lambda c: kr.layers.GatedGraph(
            4, num_edge_types=1, recurrent_constraint=c
        ),
        lambda c: kr.layers.LayerNormLSTM(
            4, kernel_constraint=c, recurrent_constraint=c
        ),
        lambda c: keras.layers.RNN(
            kr.layers.LayerNormSimpleRNNCell(
                4, kernel_constraint=c, recurrent_constraint=c
            )
        ),
    ],
    ids=["tree", "gated_feedback", "graph", "addons", "addons_cell"],
)
def test_other_cells_create_constrained_weights(make):
    layer = make(kr.constraints.SpectralNorm(0.5))
    shapes = {
        "tree": [(None, 3, 2), (None, 3, 2), (None, 3)],
        "sequence": (None, 5, 2),
        "graph": [(None, 3, 2), (None, 2, 2), (None, 2), (None, 3)],
    }
    name = (
        "tree"
        if isinstance(layer, kr.layers.ChildSumTreeLSTM)
        else "graph"
        if isinstance(layer, kr.layers.GatedGraph)
        else "sequence"
    )
    layer.build(shapes[name])
    kernels = [
        w for w in layer.weights if getattr(w, "constraint", None) is not None
    ]
    assert kernels
    for kernel in kernels:
        value = keras.ops.convert_to_numpy(kernel)
        assert np.linalg.norm(value.reshape(value.shape[0], -1), 2) <= (
            0.5 + 1e-5
        )
