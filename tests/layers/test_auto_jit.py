"""Keras' `jit_compile="auto"` on a machine with a GPU, for every layer.

`Trainer._resolve_auto_jit_compile` turns XLA on when
`tf.config.list_physical_devices()` lists a non-CPU device and every layer
of the model has `supports_jit` true on its instance (`model_supports_jit`).
No layer of the package opts out, since each compiles (the sequence and
tree families are checked in `test_sequence_xla.py` and
`test_tree_lstm_xla.py`): so on a GPU, `"auto"` must pick XLA for a model of
any of them. The GPU is simulated here by listing a fake one.

The graph family's parity under XLA (`fit`, `predict`, `evaluate`) is
checked here too.
"""

import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_recurrent as kr
from tests.layers import graph_reference

UNITS, STEPS, FEATURES = 4, 5, 3
NUM_EDGE_TYPES = 2


def _sequence_model(make_layer):
    def build():
        inputs = keras.Input((STEPS, FEATURES))
        outputs = make_layer()(keras.layers.Masking()(inputs))
        return keras.Model(inputs, outputs)

    return build


def _tree_model(cls, width, **kwargs):
    def build():
        inputs = kr.trees.tree_inputs(width, node_features=FEATURES)
        states = cls(UNITS, **kwargs)(list(inputs.values()))
        return keras.Model(inputs, states)

    return build


def _graph_model(head=None):
    def build():
        inputs = kr.graphs.graph_inputs(FEATURES)
        if head == "ggsnn":
            outputs = kr.layers.GGSNN(
                UNITS, NUM_EDGE_TYPES, 2, propagation_steps=2
            )(inputs)
            return keras.Model(inputs, outputs)
        states = kr.layers.GatedGraph(
            UNITS, NUM_EDGE_TYPES, propagation_steps=2
        )(inputs)
        readouts = [states, inputs["node_inputs"], inputs["node_mask"]]
        if head == "readout":
            states = kr.layers.GraphReadout(UNITS)(readouts)
        elif head == "node_selection":
            states = kr.layers.NodeSelection()(readouts)
        return keras.Model(inputs, states)

    return build


MODELS = {
    "peephole": _sequence_model(lambda: kr.layers.PeepholeLSTM(UNITS)),
    "coupled": _sequence_model(lambda: kr.layers.CoupledLSTM(UNITS)),
    "lstm_variant": _sequence_model(
        lambda: kr.layers.LSTMVariant(UNITS, variant="FGR")
    ),
    "peephole_cell_in_rnn": _sequence_model(
        lambda: keras.layers.RNN(kr.layers.PeepholeLSTMCell(UNITS))
    ),
    "bidirectional_gated_feedback": _sequence_model(
        lambda: keras.layers.Bidirectional(
            kr.layers.GatedFeedbackRNN(UNITS, num_layers=2)
        )
    ),
    "residual_stack": _sequence_model(
        lambda: kr.layers.ResidualStack(
            [kr.layers.PeepholeLSTMCell(UNITS)], return_sequences=False
        )
    ),
    "truncated": _sequence_model(
        lambda: kr.layers.TruncatedRNN(kr.layers.PeepholeLSTM(UNITS), 2)
    ),
    "attention_pooling": _sequence_model(
        lambda: kr.layers.SequencePooling("attention")
    ),
    "child_sum_tree_lstm": _tree_model(kr.layers.ChildSumTreeLSTM, 3),
    "nary_tree_lstm": _tree_model(kr.layers.NaryTreeLSTM, 2, arity=2),
    "gated_graph": _graph_model(),
    "graph_readout": _graph_model("readout"),
    "node_selection": _graph_model("node_selection"),
    "ggsnn": _graph_model("ggsnn"),
}


@pytest.fixture
def fake_gpu(monkeypatch):
    """`tf.config.list_physical_devices` as on a machine with one GPU."""
    listed = tf.config.list_physical_devices()
    gpu = tf.config.PhysicalDevice("/physical_device:GPU:0", "GPU")

    def list_physical_devices(device_type=None):
        if device_type is None:
            return listed + [gpu]
        if device_type == "GPU":
            return [gpu]
        return [d for d in listed if d.device_type == device_type]

    monkeypatch.setattr(
        tf.config, "list_physical_devices", list_physical_devices
    )
    return monkeypatch


@pytest.mark.parametrize("name", sorted(MODELS))
def test_auto_picks_xla_on_a_gpu_for_every_layer(name, fake_gpu):
    model = MODELS[name]()
    layers = [
        layer
        for layer in model._flatten_layers()
        if type(layer).__module__.startswith("keras_recurrent.")
    ]
    assert layers, "the model holds a layer of the package"
    assert all(layer.supports_jit for layer in layers)
    model.compile(optimizer="sgd", loss="mse")
    assert model.jit_compile is True
    # ... and on this CPU-only machine, without the fake GPU, it does not.
    fake_gpu.undo()
    model.compile(optimizer="sgd", loss="mse")
    assert model.jit_compile is False


def _graphs():
    return {
        name: np.array(array)
        for name, array in graph_reference.random_graphs(
            num_edge_types=NUM_EDGE_TYPES, features=FEATURES
        ).items()
    }


def _targets_and_loss(name, model, graphs):
    shape = np.asarray(model(graphs)).shape
    if name in ("node_selection", "ggsnn"):
        # Logits over nodes, -1e9 at padding: select node 0 (real in every
        # graph), one per output step.
        targets = np.zeros(shape[:-1], "int32")
        return targets, keras.losses.SparseCategoricalCrossentropy(
            from_logits=True
        )
    targets = np.random.default_rng(1).normal(size=shape).astype("float32")
    return targets, "mse"


# XLA compiles a training step per model: 15 s (GatedGraph) to 55 s (GGSNN)
# on a busy 2-core machine. The default run compiles GatedGraph under XLA
# in `test_graph_bad_inputs.py`.
@pytest.mark.slow
@pytest.mark.parametrize(
    "name", ["gated_graph", "graph_readout", "node_selection", "ggsnn"]
)
def test_graph_layers_fit_predict_evaluate_under_xla_as_without(name):
    graphs = _graphs()
    keras.utils.set_random_seed(0)
    plain = MODELS[name]()
    compiled = MODELS[name]()
    initial = plain.get_weights()
    compiled.set_weights(initial)
    targets, loss_function = _targets_and_loss(name, plain, graphs)
    results = []
    for model, jit in ((plain, False), (compiled, True)):
        model.compile(
            optimizer=keras.optimizers.SGD(0.1),
            loss=loss_function,
            jit_compile=jit,
        )
        history = model.fit(
            graphs, targets, batch_size=3, epochs=3, shuffle=False, verbose=0
        )
        results.append(
            (
                history.history["loss"],
                model.get_weights(),
                model.predict(graphs, verbose=0),
                model.evaluate(graphs, targets, verbose=0),
            )
        )
    (losses, weights, predictions, loss), expected = results[1], results[0]
    np.testing.assert_allclose(losses, expected[0], atol=1e-5)
    for weight, expected_weight in zip(weights, expected[1], strict=True):
        np.testing.assert_allclose(weight, expected_weight, atol=1e-5)
    np.testing.assert_allclose(predictions, expected[2], atol=1e-5)
    np.testing.assert_allclose(loss, expected[3], atol=1e-5)
    assert losses[-1] < losses[0]
    assert not all(
        np.allclose(w, w0) for w, w0 in zip(weights, initial, strict=True)
    )
