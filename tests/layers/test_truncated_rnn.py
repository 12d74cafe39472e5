import keras
import numpy as np
import pytest

import keras_recurrent as kr
import keras_recurrent.testing
from tests.layers.lstm_reference import lstm_sequence
from tests.layers.lstm_reference import named_weights
from tests.layers.lstm_reference import randomize_weights

BATCH, STEPS, FEATURES, UNITS = 3, 6, 2, 4
# name: (layer class, NumPy reference variant or None)
RNNS = {
    "lstm": (keras.layers.LSTM, "NP"),
    "peephole_lstm": (kr.layers.PeepholeLSTM, "V"),
    "gru": (keras.layers.GRU, None),
    "simple_rnn": (keras.layers.SimpleRNN, None),
}


def _data(seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(BATCH, STEPS, FEATURES)).astype("float32")
    mask = np.ones((BATCH, STEPS), dtype=bool)
    mask[0, 4:] = False  # right padding
    mask[1, [0, 3]] = False  # holes, one at the start
    return x, mask


def _truncated(name, window, return_sequences=True, seed=0):
    cls, _ = RNNS[name]
    layer = kr.layers.TruncatedRNN(
        cls(UNITS), window=window, return_sequences=return_sequences
    )
    layer.build((None, None, FEATURES))
    randomize_weights(layer, seed=seed)
    return layer


def _full(name, truncated):
    """The wrapped RNN over the whole sequence, with the same weights."""
    cls, _ = RNNS[name]
    full = cls(UNITS, return_sequences=True)
    full.build((None, None, FEATURES))
    full.set_weights(truncated.rnn_layer.get_weights())
    return full


def _last_valid(sequence, mask):
    last = np.array([np.flatnonzero(row).max() for row in mask])
    return sequence[np.arange(len(mask)), last]


@pytest.mark.parametrize("name", sorted(RNNS))
@pytest.mark.parametrize("window", [STEPS, STEPS + 3])
def test_equals_full_rnn_when_window_covers_sequence(name, window):
    x, mask = _data()
    layer = _truncated(name, window)
    full = _full(name, layer)
    expected = np.asarray(full(x, mask=mask))
    np.testing.assert_allclose(layer(x, mask=mask), expected, atol=1e-6)
    np.testing.assert_allclose(layer(x), full(x), atol=1e-6)

    last = kr.layers.TruncatedRNN(layer.rnn_layer, window=window)
    np.testing.assert_allclose(
        last(x, mask=mask), _last_valid(expected, mask), atol=1e-6
    )


@pytest.mark.parametrize("name", ["lstm", "peephole_lstm"])
@pytest.mark.parametrize("window", [1, 2, 4])
def test_each_output_is_the_rnn_over_its_window_alone(name, window):
    x, mask = _data(1)
    layer = _truncated(name, window, seed=1)
    outputs = np.asarray(layer(x, mask=mask))
    weights = named_weights(layer.rnn_layer)
    variant = RNNS[name][1]
    for t in range(STEPS):
        start = max(0, t - window + 1)
        expected, _ = lstm_sequence(
            x[:, start : t + 1].astype("float64"),
            weights,
            variant,
            mask=mask[:, start : t + 1],
        )
        np.testing.assert_allclose(
            outputs[:, t], expected[:, -1], atol=1e-5, err_msg=f"t={t}"
        )
        # The same layer run on the window alone, as a plain RNN.
        alone = layer.rnn_layer(
            x[:, start : t + 1], mask=mask[:, start : t + 1]
        )
        np.testing.assert_allclose(outputs[:, t], alone, atol=1e-6)

    last = kr.layers.TruncatedRNN(layer.rnn_layer, window=window)
    np.testing.assert_allclose(
        last(x, mask=mask), _last_valid(outputs, mask), atol=1e-6
    )


def test_window_without_valid_steps_outputs_zeros():
    x, _ = _data()
    mask = np.ones((BATCH, STEPS), dtype=bool)
    mask[0, :3] = False
    mask[1, :] = False
    layer = _truncated("lstm", window=2)
    outputs = np.asarray(layer(x, mask=mask))
    np.testing.assert_array_equal(outputs[0, :3], 0.0)
    np.testing.assert_array_equal(outputs[1], 0.0)
    assert np.all(np.abs(outputs[0, 3:]).sum(axis=-1) > 0)
    last = kr.layers.TruncatedRNN(layer.rnn_layer, window=2)
    np.testing.assert_array_equal(np.asarray(last(x, mask=mask))[1], 0.0)


def test_shapes_and_mask_propagation():
    inputs = keras.Input((None, FEATURES))
    masked = keras.layers.Masking(0.0)(inputs)
    layer = kr.layers.TruncatedRNN(
        keras.layers.GRU(5), window=3, return_sequences=True
    )
    outputs = layer(masked)
    assert outputs.shape == (None, None, 5)
    assert layer.compute_mask(masked, np.ones((1, 2), bool)) is not None
    last = kr.layers.TruncatedRNN(keras.layers.GRU(5), window=3)
    assert last(masked).shape == (None, 5)
    assert last.compute_mask(masked, np.ones((1, 2), bool)) is None
    # 2 matrices and a bias, owned through the wrapped layer.
    assert len(layer.trainable_weights) == 3


@pytest.mark.parametrize("window", [0, -2, 1.5, True, None])
def test_invalid_window_raises(window):
    with pytest.raises(ValueError, match=f"window={window!r}"):
        kr.layers.TruncatedRNN(keras.layers.LSTM(2), window=window)


@pytest.mark.parametrize(
    "setting",
    ["return_sequences", "return_state", "go_backwards", "stateful"],
)
def test_unsupported_rnn_settings_raise(setting):
    with pytest.raises(ValueError, match=f"rnn_layer.{setting}=True"):
        kr.layers.TruncatedRNN(
            keras.layers.LSTM(2, **{setting: True}), window=2
        )


def test_non_rnn_layer_raises():
    with pytest.raises(ValueError, match="rnn_layer=<Dense"):
        kr.layers.TruncatedRNN(keras.layers.Dense(2), window=2)
    with pytest.raises(ValueError, match="rank 3"):
        kr.layers.TruncatedRNN(keras.layers.LSTM(2), window=2).build((4, 2))


def test_from_config_without_rnn_layer_raises():
    config = kr.layers.TruncatedRNN(keras.layers.LSTM(2), window=2).get_config()
    del config["rnn_layer"]
    with pytest.raises(ValueError, match=r"`rnn_layer`.*keys=\[.*'window'"):
        kr.layers.TruncatedRNN.from_config(config)


def _model(timesteps=STEPS):
    inputs = keras.Input((timesteps, FEATURES), name="frames")
    x = kr.layers.TruncatedRNN(
        kr.layers.PeepholeLSTM(UNITS, name="peephole"),
        window=3,
        return_sequences=True,
    )(inputs)
    x = kr.layers.TruncatedRNN(keras.layers.LSTM(UNITS), window=2)(x)
    return keras.Model(inputs, keras.layers.Dense(1, name="score")(x))


# Keras warns when a mask is passed to a functional model; the layers inside
# do receive it.
@pytest.mark.filterwarnings("ignore:.*was passed an input with a mask")
def test_config_round_trip_and_keras_file(tmp_path):
    layer = kr.layers.TruncatedRNN(
        kr.layers.PeepholeLSTM(UNITS, cell_clip=2.0),
        window=3,
        return_sequences=True,
        name="truncated",
    )
    config = layer.get_config()
    restored = kr.layers.TruncatedRNN.from_config(config)
    assert restored.get_config() == config
    assert isinstance(restored.rnn_layer, kr.layers.PeepholeLSTM)
    assert restored.rnn_layer.cell_clip == 2.0

    x, mask = _data()
    model = _model()
    expected = model(x, mask=mask)
    path = tmp_path / "truncated.keras"
    model.save(path)
    loaded = keras.saving.load_model(path)
    np.testing.assert_allclose(loaded(x, mask=mask), expected, atol=1e-6)


def test_mirrored_training_matches_single_device():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(24, STEPS, FEATURES)).astype("float32")
    y = rng.normal(size=(24, 1)).astype("float32")
    trained = keras_recurrent.testing.assert_mirrored_equivalence(_model, x, y)
    assert trained["strategy"].num_replicas_in_sync == 2


def test_saved_model_export_serves_predictions(tmp_path):
    x, _ = _data()
    model = _model(timesteps=None)
    served = keras_recurrent.testing.assert_export_roundtrip(
        model, x, tmp_path=tmp_path, lengths=np.array([6, 4, 1])
    )
    assert served["score"].shape == (BATCH, 1)
