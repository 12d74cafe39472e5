"""A worker killed mid-training: every worker restarts, nothing is lost.

Two workers on 127.0.0.1 train with
`kr.callbacks.multi_worker_backup_and_restore`
(`tests/distribute/_worker.py`). Once the chief has backed up two epochs,
one worker gets SIGKILL. The survivor cannot go on alone: its next
collective op fails (`UnavailableError`), or it is stopped. Both are
started again with the same `TF_CONFIG` and arguments, resume at the first
epoch the backup lacks, and end with the weights of one uninterrupted
process trained on the same global batches.
"""

import json
import os
import signal
import time

import numpy as np
import pytest

from keras_recurrent.testing import distribute

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))
FAMILY, EPOCHS = "peephole_lstm", 6


def _weights(path):
    with np.load(path) as arrays:
        return [arrays[name] for name in arrays.files]


def _max_difference(first, second):
    return max(np.abs(a - b).max() for a, b in zip(first, second, strict=True))


def _backed_up_epoch(backup_dir):
    """The epoch the job resumes at, or `None` without a backup yet."""
    path = os.path.join(backup_dir, FAMILY, "training_metadata.json")
    try:
        with open(path) as f:
            return json.load(f)["epoch"]
    except (FileNotFoundError, json.JSONDecodeError):
        return None


def _epochs_started(path, pids):
    with open(path) as f:
        lines = [json.loads(line) for line in f]
    return [line["epoch"] for line in lines if line["run"] in pids]


def _log(tmp_path, index):
    return (tmp_path / f"worker-{index}.log").read_text()[-3000:]


@pytest.mark.slow
@pytest.mark.parametrize("victim", [1, 0], ids=["worker1", "chief"])
def test_killed_worker_resumes_from_the_backup(tmp_path, victim):
    out, backup = tmp_path / "out", tmp_path / "backup"
    out.mkdir()
    argv = [
        *("-m", "tests.distribute._worker", str(out)),
        *("--families", FAMILY, "--epochs", str(EPOCHS)),
        # A pause after each epoch, before its backup: the kill lands
        # between an epoch's training and its backup, or in the training.
        *("--backup", str(backup), "--pause", "1"),
    ]
    addresses = distribute.local_worker_addresses(2)
    env = {"PYTHONPATH": ROOT}
    processes = distribute.start_local_workers(
        argv, addresses, env=env, log_dir=str(tmp_path)
    )
    try:
        deadline = time.monotonic() + 420
        while (_backed_up_epoch(backup) or 0) < 2:
            codes = [process.poll() for process in processes]
            assert codes == [None, None], _log(tmp_path, 0)
            assert time.monotonic() < deadline, _log(tmp_path, 0)
            time.sleep(0.1)
        processes[victim].send_signal(signal.SIGKILL)
        codes = distribute.wait_for_workers(processes, timeout=180, grace=120)
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait()
    assert codes[victim] == -signal.SIGKILL
    survivor = 1 - victim
    assert codes[survivor] != 0
    resume_at = _backed_up_epoch(backup)
    assert 2 <= resume_at < EPOCHS
    survivor_log = (tmp_path / f"worker-{survivor}.log").read_text()
    print(
        f"survivor exit code {codes[survivor]}, UnavailableError in its "
        f"log: {'UnavailableError' in survivor_log}, resumed at {resume_at}"
    )

    # The recipe: restart every worker, same TF_CONFIG, same arguments.
    processes = distribute.start_local_workers(
        [*argv, "--reference"], addresses, env=env, log_dir=str(tmp_path)
    )
    codes = distribute.wait_for_workers(processes, timeout=420)
    assert codes == [0, 0], _log(tmp_path, 0) + _log(tmp_path, 1)

    pids = {process.pid for process in processes}
    for index in (0, 1):
        epochs_log = out / f"{FAMILY}-epochs{index}.jsonl"
        assert _epochs_started(epochs_log, pids) == list(
            range(resume_at, EPOCHS)
        )
    workers = [_weights(out / f"{FAMILY}-worker{i}.npz") for i in (0, 1)]
    single = _weights(out / f"{FAMILY}-single.npz")
    assert _max_difference(*workers) == 0.0
    difference = _max_difference(workers[0], single)
    print(f"max weight difference to one process: {difference:.3g}")
    assert difference <= 1e-5
    # Training is complete: the chief deleted the backup.
    assert _backed_up_epoch(backup) is None
