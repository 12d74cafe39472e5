import keras
import numpy as np
import pytest

import keras_recurrent as kr

NUM_SEQUENCES, TIMESTEPS, FEATURES, UNITS = 4, 12, 2, 3
BATCH_SIZE, WINDOW = 2, 4
CHUNKS = TIMESTEPS // WINDOW


def _sequences(seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(NUM_SEQUENCES, TIMESTEPS, FEATURES)).astype(
        "float32"
    )


def _unchunk(batches):
    """Inverse of the layout: `(num_batches * batch_size, window, ...)`."""
    rest = batches.shape[2:]
    groups = NUM_SEQUENCES // BATCH_SIZE
    batches = batches.reshape((groups, CHUNKS, BATCH_SIZE, WINDOW) + rest)
    return np.swapaxes(batches, 1, 2).reshape((NUM_SEQUENCES, TIMESTEPS) + rest)


def test_rows_continue_from_batch_to_batch():
    x = _sequences()
    y = np.arange(NUM_SEQUENCES * TIMESTEPS).reshape(NUM_SEQUENCES, TIMESTEPS)
    inputs, targets, num_batches = kr.data.tbptt_batches(
        x, y, batch_size=BATCH_SIZE, window=WINDOW
    )
    assert num_batches == (NUM_SEQUENCES // BATCH_SIZE) * CHUNKS == 6
    assert inputs.shape == (num_batches * BATCH_SIZE, WINDOW, FEATURES)
    assert targets.shape == (num_batches * BATCH_SIZE, WINDOW)
    batches = inputs.reshape(num_batches, BATCH_SIZE, WINDOW, FEATURES)
    target_batches = targets.reshape(num_batches, BATCH_SIZE, WINDOW)
    for batch in range(num_batches):
        group, chunk = divmod(batch, CHUNKS)
        steps = slice(chunk * WINDOW, (chunk + 1) * WINDOW)
        for row in range(BATCH_SIZE):
            sequence = group * BATCH_SIZE + row
            np.testing.assert_array_equal(
                batches[batch, row], x[sequence, steps]
            )
            np.testing.assert_array_equal(
                target_batches[batch, row], y[sequence, steps]
            )
    np.testing.assert_array_equal(_unchunk(inputs), x)
    no_targets = kr.data.tbptt_batches(x, batch_size=BATCH_SIZE, window=WINDOW)
    assert no_targets[1] is None


def test_dataset_yields_the_same_batches_in_order():
    x = _sequences()
    y = -x[..., 0]
    inputs, targets, num_batches = kr.data.tbptt_batches(
        x, y, batch_size=BATCH_SIZE, window=WINDOW
    )
    dataset, dataset_batches = kr.data.tbptt_batches(
        x, y, batch_size=BATCH_SIZE, window=WINDOW, as_dataset=True
    )
    assert dataset_batches == num_batches
    batches = list(dataset.as_numpy_iterator())
    assert len(batches) == num_batches
    np.testing.assert_array_equal(
        np.concatenate([batch[0] for batch in batches]), inputs
    )
    np.testing.assert_array_equal(
        np.concatenate([batch[1] for batch in batches]), targets
    )
    only_inputs, _ = kr.data.tbptt_batches(
        x, batch_size=BATCH_SIZE, window=WINDOW, as_dataset=True
    )
    np.testing.assert_array_equal(
        np.concatenate(list(only_inputs.as_numpy_iterator())), inputs
    )


@pytest.mark.parametrize(
    "make_layer",
    [
        lambda **kwargs: keras.layers.LSTM(UNITS, **kwargs),
        lambda **kwargs: kr.layers.PeepholeLSTM(UNITS, **kwargs),
    ],
    ids=["keras_lstm", "peephole_lstm"],
)
def test_stateful_chunks_reproduce_the_full_forward_pass(make_layer):
    x = _sequences(1)
    keras.utils.set_random_seed(0)
    full = keras.Sequential(
        [
            keras.Input((TIMESTEPS, FEATURES)),
            make_layer(return_sequences=True),
        ]
    )
    stateful = keras.Sequential(
        [
            keras.Input(batch_shape=(BATCH_SIZE, WINDOW, FEATURES)),
            make_layer(return_sequences=True, stateful=True),
        ]
    )
    rng = np.random.default_rng(2)
    stateful.set_weights(
        [rng.normal(scale=0.5, size=w.shape) for w in full.get_weights()]
    )
    full.set_weights(stateful.get_weights())
    expected = np.asarray(full(x))

    inputs, _, _ = kr.data.tbptt_batches(
        x, batch_size=BATCH_SIZE, window=WINDOW
    )
    # Through predict, with the callback starting each set of sequences.
    outputs = stateful.predict(
        inputs,
        batch_size=BATCH_SIZE,
        callbacks=[kr.callbacks.ResetStatesCallback(reset_every=CHUNKS)],
        verbose=0,
    )
    np.testing.assert_allclose(_unchunk(outputs), expected, atol=1e-5)

    # By hand, batch after batch.
    stateful.layers[0].reset_state()
    chunks = []
    for batch in range(len(inputs) // BATCH_SIZE):
        if batch % CHUNKS == 0:
            stateful.layers[0].reset_state()
        rows = slice(batch * BATCH_SIZE, (batch + 1) * BATCH_SIZE)
        chunks.append(np.asarray(stateful(inputs[rows])))
    np.testing.assert_allclose(
        _unchunk(np.concatenate(chunks)), expected, atol=1e-5
    )


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"batch_size": 2, "window": 0}, "window=0"),
        ({"batch_size": 0, "window": 4}, "batch_size=0"),
        ({"batch_size": 2.0, "window": 4}, "batch_size=2.0"),
        ({"batch_size": 3, "window": 4}, "batch_size=3"),
        ({"batch_size": 2, "window": 5}, "window=5"),
    ],
)
def test_invalid_arguments_raise(kwargs, message):
    with pytest.raises(ValueError, match=message):
        kr.data.tbptt_batches(_sequences(), **kwargs)


def test_invalid_shapes_raise():
    x = _sequences()
    with pytest.raises(ValueError, match="targets.shape"):
        kr.data.tbptt_batches(x, x[:, :8], batch_size=BATCH_SIZE, window=WINDOW)
    with pytest.raises(ValueError, match=r"sequences.shape=\(12,\)"):
        kr.data.tbptt_batches(np.zeros(12), batch_size=1, window=1)
