import keras
import keras_tuner
import numpy as np
import pytest

import keras_recurrent as kr
from keras_recurrent.tuning.gated_feedback_hyper_model import MAX_LAYERS

INPUT_SHAPE = (6, 2)


def _data(num_samples=16, seed=0):
    x, y, _ = kr.datasets.adding_problem(
        num_samples, length=INPUT_SHAPE[0], seed=seed
    )
    return x, y


def _gated_feedback_layer(model):
    (layer,) = [
        layer
        for layer in model.layers
        if isinstance(layer, kr.layers.GatedFeedbackRNN)
    ]
    return layer


def _tiny_hyperparameters(**fixed):
    """Width 4 for every layer, so that every build is cheap."""
    hp = keras_tuner.HyperParameters()
    for index in range(MAX_LAYERS):
        hp.Fixed(f"units_{index}", 4)
    for name, value in fixed.items():
        hp.Fixed(name, value)
    return hp


def test_defaults():
    hypermodel = kr.tuning.GatedFeedbackHyperModel(INPUT_SHAPE, 1)
    hp = keras_tuner.HyperParameters()
    model = hypermodel.build(hp)

    assert hp.values == {
        "cell_type": "lstm",
        "feedback": "gated",
        "num_layers": 3,
        "units_0": 64,
        "units_1": 64,
        "units_2": 64,
        "dropout": 0.0,
        "recurrent_dropout": 0.0,
        "learning_rate": 1e-3,
    }
    layer = _gated_feedback_layer(model)
    assert (layer.cell_type, layer.feedback, layer.units) == (
        "lstm",
        "gated",
        [64, 64, 64],
    )
    assert not layer.return_sequences
    assert model.output_shape == (None, 1)
    assert isinstance(model.optimizer, keras.optimizers.Adam)
    np.testing.assert_allclose(float(model.optimizer.learning_rate), 1e-3)
    assert model.loss == "mse"


def test_search_space():
    hp = keras_tuner.HyperParameters()
    kr.tuning.GatedFeedbackHyperModel(INPUT_SHAPE, 1).build(hp)
    space = {entry.name: entry for entry in hp.space}
    assert space["cell_type"].values == ["simple", "gru", "lstm"]
    assert space["feedback"].values == ["gated", "fixed", "none"]
    layers = space["num_layers"]
    assert (layers.min_value, layers.max_value) == (1, MAX_LAYERS)
    units = space["units_0"]
    assert (units.min_value, units.max_value, units.step) == (16, 256, 16)
    for name in ("dropout", "recurrent_dropout"):
        assert (space[name].min_value, space[name].max_value) == (0.0, 0.5)
    assert space["learning_rate"].sampling == "log"


def test_fixed_values_override_the_search():
    hp = _tiny_hyperparameters(
        cell_type="gru",
        feedback="fixed",
        num_layers=2,
        dropout=0.25,
        recurrent_dropout=0.125,
        learning_rate=5e-3,
    )
    hp.Fixed("units_1", 8)
    model = kr.tuning.GatedFeedbackHyperModel(
        INPUT_SHAPE, 3, task="classification", return_sequences=True
    ).build(hp)
    layer = _gated_feedback_layer(model)
    assert (layer.cell_type, layer.feedback, layer.units) == (
        "gru",
        "fixed",
        [4, 4],
    )
    assert (layer.dropout, layer.recurrent_dropout) == (0.25, 0.125)
    np.testing.assert_allclose(float(model.optimizer.learning_rate), 5e-3)
    assert model.output_shape == (None, 6, 3)
    assert isinstance(model.loss, keras.losses.SparseCategoricalCrossentropy)


def test_rejects_bad_arguments():
    with pytest.raises(ValueError, match="return_sequences='yes'"):
        kr.tuning.GatedFeedbackHyperModel(
            INPUT_SHAPE, 1, return_sequences="yes"
        )
    with pytest.raises(ValueError, match="task='ranking'"):
        kr.tuning.GatedFeedbackHyperModel(INPUT_SHAPE, 1, task="ranking")


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("num_layers", 0, r"num_layers.*>= 1.*Received: num_layers=0"),
        ("feedback", "full", r"`feedback` must be one of .*feedback='full'"),
    ],
)
def test_bad_fixed_hyperparameters_raise(name, value, message):
    hp = keras_tuner.HyperParameters()
    hp.Fixed(name, value)
    hypermodel = kr.tuning.GatedFeedbackHyperModel(INPUT_SHAPE, 1)
    with pytest.raises(ValueError, match=message):
        hypermodel.build(hp)


# keras-tuner reloads the best checkpoint, optimizer state included, into a
# freshly built model whose optimizer has no state yet: harmless here.
@pytest.mark.filterwarnings(
    "ignore:Skipping variable loading for optimizer:UserWarning"
)
def test_random_search(tmp_path):
    tuner = keras_tuner.RandomSearch(
        kr.tuning.GatedFeedbackHyperModel(INPUT_SHAPE, 1),
        objective="val_loss",
        max_trials=2,
        hyperparameters=_tiny_hyperparameters(num_layers=2),
        directory=tmp_path,
        project_name="gated_feedback",
        overwrite=True,
        seed=0,
    )
    x, y = _data(24)
    x_val, y_val = _data(8, seed=1)
    tuner.search(
        x, y, epochs=1, batch_size=8, validation_data=(x_val, y_val), verbose=0
    )
    trials = list(tuner.oracle.trials.values())
    assert len(trials) == 2
    assert all(trial.status == "COMPLETED" for trial in trials)
    assert all(t.hyperparameters.values["num_layers"] == 2 for t in trials)
    (best,) = tuner.get_best_models(1)
    assert _gated_feedback_layer(best).units == [4, 4]
    assert best(x_val).shape == (8, 1)
