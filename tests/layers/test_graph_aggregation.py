"""The message sums of `keras_recurrent/layers/_graph_aggregation.py`,
sparse and dense, against sums written edge by edge."""

import keras
import numpy as np
import pytest

from keras_recurrent.layers import _graph_aggregation as aggregation
from tests.layers import graph_reference as reference

UNITS = 3


def _prepared(seed, num_edge_types):
    graphs = reference.random_graphs(seed, num_edge_types=num_edge_types)
    edges = np.asarray(graphs["edges"], "int32")
    types = np.where(edges[..., 0] >= 0, graphs["edge_types"], 0)
    return edges, types.astype("int32")


def _numpy_sums(edges, types, num_edge_types, reverse, states):
    """`(B * N, T, units)` per-type sums of the states, edge by edge."""
    batch_size, num_nodes = edges.shape[0], states.shape[0] // edges.shape[0]
    num_types = num_edge_types * (2 if reverse else 1)
    sums = np.zeros((batch_size * num_nodes, num_types, states.shape[-1]))
    for graph in range(batch_size):
        offset = graph * num_nodes
        for (source, target), edge_type in zip(
            edges[graph], types[graph], strict=True
        ):
            if source < 0:
                continue
            sums[offset + target, edge_type] += states[offset + source]
            if reverse:
                sums[offset + source, edge_type + num_edge_types] += states[
                    offset + target
                ]
    return sums


@pytest.mark.parametrize("num_directions", [1, 2])
@pytest.mark.parametrize("sums_class", ["SparseSums", "DenseSums"])
def test_sums_match_the_edges(sums_class, num_directions):
    num_edge_types, reverse = 2, True
    edges, types = _prepared(3, num_edge_types)
    batch_size, num_nodes = edges.shape[0], 6
    rng = np.random.default_rng(0)
    states = rng.normal(size=(batch_size * num_nodes, UNITS))
    kernel = rng.normal(size=(2 * num_edge_types, UNITS, UNITS))
    sums = getattr(aggregation, sums_class)(
        keras.ops.convert_to_tensor(edges),
        keras.ops.convert_to_tensor(types),
        batch_size,
        num_nodes,
        num_edge_types,
        reverse,
        "float32",
    )
    expected = _numpy_sums(edges, types, num_edge_types, reverse, states)
    states32 = keras.ops.convert_to_tensor(states.astype("float32"))
    kernel32 = keras.ops.convert_to_tensor(kernel.astype("float32"))

    per_type = keras.ops.convert_to_numpy(sums.per_type_sums()(states32))
    np.testing.assert_allclose(
        per_type, expected.reshape(len(states), -1), atol=1e-5
    )
    messages = np.einsum("ntu,tuv->ntv", expected, kernel)
    if num_directions == 2:
        messages = np.concatenate(
            [
                messages[:, :num_edge_types].sum(1),
                messages[:, num_edge_types:].sum(1),
            ],
            axis=-1,
        )
    else:
        messages = messages.sum(1)
    np.testing.assert_allclose(
        keras.ops.convert_to_numpy(
            sums.message_sums(kernel32, num_directions)(states32)
        ),
        messages,
        atol=1e-4,
    )
    counts = _numpy_sums(
        edges,
        types,
        num_edge_types,
        reverse,
        np.ones((len(states), 1)),
    )[..., 0]
    np.testing.assert_allclose(
        keras.ops.convert_to_numpy(sums.type_counts()), counts
    )


def test_stack_by_direction():
    blocks = np.arange(4 * 1 * 2, dtype="float32").reshape(4, 1, 2)
    stacked = keras.ops.convert_to_numpy(
        aggregation.stack_by_direction(blocks, 2)
    )
    np.testing.assert_array_equal(
        stacked,
        [[0, 1, 0, 0], [2, 3, 0, 0], [0, 0, 4, 5], [0, 0, 6, 7]],
    )
    np.testing.assert_array_equal(
        keras.ops.convert_to_numpy(aggregation.stack_by_direction(blocks, 1)),
        blocks.reshape(4, 2),
    )


def test_dense_sums_confine_a_non_finite_state_to_its_reach():
    # One graph, a path 0 -> 1 -> 2 and a lone node 3: a NaN at node 0
    # reaches node 1 in one step and node 2 in two, never node 3.
    edges = np.array([[[0, 1], [1, 2]]], "int32")
    sums = aggregation.DenseSums(
        edges, np.zeros((1, 2), "int32"), 1, 4, 1, False, "float32"
    )
    states = np.ones((1, 4, UNITS), "float32")
    states[0, 0, 1] = np.nan
    for steps, reached in ((1, [1, 1, 0, 0]), (2, [1, 1, 1, 0])):
        safe, poisoned = sums.confine_non_finite(states, steps)
        assert np.isfinite(keras.ops.convert_to_numpy(safe)).all()
        np.testing.assert_array_equal(
            keras.ops.convert_to_numpy(poisoned)[0, :, 0], reached
        )


def test_auto_threshold():
    # T * N² <= ratio * messages: 4 * 8² = 256 against 96 (32 under XLA)
    # times 2 messages per edge.
    choose = aggregation.uses_dense_aggregation
    assert choose("auto", 4, 2, 8, 2, xla=False)  # 256 <= 384
    assert not choose("auto", 4, 2, 8, 1, xla=False)  # 256 > 192
    assert choose("auto", 4, 2, 8, 4, xla=True)  # 256 <= 256
    assert not choose("auto", 4, 2, 8, 3, xla=True)
    assert not choose("auto", 4, 2, None, 4, xla=False)
    assert choose("dense", 4, 2, None, None, xla=True)
    assert not choose("sparse", 1, 1, 2, 100, xla=False)
