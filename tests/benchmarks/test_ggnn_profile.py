"""The profile split of `benchmarks/ggnn.py` (`benchmarks/_ggnn_profile.py`)."""

import os
import subprocess
import sys

import pytest

from tests.benchmarks import BENCHMARKS
from tests.benchmarks import load_benchmark

_profile = load_benchmark("_ggnn_profile")


@pytest.mark.parametrize(
    "framework, name, category",
    [
        ("torch", "mm", "matmuls"),
        ("torch", "index_select", "gathers and scatters"),
        ("torch", "scatter_add_", "gathers and scatters"),
        ("torch", "sigmoid_backward", "GRU elementwise"),
        ("torch", "cat", "concat, copies, reshapes"),
        ("torch", "_foreach_mul_", "optimizer"),
        ("torch", "logical_and", "other"),
        ("tensorflow", "BatchMatMulV2", "matmuls"),
        ("tensorflow", "UnsortedSegmentSum", "gathers and scatters"),
        ("tensorflow", "TanhGrad", "GRU elementwise"),
        ("tensorflow", "AssignAdd", "GRU elementwise"),
        ("tensorflow", "AssignSubVariableOp", "optimizer"),
        ("tensorflow", "ConcatV2", "concat, copies, reshapes"),
        ("tensorflow", "Assert", "other"),
        ("xla", "ynn_fusion", "matmuls"),
        ("xla", "MatMul_16", "matmuls"),
        ("xla", "wrapped_scatter", "gathers and scatters"),
        ("xla", "add_tanh_fusion", "GRU elementwise"),
        ("xla", "concatenate", "concat, copies, reshapes"),
        ("xla", "wrapped_reduce-window", "other"),
    ],
)
def test_op_names_fall_in_their_category(framework, name, category):
    assert _profile.categorize(name, framework) == category


def test_split_of_each_framework():
    torch = {
        "framework": "torch",
        "ops": {
            "aten::mm": 3.0,
            "autograd::engine::evaluate_function: MmBackward0": 1.0,
            "optimizer: aten::mul": 0.5,
            "aten::sqrt": 0.25,  # outside the optimizer
        },
    }
    seconds, other = _profile.split(torch)
    assert seconds["matmuls"] == 4.0
    assert seconds["optimizer"] == 0.5
    assert other == {"aten::sqrt": 0.25}
    tensorflow = {
        "framework": "tensorflow",
        "ops": {
            "functional/gated_graph/MatMul_3:_MklMatMul": 2.0,
            "adam/Mul_1:Mul": 1.0,
            "gated_graph/Sigmoid:Sigmoid": 0.5,
            "xla: MatMul_16.2": 0.25,
        },
    }
    seconds, _ = _profile.split(tensorflow)
    assert seconds["matmuls"] == 2.25
    assert seconds["optimizer"] == 1.0
    assert seconds["GRU elementwise"] == 0.5
    jax = {"framework": "jax", "ops": {"wrapped_scatter.3": 1.0}}
    assert _profile.split(jax)[0]["gathers and scatters"] == 1.0


def test_table_has_a_row_per_category_and_a_column_per_contender(capsys):
    result = {
        "framework": "torch",
        "ops": {"aten::mm": 0.002, "aten::cat": 0.001},
        "wall": [0.004, 0.005, 0.006],
        "unchecked": [0.003, 0.004, 0.004],
        "profiled_wall": 0.007,
    }
    _profile.print_split("Case", {"torch": result, "PyG": {"error": "x"}})
    output = capsys.readouterr().out
    assert "PyG failed: x" in output
    assert "| matmuls | 2.0 (67%) | failed |" in output
    assert "| step wall median (no profiler) | 5.0 | failed |" in output
    assert "| checks (wall difference) | 1.0 (20%) | failed |" in output


@pytest.mark.slow
def test_tiny_profile_run():
    pytest.importorskip("torch_geometric")
    completed = subprocess.run(
        [
            sys.executable,
            str(BENCHMARKS / "ggnn.py"),
            "--profile-only",
            *("--graphs", "2", "--nodes", "6", "--edges", "10"),
            *("--features", "4", "--units", "8", "--steps", "2"),
            *("--warmup", "1", "--profile-steps", "1"),
        ],
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"},
        check=False,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    output = completed.stdout
    assert "failed" not in output, output
    for title, _, _ in _profile.CASES:
        assert title in output
    assert output.count("| summed op time |") == 2
