"""What the HyperModels of `kr.tuning` share."""

import keras_tuner

from keras_recurrent._checks import check_option
from keras_recurrent.tuning._project_lock import claim_project
from keras_recurrent.tuning._project_lock import tuner_and_trial


class RecurrentHyperModel(keras_tuner.HyperModel):
    """A `keras_tuner.HyperModel` whose trials keep their project directory
    to their own tuner (see `_project_lock`)."""

    def fit(self, hp, model, *args, **kwargs):
        tuner, trial = tuner_and_trial(kwargs.get("callbacks"))
        if tuner is not None:
            claim_project(tuner, trial.trial_id)
        return super().fit(hp, model, *args, **kwargs)


def choice(hp, name, options, default):
    """`hp.Choice(name, options)`, with a value fixed beforehand (with
    `hp.Fixed`) checked against `options`, ignoring case like the layers'
    string options: a `ValueError` names the hyperparameter, the value and
    the options."""
    value = hp.Choice(name, list(options), default=default)
    return check_option(name, value, options)
