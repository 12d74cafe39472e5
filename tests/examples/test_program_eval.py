"""Checks of `examples/program_eval.py`'s model and batching."""

import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import keras_recurrent as kr
from tests.examples import load_example

_PATH = pathlib.Path(__file__).parents[2] / "examples" / "program_eval.py"


@pytest.fixture(scope="module")
def example():
    return load_example("program_eval")


def _lstm_parameters(input_dim, units):
    return 4 * units * (input_dim + units + 1)


@pytest.mark.parametrize("layers", [2, 3])
def test_parameter_counts(example, layers):
    units, embedding, vocabulary = 8, 16, example.VOCABULARY_SIZE
    stacked = example.build_model("none", units, layers, embedding_dim=16)
    gated = example.build_model("gated", units, layers, embedding_dim=16)
    # feedback="none" is a stacked LSTM: Keras' LSTM parameter count.
    expected = (
        vocabulary * embedding
        + _lstm_parameters(embedding, units)
        + (layers - 1) * _lstm_parameters(units, units)
        + (units + 1) * vocabulary
    )
    assert stacked.count_params() == expected
    # GF adds the recurrent matrices U^{i->j}, i != j, and the gates'
    # weights w_g (from h^{j-1}_t) and u_g (from all of h_{t-1}).
    extra = (
        layers * (layers - 1) * units * units
        + (embedding + (layers - 1) * units) * layers
        + layers * units * layers * layers
    )
    assert gated.count_params() == expected + extra


def test_batches_and_accuracy(example):
    data = kr.datasets.program_eval(70, 2, 2, seed=0)
    inputs, targets, weights = example.encode(data["programs"], data["targets"])
    batches = example.Batches(inputs, targets, weights, 16, seed=0)
    assert len(batches) == 5
    widths, rows = [], []
    for index in range(len(batches)):
        x, y, w = batches[index]
        assert x.shape == y.shape == w.shape and x.shape[1] % 8 == 0
        widths.append(x.shape[1])
        rows.extend(map(tuple, x[:, :8]))
        # Nothing but padding is cut off.
        assert (x != 0).sum() == (inputs[batches.batches[index]] != 0).sum()
        assert w.sum() == weights[batches.batches[index]].sum()
    assert sorted(np.concatenate(batches.batches)) == list(range(70))
    assert widths[0] != widths[1]

    model = example.build_model("gated", 8, 2, embedding_dim=8)
    accuracy = example.teacher_forced_accuracy(
        model, inputs, targets, weights, 16
    )
    predicted = np.argmax(model.predict(inputs, verbose=0), axis=-1)
    expected = ((predicted == targets) * weights).sum() / weights.sum()
    np.testing.assert_allclose(accuracy, expected, atol=1e-6)


@pytest.mark.slow
def test_smoke_run_writes_the_grid(tmp_path):
    path = tmp_path / "grid.json"
    result = subprocess.run(
        [sys.executable, str(_PATH), "--smoke", "--json-out", str(path)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(_PATH.parents[1])},
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "GF-stacked" in result.stdout
    results = json.loads(path.read_text())
    cells = {(cell["length"], cell["nesting"]) for cell in results["cells"]}
    assert cells == {(1, 1), (1, 2), (2, 1), (2, 2)}
    for cell in results["cells"]:
        assert 0 <= cell["stacked_accuracy"] <= 1
        assert 0 <= cell["gf_accuracy"] <= 1
    models = results["models"]
    assert models["gf"]["parameters"] > models["stacked"]["parameters"]
