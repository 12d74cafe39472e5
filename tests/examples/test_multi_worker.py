"""`examples/multi_worker.py --smoke`: 2 local workers train like one."""

import os
import re
import subprocess
import sys

import pytest

from tests.examples import EXAMPLES

ROOT = EXAMPLES.parent


@pytest.mark.slow
def test_smoke_trains_like_one_process():
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / "multi_worker.py"), "--smoke"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "TF_CPP_MIN_LOG_LEVEL": "2",
        },
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    # No Keras warning: the datasets are fitted with `shuffle=False`.
    assert "Warning" not in result.stderr, result.stderr[-3000:]
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 1, result.stdout
    match = re.fullmatch(
        r"max weight difference to one process: (\S+)", lines[0]
    )
    assert match, lines[0]
    assert float(match.group(1)) < 1e-5
