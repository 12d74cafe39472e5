"""Contenders in processes of their own (`benchmarks/_worker.py`)."""

import platform

import numpy as np

from tests.benchmarks import load_benchmark
from tests.examples import load_example

_worker = load_benchmark("_worker")
_ggnn_steps = load_benchmark("_ggnn_steps")

TINY = {
    "graphs": 2,
    "nodes": 4,
    "edges": 5,
    "features": 3,
    "units": 4,
    "types": 1,
    "steps": 2,
    "reverse": False,
}


def test_contenders_take_steps_in_turn_in_their_own_backend():
    contenders = {
        "tensorflow": _worker.Contender(
            "_ggnn_steps:keras_step", TINY, {"KERAS_BACKEND": "tensorflow"}, 1
        ),
        "forward": _worker.Contender(
            "_ggnn_steps:keras_step",
            {**TINY, "train": False},
            {"KERAS_BACKEND": "tensorflow"},
            1,
        ),
        "missing": _worker.Contender("_ggnn_steps:no_such_step", TINY),
    }
    times = _worker.time_in_turn(contenders, repeats=3)
    assert sorted(times) == ["forward", "tensorflow"]
    for walls, cpus in times.values():
        assert len(walls) == len(cpus) == 3
        assert all(wall > 0 for wall in walls)
        assert all(cpu >= 0 for cpu in cpus)
    for contender in contenders.values():
        assert contender.process.poll() is not None  # all stopped


def test_build_errors_come_back_with_their_message():
    contender = _worker.Contender("_ggnn_steps:no_such_step")
    assert "no_such_step" in contender.ready()
    contender.close()


def test_worker_environment_sets_and_removes_variables(monkeypatch):
    # `os:getenv` builds the "step" `os.getenv(key)`: the variable's value,
    # which the warm-up then calls, so the error names its type.
    monkeypatch.setenv("KR_WORKER_TEST", "set")
    for env, kind in (({}, "'str'"), ({"KR_WORKER_TEST": None}, "'NoneType'")):
        contender = _worker.Contender(
            "os:getenv", {"key": "KR_WORKER_TEST"}, env, warmup=1
        )
        assert kind in contender.ready()
        contender.close()


def test_graph_arrays_agree_between_padded_and_flat():
    padded, flat = _ggnn_steps.graph_arrays(3, 5, 7, 2, types=2, seed=4)
    assert padded["node_inputs"].shape == (3, 5, 2)
    assert flat["x"].shape == (15, 2)
    # Edge 1 of graph 2 is row 2 * 7 + 1 of the flat list, offset by 2 * 5.
    np.testing.assert_array_equal(
        flat["edge_index"][:, 2 * 7 + 1], padded["edges"][2, 1] + 2 * 5
    )
    assert flat["edge_type"][2 * 7 + 1] == padded["edge_types"][2, 1]


def test_allocator_settings_respect_the_environment(monkeypatch):
    allocator = load_example("_allocator")
    monkeypatch.setenv("MALLOC_TOP_PAD_", "0")
    assert allocator.keep_freed_memory() is False
    monkeypatch.delenv("MALLOC_TOP_PAD_")
    if platform.libc_ver()[0] == "glibc":
        assert allocator.keep_freed_memory() is True
