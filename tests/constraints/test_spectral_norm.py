import keras
import numpy as np
import pytest

import keras_recurrent as kr


def _spectral_norm(w):
    return np.linalg.norm(np.asarray(w, dtype="float64"), ord=2)


@pytest.mark.parametrize("shape", [(6, 6), (4, 7), (7, 3)])
def test_projection_clips_singular_values(shape):
    rng = np.random.default_rng(0)
    rank = min(shape)
    left, _ = np.linalg.qr(rng.normal(size=(shape[0], rank)))
    right, _ = np.linalg.qr(rng.normal(size=(shape[1], rank)))
    values = np.linspace(3.0, 0.2, rank)  # some above 0.9, some below
    w = ((left * values) @ right.T).astype("float32")
    projected = np.asarray(kr.constraints.SpectralNorm(0.9)(w))
    assert _spectral_norm(projected) <= 0.9 + 1e-6
    # The nearest matrix of the ball: the SVD with singular values clipped.
    u, s, vt = np.linalg.svd(w.astype("float64"), full_matrices=False)
    expected = (u * np.minimum(s, 0.9)) @ vt
    np.testing.assert_allclose(projected, expected, atol=1e-5)
    np.testing.assert_allclose(
        np.linalg.svd(projected, compute_uv=False),
        np.minimum(s, 0.9),
        atol=1e-5,
    )


def test_matrix_inside_the_ball_is_unchanged():
    rng = np.random.default_rng(1)
    w = rng.normal(size=(5, 5))
    w = (0.7 * w / _spectral_norm(w)).astype("float32")
    np.testing.assert_array_equal(kr.constraints.SpectralNorm(0.9)(w), w)


def test_bound_holds_after_every_training_step():
    max_norm = 0.8
    keras.utils.set_random_seed(0)
    layer = keras.layers.SimpleRNN(
        6,
        recurrent_initializer=keras.initializers.Orthogonal(gain=3.0),
        recurrent_constraint=kr.constraints.SpectralNorm(max_norm),
    )
    model = keras.Sequential(
        [keras.Input((5, 2)), layer, keras.layers.Dense(1)]
    )
    model.compile(keras.optimizers.SGD(5.0), "mse")
    assert _spectral_norm(layer.cell.recurrent_kernel) > 2.9
    norms, kernels = [], []

    class CheckBound(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            kernel = np.array(layer.cell.recurrent_kernel)
            norms.append(_spectral_norm(kernel))
            kernels.append(kernel)

    rng = np.random.default_rng(0)
    x = rng.normal(size=(48, 5, 2)).astype("float32")
    y = rng.normal(scale=10.0, size=(48, 1)).astype("float32")
    model.fit(x, y, batch_size=8, epochs=1, callbacks=[CheckBound()], verbose=0)
    assert len(norms) == 6
    assert max(norms) <= max_norm + 1e-6
    # The large steps push the kernel to the boundary, and it keeps moving.
    assert min(norms) > max_norm - 1e-3
    assert not np.allclose(kernels[0], kernels[-1])


@pytest.mark.parametrize("max_norm", [1, 1.0, 1.5, 0, 0.0, -0.5, True, "0.5"])
def test_invalid_max_norm_raises(max_norm):
    with pytest.raises(ValueError, match=f"max_norm={max_norm!r}"):
        kr.constraints.SpectralNorm(max_norm)


def test_non_matrix_raises():
    with pytest.raises(ValueError, match=r"w.shape=\(2, 2, 2\)"):
        kr.constraints.SpectralNorm(0.5)(np.zeros((2, 2, 2), "float32"))


def test_config_round_trip():
    constraint = kr.constraints.SpectralNorm(0.95)
    assert constraint.get_config() == {"max_norm": 0.95}
    restored = keras.constraints.deserialize(
        keras.constraints.serialize(constraint)
    )
    assert isinstance(restored, kr.constraints.SpectralNorm)
    assert restored.max_norm == 0.95
    layer = keras.layers.SimpleRNN(3, recurrent_constraint=constraint)
    restored_layer = keras.layers.SimpleRNN.from_config(layer.get_config())
    assert restored_layer.cell.recurrent_constraint.max_norm == 0.95
