import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_recurrent as kr

BATCH, STEPS, FEATURES = 5, 6, 3
MODES = ["last", "mean", "max", "attention"]


def _data(seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(BATCH, STEPS, FEATURES)).astype("float32")
    mask = np.ones((BATCH, STEPS), dtype=bool)
    mask[0, 4:] = False  # padded at the end
    mask[1, [1, 5]] = False  # a hole and a padded last index
    mask[2, :] = False  # fully masked
    mask[3, 1:] = False  # a single valid step
    return x, mask


def _reference(mode, x, mask, weights=None):
    """NumPy pooling of each row over its valid steps; zeros for none."""
    pooled = np.zeros((x.shape[0], x.shape[2]))
    attention = np.zeros(mask.shape)
    for row in range(x.shape[0]):
        steps = np.flatnonzero(mask[row])
        if steps.size == 0:
            continue
        valid = x[row, steps].astype("float64")
        if mode == "last":
            pooled[row] = valid[-1]
        elif mode == "mean":
            pooled[row] = valid.mean(axis=0)
        elif mode == "max":
            pooled[row] = valid.max(axis=0)
        else:
            scores = (
                np.tanh(valid @ weights["kernel"] + weights["bias"])
                @ weights["context_vector"]
            )
            a = np.exp(scores - scores.max())
            a /= a.sum()
            attention[row, steps] = a
            pooled[row] = a @ valid
    return pooled, attention


def _attention_layer(units=4, seed=0, **kwargs):
    layer = kr.layers.SequencePooling(
        "attention", attention_units=units, **kwargs
    )
    layer.build((None, None, FEATURES))
    rng = np.random.default_rng(seed)
    for weight in layer.weights:
        weight.assign(rng.normal(size=weight.shape))
    return layer


def _weights(layer):
    return {w.path.split("/")[-1]: np.array(w) for w in layer.weights}


@pytest.mark.parametrize("mode", MODES)
def test_matches_numpy_reference_with_mask(mode):
    x, mask = _data()
    if mode == "attention":
        layer = _attention_layer()
        weights = _weights(layer)
    else:
        layer, weights = kr.layers.SequencePooling(mode), None
    expected, _ = _reference(mode, x, mask, weights)
    np.testing.assert_allclose(layer(x, mask=mask), expected, atol=1e-6)
    # Without a mask every step is valid.
    everything = np.ones_like(mask)
    expected, _ = _reference(mode, x, everything, weights)
    np.testing.assert_allclose(layer(x), expected, atol=1e-6)


def test_last_is_the_last_unmasked_step_not_the_last_index():
    x, mask = _data(1)
    pooled = np.array(kr.layers.SequencePooling("last")(x, mask=mask))
    np.testing.assert_array_equal(pooled[0], x[0, 3])
    np.testing.assert_array_equal(pooled[1], x[1, 4])
    np.testing.assert_array_equal(pooled[3], x[3, 0])
    np.testing.assert_array_equal(pooled[4], x[4, -1])


def test_max_ignores_padding_even_when_valid_values_are_very_negative():
    x, mask = _data(2)
    x = np.where(mask[..., None], -1e30 + x, 0.0).astype("float32")
    pooled = np.array(kr.layers.SequencePooling("max")(x, mask=mask))
    expected, _ = _reference("max", x, mask)
    np.testing.assert_array_equal(pooled, expected.astype("float32"))
    valid_rows = mask.any(axis=1)
    assert np.all(pooled[valid_rows] < -1e29)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("padding", [1e30, -1e30, np.inf, np.nan])
def test_padding_values_never_change_the_output(mode, padding):
    x, mask = _data(3)
    layer = (
        _attention_layer(return_attention_scores=True)
        if mode == "attention"
        else kr.layers.SequencePooling(mode)
    )
    changed = np.where(mask[..., None], x, padding).astype("float32")
    before = keras.tree.flatten(layer(x, mask=mask))
    after = keras.tree.flatten(layer(changed, mask=mask))
    for ours, theirs in zip(before, after):
        np.testing.assert_array_equal(ours, theirs)


def test_attention_weights_sum_to_one_over_valid_steps_and_zero_on_padding():
    x, mask = _data(4)
    layer = _attention_layer(units=5, seed=1, return_attention_scores=True)
    pooled, weights = layer(x, mask=mask)
    weights = np.array(weights)
    assert weights.shape == (BATCH, STEPS)
    np.testing.assert_array_equal(weights[~mask], 0.0)
    totals = weights.sum(axis=1)
    np.testing.assert_allclose(totals[mask.any(axis=1)], 1.0, atol=1e-6)
    assert totals[2] == 0.0  # the fully masked row
    expected, expected_weights = _reference(
        "attention", x, mask, _weights(layer)
    )
    np.testing.assert_allclose(weights, expected_weights, atol=1e-6)
    np.testing.assert_allclose(pooled, expected, atol=1e-6)


@pytest.mark.parametrize("mode", MODES)
def test_fully_masked_rows_give_zeros_and_finite_gradients(mode):
    x, _ = _data(5)
    mask = np.zeros((BATCH, STEPS), dtype=bool)
    mask[0, :2] = True
    layer = (
        _attention_layer()
        if mode == "attention"
        else kr.layers.SequencePooling(mode)
    )
    inputs = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(inputs)
        pooled = layer(inputs, mask=mask)
        loss = tf.reduce_sum(pooled**2)
    gradients = tape.gradient(loss, [inputs, *layer.trainable_variables])
    np.testing.assert_array_equal(np.array(pooled)[1:], 0.0)
    for gradient in gradients:
        assert np.all(np.isfinite(np.array(gradient)))
    # Padding gets no gradient.
    np.testing.assert_array_equal(np.array(gradients[0])[~mask], 0.0)


@pytest.mark.parametrize("mode", ["mean", "attention"])
def test_mixed_float16(mode):
    x, mask = _data(6)
    # Long rows of large values: their float16 sum (1e5) would overflow.
    long_x = np.full((2, 100, FEATURES), 1000.0, "float32")
    long_mask = np.ones((2, 100), dtype=bool)
    reference = (
        _attention_layer()
        if mode == "attention"
        else kr.layers.SequencePooling(mode)
    )
    keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        layer = kr.layers.SequencePooling(mode, attention_units=4)
        layer.build((None, None, FEATURES))
    finally:
        keras.mixed_precision.set_global_policy("float32")
    layer.set_weights(reference.get_weights())
    pooled = layer(x, mask=mask)
    assert keras.backend.standardize_dtype(pooled.dtype) == "float16"
    np.testing.assert_allclose(
        np.array(pooled, "float32"), reference(x, mask=mask), atol=1e-2
    )
    long_pooled = np.array(layer(long_x, mask=long_mask), "float32")
    np.testing.assert_allclose(long_pooled, 1000.0, rtol=1e-3)


def test_mask_from_upstream_layer_and_save_load(tmp_path):
    x, mask = _data(7)
    x = np.where(mask[..., None], x, 0.0).astype("float32")
    inputs = keras.Input((None, FEATURES))
    masked = keras.layers.Masking(0.0)(inputs)
    pooled, weights = kr.layers.SequencePooling(
        "attention", return_attention_scores=True, name="pool"
    )(masked)
    outputs = [
        pooled,
        weights,
        kr.layers.SequencePooling("last")(masked),
        kr.layers.SequencePooling("max")(masked),
    ]
    model = keras.Model(inputs, outputs)
    attention = model.get_layer("pool")
    explicit = attention(x, mask=mask)
    predicted = model.predict(x, verbose=0)
    np.testing.assert_allclose(predicted[0], explicit[0], atol=1e-6)
    np.testing.assert_allclose(predicted[1], explicit[1], atol=1e-6)
    np.testing.assert_allclose(
        predicted[2], _reference("last", x, mask)[0], atol=1e-6
    )
    path = tmp_path / "model.keras"
    model.save(path)
    loaded = keras.saving.load_model(path)
    for ours, theirs in zip(predicted, loaded.predict(x, verbose=0)):
        np.testing.assert_array_equal(ours, theirs)


def test_get_config_round_trip():
    layer = kr.layers.SequencePooling(
        "attention",
        return_attention_scores=True,
        attention_units=7,
        kernel_regularizer="l2",
        context_initializer="zeros",
        bias_constraint="non_neg",
        name="pool",
    )
    config = layer.get_config()
    clone = kr.layers.SequencePooling.from_config(config)
    assert clone.get_config() == config
    assert (clone.mode, clone.attention_units) == ("attention", 7)
    clone.build((None, None, FEATURES))
    assert [tuple(w.shape) for w in clone.weights] == [
        (FEATURES, 7),
        (7,),
        (7,),
    ]
    assert not kr.layers.SequencePooling("mean").weights


def test_rejects_bad_arguments_and_inputs():
    with pytest.raises(ValueError, match="`mode`.*Received: mode='median'"):
        kr.layers.SequencePooling("median")
    with pytest.raises(ValueError, match="return_attention_scores=True"):
        kr.layers.SequencePooling("mean", return_attention_scores=True)
    with pytest.raises(ValueError, match="attention_units=0"):
        kr.layers.SequencePooling("attention", attention_units=0)
    with pytest.raises(ValueError, match=r"rank 3.*inputs.shape=\(2, 4\)"):
        kr.layers.SequencePooling("mean")(np.ones((2, 4), "float32"))
    with pytest.raises(ValueError, match=r"mask.shape=\(2, 3, 1\)"):
        kr.layers.SequencePooling("max")(
            np.ones((2, 3, 4), "float32"), mask=np.ones((2, 3, 1), bool)
        )
    with pytest.raises(ValueError, match="must be defined"):
        kr.layers.SequencePooling("attention").build((None, 3, None))


def test_default_mode_is_last():
    layer = kr.layers.SequencePooling()
    assert layer.mode == "last" and layer.get_config()["mode"] == "last"
    x = np.random.default_rng(3).normal(size=(2, 5, FEATURES))
    mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], bool)
    np.testing.assert_allclose(
        keras.ops.convert_to_numpy(layer(x.astype("float32"), mask=mask)),
        x[[0, 1], [2, 4]],
        rtol=1e-6,
    )
