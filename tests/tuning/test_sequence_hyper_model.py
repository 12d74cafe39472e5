import keras
import keras_tuner
import numpy as np
import pytest

import keras_recurrent as kr
import keras_recurrent.testing

INPUT_SHAPE = (6, 2)
RECURRENT_LAYER_TYPES = (
    keras.layers.LSTM,
    kr.layers.PeepholeLSTM,
    kr.layers.CoupledLSTM,
    kr.layers.LSTMVariant,
)


def _data(num_samples=16, seed=0):
    x, y, _ = kr.datasets.adding_problem(
        num_samples, length=INPUT_SHAPE[0], seed=seed
    )
    return x, y


def _recurrent_layers(model):
    return [
        layer
        for layer in model.layers
        if isinstance(layer, RECURRENT_LAYER_TYPES)
    ]


def _tiny_hyperparameters(**fixed):
    """Small units so that every build is cheap; the rest is searched."""
    hp = keras_tuner.HyperParameters()
    hp.Fixed("units", fixed.pop("units", 4))
    for name, value in fixed.items():
        hp.Fixed(name, value)
    return hp


def test_defaults():
    hypermodel = kr.tuning.SequenceHyperModel(INPUT_SHAPE, 1)
    hp = keras_tuner.HyperParameters()
    model = hypermodel.build(hp)

    assert hp.values == {
        "cell_type": "peephole",
        "units": 64,
        "num_layers": 1,
        "dropout": 0.0,
        "recurrent_dropout": 0.0,
        "learning_rate": 1e-3,
    }
    (recurrent,) = _recurrent_layers(model)
    assert type(recurrent) is kr.layers.PeepholeLSTM
    assert recurrent.units == 64
    assert recurrent.dropout == 0.0 and recurrent.recurrent_dropout == 0.0
    assert not recurrent.return_sequences
    assert not any(isinstance(x, keras.layers.Masking) for x in model.layers)
    head = model.layers[-1]
    assert isinstance(head, keras.layers.Dense) and head.units == 1
    assert head.activation is keras.activations.linear
    assert model.input_shape == (None, 6, 2)
    assert model.output_shape == (None, 1)
    assert isinstance(model.optimizer, keras.optimizers.Adam)
    np.testing.assert_allclose(float(model.optimizer.learning_rate), 1e-3)
    assert model.loss == "mse"


def test_search_space():
    hp = keras_tuner.HyperParameters()
    kr.tuning.SequenceHyperModel(INPUT_SHAPE, 1).build(hp)
    space = {entry.name: entry for entry in hp.space}
    assert space["cell_type"].values == [
        "lstm",
        "peephole",
        "coupled",
        *(f"greff_{variant.lower()}" for variant in kr.layers.VARIANTS),
    ]
    assert list(kr.tuning.SequenceHyperModel.CELL_TYPES) == (
        space["cell_type"].values
    )
    units = space["units"]
    assert (units.min_value, units.max_value, units.step) == (16, 256, 16)
    layers = space["num_layers"]
    assert (layers.min_value, layers.max_value) == (1, 3)
    for name in ("dropout", "recurrent_dropout"):
        assert (space[name].min_value, space[name].max_value) == (0.0, 0.5)
    rate = space["learning_rate"]
    assert (rate.min_value, rate.max_value, rate.sampling) == (
        1e-4,
        1e-2,
        "log",
    )


def test_fixed_values_override_the_search():
    hypermodel = kr.tuning.SequenceHyperModel(INPUT_SHAPE, 1)
    hp = keras_tuner.HyperParameters()
    hp.Fixed("cell_type", "coupled")
    hp.Fixed("units", 8)
    model = hypermodel.build(hp)

    (recurrent,) = _recurrent_layers(model)
    assert type(recurrent) is kr.layers.CoupledLSTM
    assert recurrent.units == 8 and not recurrent.use_peepholes
    assert hp.values["cell_type"] == "coupled" and hp.values["units"] == 8
    assert isinstance(hp.space[0], keras_tuner.engine.hyperparameters.Fixed)


def test_stacked_layers_and_dropout():
    hp = _tiny_hyperparameters(
        cell_type="greff_nfg",
        num_layers=3,
        dropout=0.25,
        recurrent_dropout=0.125,
        learning_rate=5e-3,
    )
    model = kr.tuning.SequenceHyperModel(INPUT_SHAPE, 2).build(hp)

    recurrent = _recurrent_layers(model)
    assert [layer.variant for layer in recurrent] == ["NFG"] * 3
    assert [layer.return_sequences for layer in recurrent] == [
        True,
        True,
        False,
    ]
    assert all(layer.dropout == 0.25 for layer in recurrent)
    assert all(layer.recurrent_dropout == 0.125 for layer in recurrent)
    np.testing.assert_allclose(float(model.optimizer.learning_rate), 5e-3)
    assert model.output_shape == (None, 2)


def test_classification_head_loss_and_accuracy():
    hypermodel = kr.tuning.SequenceHyperModel(
        INPUT_SHAPE, 3, task="classification"
    )
    model = hypermodel.build(_tiny_hyperparameters(cell_type="lstm"))
    assert model.output_shape == (None, 3)
    assert model.layers[-1].activation is keras.activations.linear
    assert isinstance(model.loss, keras.losses.SparseCategoricalCrossentropy)
    assert model.loss.get_config()["from_logits"]

    x, _ = _data()
    labels = np.arange(16) % 3
    model.run_eagerly = True
    logs = model.evaluate(x, labels, verbose=0, return_dict=True)
    logits = keras.ops.convert_to_numpy(model(x))
    accuracy = np.mean(np.argmax(logits, axis=-1) == labels)
    np.testing.assert_allclose(logs["accuracy"], accuracy, atol=1e-6)
    expected_loss = keras.ops.convert_to_numpy(
        keras.losses.sparse_categorical_crossentropy(
            labels, logits, from_logits=True
        )
    ).mean()
    np.testing.assert_allclose(logs["loss"], expected_loss, rtol=1e-5)


def test_masking_ignores_zero_padding():
    hypermodel = kr.tuning.SequenceHyperModel((None, 2), 1, masking=True)
    model = hypermodel.build(_tiny_hyperparameters(num_layers=2))
    assert any(isinstance(x, keras.layers.Masking) for x in model.layers)

    x, _, lengths = kr.datasets.adding_problem(
        4, length=8, min_length=3, seed=2
    )
    padded = keras.ops.convert_to_numpy(model(x))
    for index, length in enumerate(lengths):
        unpadded = model(x[index : index + 1, :length])
        np.testing.assert_allclose(
            padded[index], keras.ops.convert_to_numpy(unpadded)[0], atol=1e-5
        )


@pytest.mark.parametrize("cell_type", kr.tuning.SequenceHyperModel.CELL_TYPES)
def test_every_cell_type_builds_and_trains(cell_type):
    hp = _tiny_hyperparameters(
        cell_type=cell_type, dropout=0.1, recurrent_dropout=0.1
    )
    model = kr.tuning.SequenceHyperModel(INPUT_SHAPE, 1).build(hp)
    (recurrent,) = _recurrent_layers(model)
    assert recurrent.name == f"{cell_type}_0"
    if cell_type.startswith("greff_"):
        assert recurrent.variant == cell_type.removeprefix("greff_").upper()

    # Eager, so that twelve builds do not trace twelve train functions; the
    # searches below train in graph mode.
    model.run_eagerly = True
    before = [weight.numpy().copy() for weight in recurrent.weights]
    x, y = _data()
    loss = model.train_on_batch(x, y)
    assert np.isfinite(loss)
    assert all(
        not np.array_equal(old, new.numpy())
        for old, new in zip(before, recurrent.weights, strict=True)
    )


# keras-tuner reloads the best checkpoint, optimizer state included, into a
# freshly built model whose optimizer has no state yet: harmless here.
_IGNORE_OPTIMIZER_RELOAD = pytest.mark.filterwarnings(
    "ignore:Skipping variable loading for optimizer:UserWarning"
)


def _search(tuner):
    x, y = _data(24)
    x_val, y_val = _data(8, seed=1)
    tuner.search(
        x, y, epochs=1, batch_size=8, validation_data=(x_val, y_val), verbose=0
    )
    trials = list(tuner.oracle.trials.values())
    assert trials
    assert all(trial.status == "COMPLETED" for trial in trials)
    assert all(trial.hyperparameters.values["units"] == 4 for trial in trials)
    (best,) = tuner.get_best_models(1)
    assert best(x_val).shape == (8, 1)
    return trials


@_IGNORE_OPTIMIZER_RELOAD
# The default run searches with RandomSearch; `-m slow` adds the other two
# tuners (the same HyperModel, about 30 s each on 2 cores).
@pytest.mark.parametrize(
    "tuner_name",
    [
        "random",
        pytest.param("bayesian", marks=pytest.mark.slow),
        pytest.param("hyperband", marks=pytest.mark.slow),
    ],
)
def test_search(tuner_name, tmp_path):
    common = {
        "hypermodel": kr.tuning.SequenceHyperModel(INPUT_SHAPE, 1),
        "objective": "val_loss",
        # One small layer keeps each trial's tracing short; the cell type,
        # dropouts and learning rate are still searched.
        "hyperparameters": _tiny_hyperparameters(num_layers=1),
        "directory": tmp_path,
        "project_name": tuner_name,
        "overwrite": True,
        "seed": 0,
    }
    if tuner_name == "random":
        tuner = keras_tuner.RandomSearch(max_trials=2, **common)
    elif tuner_name == "bayesian":
        tuner = keras_tuner.BayesianOptimization(
            max_trials=2, num_initial_points=1, **common
        )
    else:
        # With max_epochs=2 and factor=3 Hyperband runs a single bracket of
        # two trials, two epochs each.
        tuner = keras_tuner.Hyperband(max_epochs=2, factor=3, **common)
    trials = _search(tuner)
    assert len(trials) == 2
    if tuner_name == "hyperband":
        assert all(
            trial.hyperparameters.values["tuner/epochs"] == 2
            for trial in trials
        )


@_IGNORE_OPTIMIZER_RELOAD
def test_search_with_mirrored_strategy(tmp_path):
    # tests/conftest.py splits the CPU into two logical devices before
    # TensorFlow starts; one cached strategy per process, as a second
    # MirroredStrategy over the same devices breaks its all-reduces.
    strategy = kr.testing.mirrored_strategy(2)
    assert strategy.num_replicas_in_sync == 2
    tuner = keras_tuner.RandomSearch(
        kr.tuning.SequenceHyperModel(INPUT_SHAPE, 1),
        objective="val_loss",
        max_trials=1,
        hyperparameters=_tiny_hyperparameters(cell_type="coupled"),
        distribution_strategy=strategy,
        directory=tmp_path,
        overwrite=True,
        seed=0,
    )
    _search(tuner)
    assert strategy.num_replicas_in_sync == 2
    (best,) = tuner.get_best_models(1)
    assert best.distribute_strategy is strategy


@pytest.mark.parametrize(
    "args, kwargs, message",
    [
        (((6,), 1), {}, r"input_shape=\(6,\)"),
        (((0, 2), 1), {}, r"input_shape=\(0, 2\)"),
        (((6, None), 1), {}, r"input_shape=\(6, None\)"),
        (((6, 2.0), 1), {}, r"input_shape=\(6, 2.0\)"),
        (("62", 1), {}, "input_shape='62'"),
        ((INPUT_SHAPE, 0), {}, "output_units=0"),
        ((INPUT_SHAPE, True), {}, "output_units=True"),
        ((INPUT_SHAPE, 1), {"task": "classification"}, "output_units=1"),
        ((INPUT_SHAPE, 1), {"task": "ranking"}, "task='ranking'"),
        ((INPUT_SHAPE, 1), {"masking": "yes"}, "masking='yes'"),
        (((6,), 1), {"vocabulary_size": 0}, "vocabulary_size=0"),
        (((6,), 1), {"vocabulary_size": 5.0}, "vocabulary_size=5.0"),
        (((6,), 1), {"vocabulary_size": True}, "vocabulary_size=True"),
        ((INPUT_SHAPE, 1), {"vocabulary_size": 5}, r"input_shape=\(6, 2\)"),
        (((0,), 1), {"vocabulary_size": 5}, r"input_shape=\(0,\)"),
    ],
)
def test_bad_structural_arguments_raise(args, kwargs, message):
    with pytest.raises(ValueError, match=message):
        kr.tuning.SequenceHyperModel(*args, **kwargs)


def _token_model(masking, **fixed):
    hypermodel = kr.tuning.SequenceHyperModel(
        (None,), 1, masking=masking, vocabulary_size=7
    )
    return hypermodel.build(_tiny_hyperparameters(num_layers=2, **fixed))


def test_token_ids_are_embedded():
    hp = _tiny_hyperparameters()
    model = kr.tuning.SequenceHyperModel(
        (5,), 3, task="classification", vocabulary_size=7
    ).build(hp)
    assert hp.values["embedding_dim"] == 32
    embedding = model.get_layer("embedding")
    assert (embedding.input_dim, embedding.output_dim) == (7, 32)
    assert not embedding.mask_zero
    assert model.input_shape == (None, 5) and model.inputs[0].dtype == "int32"
    assert model.output_shape == (None, 3)
    space = {entry.name: entry for entry in hp.space}
    dim = space["embedding_dim"]
    assert (dim.min_value, dim.max_value, dim.step) == (8, 128, 8)

    # Without masking, token 0 is an ordinary token: the output is that of
    # the float model fed with the embedding rows.
    tokens = np.array([[1, 0, 6, 2, 0], [3, 3, 5, 0, 4]], dtype="int32")
    float_model = kr.tuning.SequenceHyperModel((5, 32), 3).build(
        _tiny_hyperparameters()
    )
    float_model.set_weights(model.get_weights()[1:])
    table = keras.ops.convert_to_numpy(embedding.embeddings)
    np.testing.assert_allclose(
        keras.ops.convert_to_numpy(model(tokens)),
        keras.ops.convert_to_numpy(float_model(table[tokens])),
        atol=1e-6,
    )


def test_masked_token_ids_equal_masked_embedded_floats():
    keras.utils.set_random_seed(0)
    model = _token_model(True, embedding_dim=8, cell_type="coupled")
    embedding = model.get_layer("embedding")
    assert embedding.mask_zero
    # Unit-scale rows: with the initializer's (within +-0.05), the states
    # stay so small that masking changes the output by less than the last
    # check's tolerance.
    rng = np.random.default_rng(0)
    embedding.embeddings.assign(
        rng.normal(size=embedding.embeddings.shape).astype("float32")
    )
    tokens = np.array([[4, 2, 6, 0, 0], [1, 5, 3, 2, 6]], dtype="int32")
    table = keras.ops.convert_to_numpy(embedding.embeddings)
    # The float model masks all-zero steps: feed zeros where token 0 pads.
    embedded = table[tokens] * (tokens != 0)[..., None]
    float_model = kr.tuning.SequenceHyperModel(
        (None, 8), 1, masking=True
    ).build(_tiny_hyperparameters(num_layers=2, cell_type="coupled"))
    float_model.set_weights(model.get_weights()[1:])
    outputs = keras.ops.convert_to_numpy(model(tokens))
    np.testing.assert_allclose(
        outputs,
        keras.ops.convert_to_numpy(float_model(embedded)),
        atol=1e-6,
    )
    # Padding tokens do not change the output.
    np.testing.assert_allclose(
        outputs[0],
        keras.ops.convert_to_numpy(model(tokens[:1, :3]))[0],
        atol=1e-6,
    )
    unmasked = _token_model(False, embedding_dim=8, cell_type="coupled")
    unmasked.set_weights(model.get_weights())
    assert not np.allclose(
        keras.ops.convert_to_numpy(unmasked(tokens))[0], outputs[0], atol=1e-4
    )


@_IGNORE_OPTIMIZER_RELOAD
def test_search_on_token_ids(tmp_path):
    rng = np.random.default_rng(0)
    tokens = rng.integers(1, 7, size=(24, 6)).astype("int32")
    tokens[::2, 4:] = 0
    labels = (tokens == 3).sum(axis=1, keepdims=True).astype("float32")
    tuner = keras_tuner.RandomSearch(
        kr.tuning.SequenceHyperModel(
            (None,), 1, masking=True, vocabulary_size=7
        ),
        objective="val_loss",
        max_trials=1,
        # Only the embedding size is searched: one cheap trial.
        hyperparameters=_tiny_hyperparameters(
            num_layers=1,
            cell_type="coupled",
            dropout=0.0,
            recurrent_dropout=0.0,
        ),
        directory=tmp_path,
        overwrite=True,
        seed=0,
    )
    tuner.search(
        tokens[:16],
        labels[:16],
        validation_data=(tokens[16:], labels[16:]),
        epochs=1,
        batch_size=8,
        verbose=0,
    )
    (trial,) = tuner.oracle.get_best_trials(1)
    assert trial.status == "COMPLETED"
    assert 8 <= trial.hyperparameters.values["embedding_dim"] <= 128
    (best,) = tuner.get_best_models(1)
    val_loss = best.evaluate(tokens[16:], labels[16:], verbose=0)
    np.testing.assert_allclose(val_loss, trial.score, rtol=1e-5)


@pytest.mark.parametrize(
    ("fixed", "message"),
    [
        # Upstream: no recurrent layer, an output (None, 6, 1) broadcast
        # against the (batch, 1) targets.
        ({"num_layers": 0}, r"num_layers.*>= 1.*Received: num_layers=0"),
        (
            {"cell_type": "gru"},
            r"`cell_type` must be one of \['lstm', 'peephole'.*"
            r"Received: cell_type='gru'",
        ),
    ],
)
def test_bad_fixed_hyperparameters_raise(fixed, message):
    hypermodel = kr.tuning.SequenceHyperModel(INPUT_SHAPE, 1)
    with pytest.raises(ValueError, match=message):
        hypermodel.build(_tiny_hyperparameters(**fixed))


def test_fixed_cell_type_ignores_case():
    model = kr.tuning.SequenceHyperModel(INPUT_SHAPE, 1).build(
        _tiny_hyperparameters(cell_type="PEEPHOLE", num_layers=1)
    )
    (layer,) = _recurrent_layers(model)
    assert isinstance(layer, kr.layers.PeepholeLSTM)
    assert layer.name == "peephole_0"
