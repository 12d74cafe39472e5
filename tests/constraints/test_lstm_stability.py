import keras
import numpy as np
import pytest

import keras_recurrent as kr

UNITS = 5


def _paper_norms(kernel):
    """`||W_g||_∞` of the paper's matrices (transposed Keras blocks)."""
    blocks = np.split(np.asarray(kernel, dtype="float64"), 4, axis=-1)
    return {
        gate: np.linalg.norm(block.T, ord=np.inf)
        for gate, block in zip("ifco", blocks)
    }


def _assert_stable(kernel, max_forget_gate, atol=1e-6):
    norms = _paper_norms(kernel)
    gap = 1.0 - max_forget_gate
    assert norms["i"] <= gap + atol
    assert norms["f"] <= gap**2 + atol
    assert norms["c"] <= gap / 4 + atol
    assert norms["o"] <= gap + atol


def test_gate_bounds_follow_proposition_2():
    bounds = kr.constraints.LSTMStability(0.6, margin=0.0).gate_bounds
    np.testing.assert_allclose(
        [bounds[gate] for gate in "ifco"], [0.4, 0.16, 0.1, 0.4]
    )
    bounds = kr.constraints.LSTMStability(0.6).gate_bounds
    np.testing.assert_allclose(bounds["f"], 0.99 * 0.16)


@pytest.mark.parametrize("state_dim", [UNITS, 3])  # 3: with a projection
def test_projection_enforces_the_infinity_norm_bounds(state_dim):
    rng = np.random.default_rng(0)
    w = rng.normal(size=(state_dim, 4 * UNITS)).astype("float32")
    w[:, 0] *= 1e-3  # a column already inside its bound
    constraint = kr.constraints.LSTMStability(0.5)
    projected = np.asarray(constraint(w))
    _assert_stable(projected, 0.5)
    for gate, norm in _paper_norms(projected).items():
        np.testing.assert_allclose(norm, constraint.gate_bounds[gate], 1e-6)
    # Columns are rescaled, keeping their direction; small ones are kept.
    np.testing.assert_array_equal(projected[:, 0], w[:, 0])
    ratios = projected / w
    np.testing.assert_allclose(
        ratios, np.broadcast_to(ratios[:1], ratios.shape), rtol=1e-5
    )


def test_kernel_inside_the_region_is_unchanged():
    rng = np.random.default_rng(1)
    w = rng.uniform(-1, 1, size=(UNITS, 4 * UNITS)).astype("float32")
    w *= 0.01 / np.abs(w).sum(axis=0, keepdims=True)
    np.testing.assert_array_equal(kr.constraints.LSTMStability(0.5)(w), w)


def _sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def _lstm_step(x, h, c, kernel, recurrent_kernel):
    z = x @ kernel + h @ recurrent_kernel
    i, f, g, o = np.split(z, 4, axis=-1)
    c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
    return _sigmoid(o) * np.tanh(c), c, _sigmoid(f)


def test_projected_lstm_contracts_as_the_proposition_states():
    """Two trajectories approach geometrically, at the rate of the proof."""
    max_forget_gate, features = 0.6, 3
    rng = np.random.default_rng(2)
    recurrent_kernel = np.asarray(
        kr.constraints.LSTMStability(max_forget_gate)(
            rng.normal(size=(UNITS, 4 * UNITS)).astype("float32")
        ),
        dtype="float64",
    )
    kernel = rng.normal(size=(features, 4 * UNITS))
    # Bound the forget gate by λ: with ||x||_∞ <= 1 its pre-activation is at
    # most ||W_f|| + ||U_f|| <= logit(λ).
    logit = np.log(max_forget_gate / (1 - max_forget_gate))
    room = logit - _paper_norms(recurrent_kernel)["f"]
    forget_input = kernel[:, UNITS : 2 * UNITS]
    forget_input *= room / np.abs(forget_input).sum(axis=0).max()
    norms = _paper_norms(recurrent_kernel)
    gap = 1 - max_forget_gate
    rate = (
        max_forget_gate
        + norms["i"] / 4
        + norms["c"]
        + norms["f"] / (4 * gap)
        + norms["o"] / 4
    )
    assert rate < 1

    batch = 16
    cell_bound = 1 / gap
    h1, h2 = rng.uniform(-1, 1, size=(2, batch, UNITS))
    c1, c2 = rng.uniform(-cell_bound, cell_bound, size=(2, batch, UNITS))
    distance = np.maximum(np.abs(h1 - h2).max(1), np.abs(c1 - c2).max(1))
    for _ in range(30):
        x = rng.uniform(-1, 1, size=(batch, features))
        h1, c1, f1 = _lstm_step(x, h1, c1, kernel, recurrent_kernel)
        h2, c2, f2 = _lstm_step(x, h2, c2, kernel, recurrent_kernel)
        assert max(f1.max(), f2.max()) <= max_forget_gate + 1e-12
        new_distance = np.maximum(
            np.abs(h1 - h2).max(1), np.abs(c1 - c2).max(1)
        )
        assert np.all(new_distance <= rate * distance + 1e-12)
        distance = new_distance


@pytest.mark.parametrize(
    "make_layer",
    [
        lambda constraint: keras.layers.LSTM(
            UNITS, recurrent_constraint=constraint
        ),
        lambda constraint: kr.layers.PeepholeLSTM(
            UNITS, recurrent_constraint=constraint
        ),
    ],
    ids=["keras_lstm", "peephole_lstm"],
)
def test_bound_holds_after_every_training_step(make_layer):
    max_forget_gate = 0.5
    keras.utils.set_random_seed(0)
    layer = make_layer(kr.constraints.LSTMStability(max_forget_gate))
    model = keras.Sequential(
        [keras.Input((4, 2)), layer, keras.layers.Dense(1)]
    )
    model.compile(keras.optimizers.SGD(5.0), "mse")
    kernels = []

    class CheckBound(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            kernels.append(np.array(layer.cell.recurrent_kernel))

    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, 4, 2)).astype("float32")
    y = rng.normal(scale=10.0, size=(40, 1)).astype("float32")
    model.fit(x, y, batch_size=8, epochs=1, callbacks=[CheckBound()], verbose=0)
    assert len(kernels) == 5
    for kernel in kernels:
        _assert_stable(kernel, max_forget_gate)
    # The orthogonal initial kernel is far outside: the first step projects.
    assert _paper_norms(kernels[0])["f"] > 0.99 * 0.25 - 1e-6
    assert not np.allclose(kernels[0], kernels[-1])


@pytest.mark.parametrize("value", [1, 1.0, 1.2, 0, -0.3, None])
def test_invalid_max_forget_gate_raises(value):
    with pytest.raises(ValueError, match=f"max_forget_gate={value!r}"):
        kr.constraints.LSTMStability(value)


@pytest.mark.parametrize("margin", [-0.1, 1.0, "0"])
def test_invalid_margin_raises(margin):
    with pytest.raises(ValueError, match="margin="):
        kr.constraints.LSTMStability(0.5, margin=margin)


@pytest.mark.parametrize("shape", [(4, 6), (4,), (2, 3, 8)])
def test_kernel_without_four_gate_blocks_raises(shape):
    with pytest.raises(ValueError, match="w.shape="):
        kr.constraints.LSTMStability(0.5)(np.zeros(shape, "float32"))


def test_config_round_trip():
    constraint = kr.constraints.LSTMStability(0.7, margin=0.05)
    config = constraint.get_config()
    assert config == {"max_forget_gate": 0.7, "margin": 0.05}
    restored = keras.constraints.deserialize(
        keras.constraints.serialize(constraint)
    )
    assert isinstance(restored, kr.constraints.LSTMStability)
    assert restored.get_config() == config
    layer = keras.layers.LSTM(3, recurrent_constraint=constraint)
    restored_layer = keras.layers.LSTM.from_config(layer.get_config())
    assert restored_layer.cell.recurrent_constraint.get_config() == config
