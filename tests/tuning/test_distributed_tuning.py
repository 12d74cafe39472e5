"""keras-tuner's chief/worker mode with a HyperModel, in subprocesses.

A chief and two workers of `examples/distributed_tuning.py` on 127.0.0.1,
sharing a search folder; workers and the chief are killed with SIGKILL and
restarted. Each test takes a few minutes on 2 cores.
"""

import json
import signal
import time

import numpy as np
import pytest

from tests.examples import load_example

pytestmark = pytest.mark.slow

TIMEOUT = 600


@pytest.fixture(scope="module")
def example():
    return load_example("distributed_tuning")


def _search_state(directory):
    """The oracle state and every trial, retried over a half-written file."""
    for _ in range(50):
        try:
            return load_example_state(directory)
        except (json.JSONDecodeError, KeyError):
            time.sleep(0.1)
    return load_example_state(directory)


def load_example_state(directory):
    state = json.loads((directory / "search" / "oracle.json").read_text())
    trials = {}
    for path in sorted((directory / "search").glob("trial_*/trial.json")):
        trial = json.loads(path.read_text())
        trials[trial["trial_id"]] = trial
    return state, trials


def _wait_until(condition, directory, processes, timeout=TIMEOUT):
    """Polls the search state until `condition(state, trials)` holds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for process in processes:
            if process.poll() not in (None, 0):
                pytest.fail(
                    f"A process exited with {process.returncode}; logs in "
                    f"{directory}"
                )
        if (directory / "search" / "oracle.json").exists():
            state, trials = _search_state(directory)
            if condition(state, trials):
                return state, trials
        time.sleep(0.5)
    pytest.fail(f"Timed out waiting on the search in {directory}")


def _finish(example, chief, workers):
    """Waits for the workers, then stops the chief."""
    for worker in workers:
        assert worker.wait(TIMEOUT) == 0
    example.stop_chief(chief)


def _kill(process):
    process.send_signal(signal.SIGKILL)
    process.wait()


def _assert_each_trial_completed_once(example, directory, num_trials):
    """Checks the search as a chief restarted on the folder would see it."""
    _, trials = _search_state(directory)
    trial_ids = sorted(trials)
    assert len(trial_ids) == num_trials
    assert [trials[t]["status"] for t in trial_ids] == ["COMPLETED"] * len(
        trial_ids
    )
    assert all(np.isfinite(trials[t]["score"]) for t in trial_ids)
    # The saved oracle state lists the last trial ended as running
    # (`end_trial` saves before it removes it); a reload sorts that out.
    oracle = example.make_tuner(str(directory), num_trials).oracle
    # Ended exactly once each: none listed twice, none run twice.
    assert sorted(oracle.end_order) == trial_ids
    assert {t: oracle._run_times[t] for t in trial_ids} == dict.fromkeys(
        trial_ids, 1
    )
    assert oracle.ongoing_trials == {}
    assert oracle._retry_queue == []
    return trials


def _start_search(example, directory, num_trials, *, mirrored=False):
    port = example.free_port()
    chief = example.start(
        "chief", directory, port, trials=num_trials, overwrite=True
    )
    example.wait_for_port(port, chief)
    workers = [
        example.start(
            f"tuner{index}",
            directory,
            port,
            trials=num_trials,
            mirrored=mirrored,
        )
        for index in range(2)
    ]
    return port, chief, workers


def _stop_all(processes):
    for process in processes:
        if process.poll() is None:
            _kill(process)


def _assert_best_model_predicts(example, directory, trials):
    """The best model reloads from the folder and scores its trial's score."""
    tuner = example.make_tuner(str(directory), len(trials))
    best_trial = tuner.oracle.get_best_trials(1)[0]
    assert best_trial.score == min(t["score"] for t in trials.values())
    model = tuner.get_best_models(1)[0]
    _, _, x_val, y_val = example.make_data()
    predictions = model.predict(x_val, verbose=0)
    assert predictions.shape == (len(x_val), 1)
    assert np.all(np.isfinite(predictions))
    val_loss = float(np.mean((predictions - y_val) ** 2))
    np.testing.assert_allclose(val_loss, best_trial.score, rtol=1e-4)


def test_every_trial_completes_once_and_best_model_predicts(example, tmp_path):
    _, chief, workers = _start_search(example, tmp_path, 4)
    try:
        _finish(example, chief, workers)
    finally:
        _stop_all([chief, *workers])
    trials = _assert_each_trial_completed_once(example, tmp_path, 4)
    # Both workers trained.
    for index in range(2):
        log = (tmp_path / f"tuner{index}.log").read_text()
        assert "Traceback" not in log
    _assert_best_model_predicts(example, tmp_path, trials)


def test_worker_killed_mid_trial_and_restarted(example, tmp_path):
    port, chief, workers = _start_search(example, tmp_path, 4)
    try:
        state, _ = _wait_until(
            lambda state, _: "tuner0" in state["ongoing_trials"],
            tmp_path,
            [chief, *workers],
        )
        killed_trial = state["ongoing_trials"]["tuner0"]
        time.sleep(3)
        _kill(workers[0])
        state, trials = _search_state(tmp_path)
        # Killed inside the trial: still running at the chief, for tuner0.
        assert state["ongoing_trials"].get("tuner0") == killed_trial
        assert trials[killed_trial]["status"] == "RUNNING"
        workers[0] = example.start("tuner0", tmp_path, port, trials=4)
        _finish(example, chief, workers)
    finally:
        _stop_all([chief, *workers])
    trials = _assert_each_trial_completed_once(example, tmp_path, 4)
    assert trials[killed_trial]["status"] == "COMPLETED"


def test_chief_killed_and_restarted_keeps_completed_trials(example, tmp_path):
    port, chief, workers = _start_search(example, tmp_path, 4)
    try:
        # One trial done and both workers inside the next ones.
        state, trials = _wait_until(
            lambda state, _: (
                len(state["end_order"]) >= 1
                and len(state["ongoing_trials"]) == 2
            ),
            tmp_path,
            [chief, *workers],
        )
        _kill(chief)
        state, trials = _search_state(tmp_path)
        completed = {
            trial_id: trial["score"]
            for trial_id, trial in trials.items()
            if trial["status"] == "COMPLETED"
        }
        assert completed
        chief = example.start("chief", tmp_path, port, trials=4)
        _finish(example, chief, workers)
    finally:
        _stop_all([chief, *workers])
    trials = _assert_each_trial_completed_once(example, tmp_path, 4)
    assert {t: trials[t]["score"] for t in completed} == completed
    _assert_best_model_predicts(example, tmp_path, trials)


def test_workers_train_under_mirrored_strategy(example, tmp_path):
    _, chief, workers = _start_search(example, tmp_path, 2, mirrored=True)
    try:
        _finish(example, chief, workers)
    finally:
        _stop_all([chief, *workers])
    trials = _assert_each_trial_completed_once(example, tmp_path, 2)
    for index in range(2):
        log = (tmp_path / f"tuner{index}.log").read_text()
        assert (
            f"tuner{index} trained under MirroredStrategy with 2 replicas"
            in log
        )
    _assert_best_model_predicts(example, tmp_path, trials)
