"""What the HyperModels of `kr.tuning` share."""

import keras_tuner

from keras_recurrent._checks import check_option
from keras_recurrent.tuning._project_lock import claim_project
from keras_recurrent.tuning._project_lock import tuner_and_trial
from keras_recurrent.tuning.distributed import raise_if_damaged


class RecurrentHyperModel(keras_tuner.HyperModel):
    """A `keras_tuner.HyperModel` whose trials keep their project directory
    to their own tuner (see `_project_lock`)."""

    def fit(self, hp, model, *args, **kwargs):
        tuner, trial = tuner_and_trial(kwargs.get("callbacks"))
        if tuner is not None:
            claim_project(tuner, trial.trial_id)
        return super().fit(hp, model, *args, **kwargs)


def _reload_naming_damaged_files(reload):
    """`keras_tuner.Tuner.reload`, which the constructor of a tuner made
    with `overwrite=False` calls, that names a damaged project file (an
    empty or truncated `oracle.json`, `tuner0.json` or `trial.json`, or
    a missing `trial.json`) instead of raising a bare
    `json.JSONDecodeError`, `KeyError` or `TypeError`, for tuners of the
    HyperModels of `kr.tuning`: the tuner reads its directory before any
    HyperModel method runs."""

    def checked_reload(tuner, *args, **kwargs):
        ours = isinstance(tuner.hypermodel, RecurrentHyperModel)
        try:
            result = reload(tuner, *args, **kwargs)
        except (ValueError, KeyError, TypeError) as error:
            if ours:
                raise_if_damaged(tuner.project_dir, error)
            raise
        if ours:
            # keras-tuner skips a trial whose trial.json is missing, and
            # then fails with `KeyError: '0'` when the next trial ends.
            raise_if_damaged(tuner.project_dir, None)
        return result

    checked_reload.__wrapped__ = reload
    checked_reload.__doc__ = reload.__doc__
    return checked_reload


if not hasattr(keras_tuner.Tuner.reload, "__wrapped__"):
    keras_tuner.Tuner.reload = _reload_naming_damaged_files(
        keras_tuner.Tuner.reload
    )


def choice(hp, name, options, default):
    """`hp.Choice(name, options)`, with a value fixed beforehand (with
    `hp.Fixed`) checked against `options`, ignoring case like the layers'
    string options: a `ValueError` names the hyperparameter, the value and
    the options."""
    value = hp.Choice(name, list(options), default=default)
    return check_option(name, value, options)
