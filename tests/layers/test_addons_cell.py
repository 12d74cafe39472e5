"""What the TensorFlow Addons cells share (`AddonsCell`): integer and
boolean inputs cast as `keras.layers.LSTM` casts them, in their own layers
and in a plain `keras.layers.RNN`, eagerly and under XLA."""

import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_recurrent as kr

FAMILIES = ("ESN", "NAS", "LayerNormLSTM", "LayerNormSimpleRNN")


def _pair(family):
    """The family's layer and its cell in `keras.layers.RNN`, built."""
    keras.utils.set_random_seed(0)
    layers = [
        getattr(kr.layers, family)(4),
        keras.layers.RNN(getattr(kr.layers, f"{family}Cell")(4)),
    ]
    for layer in layers:
        layer.build((None, 5, 3))
    return layers


def _values(dtype):
    values = np.random.default_rng(3).integers(-3, 4, size=(2, 5, 3))
    if dtype == "uint8":
        values = np.abs(values)
    elif dtype == "bool":
        values = values > 0
    return values.astype(dtype)


@pytest.mark.parametrize("family", FAMILIES)
def test_integers_give_the_numbers_of_their_float_cast(family):
    for layer in _pair(family):
        for dtype in ("int32", "int64", "uint8", "bool"):
            values = _values(dtype)
            output = layer(values)
            assert keras.backend.standardize_dtype(output.dtype) == "float32"
            np.testing.assert_array_equal(
                np.asarray(output), np.asarray(layer(values.astype("float32")))
            )
        # Strings are no numbers.
        with pytest.raises(ValueError, match=r"Received: inputs\.dtype=str"):
            layer(tf.constant(np.full((2, 5, 3), "a")))


@pytest.mark.parametrize("family", FAMILIES)
def test_integers_under_jit_compile(family):
    layers = _pair(family)
    inputs = keras.Input((5, 3), dtype="int32")
    model = keras.Model(inputs, [layer(inputs) for layer in layers])
    model.compile(jit_compile=True)
    values = _values("int32")
    for got, layer in zip(model.predict(values, verbose=0), layers):
        expected = np.asarray(layer(values.astype("float32")))
        np.testing.assert_allclose(got, expected, atol=1e-6)


def test_integers_under_mixed_precision():
    values = _values("int32")
    for layer in (
        kr.layers.LayerNormLSTM(4, dtype="mixed_float16"),
        keras.layers.RNN(
            kr.layers.NASCell(4, dtype="mixed_float16"), dtype="mixed_float16"
        ),
    ):
        output = layer(values)
        assert keras.backend.standardize_dtype(output.dtype) == "float16"
        np.testing.assert_array_equal(
            np.asarray(output), np.asarray(layer(values.astype("float16")))
        )
