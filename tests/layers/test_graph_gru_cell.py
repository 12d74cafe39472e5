"""`GraphGRUCell`, the default node update of `GatedGraph`: Keras'
`GRUCell` with the step of `_gates.gru_step` and its two halves apart."""

import keras
import numpy as np
import pytest

from keras_recurrent.layers import _graph_gru_cell
from keras_recurrent.layers._graph_gru_cell import GraphGRUCell
from tests.layers import graph_reference as reference

UNITS, FEATURES = 4, 3


def _cells(reset_after, use_bias=True):
    ours = GraphGRUCell(UNITS, reset_after=reset_after, use_bias=use_bias)
    keras_cell = keras.layers.GRUCell(
        UNITS, reset_after=reset_after, use_bias=use_bias
    )
    for cell in (ours, keras_cell):
        cell.build((None, FEATURES))
    reference.randomize_weights(ours, seed=1)
    keras_cell.set_weights(ours.get_weights())
    return ours, keras_cell


@pytest.mark.parametrize("use_bias", [True, False])
@pytest.mark.parametrize("reset_after", [True, False])
def test_weights_and_steps_are_keras_gru_cell(reset_after, use_bias):
    ours, keras_cell = _cells(reset_after, use_bias)
    assert [w.name for w in ours.weights] == [
        w.name for w in keras_cell.weights
    ]
    sequences = np.random.default_rng(2).normal(size=(2, 5, FEATURES))
    sequences = sequences.astype("float32")
    outputs = [
        keras.ops.convert_to_numpy(
            keras.layers.RNN(cell, return_sequences=True)(sequences)
        )
        for cell in (ours, keras_cell)
    ]
    np.testing.assert_allclose(*outputs, atol=1e-5)


@pytest.mark.parametrize("per_gate", [True, False])
@pytest.mark.parametrize("reset_after", [True, False])
def test_halves_with_a_folded_kernel_are_one_call(reset_after, per_gate):
    # `input_projection(kernel, bias)` folds `values @ kernel + bias` into
    # the input kernel: the same step as calling the cell on that input.
    ours, _ = _cells(reset_after)
    rng = np.random.default_rng(3)
    values = rng.normal(size=(6, 5)).astype("float32")
    kernel = rng.normal(size=(5, FEATURES)).astype("float32")
    bias = rng.normal(size=(6, FEATURES)).astype("float32")  # a row each
    h = rng.normal(size=(6, UNITS)).astype("float32")
    expected, [state] = ours(values @ kernel + bias, [h])
    # The hooks are called inside `GatedGraph.call`, on tensors.
    values, kernel, bias, h = (
        keras.ops.convert_to_tensor(array)
        for array in (values, kernel, bias, h)
    )
    expected = keras.ops.convert_to_numpy(expected)
    np.testing.assert_allclose(expected, keras.ops.convert_to_numpy(state))
    update = ours.projected_update(per_gate)
    folded = ours.input_projection(per_gate, kernel, bias)(values)
    added = ours.input_projection(per_gate, bias=bias)(
        keras.ops.matmul(values, kernel)
    )
    for projections in (folded, added):
        np.testing.assert_allclose(
            keras.ops.convert_to_numpy(update(projections, h)),
            expected,
            atol=1e-5,
        )


def test_per_gate_and_wide_products_agree():
    # Outside XLA each gate takes a matmul of its own; under XLA one wide
    # matmul is split after. Same gate blocks, in the kernel's order.
    kernel = np.arange(12, dtype="float32").reshape(2, 6)
    bias = np.arange(6, dtype="float32")
    values = np.array([[1.0, -2.0]], "float32")
    wide = _graph_gru_cell.gate_product(kernel, bias, per_gate=False)
    split = _graph_gru_cell.gate_product(kernel, bias, per_gate=True)
    expected = np.split(values @ kernel + bias, 3, axis=-1)
    for products in (wide(values), split(values)):
        assert len(products) == 3
        for product, gate in zip(products, expected, strict=True):
            np.testing.assert_allclose(
                keras.ops.convert_to_numpy(product), gate
            )
