"""The examples start TensorFlow without its C++ start-up lines."""

import ast
import os
import subprocess
import sys

import pytest

from tests.examples import EXAMPLES

_HEAVY = ("keras", "tensorflow", "keras_recurrent", "keras_tuner")


def test_tensorflow_starts_quietly_without_a_log_level():
    env = {
        key: value
        for key, value in os.environ.items()
        if key != "TF_CPP_MIN_LOG_LEVEL"
    }
    script = (
        "from _quiet_tensorflow import quiet_tensorflow\n"
        "quiet_tensorflow()\n"
        "import os, tensorflow as tf\n"
        "total = float(tf.reduce_sum(tf.ones(3)))\n"
        "print(os.environ['TF_CPP_MIN_LOG_LEVEL'], total)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        env={**env, "KERAS_BACKEND": "tensorflow"},
        cwd=EXAMPLES,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["3", "3.0"]
    # No oneDNN banner, no "Could not find cuda drivers", no cuInit error.
    assert result.stderr == ""


def _first_heavy_import(tree):
    for node in tree.body:
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        if any(name.split(".")[0] in _HEAVY for name in names):
            return node.lineno
    return None


def _quiet_calls(tree):
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and getattr(node.func, "id", None) == "quiet_tensorflow"
    ]


@pytest.mark.parametrize(
    "path",
    sorted(p for p in EXAMPLES.glob("*.py") if not p.name.startswith("_")),
    ids=lambda path: path.name,
)
def test_every_example_quiets_tensorflow_before_importing_it(path):
    tree = ast.parse(path.read_text())
    calls = _quiet_calls(tree)
    assert calls, f"{path.name} never calls quiet_tensorflow()"
    first_import = _first_heavy_import(tree)
    if first_import is not None:
        assert min(calls) < first_import, path.name
