"""The export matrix: one SavedModel per family from every Keras backend.

`tests/export_matrix.py` exports each family's model (fixed weights, open
batch, `T`, `N` and `E`, `lengths=True` for sequences) in a process of its
own per backend. Here, in plain TensorFlow, every artifact must serve what
its backend's Keras model predicts and what the TensorFlow-made one serves,
to 1e-5, with the same signatures, inputs and outputs.
"""

import importlib.util
import json

import numpy as np
import pytest
import tensorflow as tf

from tests._subprocess import run_backend_module
from tests.export_matrix import CASES
from tests.export_matrix import _slug

ATOL = 1e-5
# Known failures, each with the text its error must contain: when a change
# fixes one, this test fails until the entry goes. None today (JAX exports
# Tree-LSTMs with an open number of nodes since the static schedule sizes
# its window with plain arithmetic).
KNOWN_FAILURES = {}


def _export_all(backend, out_dir):
    report = run_backend_module(
        "tests.export_matrix", backend, out_dir, timeout=1800
    )
    assert report["backend"] == backend
    return report["cases"]


@pytest.fixture(scope="module")
def tensorflow_exports(tmp_path_factory):
    out_dir = tmp_path_factory.mktemp("tensorflow")
    return out_dir, _export_all("tensorflow", out_dir)


def _serve(directory):
    """`(signature summaries, outputs)` of the artifact in `directory`."""
    loaded = tf.saved_model.load(str(directory / "saved_model"))
    summaries = {}
    for name, function in loaded.signatures.items():
        _, inputs = function.structured_input_signature
        summaries[name] = {
            "inputs": {
                key: (spec.dtype.name, spec.shape.as_list())
                for key, spec in inputs.items()
            },
            "outputs": sorted(function.structured_outputs),
        }
    with np.load(directory / "inputs.npz") as arrays:
        feeds = {key: tf.constant(arrays[key]) for key in arrays.files}
    outputs = loaded.signatures["serve"](**feeds)
    return summaries, {key: value.numpy() for key, value in outputs.items()}


def _max_difference(first, second):
    assert sorted(first) == sorted(second)
    return max(float(np.abs(first[k] - second[k]).max()) for k in first)


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_every_family_exports_from_backend(
    backend, tensorflow_exports, tmp_path
):
    if importlib.util.find_spec(backend) is None:
        pytest.skip(f"{backend} is not installed (pip install -e .[{backend}])")
    tf_dir, tf_cases = tensorflow_exports
    assert tf_cases == {name: "ok" for name in CASES}
    cases = _export_all(backend, tmp_path)
    known = {
        name: text
        for (known_backend, name), text in KNOWN_FAILURES.items()
        if known_backend == backend
    }
    for name, text in known.items():
        assert text in cases[name], (name, cases[name])
    failed = {
        name: error
        for name, error in cases.items()
        if error != "ok" and name not in known
    }
    assert not failed, failed

    matrix = {}
    for name in CASES:
        if name in known:
            continue
        directory = tmp_path / _slug(name)
        signatures, served = _serve(directory)
        tf_signatures, tf_served = _serve(tf_dir / _slug(name))
        assert signatures == tf_signatures, name
        with np.load(directory / "expected.npz") as expected:
            expected = {key: expected[key] for key in expected.files}
        matrix[name] = {
            "to Keras": _max_difference(served, expected),
            "to TF-made": _max_difference(served, tf_served),
        }
    print(json.dumps({"backend": backend, "max differences": matrix}))
    wrong = {
        name: differences
        for name, differences in matrix.items()
        if not max(differences.values()) <= ATOL
    }
    assert not wrong, wrong
