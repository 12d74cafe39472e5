"""The backend matrix: every layer matches its NumPy reference on the
TensorFlow, JAX and PyTorch backends, each in a process of its own."""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.backend_matrix import CASES

ROOT = Path(__file__).resolve().parents[1]
BACKENDS = {"tensorflow": "tensorflow", "jax": "jax", "torch": "torch"}


@pytest.mark.parametrize("backend", sorted(BACKENDS))
def test_every_layer_matches_its_reference(backend):
    if importlib.util.find_spec(BACKENDS[backend]) is None:
        pytest.skip(f"{backend} is not installed (pip install -e .[{backend}])")
    result = subprocess.run(
        [sys.executable, "-m", "tests.backend_matrix"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={
            **os.environ,
            "KERAS_BACKEND": backend,
            "PYTHONPATH": str(ROOT),
            "TF_CPP_MIN_LOG_LEVEL": "3",
        },
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["backend"] == backend
    assert sorted(report["cases"]) == sorted(CASES)
    wrong = {
        name: difference
        for name, difference in report["cases"].items()
        if isinstance(difference, str) or not difference < 1e-5
    }
    assert not wrong, wrong
