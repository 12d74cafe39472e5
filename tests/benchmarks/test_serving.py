"""`benchmarks/serving.py`: a short run with `--models` times the Keras LSTM
and the models asked for, served in a process without `keras_recurrent`."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

SERVING = Path(__file__).resolve().parents[2] / "benchmarks" / "serving.py"


@pytest.mark.slow
def test_a_short_run_of_chosen_models():
    result = subprocess.run(
        [
            sys.executable,
            str(SERVING),
            *("--requests", "3", "--batches", "1", "--models"),
            # One model of each input kind: sequences, trees, graphs.
            *("CoupledLSTM", "NaryTreeLSTM", "GatedGraph"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "KERAS_BACKEND": "tensorflow"},
    )
    assert result.returncode == 0, result.stderr[-2000:]
    rows = re.findall(r"^\| (\S+) \| 1 \| [\d.]+ \|", result.stdout, re.M)
    assert rows == [
        "keras.layers.LSTM",
        "CoupledLSTM",
        "NaryTreeLSTM",
        "GatedGraph",
    ]


def test_models_are_checked_by_the_parser():
    result = subprocess.run(
        [sys.executable, str(SERVING), "--models", "LSTM"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert "invalid choice: 'LSTM'" in result.stderr
