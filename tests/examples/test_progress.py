"""`examples/_progress.py`: one line per epoch, with the logged figures."""

import io
import re

import keras
import numpy as np

from tests.examples import load_example


def test_one_line_per_epoch_with_the_logged_values():
    epoch_line = load_example("_progress").EpochLine
    keras.utils.set_random_seed(0)
    x = np.random.default_rng(0).normal(size=(32, 3)).astype("float32")
    y = x.sum(axis=1, keepdims=True)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    model.compile(keras.optimizers.SGD(0.1), "mse")
    stream = io.StringIO()
    history = model.fit(
        x,
        y,
        batch_size=8,
        epochs=3,
        validation_data=(x, y),
        verbose=0,
        callbacks=[epoch_line("  dense ", stream=stream)],
    )
    lines = stream.getvalue().splitlines()
    assert len(lines) == 3, lines
    for epoch, line in enumerate(lines):
        match = re.fullmatch(
            rf"  dense epoch {epoch + 1}/3: loss (\S+), val_loss (\S+) "
            r"\(\d+\.\d s\)",
            line,
        )
        assert match, line
        np.testing.assert_allclose(
            float(match.group(1)), history.history["loss"][epoch], atol=1e-4
        )
        np.testing.assert_allclose(
            float(match.group(2)),
            history.history["val_loss"][epoch],
            atol=1e-4,
        )
    # The loss falls: the figures are the epochs' own, not one repeated.
    assert history.history["loss"][2] < history.history["loss"][0]
