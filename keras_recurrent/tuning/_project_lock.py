"""One tuner at a time in a keras-tuner project directory.

keras-tuner numbers trials from its oracle's memory (`trial_0`, `trial_1`,
...), so two tuners searching in one project directory hand out the same
trial ids and overwrite each other's `trial.json`, checkpoints and
`oracle.json` without an error. The HyperModels of `kr.tuning` stop it when
a trial starts training (`HyperModel.fit`, which gets the tuner through its
`TunerCallback`):

- A tuner holds an exclusive lock on its project directory
  (`fcntl.flock` on its `.lock` file) from its first trial until it is
  garbage collected or its process ends (a killed process releases it). A
  tuner of another process then gets a `ValueError` naming the directory
  and the process holding it.
- In the same process, a new tuner on the directory takes the lock over (an
  earlier search ended or was interrupted); the earlier tuner then gets a
  `ValueError` at its next trial.
- A tuner whose oracle misses trials that the directory holds (another
  tuner searched there after this one read it), or that is about to train
  again a trial that the previous tuner ended, gets a `ValueError`.

In keras-tuner's chief/worker mode (`KERASTUNER_ORACLE_IP`) the chief hands
out the trial ids, and the workers share the directory without a lock.
"""

import glob
import json
import os
import weakref

import keras_tuner

from keras_recurrent import _file_lock

# A fatal error, so that keras-tuner stops the search at once rather than
# record the trial as failed (in the other tuner's trial directory) and go on.
_Clash = keras_tuner.errors.FatalValueError

_FIX = (
    "Create the tuner again with `overwrite=False` to resume from the "
    "directory, or pass another `directory` or `project_name`."
)
_ENDED = ("COMPLETED", "INVALID", "FAILED", "STOPPED")

# The project locks this process holds, by the lock file's (device, inode).
_held_locks = {}
# The lock each tuner holds, or a `_TakenOver` once a newer tuner of this
# process took it.
_tuner_locks = weakref.WeakKeyDictionary()


class _TakenOver:
    def __init__(self, lock):
        self.lock = lock


def tuner_and_trial(callbacks):
    """The `keras_tuner.Tuner` that runs a trial with these `callbacks`, and
    the trial (`None, None` outside a search)."""
    for callback in callbacks or ():
        tuner = getattr(callback, "tuner", None)
        trial = getattr(callback, "trial", None)
        if isinstance(tuner, keras_tuner.Tuner) and trial is not None:
            return tuner, trial
    return None, None


def claim_project(tuner, trial_id):
    """Raises a `ValueError` unless `tuner` may train `trial_id` in its
    project directory, where it then holds the lock."""
    if _file_lock.fcntl is None or _is_distributed():
        return
    directory = tuner.project_dir
    lock = _tuner_locks.get(tuner)
    if isinstance(lock, _TakenOver):
        newer = lock.lock.owner()
        if newer is not None:
            # This tuner's oracle has just written its new trial over one
            # of the newer tuner's: write that back.
            _restore_ended_trials(newer)
            newer.oracle.save()
        raise _Clash(
            f"The tuner project directory {directory!r} is now used by "
            "another tuner of this process, created after this one: this "
            "tuner no longer runs trials there, since the two would hand "
            "out the same trial ids. Search with the newer tuner, or pass "
            "another `directory` or `project_name`."
        )
    if lock is None:
        _acquire(directory, tuner, trial_id)
    else:
        _check_still_held(lock, directory)
    _check_oracle_knows_the_trials(tuner, directory)
    _restore_ended_trials(tuner)


def _is_distributed():
    return bool(os.environ.get("KERASTUNER_ORACLE_IP"))


def _acquire(directory, tuner, trial_id):
    def reuse(held):
        previous = held.owner()
        if previous is not None and previous is not tuner:
            try:
                _check_not_ended_by(previous, trial_id, directory)
            except _Clash:
                # keras-tuner's oracle wrote this tuner's trial (and
                # oracle state) over the earlier tuner's before any
                # HyperModel code ran: write those back.
                _restore_ended_trials(previous)
                previous.oracle.save()
                raise
            _tuner_locks[previous] = _TakenOver(held)
        held.owner = weakref.ref(tuner)
        return held

    def busy(holder):
        return _Clash(
            f"The tuner project directory {directory!r} is in use by "
            f"another tuner ({holder} holds its lock). Two tuners searching "
            "in one directory would hand out the same trial ids and "
            "overwrite each other's trials: pass another `directory` or "
            "`project_name`, or wait for the other search to end (then "
            "create this tuner with `overwrite=False` to resume from it). "
            "To search with several processes, use keras-tuner's "
            "chief/worker mode (`KERASTUNER_ORACLE_IP`)."
        )

    lock = _file_lock.acquire(
        directory, _held_locks, weakref.ref(tuner), reuse=reuse, busy=busy
    )
    if lock is not None:
        _tuner_locks[tuner] = lock
        weakref.finalize(tuner, _release_if_owned, lock, lock.owner)
    return lock


def _check_still_held(lock, directory):
    try:
        status = os.stat(lock.path)
        key = (status.st_dev, status.st_ino)
    except FileNotFoundError:
        key = None
    if key != lock.key:
        raise _Clash(
            f"The tuner project directory {directory!r} was deleted or "
            "replaced during this search (another tuner created with "
            "`overwrite=True`?). This tuner stops rather than mix its "
            "trials with the other one's: pass another `directory` or "
            "`project_name`."
        )


def _check_not_ended_by(previous, trial_id, directory):
    trial = previous.oracle.trials.get(trial_id)
    if trial is not None and trial.status in _ENDED:
        raise _Clash(
            f"Trial {trial_id} in the tuner project directory {directory!r} "
            "was already run by another tuner of this process, which this "
            f"tuner, created before that search, does not know of. {_FIX}"
        )


def _check_oracle_knows_the_trials(tuner, directory):
    known = {f"trial_{trial_id}" for trial_id in tuner.oracle.trials}
    found = {
        os.path.basename(os.path.dirname(path))
        for path in glob.glob(os.path.join(directory, "trial_*", "trial.json"))
    }
    unknown = sorted(found - known)
    if unknown:
        raise _Clash(
            f"The tuner project directory {directory!r} holds trials that "
            f"this tuner's oracle does not know ({', '.join(unknown)}): "
            "another tuner has searched in it since this one read it, and "
            f"the two would reuse each other's trial ids. {_FIX}"
        )


def _restore_ended_trials(tuner):
    """Writes again the `trial.json` of each trial that `tuner` ended, where
    another tuner's oracle wrote its own trial over it."""
    for trial_id, trial in tuner.oracle.trials.items():
        if trial.status not in _ENDED:
            continue
        path = os.path.join(
            tuner.project_dir, f"trial_{trial_id}", "trial.json"
        )
        expected = json.dumps(trial.get_state())
        try:
            with open(path) as file:
                found = file.read()
        except OSError:
            found = None
        if found != expected:
            trial.save(path)


def _release_if_owned(lock, owner):
    if lock.owner is owner and _held_locks.get(lock.key) is lock:
        _file_lock.release(lock, _held_locks)
