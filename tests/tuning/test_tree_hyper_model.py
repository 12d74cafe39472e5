import keras
import keras_tuner
import numpy as np
import pytest

import keras_recurrent as kr


def _trees(num_trees=16, seed=0):
    rng = np.random.default_rng(seed)
    trees = []
    for _ in range(num_trees):
        tree = str(int(rng.integers(10)))
        for _ in range(int(rng.integers(0, 3))):
            tree = ("1", tree, str(int(rng.integers(10))))
        trees.append(tree)
    return kr.trees.encode_trees(trees, num_children=2, num_nodes=7)


def _tiny(**fixed):
    hp = keras_tuner.HyperParameters()
    hp.Fixed("units", fixed.pop("units", 16))
    for name, value in fixed.items():
        hp.Fixed(name, value)
    return hp


def test_defaults():
    hp = keras_tuner.HyperParameters()
    model = kr.tuning.TreeHyperModel(2, 4, vocabulary_size=12).build(hp)
    assert hp.values == {
        "cell_type": "child_sum",
        "units": 64,
        "embedding_size": 32,
        "dropout": 0.0,
        "learning_rate": 1e-3,
    }
    tree_lstm = model.get_layer("child_sum")
    assert isinstance(tree_lstm, kr.layers.ChildSumTreeLSTM)
    assert (tree_lstm.units, tree_lstm.dropout) == (64, 0.0)
    assert model.get_layer("embedding").output_dim == 32
    # The schedule too: `encode_trees`' dicts carry it (the fast path
    # under XLA and on JAX).
    assert sorted(tensor.name for tensor in model.inputs) == [
        "children",
        "node_mask",
        "node_tokens",
        "tree_levels",
    ]
    assert model.output_shape == (None, 4)
    assert isinstance(model.loss, keras.losses.SparseCategoricalCrossentropy)
    np.testing.assert_allclose(float(model.optimizer.learning_rate), 1e-3)

    space = {entry.name: entry for entry in hp.space}
    assert space["cell_type"].values == ["child_sum", "nary"]
    units = space["units"]
    assert (units.min_value, units.max_value, units.step) == (16, 256, 16)
    assert space["learning_rate"].sampling == "log"


def test_fixed_values_override_the_search():
    hp = _tiny(cell_type="nary", dropout=0.25, learning_rate=1e-2)
    model = kr.tuning.TreeHyperModel(
        3, 1, node_features=5, task="regression"
    ).build(hp)
    tree_lstm = model.get_layer("nary")
    assert isinstance(tree_lstm, kr.layers.NaryTreeLSTM)
    assert (tree_lstm.units, tree_lstm.arity, tree_lstm.dropout) == (
        16,
        3,
        0.25,
    )
    assert "embedding_size" not in hp.values
    assert model.loss == "mse"
    np.testing.assert_allclose(float(model.optimizer.learning_rate), 1e-2)
    assert [entry.name for entry in hp.space if entry.name == "units"] == [
        "units"
    ]
    assert hp.values["units"] == 16


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        ((0, 2), {"vocabulary_size": 5}, "num_children=0"),
        ((2, 1), {"vocabulary_size": 5}, "integer >= 2"),
        ((2, 2), {}, "Exactly one"),
        ((2, 2), {"vocabulary_size": 5, "node_features": 3}, "Exactly one"),
        ((2, 2), {"vocabulary_size": 5, "task": "ranking"}, "task='ranking'"),
        ((2, 2), {"vocabulary_size": 0}, "vocabulary_size=0"),
        ((2, 2), {"vocabulary_size": 5, "num_nodes": -1}, "num_nodes=-1"),
    ],
)
def test_bad_arguments(args, kwargs, message):
    with pytest.raises(ValueError, match=message):
        kr.tuning.TreeHyperModel(*args, **kwargs)


@pytest.mark.filterwarnings(
    "ignore:Skipping variable loading for optimizer:UserWarning"
)
def test_random_search(tmp_path):
    trees = _trees(24)
    labels = (trees["node_mask"].sum(axis=1) > 3).astype("int32")
    tuner = keras_tuner.RandomSearch(
        kr.tuning.TreeHyperModel(2, 2, vocabulary_size=10, num_nodes=7),
        objective="val_loss",
        max_trials=2,
        hyperparameters=_tiny(embedding_size=8),
        directory=tmp_path,
        overwrite=True,
        seed=1,
    )
    tuner.search(
        trees, labels, epochs=1, batch_size=8, validation_split=0.25, verbose=0
    )
    trials = list(tuner.oracle.trials.values())
    assert len(trials) == 2
    assert all(trial.status == "COMPLETED" for trial in trials)
    (best,) = tuner.get_best_models(1)
    assert best(trees).shape == (24, 2)


@pytest.mark.parametrize("cell_type", ["child-sum", "lstm"])
def test_unknown_fixed_cell_type_raises(cell_type):
    # Upstream "child-sum" (a typo) silently built a ChildSumTreeLSTM.
    hypermodel = kr.tuning.TreeHyperModel(2, 4, vocabulary_size=12)
    with pytest.raises(
        ValueError,
        match=r"`cell_type` must be one of \['child_sum', 'nary'\].*"
        f"Received: cell_type='{cell_type}'",
    ):
        hypermodel.build(_tiny(cell_type=cell_type))


def test_fixed_cell_type_ignores_case():
    model = kr.tuning.TreeHyperModel(2, 4, vocabulary_size=12).build(
        _tiny(cell_type="NARY")
    )
    assert isinstance(model.get_layer("nary"), kr.layers.NaryTreeLSTM)
