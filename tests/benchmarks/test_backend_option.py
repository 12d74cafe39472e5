"""`--backend` of the benchmarks (`benchmarks/_backend.py`)."""

import os
import re
import subprocess
import sys
import textwrap

import pytest

from tests.benchmarks import BENCHMARKS
from tests.benchmarks import load_benchmark

FAMILY_BENCHMARKS = ("lstm_variants", "gated_feedback", "tree_lstm", "ggnn")


_backend = load_benchmark("_backend")


def test_backends_of():
    assert _backend.backends_of("all") == ("tensorflow", "jax", "torch")
    assert _backend.backends_of("jax") == ("jax",)
    with pytest.raises(ValueError, match="backend='numpy'"):
        _backend.backends_of("numpy")


def test_parser_accepts_the_backends_only():
    import argparse

    parser = argparse.ArgumentParser()
    _backend.add_backend_argument(parser)
    assert parser.parse_args([]).backend is None
    for choice in ("tensorflow", "jax", "torch", "all"):
        assert parser.parse_args(["--backend", choice]).backend == choice
    with pytest.raises(SystemExit):
        parser.parse_args(["--backend", "numpy"])


def test_subprocess_arguments_drop_the_backend():
    argv = ["--sizes", "tiny", "--backend", "all", "--repeats", "2"]
    assert _backend.without_backend(argv) == [
        "--sizes",
        "tiny",
        "--repeats",
        "2",
    ]
    assert _backend.without_backend(["--backend=jax", "--only", "A"]) == [
        "--only",
        "A",
    ]
    assert _backend.without_backend(
        ["--backend-timeout", "60", "-n", "--backend-timeout=5"]
    ) == ["-n"]


def test_subprocess_env_sets_the_backend():
    base = {"KERAS_BACKEND": "tensorflow", "PATH": "/bin"}
    env = _backend.child_env("jax", "/tmp/r.json", base=base)
    assert env["KERAS_BACKEND"] == "jax"
    assert env[_backend.RESULTS_ENV] == "/tmp/r.json"
    assert env["PATH"] == "/bin"
    # Spinning OpenMP workers made torch 40x slower on a loaded machine.
    assert env["OMP_WAIT_POLICY"] == "PASSIVE"
    assert base["KERAS_BACKEND"] == "tensorflow"


def test_ratio_table_numbers():
    table = _backend.ratio_table(
        {
            "tensorflow": {"a": 0.010, "b": 0.004},
            "jax": {"a": 0.005, "b": 0.006},
            "torch": None,
        }
    )
    rows = [line for line in table.splitlines() if line.startswith("| ")]
    assert rows[0] == (
        "| row | tensorflow ms | jax ms | jax / tensorflow | torch ms "
        "| torch / tensorflow |"
    )
    assert rows[1] == "| a | 10.0 | 5.0 | 0.50 | failed | - |"
    assert rows[2] == "| b | 4.0 | 6.0 | 1.50 | failed | - |"


@pytest.fixture
def stand_in_benchmark(tmp_path):
    """A script that records the backend its process was given."""
    script = tmp_path / "stand_in_benchmark.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import os, sys
            sys.path.insert(0, {str(BENCHMARKS)!r})
            import _backend
            backend = os.environ["KERAS_BACKEND"]
            if "--backend" in sys.argv or backend == "torch":
                sys.exit(3)
            print("table of", backend, sys.argv[1:])
            _backend.record({{"step": len(backend) / 1000}})
            """
        )
    )
    return str(script)


def test_run_backends_one_subprocess_per_backend(stand_in_benchmark, capfd):
    results = _backend.run_backends(
        stand_in_benchmark, ["--repeats", "1", "--backend", "all"], "all"
    )
    assert results == {
        "tensorflow": {"step": 0.010},
        "jax": {"step": 0.003},
        "torch": None,
    }
    output = capfd.readouterr().out
    assert "table of tensorflow ['--repeats', '1']" in output
    assert "table of jax ['--repeats', '1']" in output
    assert "backend torch failed (3)" in output


def test_dispatch_if_requested(stand_in_benchmark, capfd):
    assert _backend.dispatch_if_requested(stand_in_benchmark, ["-n"]) is None
    with pytest.raises(SystemExit) as exit_info:
        _backend.dispatch_if_requested(
            stand_in_benchmark, ["--backend=jax", "-n"]
        )
    assert exit_info.value.code == 0
    output = capfd.readouterr().out
    assert "table of jax ['-n']" in output
    assert "| step | 3.0 |" in output
    with pytest.raises(SystemExit) as exit_info:
        _backend.dispatch_if_requested(
            stand_in_benchmark, ["--backend", "torch"]
        )
    assert exit_info.value.code == 1


@pytest.mark.parametrize("name", FAMILY_BENCHMARKS)
def test_family_benchmarks_take_the_option(name):
    source = (BENCHMARKS / f"{name}.py").read_text()
    assert "_backend.add_backend_argument(parser)" in source
    assert "_backend.record(" in source


def _ratios(output):
    """`{row: {backend: ratio}}` from the printed ratio table."""
    table = output.split("### Backends")[1]
    rows = [line for line in table.splitlines() if line.startswith("| ")]
    header = [cell.strip() for cell in rows[0].strip("|").split("|")]
    ratios = {}
    for row in rows[1:]:
        cells = dict(
            zip(header, (c.strip() for c in row.strip("|").split("|")))
        )
        ratios[cells["row"]] = {
            backend: cells[f"{backend} / tensorflow"]
            for backend in ("jax", "torch")
        }
    return ratios


TINY_RUNS = {
    "lstm_variants": [
        "--sizes", "tiny", "--repeats", "2", "--only", "PeepholeLSTM",
    ],
    "gated_feedback": [
        "--sizes", "tiny", "--cell-types", "gru", "--repeats", "2",
        "--warmup", "1",
    ],
    "tree_lstm": [
        "--batch-size", "4", "--num-batches", "2", "--repeats", "1",
        "--max-length", "20", "--units", "8", "--embedding-dim", "8",
    ],
    "ggnn": [
        "--graphs", "2", "--nodes", "6", "--edges", "10", "--features",
        "4", "--units", "8", "--steps", "2", "--repeats", "2", "--warmup",
        "1",
    ],
}  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("name", FAMILY_BENCHMARKS)
def test_tiny_run_on_every_backend(name):
    completed = subprocess.run(
        [sys.executable, str(BENCHMARKS / f"{name}.py"), *TINY_RUNS[name]]
        + ["--backend", "all"],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"},
        check=False,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    output = completed.stdout
    print(output)  # The tables, with `pytest -s`.
    for backend in ("tensorflow", "jax", "torch"):
        assert f"## backend: {backend}" in output
    ratios = _ratios(output)
    assert ratios
    number = re.compile(r"^\d+\.\d\d$")
    for row, by_backend in ratios.items():
        if name == "ggnn" and by_backend["torch"] == "-":
            # GatedGraph in a functional model may fail on torch; the row
            # is reported as failed, the others still run.
            continue
        for backend, ratio in by_backend.items():
            assert number.match(ratio), (row, backend, ratio, output)
