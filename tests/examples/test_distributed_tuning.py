"""`examples/distributed_tuning.py --smoke`: a chief and two workers."""

import re
import subprocess
import sys
import time

import pytest

from tests.examples import EXAMPLES


@pytest.mark.slow
def test_smoke_run_completes_every_trial():
    start = time.monotonic()
    completed = subprocess.run(
        [sys.executable, str(EXAMPLES / "distributed_tuning.py"), "--smoke"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    elapsed = time.monotonic() - start
    assert completed.returncode == 0, completed.stderr[-3000:]
    lines = completed.stdout.strip().splitlines()
    assert len(lines) == 1, completed.stdout
    match = re.fullmatch(r"trials completed: (\d+) of (\d+)", lines[0])
    assert match, lines[0]
    assert int(match[1]) == int(match[2]) > 0
    # The budget for `--smoke` (on a loaded 2-core machine).
    assert elapsed < 180, f"--smoke took {elapsed:.0f} s"
