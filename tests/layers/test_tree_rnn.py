"""`kr.layers.TreeRNN` over a cell that has only the tree-cell contract
(`state_size`, `output_size`, `build`, `call`, `get_config`): eager,
compiled, fed a schedule or not, trained, saved; and over the package's
own cells."""

import warnings

import keras
import numpy as np
import pytest
from keras import ops

import keras_recurrent as kr
from keras_recurrent.layers import tree_rnn
from tests.layers import tree_lstm_cases as cases
from tests.layers import tree_reference as reference

UNITS, FEATURES = 4, 3


@keras.saving.register_keras_serializable(package="tests")
class MeanTreeRNNCell(keras.layers.Layer):
    """`h = tanh(x W + mean_k(h_k) U + b)`, the mean over the real
    children (`child_mask`); the output is `output_scale * h`."""

    def __init__(self, units, output_scale=None, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.output_scale = output_scale
        self.state_size = units
        self.output_size = units

    def build(self, input_shape):
        self.kernel = self.add_weight(
            shape=(input_shape[-1], self.units), name="kernel"
        )
        self.recurrent_kernel = self.add_weight(
            shape=(self.units, self.units), name="recurrent_kernel"
        )
        self.bias = self.add_weight(shape=(self.units,), name="bias")

    def call(self, inputs, child_states, child_mask, training=False):
        count = ops.maximum(ops.sum(child_mask, axis=1, keepdims=True), 1.0)
        child_mean = ops.sum(child_states[0], axis=1) / count
        h = ops.tanh(
            ops.matmul(inputs, self.kernel)
            + ops.matmul(child_mean, self.recurrent_kernel)
            + self.bias
        )
        output = h if self.output_scale is None else self.output_scale * h
        return output, [h]

    def get_config(self):
        return {
            **super().get_config(),
            "units": self.units,
            "output_scale": self.output_scale,
        }


def mean_cell_reference(inputs, weights, output_scale=None):
    """Every node's output `(B, N, units)`, tree by tree, node by node (the
    encoders' order: children first), zeros at padding."""
    node_inputs, children, node_mask = inputs
    kernel, recurrent_kernel, bias = weights
    outputs = np.zeros(node_mask.shape + (kernel.shape[1],))
    for tree in range(len(node_mask)):
        h = {}
        for node in range(int(node_mask[tree].sum())):
            kids = [k for k in children[tree, node] if k >= 0]
            child_mean = (
                np.mean([h[k] for k in kids], axis=0)
                if kids
                else np.zeros(kernel.shape[1])
            )
            h[node] = np.tanh(
                node_inputs[tree, node] @ kernel
                + child_mean @ recurrent_kernel
                + bias
            )
            outputs[tree, node] = h[node] * (output_scale or 1.0)
    return outputs


def _inputs():
    return reference.encode(
        reference.mixed_trees() + [("a", ("b", "c"), "d")], None, FEATURES
    )


def _layer(inputs, output_scale=None, **kwargs):
    layer = kr.layers.TreeRNN(
        MeanTreeRNNCell(UNITS, output_scale=output_scale), **kwargs
    )
    layer.build([array.shape for array in inputs])
    rng = np.random.default_rng(0)
    layer.set_weights(
        [rng.uniform(-0.8, 0.8, w.shape) for w in layer.get_weights()]
    )
    return layer, [np.asarray(w, "float64") for w in layer.get_weights()]


def _roots(nodes, node_mask):
    return nodes[np.arange(len(node_mask)), node_mask.sum(axis=1) - 1]


@pytest.mark.parametrize("output_scale", [None, 2.0])
def test_a_minimal_cell_matches_its_reference(output_scale):
    # `output_scale`: an output other than the first state, which the
    # loop then keeps in an array of its own.
    inputs = _inputs()
    layer, weights = _layer(inputs, output_scale, return_nodes=True)
    expected = mean_cell_reference(inputs, weights, output_scale)
    nodes = ops.convert_to_numpy(layer(inputs))
    np.testing.assert_allclose(nodes, expected, atol=1e-5)
    assert np.all(nodes[inputs[2] == 0] == 0.0)
    roots = kr.layers.TreeRNN(layer.cell)(inputs)
    np.testing.assert_allclose(
        ops.convert_to_numpy(roots), _roots(expected, inputs[2]), atol=1e-5
    )
    state_layer = kr.layers.TreeRNN(layer.cell, return_state=True)
    outputs = state_layer(inputs)
    assert isinstance(outputs, list) and len(outputs) == 1
    assert state_layer.compute_output_shape(
        [array.shape for array in inputs]
    ) == [(len(inputs[2]), UNITS)]


@pytest.mark.parametrize("levels", [False, True])
def test_a_minimal_cell_compiled_matches_its_reference(levels):
    # XLA on TensorFlow, `jax.jit` on JAX (the static-shape path, fed the
    # host schedule or deriving one); PyTorch runs eagerly.
    inputs = _inputs()
    layer, weights = _layer(inputs, return_nodes=True)
    expected = mean_cell_reference(inputs, weights)
    model_inputs = kr.trees.tree_inputs(
        inputs[1].shape[2], node_features=FEATURES, levels=levels
    )
    model = keras.Model(model_inputs, layer(model_inputs))
    feeds = cases.model_feeds(inputs)
    if not levels:
        del feeds["tree_levels"]
    model.compile(jit_compile=keras.backend.backend() != "torch")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # The warning without a schedule.
        nodes = model.predict(feeds, verbose=0)
    np.testing.assert_allclose(nodes, expected, atol=1e-5)


def test_a_minimal_cell_trains_alike_compiled_and_not():
    inputs = _inputs()
    feeds = cases.model_feeds(inputs)
    targets = np.linspace(-1, 1, len(inputs[2]), dtype="float32")[:, None]
    results = []
    for jit_compile in (False, keras.backend.backend() != "torch"):
        layer, _ = _layer(inputs)
        model_inputs = kr.trees.tree_inputs(
            inputs[1].shape[2], node_features=FEATURES
        )
        model = keras.Model(
            model_inputs,
            keras.layers.Dense(1, kernel_initializer="ones")(
                layer(model_inputs)
            ),
        )
        model.compile(
            keras.optimizers.SGD(0.05), "mse", jit_compile=jit_compile
        )
        losses = [float(model.train_on_batch(feeds, targets)) for _ in range(3)]
        results.append((losses, model.get_weights()))
    (losses, weights), (compiled_losses, compiled_weights) = results
    assert losses[-1] < losses[0]
    np.testing.assert_allclose(compiled_losses, losses, rtol=1e-5)
    for got, want in zip(compiled_weights, weights, strict=True):
        np.testing.assert_allclose(got, want, atol=1e-5)


def test_saves_and_loads_with_its_cell(tmp_path):
    inputs = _inputs()
    layer, weights = _layer(inputs, return_nodes=True, name="tree")
    config = layer.get_config()
    assert config["cell"]["class_name"] == "MeanTreeRNNCell"
    clone = kr.layers.TreeRNN.from_config(config)
    assert clone.get_config() == config and clone.return_nodes
    model_inputs = kr.trees.tree_inputs(
        inputs[1].shape[2], node_features=FEATURES
    )
    model = keras.Model(model_inputs, layer(model_inputs))
    model.save(tmp_path / "tree_rnn.keras")
    loaded = keras.saving.load_model(tmp_path / "tree_rnn.keras")
    np.testing.assert_allclose(
        ops.convert_to_numpy(loaded(cases.model_feeds(inputs))),
        mean_cell_reference(inputs, weights),
        atol=1e-5,
    )


def test_runs_the_package_cells_like_their_layers():
    inputs = reference.encode(reference.mixed_trees(), None, FEATURES)
    layer = kr.layers.ChildSumTreeLSTM(UNITS, return_nodes=True)
    layer.build([array.shape for array in inputs])
    reference.random_weights(layer)
    cell = kr.layers.ChildSumTreeLSTMCell(UNITS)
    rnn = kr.layers.TreeRNN(cell, return_nodes=True)
    rnn.build([array.shape for array in inputs])
    rnn.set_weights(layer.get_weights())
    np.testing.assert_allclose(
        ops.convert_to_numpy(rnn(inputs)),
        ops.convert_to_numpy(layer(inputs)),
        atol=1e-6,
    )


def test_refuses_a_layer_that_is_no_tree_cell():
    with pytest.raises(ValueError, match="tree cell.*output_size"):
        kr.layers.TreeRNN(keras.layers.Dense(3))
    with pytest.raises(ValueError, match="return_nodes=1"):
        kr.layers.TreeRNN(MeanTreeRNNCell(2), return_nodes=1)


def test_a_cell_arity_fixes_the_child_slots():
    inputs = reference.encode(reference.mixed_trees(), None, FEATURES)
    layer = kr.layers.TreeRNN(kr.layers.NaryTreeLSTMCell(UNITS, arity=2))
    with pytest.raises(ValueError, match="arity"):
        layer(inputs)


def _caught(function):
    """The messages of the warnings `function` gives (not the deprecations
    of the libraries underneath)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        function()
    return [
        str(warning.message)
        for warning in caught
        if not issubclass(warning.category, DeprecationWarning)
    ]


def test_warns_once_without_a_schedule_where_it_is_read(monkeypatch):
    inputs = _inputs()
    feeds = cases.model_feeds(inputs)
    three = [feeds[name] for name in kr.trees.TREE_TENSOR_NAMES]
    layer, _ = _layer(inputs)
    if keras.backend.backend() != "jax":
        # Dynamic shapes (TensorFlow without XLA, PyTorch) read none.
        monkeypatch.setattr(tree_rnn, "in_xla_context", lambda: False)
        assert not _caught(lambda: layer(three))
    # Static shapes (XLA, JAX): a warning with the cost and the fix, once.
    monkeypatch.setattr(tree_rnn, "in_xla_context", lambda: True)
    assert not _caught(lambda: layer({**feeds, "node_inputs": inputs[0]}))
    messages = _caught(lambda: layer(three))
    assert len(messages) == 1
    assert "tree_levels" in messages[0] and "slower" in messages[0]
    assert tree_rnn.UNSCHEDULED_COST in messages[0]
    assert not _caught(lambda: layer(three))
    other, _ = _layer(inputs)
    assert len(_caught(lambda: other(three))) == 1


def test_the_default_model_takes_encode_trees_as_it_is():
    # `tree_inputs`' defaults, every input passed to the layer as a dict:
    # `encode_trees`' dict feeds it with no warning, compiled or not (no
    # schedule warning, no Keras "structure of inputs" warning).
    texts = ["(1 2 3)", "(4 (5 6) 7 8)", "5", "(1 (2 (3 4)))"]
    batch = kr.trees.encode_trees(texts, num_children=3)
    assert "tree_levels" in batch
    inputs = kr.trees.tree_inputs(3)
    embedded = keras.layers.Embedding(10, FEATURES)(inputs["node_tokens"])
    tree_tensors = {**inputs, "node_inputs": embedded}
    del tree_tensors["node_tokens"]
    root = kr.layers.ChildSumTreeLSTM(UNITS)(tree_tensors)
    model = keras.Model(inputs, keras.layers.Dense(1)(root))
    targets = np.ones((len(texts), 1), "float32")
    predictions = []
    for jit_compile in (False, keras.backend.backend() != "torch"):
        model.compile("sgd", "mse", jit_compile=jit_compile)
        messages = _caught(
            lambda: predictions.append(model.predict(batch, verbose=0))
        )
        assert not messages, messages
    np.testing.assert_allclose(predictions[1], predictions[0], atol=1e-5)
    messages = _caught(lambda: model.fit(batch, targets, epochs=1, verbose=0))
    assert not messages, messages
