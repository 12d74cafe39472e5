import keras
import numpy as np
import pytest

import keras_recurrent as kr

BATCH_SIZE, WINDOW, FEATURES, UNITS = 2, 3, 2, 4


def _stateful_model(nested=False):
    layer = keras.layers.LSTM(UNITS, stateful=True)
    inputs = keras.Input(batch_shape=(BATCH_SIZE, WINDOW, FEATURES))
    if nested:
        inner = keras.Sequential([inputs, layer])
        model = keras.Sequential([inputs, inner, keras.layers.Dense(1)])
    else:
        model = keras.Sequential([inputs, layer, keras.layers.Dense(1)])
    model.compile(keras.optimizers.SGD(0.01), "mse")
    return model, layer


def _states_are_zero(layer):
    return all(np.all(np.asarray(state) == 0) for state in layer.states)


class _Probe(keras.callbacks.Callback):
    """Records, before each batch, whether the layer's states are zero."""

    def __init__(self, layer):
        super().__init__()
        self.layer = layer
        self.zero_at = []

    def on_train_batch_begin(self, batch, logs=None):
        self.zero_at.append(_states_are_zero(self.layer))

    on_predict_batch_begin = on_train_batch_begin


def _data(num_batches=6):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(num_batches * BATCH_SIZE, WINDOW, FEATURES))
    y = rng.normal(size=(num_batches * BATCH_SIZE, 1))
    return x.astype("float32"), y.astype("float32")


@pytest.mark.parametrize("nested", [False, True])
def test_resets_at_epoch_start_and_every_n_batches(nested):
    model, layer = _stateful_model(nested)
    probe = _Probe(layer)
    x, y = _data()
    model.fit(
        x,
        y,
        batch_size=BATCH_SIZE,
        epochs=2,
        shuffle=False,
        callbacks=[kr.callbacks.ResetStatesCallback(reset_every=3), probe],
        verbose=0,
    )
    once = [True, False, False, True, False, False]
    assert probe.zero_at == once + once
    assert not _states_are_zero(layer)


def test_resets_only_at_epoch_start_by_default():
    model, layer = _stateful_model()
    probe = _Probe(layer)
    x, y = _data(4)
    model.fit(
        x,
        y,
        batch_size=BATCH_SIZE,
        epochs=2,
        shuffle=False,
        callbacks=[kr.callbacks.ResetStatesCallback(), probe],
        verbose=0,
    )
    assert probe.zero_at == [True, False, False, False] * 2


def test_resets_before_predict():
    model, layer = _stateful_model()
    x, _ = _data(2)
    model.predict(x, batch_size=BATCH_SIZE, verbose=0)
    assert not _states_are_zero(layer)
    probe = _Probe(layer)
    model.predict(
        x,
        batch_size=BATCH_SIZE,
        callbacks=[kr.callbacks.ResetStatesCallback(), probe],
        verbose=0,
    )
    assert probe.zero_at == [True, False]


@pytest.mark.parametrize("reset_every", [0, -1, 2.0, True])
def test_invalid_reset_every_raises(reset_every):
    with pytest.raises(ValueError, match=f"reset_every={reset_every!r}"):
        kr.callbacks.ResetStatesCallback(reset_every=reset_every)


def test_reset_every_must_divide_into_executions():
    model, _ = _stateful_model()
    model.compile(keras.optimizers.SGD(0.01), "mse", steps_per_execution=2)
    x, y = _data(4)
    with pytest.raises(ValueError, match="reset_every=3"):
        model.fit(
            x,
            y,
            batch_size=BATCH_SIZE,
            shuffle=False,
            callbacks=[kr.callbacks.ResetStatesCallback(reset_every=3)],
            verbose=0,
        )


def test_config_round_trip():
    callback = kr.callbacks.ResetStatesCallback(reset_every=5)
    assert callback.get_config() == {"reset_every": 5}
    restored = kr.callbacks.ResetStatesCallback.from_config(
        callback.get_config()
    )
    assert restored.reset_every == 5


def test_old_import_paths_warn_and_give_the_same_class():
    with pytest.warns(DeprecationWarning, match="kr.callbacks|callbacks"):
        old = kr.data.ResetStatesCallback
    assert old is kr.callbacks.ResetStatesCallback
    with pytest.warns(DeprecationWarning, match="next release"):
        from keras_recurrent.data.reset_states_callback import (
            ResetStatesCallback,
        )
    assert ResetStatesCallback is kr.callbacks.ResetStatesCallback
    assert "ResetStatesCallback" not in kr.data.__all__


def test_serialized_before_the_move_deserializes():
    # What `keras.saving.serialize_keras_object` wrote when the callback
    # lived in `kr.data`: the registered name is unchanged.
    serialized = {
        "module": "keras_recurrent.data.reset_states_callback",
        "class_name": "ResetStatesCallback",
        "config": {"reset_every": 4},
        "registered_name": "keras_recurrent>ResetStatesCallback",
    }
    callback = keras.saving.deserialize_keras_object(serialized)
    assert type(callback) is kr.callbacks.ResetStatesCallback
    assert callback.reset_every == 4
    assert (
        keras.saving.get_registered_name(kr.callbacks.ResetStatesCallback)
        == serialized["registered_name"]
    )
