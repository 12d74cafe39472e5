"""Two worker processes on 127.0.0.1 train like one process."""

import os

import numpy as np

from keras_recurrent.testing import distribute

FAMILIES = ("peephole_lstm", "gf_rnn", "child_sum_tree_lstm", "gated_graph")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))


def _weights(path):
    with np.load(path) as arrays:
        return [arrays[name] for name in arrays.files]


def _max_difference(first, second):
    return max(np.abs(a - b).max() for a, b in zip(first, second, strict=True))


def test_two_workers_train_every_family_like_one_process(tmp_path):
    processes = distribute.start_local_workers(
        ["-m", "tests.distribute._worker", str(tmp_path), "--reference"],
        distribute.local_worker_addresses(2),
        env={"PYTHONPATH": ROOT},
        log_dir=str(tmp_path),
    )
    codes = distribute.wait_for_workers(processes, timeout=540)
    assert codes == [0, 0], (tmp_path / "worker-0.log").read_text()[-3000:]
    for family in FAMILIES:
        workers = [
            _weights(tmp_path / f"{family}-worker{index}.npz")
            for index in (0, 1)
        ]
        single = _weights(tmp_path / f"{family}-single.npz")
        assert _max_difference(*workers) == 0.0, family
        assert _max_difference(workers[0], single) <= 1e-5, family
