"""`keras.distribution.DataParallel` on JAX over 2 CPU devices equals 1
device for every family; `tests/jax_data_parallel.py` in its own process."""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# One model per family; not imported from the module, which imports JAX.
FAMILIES = (
    "PeepholeLSTM",
    "GatedFeedbackRNN",
    "ChildSumTreeLSTM",
    "NaryTreeLSTM",
    "GatedGraph",
)


@pytest.mark.slow
def test_data_parallel_on_two_devices_equals_one_device():
    if importlib.util.find_spec("jax") is None:
        pytest.skip("jax is not installed (pip install -e .[jax])")
    result = subprocess.run(
        [sys.executable, "-m", "tests.jax_data_parallel"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={
            **os.environ,
            "KERAS_BACKEND": "jax",
            "XLA_FLAGS": "--xla_force_host_platform_device_count=2",
            "PYTHONPATH": str(ROOT),
            "TF_CPP_MIN_LOG_LEVEL": "3",
        },
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["devices"] == 2
    differences = report["differences"]
    print(differences)
    assert sorted(differences) == sorted(FAMILIES)
    wrong = {
        name: difference
        for name, difference in differences.items()
        if not difference <= 1e-5
    }
    assert not wrong, wrong
