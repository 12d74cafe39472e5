"""`keras.distribution.DataParallel` on JAX over 2 CPU devices equals 1
device for every family; `tests/jax_data_parallel.py` in its own process."""

import importlib.util

import pytest

from tests._subprocess import run_backend_module

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
    report = run_backend_module(
        "tests.jax_data_parallel",
        "jax",
        env={"XLA_FLAGS": "--xla_force_host_platform_device_count=2"},
    )
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
