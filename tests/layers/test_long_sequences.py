"""Sequences of 10,000 steps train without NaN (full backpropagation through
time), and the long-sequence benchmark runs."""

import subprocess
import sys
from pathlib import Path

import keras
import numpy as np
import pytest

import keras_recurrent as kr

ROOT = Path(__file__).resolve().parents[2]


def _adding_problem(batch, timesteps, seed):
    """The adding problem: the sum of the two marked values of a sequence,
    the marks at the start and the end, so the answer needs the whole
    sequence."""
    rng = np.random.default_rng(seed)
    values = rng.random((batch, timesteps)).astype("float32")
    marks = np.zeros((batch, timesteps), "float32")
    marks[:, 0] = marks[:, -1] = 1.0
    inputs = np.stack([values, marks], axis=-1)
    return inputs, values[:, :1] + values[:, -1:]


@pytest.mark.parametrize(
    "make_layer",
    [
        lambda: kr.layers.PeepholeLSTM(4),
        pytest.param(
            lambda: kr.layers.GatedFeedbackRNN([4, 4], cell_type="lstm"),
            marks=pytest.mark.slow,  # about 45 s on 2 cores
        ),
    ],
    ids=["peephole_lstm", "gated_feedback_rnn"],
)
def test_trains_on_10000_steps_without_nan(make_layer):
    x, y = _adding_problem(batch=2, timesteps=10_000, seed=0)
    keras.utils.set_random_seed(0)
    model = keras.Sequential(
        [keras.Input((10_000, 2)), make_layer(), keras.layers.Dense(1)]
    )
    # A learning rate large enough that the first steps move the weights.
    model.compile(keras.optimizers.Adam(1e-2), "mse")
    before = [np.array(weight) for weight in model.weights]
    history = model.fit(x, y, epochs=2, batch_size=2, verbose=0)
    losses = history.history["loss"]
    assert np.all(np.isfinite(losses)), losses
    for weight in model.weights:
        assert np.all(np.isfinite(np.asarray(weight))), weight.path
    # Gradients reached the recurrent weights through the 10,000 steps.
    changed = [
        not np.allclose(initial, np.asarray(weight))
        for initial, weight in zip(before, model.weights)
    ]
    assert all(changed), [w.path for w, c in zip(model.weights, changed)]
    assert np.all(np.isfinite(model.predict(x, verbose=0)))


@pytest.mark.slow  # a benchmark run, about 40 s on 2 cores
def test_long_sequence_benchmark_runs():
    result = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "long_sequences.py"),
            *("--lengths", "50", "100", "200", "--repeats", "1"),
            *("--units", "4", "--batch", "2", "--layers", "PeepholeLSTM"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    rows = [line for line in result.stdout.splitlines() if line[:3] == "| 2"]
    assert len(rows) == 1 and rows[0].startswith("| 200 |")
    assert "(1.00: linear in T)" in result.stdout
