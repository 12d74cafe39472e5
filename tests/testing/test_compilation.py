"""Bounded compilation on JAX: one epoch of variable-size batches."""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import keras
import pytest

import keras_recurrent as kr
from tests.compile_counts import LENGTH_BOUNDARIES
from tests.compile_counts import TREE_BOUNDARIES

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def counts():
    if importlib.util.find_spec("jax") is None:
        pytest.skip("jax is not installed (pip install -e .[jax])")
    result = subprocess.run(
        [sys.executable, "-m", "tests.compile_counts"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={
            **os.environ,
            "KERAS_BACKEND": "jax",
            "PYTHONPATH": str(ROOT),
            "TF_CPP_MIN_LOG_LEVEL": "3",
        },
        timeout=900,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["backend"] == "jax"
    return report["counts"]


def test_graph_budgets_compile_the_train_step_once(counts):
    budgets, free = counts["graphs, budgets"], counts["graphs, no budgets"]
    assert budgets["batches"] == free["batches"] == 6
    assert budgets["shapes"] == 1
    assert budgets["compilations"] == 1, budgets
    # Without budgets every new (N, E) is a new program.
    assert free["compilations"] == free["shapes"] > 1, free


def test_length_buckets_bound_sequence_compilations(counts):
    buckets = counts["sequences, buckets"]
    free = counts["sequences, no buckets"]
    # `len(boundaries) + 1` buckets, the last one empty by construction.
    assert 1 <= buckets["compilations"] == buckets["shapes"]
    assert buckets["compilations"] <= len(LENGTH_BOUNDARIES)
    assert free["compilations"] == free["shapes"] > len(LENGTH_BOUNDARIES)


def test_level_shapes_bound_tree_compilations_by_the_buckets(counts):
    fixed = counts["trees, buckets and level shapes"]
    free = counts["trees, buckets"]
    assert fixed["batches"] == free["batches"] >= 6
    # One batch shape per bucket, so one compilation per bucket at most.
    assert 1 <= fixed["compilations"] == fixed["shapes"]
    assert fixed["compilations"] <= len(TREE_BOUNDARIES)
    # Without them, `(L, W)` varies inside a bucket.
    assert free["compilations"] == free["shapes"] > len(TREE_BOUNDARIES)


def test_counting_needs_jax():
    if keras.backend.backend() == "jax":
        pytest.skip("checks the error on the other backends")
    with pytest.raises(ValueError, match="backend="):
        with kr.testing.count_jax_compilations():
            pass
