import keras
import keras_tuner
import numpy as np
import pytest

import keras_recurrent as kr


def _graphs(num_graphs=16, seed=0):
    rng = np.random.default_rng(seed)
    graphs = []
    for _ in range(num_graphs):
        num_nodes = int(rng.integers(2, 6))
        edges = [
            (int(rng.integers(num_nodes)), int(rng.integers(num_nodes)), 0)
            for _ in range(3)
        ]
        graphs.append(
            {"edges": edges, "node_inputs": rng.normal(size=(num_nodes, 2))}
        )
    return kr.graphs.encode_graphs(graphs, num_nodes=5, num_edges=3)


def _tiny(**fixed):
    hp = keras_tuner.HyperParameters()
    hp.Fixed("units", fixed.pop("units", 16))
    hp.Fixed("propagation_steps", fixed.pop("propagation_steps", 1))
    for name, value in fixed.items():
        hp.Fixed(name, value)
    return hp


def _layer_types(model):
    return [type(layer) for layer in model.layers]


def test_defaults():
    hypermodel = kr.tuning.GraphHyperModel(2, 3, output_units=4)
    hp = keras_tuner.HyperParameters()
    model = hypermodel.build(hp)
    assert hp.values == {
        "units": 64,
        "propagation_steps": 5,
        "readout": "gated",
        "propagation": "sum",
        "learning_rate": 1e-3,
    }
    gated_graph = model.get_layer("gated_graph")
    assert isinstance(gated_graph, kr.layers.GatedGraph)
    assert (gated_graph.units, gated_graph.num_edge_types) == (64, 3)
    assert gated_graph.propagation_steps == 5 and gated_graph.add_reverse_edges
    assert not gated_graph.concatenate_directions and gated_graph.reset_after
    assert isinstance(model.get_layer("readout"), kr.layers.GraphReadout)
    assert model.get_layer("readout").units == 64
    assert sorted(tensor.name for tensor in model.inputs) == sorted(
        kr.graphs.GRAPH_TENSOR_NAMES
    )
    assert model.output_shape == (None, 4)
    assert isinstance(model.loss, keras.losses.SparseCategoricalCrossentropy)
    assert model.loss.get_config()["from_logits"]
    np.testing.assert_allclose(float(model.optimizer.learning_rate), 1e-3)


def test_search_space():
    hp = keras_tuner.HyperParameters()
    kr.tuning.GraphHyperModel(2, 1, output_units=2).build(hp)
    space = {entry.name: entry for entry in hp.space}
    units = space["units"]
    assert (units.min_value, units.max_value, units.step) == (16, 256, 16)
    steps = space["propagation_steps"]
    assert (steps.min_value, steps.max_value) == (1, 10)
    assert space["readout"].values == ["gated", "mean", "max", "attention"]
    assert space["propagation"].values == ["sum", "paper"]
    rate = space["learning_rate"]
    assert (rate.min_value, rate.max_value, rate.sampling) == (
        1e-4,
        1e-2,
        "log",
    )
    # Node states start as the annotations: units must hold them.
    wide = keras_tuner.HyperParameters()
    kr.tuning.GraphHyperModel(70, 1, output_units=2).build(wide)
    assert wide.values["units"] == 80
    assert {entry.name: entry for entry in wide.space}["units"].min_value == 80


@pytest.mark.parametrize("readout", ["mean", "max", "attention"])
def test_fixed_readout_overrides_the_search(readout):
    hp = _tiny(readout=readout)
    model = kr.tuning.GraphHyperModel(
        2, 1, task="graph_regression", output_units=1
    ).build(hp)
    pooling = model.get_layer("readout")
    assert isinstance(pooling, kr.layers.SequencePooling)
    assert pooling.mode == readout
    assert model.loss == "mse"
    assert model.output_shape == (None, 1)
    outputs = np.asarray(model(_graphs(4)))
    assert outputs.shape == (4, 1) and np.all(np.isfinite(outputs))


def test_paper_propagation():
    # The paper's Eq. 2: forward and reverse sums side by side, the reset
    # gate before the recurrent matmul; for GG-NNs and GGS-NNs alike.
    hp = _tiny(propagation="paper")
    model = kr.tuning.GraphHyperModel(2, 3, output_units=2).build(hp)
    gated_graph = model.get_layer("gated_graph")
    assert gated_graph.concatenate_directions and not gated_graph.reset_after
    # The GRU reads 2 * units: the forward and the reverse sums.
    assert tuple(gated_graph.gru.kernel.shape) == (32, 48)
    sequence = kr.tuning.GraphHyperModel(
        2, 1, task="node_selection", output_steps=2, num_nodes=5
    ).build(_tiny(propagation="paper"))
    ggsnn = sequence.get_layer("ggsnn")
    assert ggsnn.concatenate_directions and not ggsnn.reset_after
    assert np.all(np.isfinite(np.asarray(sequence(_graphs(4)))))
    # Without reverse edges there is nothing to concatenate: no choice.
    forward_only = keras_tuner.HyperParameters()
    kr.tuning.GraphHyperModel(
        2, 1, output_units=2, add_reverse_edges=False
    ).build(forward_only)
    assert "propagation" not in forward_only.values


def test_node_selection_and_sequence_models():
    hp = _tiny()
    selection = kr.tuning.GraphHyperModel(
        2, 1, task="node_selection", num_nodes=5
    ).build(hp)
    assert "readout" not in hp.values
    assert kr.layers.NodeSelection in _layer_types(selection)
    assert selection.output_shape == (None, 5)

    path = kr.tuning.GraphHyperModel(
        2, 1, task="node_selection", output_steps=3, num_nodes=5
    ).build(_tiny())
    ggsnn = path.get_layer("ggsnn")
    assert isinstance(ggsnn, kr.layers.GGSNN)
    assert (ggsnn.output_steps, ggsnn.task) == (3, "node_selection")
    assert path.output_shape == (None, 3, 5)

    directions = kr.tuning.GraphHyperModel(
        2, 1, output_units=4, output_steps=2
    ).build(_tiny())
    assert directions.get_layer("ggsnn").num_classes == 4
    assert directions.output_shape == (None, 2, 4)


def test_built_models_train():
    graphs = _graphs()
    answers = np.ones(16, dtype="int32")  # every graph has a node 1
    model = kr.tuning.GraphHyperModel(
        2, 1, task="node_selection", num_nodes=5
    ).build(_tiny(learning_rate=1e-2))
    model.run_eagerly = True
    first = model.train_on_batch(graphs, answers, return_dict=True)["loss"]
    for _ in range(5):
        logs = model.train_on_batch(graphs, answers, return_dict=True)
    last = logs["loss"]
    assert np.isfinite(first) and last < first


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        ((0, 1), {"output_units": 2}, "node_features=0"),
        ((2, None), {"output_units": 2}, "num_edge_types=None"),
        ((2, 1), {"task": "regression"}, "task='regression'"),
        ((2, 1), {}, "output_units=None"),
        ((2, 1), {"output_units": 1}, "integer >= 2"),
        ((2, 1), {"task": "node_selection", "output_units": 3}, "must be None"),
        (
            (2, 1),
            {"task": "graph_regression", "output_units": 1, "output_steps": 2},
            "output_steps=2, task='graph_regression'",
        ),
        ((2, 1), {"output_units": 2, "output_steps": 0}, "output_steps=0"),
        ((2, 1), {"output_units": 2, "num_nodes": 0}, "num_nodes=0"),
        ((2, 1), {"output_units": 2, "add_reverse_edges": 1}, "=1"),
    ],
)
def test_bad_arguments(args, kwargs, message):
    with pytest.raises(ValueError, match=message):
        kr.tuning.GraphHyperModel(*args, **kwargs)


@pytest.mark.filterwarnings(
    "ignore:Skipping variable loading for optimizer:UserWarning"
)
def test_random_search(tmp_path):
    graphs = _graphs(24)
    labels = (graphs["node_mask"].sum(axis=1) > 3).astype("int32")
    tuner = keras_tuner.RandomSearch(
        kr.tuning.GraphHyperModel(2, 1, output_units=2, num_nodes=5),
        objective="val_loss",
        max_trials=2,
        hyperparameters=_tiny(),
        directory=tmp_path,
        overwrite=True,
        seed=0,
    )
    tuner.search(
        graphs, labels, epochs=1, batch_size=8, validation_split=0.25, verbose=0
    )
    trials = list(tuner.oracle.trials.values())
    assert len(trials) == 2
    assert all(trial.status == "COMPLETED" for trial in trials)
    (best,) = tuner.get_best_models(1)
    assert best(graphs).shape == (24, 2)


@pytest.mark.parametrize(
    ("fixed", "message"),
    [
        (
            {"propagation": "max"},
            r"`propagation` must be one of \['sum', 'paper'\].*"
            r"Received: propagation='max'",
        ),
        (
            {"readout": "median"},
            r"`readout` must be one of \['gated', 'mean', 'max', "
            r"'attention'\].*Received: readout='median'",
        ),
    ],
)
def test_bad_fixed_hyperparameters_raise(fixed, message):
    hypermodel = kr.tuning.GraphHyperModel(2, 1, output_units=2)
    with pytest.raises(ValueError, match=message):
        hypermodel.build(_tiny(**fixed))


def test_fixed_choices_ignore_case():
    model = kr.tuning.GraphHyperModel(2, 1, output_units=2).build(
        _tiny(propagation="PAPER", readout="Max")
    )
    gated_graph = model.get_layer("gated_graph")
    assert gated_graph.concatenate_directions
    assert isinstance(model.get_layer("readout"), kr.layers.SequencePooling)
