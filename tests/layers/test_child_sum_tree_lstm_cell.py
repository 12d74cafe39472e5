"""`kr.layers.ChildSumTreeLSTMCell`: one step against the equations, its
optional loop methods against its `call`, and run by `TreeRNN` against
the node-by-node reference."""

import keras
import numpy as np
import pytest
from keras import ops

import keras_recurrent as kr
from tests.layers import tree_lstm_cases as cases
from tests.layers import tree_reference as reference

CELL = kr.layers.ChildSumTreeLSTMCell
UNITS, FEATURES, NODES, SLOTS = 5, 3, 4, 3


def _step_inputs(seed=0):
    """`M = 4` nodes with up to 3 children: a leaf, one child, three, and
    two in the last slots; zeros in empty slots."""
    rng = np.random.default_rng(seed)
    child_mask = np.array(
        [[0, 0, 0], [1, 0, 0], [1, 1, 1], [0, 1, 1]], "float32"
    )
    x = rng.normal(size=(NODES, FEATURES)).astype("float32")
    child_h, child_c = (
        (rng.normal(size=(NODES, SLOTS, UNITS)) * child_mask[..., None]).astype(
            "float32"
        )
        for _ in range(2)
    )
    return x, [child_h, child_c], child_mask


def _cell(seed=0, **kwargs):
    cell = CELL(UNITS, **kwargs)
    cell.build((None, FEATURES))
    rng = np.random.default_rng(seed)
    cell.set_weights([rng.uniform(-0.6, 0.6, w.shape) for w in cell.weights])
    return cell


def _equations(x, child_states, child_mask, weights):
    """Tai et al.'s Child-Sum equations for each node, in NumPy."""
    kernel, recurrent, bias = (np.asarray(w, "float64") for w in weights)
    sigmoid = reference.sigmoid
    hs, cs = [], []
    for node in range(len(x)):
        kids = np.flatnonzero(child_mask[node])
        child_h, child_c = (s[node, kids] for s in child_states)
        z_i, z_f, z_o, z_u = np.split(x[node] @ kernel + bias, 4)
        u_i, u_f, u_o, u_u = np.split(recurrent, 4, axis=1)
        h_sum = child_h.sum(axis=0)
        c = sigmoid(z_i + h_sum @ u_i) * np.tanh(z_u + h_sum @ u_u)
        for h_k, c_k in zip(child_h, child_c):
            c = c + sigmoid(z_f + h_k @ u_f) * c_k
        hs.append(sigmoid(z_o + h_sum @ u_o) * np.tanh(c))
        cs.append(c)
    return np.stack(hs), np.stack(cs)


def test_one_step_matches_the_equations():
    cell = _cell()
    x, child_states, child_mask = _step_inputs()
    output, (h, c) = cell(x, child_states, child_mask)
    expected_h, expected_c = _equations(
        x, child_states, child_mask, cell.get_weights()
    )
    np.testing.assert_allclose(ops.convert_to_numpy(h), expected_h, atol=1e-5)
    np.testing.assert_allclose(ops.convert_to_numpy(c), expected_c, atol=1e-5)
    np.testing.assert_array_equal(
        ops.convert_to_numpy(output), ops.convert_to_numpy(h)
    )


def test_the_loop_methods_give_the_call():
    cell = _cell()
    x, child_states, child_mask = _step_inputs()
    h, c = cell(x, child_states, child_mask)[1]
    # The loop methods run inside `TreeRNN.call`, on tensors.
    child_states = [ops.convert_to_tensor(state) for state in child_states]
    loop_inputs, loop_state = cell.prepare_loop(
        x, np.arange(NODES, dtype="int32"), NODES
    )
    stepped = cell.step(loop_inputs, child_states, child_mask, loop_state)[1]
    for got, want in zip(stepped, (h, c), strict=True):
        np.testing.assert_allclose(
            ops.convert_to_numpy(got), ops.convert_to_numpy(want), atol=1e-6
        )
    # A leaf: `leaf_step` is the call with zero children.
    zeros = [np.zeros_like(state) for state in child_states]
    leaf = cell(x, zeros, np.zeros_like(child_mask))[1]
    for got, want in zip(cell.leaf_step(x)[1], leaf, strict=True):
        np.testing.assert_allclose(
            ops.convert_to_numpy(got), ops.convert_to_numpy(want), atol=1e-6
        )


def test_wide_inputs_are_projected_before_the_loop():
    # Inputs wider than their projections: `prepare_loop` projects them
    # all at once, the same numbers.
    cell = CELL(2)
    cell.build((None, 9))
    x = np.random.default_rng(1).normal(size=(3, 9)).astype("float32")
    loop_inputs, loop_state = cell.prepare_loop(x, np.zeros(3, "int32"), 1)
    assert "input_weights" not in loop_state
    assert tuple(loop_inputs["inputs"].shape) == (3, 8)
    child_states = [ops.zeros((3, 2, 2))] * 2
    np.testing.assert_allclose(
        ops.convert_to_numpy(
            cell.step(loop_inputs, child_states, None, loop_state)[0]
        ),
        ops.convert_to_numpy(cell.leaf_step(x)[0]),
        atol=1e-6,
    )


def test_tree_rnn_of_the_cell_matches_the_reference():
    inputs = reference.encode(reference.mixed_trees(), None, FEATURES)
    layer = kr.layers.TreeRNN(CELL(UNITS), return_nodes=True, return_state=True)
    layer.build([array.shape for array in inputs])
    weights = reference.random_weights(layer)
    expected = reference.expected_states(inputs, weights, "child_sum", UNITS)
    for state, want in zip(layer(inputs), expected, strict=True):
        np.testing.assert_allclose(ops.convert_to_numpy(state), want, atol=1e-5)


def test_weights_and_config():
    cell = CELL(4, seed=3, dropout=0.25, kernel_regularizer="l2")
    cell.build((None, 3))
    assert [(w.name, tuple(w.shape)) for w in cell.weights] == [
        ("kernel", (3, 16)),
        ("recurrent_kernel", (4, 16)),
        ("bias", (16,)),
    ]
    np.testing.assert_array_equal(  # Blocks [i, f, o, u], forget at 1.
        ops.convert_to_numpy(cell.bias), np.repeat([0.0, 1.0, 0.0, 0.0], 4)
    )
    assert cell.state_size == [4, 4] and cell.output_size == 4
    config = cell.get_config()
    assert CELL.from_config(config).get_config() == config
    layer_config = kr.layers.ChildSumTreeLSTM(4, seed=3).get_config()
    assert set(layer_config) - set(config) == {"return_nodes", "return_state"}


def test_dropout_in_training_only():
    cell = _cell(dropout=0.5, recurrent_dropout=0.5, seed=1)
    x, child_states, child_mask = _step_inputs()
    plain = ops.convert_to_numpy(cell(x, child_states, child_mask)[0])
    dropped = ops.convert_to_numpy(
        cell(x, child_states, child_mask, training=True)[0]
    )
    assert not np.allclose(plain, dropped) and np.all(np.isfinite(dropped))
    again = cell(x, child_states, child_mask, training=False)[0]
    np.testing.assert_array_equal(ops.convert_to_numpy(again), plain)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"units": 0}, "units=0"),
        ({"dropout": 1.0}, "dropout=1.0"),
        ({"seed": 1.5}, "seed=1.5"),
    ],
)
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        CELL(**{"units": 4, **kwargs})


def test_layer_weights_live_in_the_cell():
    layer, _ = cases.make_layer(kr.layers.ChildSumTreeLSTM, _tree_inputs())
    assert isinstance(layer.cell, CELL)
    assert layer.kernel is layer.cell.kernel
    assert [w.path for w in layer.weights] == [
        f"{layer.name}/cell/{name}"
        for name in ("kernel", "recurrent_kernel", "bias")
    ]
    assert layer.units == layer.cell.units == cases.UNITS
    with pytest.raises(AttributeError):
        layer.units = 3


def _tree_inputs():
    return reference.encode(reference.mixed_trees(), None, cases.FEATURES)


def test_keras_symbolic_call_gives_shapes():
    cell = CELL(UNITS)
    layer = kr.layers.TreeRNN(cell, return_nodes=True)
    outputs = layer(
        [
            keras.Input((None, FEATURES)),
            keras.Input((None, SLOTS), dtype="int32"),
            keras.Input((None,), dtype="int32"),
        ]
    )
    assert tuple(outputs.shape) == (None, None, UNITS)
