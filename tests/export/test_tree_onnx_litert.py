"""The Tree-LSTMs through Keras' `model.export` to ONNX and LiteRT (issue
44), each runtime's output against `predict` to 1e-5 (cases in
tests/export/tree_export_cases.py). Every family x format x backend runs
in the runtime matrix (tests/export/test_onnx_litert.py, slow); here, in
the default suite, `ChildSumTreeLSTM` to ONNX from TensorFlow with open
sizes, and, slow, what only PyTorch has: `torch.export` and the refusal
of open sizes."""

import numpy as np
import pytest

from tests._subprocess import run_backend_module
from tests._subprocess import skip_unless_installed
from tests.export import tree_export_cases as cases

ATOL = 1e-5


@pytest.fixture(autouse=True)
def _runtimes():
    pytest.importorskip("onnxruntime")
    pytest.importorskip("tf2onnx")


def test_child_sum_onnx_from_tensorflow_open_sizes(tmp_path):
    # No `LowerBound` or segment max/min left for tf2onnx to drop: the
    # file loads, with open batch and N, and serves other shapes.
    result = cases.onnx_open_sizes("child_sum", tmp_path)
    assert result["max_difference"] < ATOL
    for name in ("children", "node_inputs", "node_mask"):
        assert not isinstance(result["inputs"][name][0], int), result
        assert not isinstance(result["inputs"][name][1], int), result


@pytest.mark.slow
def test_torch_export_and_open_sizes_refused(tmp_path):
    skip_unless_installed("torch")
    report = run_backend_module(
        "tests.export.tree_export_cases", "torch", tmp_path, timeout=1200
    )
    assert report["backend"] == "torch"
    found = report["cases"]
    assert len(found) == 2 * len(cases.FAMILIES), found
    for family in cases.FAMILIES:
        result = found[f"{family} torch.export"]
        assert result.get("max_difference", np.inf) < ATOL, result
        assert found[f"{family} onnx, open sizes"] == {"refused": True}
