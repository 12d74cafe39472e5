"""Running a test module on another Keras backend, in a process of its own.

Keras picks its backend once per process, so the cross-backend tests run a
module (`python -m tests.backend_matrix`, ...) in a fresh interpreter with
`KERAS_BACKEND` set, and read the JSON report it prints as its last line.
"""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def skip_unless_installed(backend):
    """Skips the calling test if the backend's package is not installed."""
    if importlib.util.find_spec(backend) is None:
        pytest.skip(f"{backend} is not installed (pip install -e .[{backend}])")


def run_backend_module(module, backend, *args, timeout=600, env=None):
    """Runs `python -m module *args` with `KERAS_BACKEND=backend`.

    The process runs in the repository root, with the repository on
    `PYTHONPATH` and TensorFlow's C++ logging off; `env` adds or overrides
    variables. A non-zero exit fails the calling test with the end of the
    process's stderr.

    Args:
        module: The dotted module name, e.g. `"tests.backend_matrix"`.
        backend: `"tensorflow"`, `"jax"`, `"torch"` or `"numpy"`.
        *args: Command-line arguments of the module.
        timeout: Seconds before the process is killed (which fails the test
            with `subprocess.TimeoutExpired`). Defaults to `600`.
        env: Optional dict of further environment variables.

    Returns:
        The JSON object the module printed as the last line of its stdout.
    """
    result = subprocess.run(
        [sys.executable, "-m", module, *map(str, args)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={
            **os.environ,
            "KERAS_BACKEND": backend,
            "PYTHONPATH": str(ROOT),
            "TF_CPP_MIN_LOG_LEVEL": "3",
            **(env or {}),
        },
        timeout=timeout,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    lines = result.stdout.strip().splitlines()
    assert lines, f"{module} printed nothing; stderr: {result.stderr[-3000:]}"
    return json.loads(lines[-1])
