"""`kr.layers.NaryTreeLSTMCell`: one step against the equations, its
optional loop methods against its `call`, and run by `TreeRNN` against
the node-by-node reference."""

import numpy as np
import pytest
from keras import ops

import keras_recurrent as kr
from tests.layers import tree_reference as reference

CELL = kr.layers.NaryTreeLSTMCell
UNITS, FEATURES, ARITY = 4, 3, 3


def _step_inputs(seed=0):
    """A leaf, a node with its first child, one with all three, one with
    the last two; zeros in empty slots."""
    rng = np.random.default_rng(seed)
    child_mask = np.array(
        [[0, 0, 0], [1, 0, 0], [1, 1, 1], [0, 1, 1]], "float32"
    )
    x = rng.normal(size=(4, FEATURES)).astype("float32")
    child_h, child_c = (
        (rng.normal(size=(4, ARITY, UNITS)) * child_mask[..., None]).astype(
            "float32"
        )
        for _ in range(2)
    )
    return x, [child_h, child_c], child_mask


def _cell(**kwargs):
    cell = CELL(UNITS, arity=ARITY, **kwargs)
    cell.build((None, FEATURES))
    rng = np.random.default_rng(0)
    cell.set_weights([rng.uniform(-0.6, 0.6, w.shape) for w in cell.weights])
    return cell


def _equations(x, child_states, weights):
    """Tai et al.'s N-ary equations, slot by slot, in NumPy."""
    kernel, recurrent, bias = (np.asarray(w, "float64") for w in weights)
    sigmoid = reference.sigmoid
    child_h, child_c = child_states

    def u(row_slot, column_block):  # U block: child slot row, gate column.
        rows = slice(row_slot * UNITS, (row_slot + 1) * UNITS)
        columns = slice(column_block * UNITS, (column_block + 1) * UNITS)
        return recurrent[rows, columns]

    def term(node, column_block):
        return sum(
            child_h[node, slot] @ u(slot, column_block) for slot in range(ARITY)
        )

    hs, cs = [], []
    for node in range(len(x)):
        z_i, z_f, z_o, z_u = np.split(x[node] @ kernel + bias, 4)
        # Column blocks [i, f_1, ..., f_K, o, u].
        c = sigmoid(z_i + term(node, 0)) * np.tanh(z_u + term(node, ARITY + 2))
        for k in range(ARITY):
            c = c + sigmoid(z_f + term(node, 1 + k)) * child_c[node, k]
        hs.append(sigmoid(z_o + term(node, ARITY + 1)) * np.tanh(c))
        cs.append(c)
    return np.stack(hs), np.stack(cs)


def test_one_step_matches_the_equations():
    cell = _cell()
    x, child_states, child_mask = _step_inputs()
    output, (h, c) = cell(x, child_states, child_mask)
    expected_h, expected_c = _equations(x, child_states, cell.get_weights())
    np.testing.assert_allclose(ops.convert_to_numpy(h), expected_h, atol=1e-5)
    np.testing.assert_allclose(ops.convert_to_numpy(c), expected_c, atol=1e-5)
    np.testing.assert_array_equal(
        ops.convert_to_numpy(output), ops.convert_to_numpy(h)
    )


def test_the_leaf_step_is_the_call_without_children():
    cell = _cell()
    x, child_states, child_mask = _step_inputs()
    zeros = [np.zeros_like(state) for state in child_states]
    leaf = cell(x, zeros, np.zeros_like(child_mask))[1]
    for got, want in zip(cell.leaf_step(x)[1], leaf, strict=True):
        np.testing.assert_allclose(
            ops.convert_to_numpy(got), ops.convert_to_numpy(want), atol=1e-6
        )


@pytest.mark.parametrize("binarize", ["left", "right"])
def test_tree_rnn_of_the_cell_matches_the_reference(binarize):
    inputs = reference.encode(
        reference.mixed_trees(), 2, FEATURES, binarize=binarize
    )
    layer = kr.layers.TreeRNN(
        CELL(UNITS, arity=2), return_nodes=True, return_state=True
    )
    layer.build([array.shape for array in inputs])
    weights = reference.random_weights(layer)
    expected = reference.expected_states(inputs, weights, "nary", UNITS)
    for state, want in zip(layer(inputs), expected, strict=True):
        np.testing.assert_allclose(ops.convert_to_numpy(state), want, atol=1e-5)


def test_weights_and_config():
    cell = CELL(4, arity=3, use_bias=False)
    cell.build((None, 2))
    assert [(w.name, tuple(w.shape)) for w in cell.weights] == [
        ("kernel", (2, 16)),
        ("recurrent_kernel", (12, 24)),
    ]
    config = cell.get_config()
    assert config["arity"] == 3 and not config["use_bias"]
    assert CELL.from_config(config).get_config() == config
    layer = kr.layers.NaryTreeLSTM(4, arity=3)
    assert layer.arity == layer.cell.arity == 3
    assert layer.get_config()["arity"] == 3


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"arity": 0}, "arity=0"), ({"units": -1}, "units=-1")],
)
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        CELL(**{"units": 4, **kwargs})
