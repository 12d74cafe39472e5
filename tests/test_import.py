"""`import keras_recurrent` without TensorFlow, TFDS or keras-tuner."""

import importlib.util
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

from tests.backend_cases import run_cases

# Runs under Keras' PyTorch backend (the benchmark extra) while TensorFlow,
# TFDS and keras-tuner cannot be imported, as on a PyTorch installation: one
# layer of each family runs on fixed weights (saved for the test to compare
# with TensorFlow's), the generators work, and what needs TensorFlow says so
# when used.
_SCRIPT = """
import sys

for name in ("tensorflow", "tensorflow_datasets", "keras_tuner"):
    sys.modules[name] = None

import keras
import numpy as np

import keras_recurrent as kr
from tests.backend_cases import run_cases

assert keras.backend.backend() == "torch"
np.savez(sys.argv[1], **run_cases())
assert len(kr.datasets.listops(3, seed=0)["labels"]) == 3

for name in ("export", "tuning"):
    try:
        getattr(kr, name)
    except ImportError:
        pass
    else:
        sys.exit(f"kr.{name} imported without its dependencies")
try:
    kr.datasets.ListOps
except ImportError:
    pass
else:
    sys.exit("kr.datasets.ListOps imported without TFDS")
print("ok")
"""

_ROOT = pathlib.Path(__file__).resolve().parents[1]


@pytest.mark.skipif(
    importlib.util.find_spec("torch") is None,
    reason="needs PyTorch (`pip install -e .[bench]`)",
)
def test_layers_run_under_torch_without_tensorflow(tmp_path):
    path = tmp_path / "torch_outputs.npz"
    env = {**os.environ, "KERAS_BACKEND": "torch", "PYTHONPATH": str(_ROOT)}
    result = subprocess.run(
        [sys.executable, "-c", _SCRIPT, str(path)],
        capture_output=True,
        text=True,
        env=env,
        cwd=_ROOT,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().endswith("ok"), result.stdout
    expected = run_cases()
    with np.load(path) as torch_outputs:
        assert sorted(torch_outputs.files) == sorted(expected)
        for name, value in expected.items():
            np.testing.assert_allclose(
                torch_outputs[name], value, atol=1e-5, err_msg=name
            )


def test_lazy_attributes_import_on_use():
    import keras_recurrent as kr

    assert callable(kr.export.export_saved_model)
    assert callable(kr.trees.padded_batch)
    assert callable(kr.graphs.graph_spec)
    with pytest.raises(AttributeError, match="no_such_module"):
        _ = kr.no_such_module
