"""Restarting the chief of a distributed keras-tuner search."""

import glob
import json
import os
from datetime import datetime


class KeepRunningTrialsOnReload:
    """Oracle mixin: a restarted chief keeps the trials its workers run.

    In keras-tuner's chief/worker mode (`KERASTUNER_TUNER_ID`,
    `KERASTUNER_ORACLE_IP`, `KERASTUNER_ORACLE_PORT`) the chief's
    `Oracle.reload()` (keras-tuner 1.4) moves every trial that was running
    when the chief stopped to the retry queue. That is right for a
    single-process search, whose process died with its trial. But when only
    the chief was killed and restarted with `overwrite=False`, the workers are
    still training those trials: each one then reports its trial as
    completed, the trial stays in the retry queue all the same, and the next
    worker to ask for a trial trains it again (run twice, listed twice in
    `end_order`); two workers may even train it at once.

    With this mixin, `reload()` leaves each running trial assigned to the
    tuner that was running it: the surviving worker's report ends it
    normally, and a worker restarted with the same `KERASTUNER_TUNER_ID`
    gets its trial back and runs it again (the `Oracle.create_trial` path
    that keras-tuner already takes for a worker killed while the chief is
    up). It also restores the start time of the last trial handed out,
    which `Oracle.create_trial` saves too late, so that the chief's display
    does not fail with a `KeyError` when that trial ends (`verbose >= 1`).
    So restart a killed worker with its old ID; a trial whose worker
    never comes back stays running and the chief does not finish.

    `Oracle.end_trial` saves the oracle state while the trial it ends is
    still among the running ones, so the saved state always lists the last
    trial ended as running: upstream, a restarted chief hands that
    completed trial out again. The mixin reads each trial's own
    `trial.json` instead and records a trial that ended as ended.

    A damaged project directory (an `oracle.json` or `trial.json` left
    empty or truncated by a kill during its write) fails upstream with a
    bare `json.JSONDecodeError`; here it is a `ValueError` naming the file
    and the way out.

    Put it before the keras-tuner oracle class and pass the oracle to
    `keras_tuner.Tuner` (or a subclass); only the chief's oracle reloads.

    Example:

    >>> class Oracle(
    ...     kr.tuning.KeepRunningTrialsOnReload,
    ...     keras_tuner.oracles.RandomSearchOracle,
    ... ):
    ...     pass
    >>> tuner = keras_tuner.Tuner(
    ...     hypermodel=kr.tuning.SequenceHyperModel((20, 2), 1),
    ...     oracle=Oracle(objective="val_loss", max_trials=6),
    ...     directory=shared_dir,
    ...     overwrite=False)
    """

    def set_state(self, state):
        super().set_state(state)
        # `Oracle.reload()` empties `ongoing_trials` right after this call.
        self._running_at_reload = dict(self.ongoing_trials)

    def reload(self):
        self._running_at_reload = {}
        try:
            super().reload()
        # `json.JSONDecodeError` is a `ValueError`.
        except (ValueError, KeyError, TypeError) as error:
            raise_if_damaged(self._project_dir, error)
            raise
        for tuner_id, trial in self._running_at_reload.items():
            # Undo the re-queueing of `Oracle.reload()`: the last entry of
            # the queue with this id is the one it appended.
            queue = self._retry_queue
            last = len(queue) - 1 - queue[::-1].index(trial.trial_id)
            del queue[last]
            if trial.status != "RUNNING":
                # `end_trial` saves the oracle state before it removes the
                # trial from the running ones, so the state on disk lists
                # the last trial ended as running; its own `trial.json`,
                # which `reload` read, says it ended.
                self._record_end(trial)
                continue
            self.ongoing_trials[tuner_id] = trial
            # `create_trial` saves before it records the start of the trial
            # it hands out, and the display looks that start up when the
            # trial ends (a KeyError at verbose >= 1).
            self._display.trial_start.setdefault(trial.trial_id, datetime.now())
            self._display.trial_number.setdefault(
                trial.trial_id, len(self.trials)
            )
        del self._running_at_reload

    def _record_end(self, trial):
        """Records an ended trial as `end_trial` would have, once."""
        if trial.trial_id not in self.end_order:
            self.end_order.append(trial.trial_id)
        self._run_times[trial.trial_id] = max(
            self._run_times[trial.trial_id], 1
        )


def damaged_file(project_dir):
    """The first file of the tuner project that does not parse as a JSON
    object, or the `trial.json` missing from a trial directory, and which
    of the two: `(path, "damaged" or "missing")`, or `None`."""
    paths = [
        os.path.join(project_dir, "oracle.json"),
        *sorted(glob.glob(os.path.join(project_dir, "tuner*.json"))),
    ]
    for trial in sorted(glob.glob(os.path.join(project_dir, "trial_*", ""))):
        path = os.path.join(trial, "trial.json")
        if not os.path.exists(path):
            return path, "missing"
        paths.append(path)
    for path in paths:
        try:
            with open(path) as file:
                if not isinstance(json.load(file), dict):
                    return path, "damaged"
        except FileNotFoundError:
            continue
        except ValueError:
            return path, "damaged"
    return None


def raise_if_damaged(project_dir, error):
    """Raises a `ValueError` naming the damaged or missing file of the
    project, if one is, and the way out, from `error` (what a reload
    raised: a `JSONDecodeError`, or a `KeyError` or `TypeError` from the
    contents)."""
    found = damaged_file(project_dir)
    if found is None:
        return
    path, problem = found
    what = (
        "is damaged (empty, truncated, e.g. by a process killed while "
        "writing it, or not what keras-tuner wrote)"
        if problem == "damaged"
        else "is missing (its trial directory has no trial.json)"
    )
    raise ValueError(
        f"The tuner project file {path!r} {what}, so the search cannot "
        "resume. Delete the project directory (or create the tuner with "
        "`overwrite=True`) to search from scratch; to keep the other "
        "trials, delete only that trial's directory, or restore the file "
        "from a backup."
    ) from error
