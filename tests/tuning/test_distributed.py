import json

import keras_tuner
import pytest

import keras_recurrent as kr


class _Oracle(
    kr.tuning.KeepRunningTrialsOnReload,
    keras_tuner.oracles.RandomSearchOracle,
):
    pass


def _chief_oracle(oracle_class, directory):
    hp = keras_tuner.HyperParameters()
    hp.Float("learning_rate", 1e-4, 1e-2)
    oracle = oracle_class(
        objective="val_loss", max_trials=4, hyperparameters=hp, seed=0
    )
    oracle._set_project_dir(directory, "search")
    return oracle


def _kill_chief_with_two_trials_running(oracle_class, directory):
    """Two workers run a trial each, one finished earlier: then a reload."""
    chief = _chief_oracle(oracle_class, directory)
    done = chief.create_trial("tuner0")
    done.status = "COMPLETED"
    chief.update_trial(done.trial_id, {"val_loss": 0.5})
    chief.end_trial(done)
    running = {
        tuner_id: chief.create_trial(tuner_id).trial_id
        for tuner_id in ("tuner0", "tuner1")
    }
    restarted = _chief_oracle(oracle_class, directory)
    restarted.reload()
    if oracle_class is not _Oracle:
        # keras-tuner saves before recording the start of the last trial it
        # hands out: ending that trial after a reload fails at verbose 1.
        assert running["tuner1"] not in restarted._display.trial_start
        restarted.verbose = 0
    return restarted, running, done.trial_id


def test_reload_keeps_running_trials_with_their_tuners(tmp_path):
    chief, running, done_id = _kill_chief_with_two_trials_running(
        _Oracle, tmp_path
    )
    assert chief._retry_queue == []
    assert {
        tuner_id: trial.trial_id
        for tuner_id, trial in chief.ongoing_trials.items()
    } == running
    assert chief.trials[done_id].score == 0.5

    # A surviving worker reports its trial; nothing is trained twice.
    trial = chief.trials[running["tuner1"]]
    chief.update_trial(trial.trial_id, {"val_loss": 0.25})
    trial.status = "COMPLETED"
    chief.end_trial(trial)
    # A worker restarted with its old ID gets its trial back.
    assert chief.create_trial("tuner0").trial_id == running["tuner0"]
    # tuner1 gets the last new trial, then both are told to stop.
    last = chief.create_trial("tuner1")
    assert last.trial_id not in (done_id, *running.values())
    assert chief._run_times[trial.trial_id] == 1


def test_upstream_reload_requeues_trials_still_running(tmp_path):
    """The keras-tuner behaviour the mixin fixes (keras-tuner 1.4)."""
    chief, running, _ = _kill_chief_with_two_trials_running(
        keras_tuner.oracles.RandomSearchOracle, tmp_path
    )
    assert chief.ongoing_trials == {}
    assert sorted(chief._retry_queue) == sorted(running.values())
    # The worker that survived reports tuner1's trial as completed ...
    trial = chief.trials[running["tuner1"]]
    chief.update_trial(trial.trial_id, {"val_loss": 0.25})
    trial.status = "COMPLETED"
    chief.end_trial(trial)
    # ... and it is handed out again all the same.
    handed_out = {chief.create_trial(f"tuner{i}").trial_id for i in (2, 3)}
    assert running["tuner1"] in handed_out


@pytest.mark.parametrize("oracle_class", [_Oracle])
def test_fresh_chief_is_unchanged(oracle_class, tmp_path):
    oracle = _chief_oracle(oracle_class, tmp_path)
    first = oracle.create_trial("tuner0")
    assert first.status == "RUNNING" and oracle._retry_queue == []


def test_reload_records_last_ended_trial_as_ended(tmp_path):
    """`end_trial` saves the oracle while the trial is still running."""
    chief = _chief_oracle(_Oracle, tmp_path)
    trial = chief.create_trial("tuner0")
    chief.update_trial(trial.trial_id, {"val_loss": 0.125})
    trial.status = "COMPLETED"
    chief.end_trial(trial)
    assert chief.ongoing_trials == {}

    upstream = _chief_oracle(keras_tuner.oracles.RandomSearchOracle, tmp_path)
    upstream.reload()
    # Upstream hands the completed trial out again.
    assert upstream._retry_queue == [trial.trial_id]

    restarted = _chief_oracle(_Oracle, tmp_path)
    restarted.reload()
    assert restarted.ongoing_trials == {}
    assert restarted._retry_queue == []
    assert restarted.end_order == [trial.trial_id]
    assert restarted._run_times[trial.trial_id] == 1
    assert restarted.trials[trial.trial_id].score == 0.125
    # The worker asks for its next trial and gets a new one.
    assert restarted.create_trial("tuner0").trial_id != trial.trial_id


@pytest.mark.parametrize(
    ("damaged", "content"),
    [("search/oracle.json", ""), ("search/trial_0/trial.json", '{"trial_')],
)
def test_damaged_project_file_is_named(tmp_path, damaged, content):
    chief = _chief_oracle(_Oracle, tmp_path)
    trial = chief.create_trial("tuner0")
    chief.update_trial(trial.trial_id, {"val_loss": 0.5})
    trial.status = "COMPLETED"
    chief.end_trial(trial)
    (tmp_path / damaged).write_text(content)
    # Upstream: a bare json.JSONDecodeError that names no file.
    upstream = _chief_oracle(keras_tuner.oracles.RandomSearchOracle, tmp_path)
    with pytest.raises(json.JSONDecodeError):
        upstream.reload()
    restarted = _chief_oracle(_Oracle, tmp_path)
    with pytest.raises(
        ValueError, match=f"{tmp_path / damaged}' is damaged.*overwrite=True"
    ):
        restarted.reload()
