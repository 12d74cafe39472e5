"""The backend matrix: every layer matches its NumPy reference on the
TensorFlow, JAX and PyTorch backends, each in a process of its own."""

import importlib.util

import pytest

from tests._subprocess import run_backend_module
from tests.backend_matrix import CASES

BACKENDS = {"tensorflow": "tensorflow", "jax": "jax", "torch": "torch"}


@pytest.mark.parametrize("backend", sorted(BACKENDS))
def test_every_layer_matches_its_reference(backend):
    if importlib.util.find_spec(BACKENDS[backend]) is None:
        pytest.skip(f"{backend} is not installed (pip install -e .[{backend}])")
    report = run_backend_module("tests.backend_matrix", backend)
    assert report["backend"] == backend
    assert sorted(report["cases"]) == sorted(CASES)
    wrong = {
        name: difference
        for name, difference in report["cases"].items()
        if isinstance(difference, str) or not difference < 1e-5
    }
    assert not wrong, wrong
