"""`benchmarks/runtimes.py` and `benchmarks/tree_export_latency.py`: the
batch-1 latency of the families in ONNX Runtime and LiteRT. Short runs of
both (slow), and the ONNX feed in the dtypes a session lists (the graph
and tree models take int64 indices, which ONNX Runtime does not convert
from int32)."""

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import runtimes  # noqa: E402


def test_onnx_feed_casts_each_input_to_the_listed_type():
    session = SimpleNamespace(
        get_inputs=lambda: [
            SimpleNamespace(name="edges", type="tensor(int64)"),
            SimpleNamespace(name="node_inputs", type="tensor(float)"),
        ]
    )
    arrays = {
        "edges": np.array([[0, 1]], "int32"),
        "node_inputs": np.ones((2, 3), "float64"),
        "unused": np.zeros(1),
    }
    feed = runtimes.onnx_feed(session, arrays)
    assert list(feed) == ["edges", "node_inputs"]
    assert feed["edges"].dtype == np.int64
    assert feed["node_inputs"].dtype == np.float32
    np.testing.assert_array_equal(feed["edges"], [[0, 1]])


def _run(script, *args):
    result = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), *args],
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "KERAS_BACKEND": "tensorflow"},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_a_short_runtimes_run_agrees_with_the_saved_model():
    pytest.importorskip("onnxruntime")
    pytest.importorskip("ai_edge_litert")
    results = _run("runtimes.py", "--rounds", "3")
    assert sorted(results) == sorted(runtimes.MODELS)
    for model, rows in results.items():
        assert sorted(rows) == ["LiteRT", "ONNX Runtime", "SavedModel"]
        for runtime, row in rows.items():
            assert row["median ms"] > 0, (model, runtime)
            assert row["max difference to SavedModel"] < 1e-5, (model, runtime)


@pytest.mark.slow
def test_a_short_tree_latency_run_times_every_runtime():
    pytest.importorskip("onnxruntime")
    pytest.importorskip("ai_edge_litert")
    rows = _run("tree_export_latency.py", "--requests", "3")["rows"]
    runtimes_by_family = {}
    for family, runtime, p50, paired in rows:
        assert p50 > 0 and paired > 0, (family, runtime)
        runtimes_by_family.setdefault(family, []).append(runtime)
    assert sorted(runtimes_by_family) == ["child_sum", "nary"]
    for names in runtimes_by_family.values():
        assert sorted(names) == [
            "LiteRT from TensorFlow",
            "ONNX from PyTorch",
            "ONNX from TensorFlow",
            "SavedModel (TensorFlow)",
        ]
