"""Checks every Addons cell and layer gets (tests/layers/test_*.py)."""

import json

import keras
import numpy as np

from tests.layers.dropout_reference import check_per_sequence_dropout

BATCH, STEPS, FEATURES, UNITS = 3, 5, 2, 3


def data(seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(BATCH, STEPS, FEATURES)).astype("float32")
    mask = np.ones((BATCH, STEPS), bool)
    mask[0, 3:] = False
    mask[2, 1] = False
    return x, mask


def randomize(layer, seed=0):
    rng = np.random.default_rng(seed)
    layer.set_weights(
        [rng.uniform(-1, 1, w.shape).astype("float32") for w in layer.weights]
    )


def check_weights(cell, expected):
    """`cell`, built in an RNN on `FEATURES` inputs, has `expected`
    `[(path below the cell, shape, trainable)]`, in order."""
    keras.layers.RNN(cell).build((None, None, FEATURES))
    assert [
        ("/".join(w.path.split("/")[2:]), tuple(w.shape), w.trainable)
        for w in cell.weights
    ] == expected


def check_config_round_trip(cell_class, **arguments):
    cell = cell_class(UNITS, **arguments)
    config = cell.get_config()
    for name, value in arguments.items():
        assert config[name] == value or isinstance(config[name], dict), name
    assert cell_class.from_config(config).get_config() == config
    json.dumps(config)


def check_reference(cell, step, output_index=0, seed=0):
    """`RNN(cell)` with a mask and random initial states against
    `sequence(step)` of tests/layers/addons_reference.py."""
    from tests.layers.addons_reference import sequence

    x, mask = data(seed)
    layer = keras.layers.RNN(cell, return_sequences=True, return_state=True)
    layer.build(x.shape)
    randomize(layer, seed)
    rng = np.random.default_rng(seed + 1)
    sizes = cell.state_size
    initial = [rng.normal(size=(BATCH, s)).astype("float32") for s in sizes]
    outputs, *states = layer(x, mask=mask, initial_state=initial)
    expected, expected_states = sequence(
        step, x, initial, mask, output_index=output_index
    )
    np.testing.assert_allclose(outputs, expected, atol=1e-5)
    for state, expected_state in zip(states, expected_states, strict=True):
        np.testing.assert_allclose(state, expected_state, atol=1e-5)
    return layer


def check_dropout(layer_class, step, seed=0):
    """One input and one recurrent mask per sequence and call, seeded."""
    from tests.layers.addons_reference import sequence

    x, mask = data(seed)
    kwargs = {"dropout": 0.5, "recurrent_dropout": 0.25, "seed": 7}
    layer = layer_class(
        UNITS, return_sequences=True, return_state=True, **kwargs
    )
    layer.build(x.shape)
    randomize(layer, seed)
    weights = _weights(layer.cell)

    def reference(x, mask, dropout_masks):
        zeros = [np.zeros((x.shape[0], s)) for s in layer.cell.state_size]
        return sequence(
            lambda x_t, states: step(x_t, states, weights, dropout_masks),
            x,
            zeros,
            mask,
        )

    check_per_sequence_dropout(
        layer, reference, x, mask, (FEATURES, UNITS), (0.5, 0.25)
    )
    again = layer_class(UNITS, return_sequences=True, **kwargs)
    again.build(x.shape)
    again.set_weights(layer.get_weights())
    other = layer_class(UNITS, return_sequences=True, **{**kwargs, "seed": 8})
    other.build(x.shape)
    other.set_weights(layer.get_weights())
    first = np.asarray(again(x, training=True))
    fresh = layer_class(UNITS, return_sequences=True, **kwargs)
    fresh.build(x.shape)
    fresh.set_weights(layer.get_weights())
    np.testing.assert_array_equal(first, fresh(x, training=True))
    assert not np.allclose(first, other(x, training=True))


def _weights(cell):
    from tests.layers.addons_reference import weights_by_path

    return weights_by_path(cell)


def check_layer_saving_and_mixed_precision(make_layer, tmp_path, seed=0):
    """A `.keras` round trip of a masked model, and mixed_float16 against
    float32 with the same weights."""
    x, _ = data(seed)
    x[0, 3:] = 0.0
    inputs = keras.Input((None, FEATURES))
    outputs = make_layer()(keras.layers.Masking(0.0)(inputs))
    model = keras.Model(inputs, outputs)
    randomize(model, seed)
    path = tmp_path / "model.keras"
    model.save(path)
    loaded = keras.saving.load_model(path)
    np.testing.assert_array_equal(
        model.predict(x, verbose=0), loaded.predict(x, verbose=0)
    )
    assert json.dumps(loaded.get_config(), sort_keys=True) == json.dumps(
        model.get_config(), sort_keys=True
    )

    keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        half = make_layer()
        half.build(x.shape)
    finally:
        keras.mixed_precision.set_global_policy("float32")
    half.set_weights(model.get_weights())
    result = keras.ops.convert_to_numpy(keras.ops.cast(half(x), "float32"))
    assert keras.backend.standardize_dtype(half(x).dtype) == "float16"
    assert all(w.dtype == "float32" for w in half.weights)
    # The float32 layer, without the model's mask.
    expected = keras.ops.convert_to_numpy(model.layers[-1](x))
    np.testing.assert_allclose(result, expected, atol=2e-2)
