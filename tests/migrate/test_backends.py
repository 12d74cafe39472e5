"""`kr.migrate` on JAX and PyTorch, where TensorFlow cannot be imported:
each backend in a process of its own (tests/migrate/legacy_cases.py)."""

import pytest

from tests._subprocess import run_backend_module
from tests._subprocess import skip_unless_installed
from tests.migrate.legacy_cases import MODEL_CASES
from tests.migrate.legacy_cases import TFA_CASES
from tests.migrate.legacy_cases import TFA_WEIGHTS_CASE
from tests.migrate.legacy_cases import WEIGHTS_CASES

# The default run checks a model with masking, Bidirectional and
# TimeDistributed, a weights file of each layout, and NASCell over masked
# inputs (which Keras' RNN cannot run on JAX); -m slow checks all.
LEAN_CASES = ("bidirectional", *WEIGHTS_CASES, "tfa_nas")


def _check(backend, cases):
    skip_unless_installed(backend)
    report = run_backend_module(
        "tests.migrate.legacy_cases", backend, "--without-tensorflow", *cases
    )
    assert report["backend"] == backend
    assert not report["tensorflow_imported"]
    if cases:
        assert sorted(report["cases"]) == sorted(cases)
    else:
        assert set(MODEL_CASES) | set(WEIGHTS_CASES) <= set(report["cases"])
        assert set(report["cases"]) <= (
            set(MODEL_CASES)
            | set(WEIGHTS_CASES)
            | set(TFA_CASES)
            | {TFA_WEIGHTS_CASE}
        )
    wrong = {
        case: difference
        for case, difference in report["cases"].items()
        if isinstance(difference, str) or not difference < 1e-5
    }
    assert not wrong, wrong


@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_lean_cases_without_tensorflow(backend):
    _check(backend, LEAN_CASES)


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_every_case_without_tensorflow(backend):
    _check(backend, ())
