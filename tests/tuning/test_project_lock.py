"""Two tuners on one project directory: the second one is stopped."""

import gc
import json
import os
import subprocess
import sys
import textwrap

import keras_tuner
import pytest

import keras_recurrent as kr

pytestmark = pytest.mark.filterwarnings(
    "ignore:Skipping variable loading for optimizer:UserWarning"
)


def _data():
    x, y, _ = kr.datasets.adding_problem(16, length=6, seed=0)
    return x, y


def _tuner(directory, overwrite=False, max_trials=2):
    hp = keras_tuner.HyperParameters()
    hp.Fixed("units", 4)
    hp.Fixed("cell_type", "lstm")
    return keras_tuner.RandomSearch(
        kr.tuning.SequenceHyperModel((6, 2), 1),
        objective="loss",
        max_trials=max_trials,
        hyperparameters=hp,
        directory=directory,
        project_name="project",
        overwrite=overwrite,
        seed=0,
    )


def _search(tuner):
    x, y = _data()
    tuner.search(x, y, epochs=1, batch_size=8, verbose=0)


def test_tuner_created_before_another_search_is_stopped(tmp_path):
    # Both read the (empty) directory; upstream, the second one then hands
    # out trial ids 0 and 1 again and overwrites the first one's trials.
    first = _tuner(tmp_path, max_trials=1)
    second = _tuner(tmp_path, max_trials=1)
    _search(first)
    with pytest.raises(ValueError, match="already run by another tuner"):
        _search(second)
    # The first search's trial is as it left it (keras-tuner's oracle wrote
    # the second tuner's trial 0 over it, and it was written back).
    reloaded = _tuner(tmp_path)
    assert sorted(reloaded.oracle.trials) == ["0"]
    assert (
        reloaded.oracle.trials["0"].hyperparameters.values
        == first.oracle.trials["0"].hyperparameters.values
    )
    assert all(
        trial.status == "COMPLETED" for trial in reloaded.oracle.trials.values()
    )


@pytest.mark.slow
def test_newer_tuner_takes_over_and_the_older_one_stops(tmp_path):
    first = _tuner(tmp_path, max_trials=1)
    _search(first)
    # Created after the first search, it resumes from the directory.
    second = _tuner(tmp_path, max_trials=2)
    _search(second)
    assert sorted(second.oracle.trials) == ["0", "1"]
    first.oracle.max_trials = 2
    with pytest.raises(ValueError, match="another tuner of this process"):
        _search(first)
    # keras-tuner's oracle wrote the first tuner's trial 1 over the
    # second's, and it was written back.
    reloaded = _tuner(tmp_path)
    assert reloaded.oracle.trials["1"].status == "COMPLETED"
    assert (
        reloaded.oracle.trials["1"].hyperparameters.values
        == second.oracle.trials["1"].hyperparameters.values
    )


def test_tuner_of_another_process_is_stopped(tmp_path):
    directory = tmp_path / "project"
    directory.mkdir()
    # Another process holds the project's lock, as a searching tuner does.
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(
                f"""
                import fcntl, os, sys
                handle = os.open({str(directory / ".lock")!r},
                                 os.O_RDWR | os.O_CREAT)
                fcntl.flock(handle, fcntl.LOCK_EX)
                os.write(handle, b"process 4242 on host elsewhere")
                print("locked", flush=True)
                sys.stdin.read()
                """
            ),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        tuner = _tuner(tmp_path, max_trials=1)
        with pytest.raises(ValueError, match="process 4242 on host elsewhere"):
            _search(tuner)
        assert not any(
            path.startswith("trial_")
            and os.path.exists(directory / path / "checkpoint.weights.h5")
            for path in os.listdir(directory)
        )
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    # The lock is free again: the same tuner searches.
    tuner = _tuner(tmp_path, max_trials=1)
    _search(tuner)
    assert tuner.oracle.trials["0"].status == "COMPLETED"


@pytest.mark.slow
def test_directory_overwritten_by_another_tuner_stops_the_search(tmp_path):
    first = _tuner(tmp_path, max_trials=1)
    _search(first)
    _tuner(tmp_path, overwrite=True)  # Deletes the directory.
    first.oracle.max_trials = 2
    with pytest.raises(ValueError, match="deleted or replaced"):
        _search(first)


def test_damaged_project_files_are_named_on_reload(tmp_path):
    # keras-tuner reads the project directory in the tuner's constructor
    # (`overwrite=False`), before any HyperModel method runs: a damaged
    # file gave a bare json.JSONDecodeError naming no file.
    tuner = _tuner(tmp_path, max_trials=1)
    _search(tuner)
    del tuner
    gc.collect()
    project = tmp_path / "project"
    for name in ("oracle.json", "tuner0.json", "trial_0/trial.json"):
        text = (project / name).read_text()
        for damaged in ("", text[: len(text) // 2]):
            (project / name).write_text(damaged)
            with pytest.raises(
                ValueError,
                match=rf"'{project / name}' is damaged.*overwrite=True",
            ) as error:
                _tuner(tmp_path)
            assert not isinstance(error.value, json.JSONDecodeError)
            assert isinstance(error.value.__cause__, json.JSONDecodeError)
        (project / name).write_text(text)
    # Valid JSON that keras-tuner did not write: a TypeError upstream.
    oracle = (project / "oracle.json").read_text()
    (project / "oracle.json").write_text("[]")
    with pytest.raises(ValueError, match="oracle.json' is damaged"):
        _tuner(tmp_path)
    (project / "oracle.json").write_text(oracle)
    # A trial directory without its trial.json: a KeyError upstream.
    trial = (project / "trial_0" / "trial.json").read_text()
    (project / "trial_0" / "trial.json").unlink()
    with pytest.raises(ValueError, match="trial.json' is missing"):
        _tuner(tmp_path)
    (project / "trial_0" / "trial.json").write_text(trial)
    # Intact again: the tuner resumes.
    assert _tuner(tmp_path).oracle.trials
    # Tuners of other HyperModels keep keras-tuner's own error.
    (project / "oracle.json").write_text("")
    with pytest.raises(json.JSONDecodeError):
        keras_tuner.RandomSearch(
            lambda hp: None,
            objective="loss",
            max_trials=1,
            directory=tmp_path,
            project_name="project",
        )
