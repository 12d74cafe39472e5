import numpy as np
import pytest
import tensorflow as tf

import keras_recurrent as kr


def _graphs():
    return [
        kr.graphs.encode_graph([(0, 1, 1), (1, 2, 0)]),
        kr.graphs.encode_graph([(1, 0, 1)]),
        kr.graphs.encode_graph([(0, 3), (3, 1), (1, 2), (2, 0)]),
    ]


def _dataset(graphs, with_targets=True):
    def generate():
        for index, graph in enumerate(graphs):
            yield (graph, index) if with_targets else graph

    spec = kr.graphs.graph_spec(1)
    signature = (spec, tf.TensorSpec((), tf.int32)) if with_targets else spec
    return tf.data.Dataset.from_generator(generate, output_signature=signature)


def test_padded_batch_matches_encode_graphs():
    graphs = _graphs()
    batched = kr.graphs.padded_batch(_dataset(graphs), 3)
    batch, targets = next(iter(batched))
    expected = kr.graphs.encode_graphs(graphs)
    assert sorted(batch) == sorted(expected)
    for name, array in expected.items():
        np.testing.assert_array_equal(batch[name].numpy(), array, err_msg=name)
    assert targets.numpy().tolist() == [0, 1, 2]


def test_fixed_sizes_give_static_shapes():
    batched = kr.graphs.padded_batch(
        _dataset(_graphs(), with_targets=False),
        2,
        num_nodes=6,
        num_edges=5,
        drop_remainder=True,
    )
    assert batched.element_spec["node_inputs"].shape == (2, 6, 1)
    assert batched.element_spec["edges"].shape == (2, 5, 2)
    assert batched.element_spec["edge_types"].shape == (2, 5)
    assert batched.element_spec["node_mask"].shape == (2, 6)
    (batch,) = list(batched)
    expected = kr.graphs.encode_graphs(_graphs()[:2], num_nodes=6, num_edges=5)
    for name, array in expected.items():
        np.testing.assert_array_equal(batch[name].numpy(), array, err_msg=name)


def test_graph_spec():
    spec = kr.graphs.graph_spec(3, node_mask_dtype="bool")
    assert spec["node_inputs"].shape.as_list() == [None, 3]
    assert spec["edges"].shape.as_list() == [None, 2]
    assert spec["node_mask"].dtype == tf.bool
    with pytest.raises(ValueError, match="node_features=0"):
        kr.graphs.graph_spec(0)


def test_bad_arguments():
    with pytest.raises(ValueError, match="tf.data.Dataset"):
        kr.graphs.padded_batch(_graphs(), 2)
    with pytest.raises(ValueError, match="batch_size=0"):
        kr.graphs.padded_batch(_dataset(_graphs()), 0)
    with pytest.raises(ValueError, match="graph dict"):
        kr.graphs.padded_batch(tf.data.Dataset.range(3), 2)
    batched = tf.data.Dataset.from_tensors(kr.graphs.encode_graphs(_graphs()))
    with pytest.raises(ValueError, match="rank 2"):
        kr.graphs.padded_batch(batched, 2)


def test_graph_inputs_feed_a_model():
    inputs = kr.graphs.graph_inputs(2, num_nodes=4)
    assert list(inputs) == list(kr.graphs.GRAPH_TENSOR_NAMES)
    assert [tensor.shape for tensor in inputs.values()] == [
        (None, 4, 2),
        (None, None, 2),
        (None, None),
        (None, 4),
    ]
    # int64 indices, so that Keras cannot narrow 2**32 + 1 into node 1.
    assert [tensor.dtype for tensor in inputs.values()] == [
        "float32",
        "int64",
        "int64",
        "int32",
    ]
    assert (
        kr.graphs.graph_inputs(1, node_mask_dtype="bool")["node_mask"].dtype
        == "bool"
    )
    with pytest.raises(ValueError, match="node_mask_dtype='int8'"):
        kr.graphs.graph_inputs(1, node_mask_dtype="int8")
    with pytest.raises(ValueError, match="num_edges=0"):
        kr.graphs.graph_inputs(1, num_edges=0)


def _wide_dataset(edges, edge_types, dtype):
    graph = {
        "node_inputs": np.ones((3, 1), "float32"),
        "edges": np.array(edges, dtype),
        "edge_types": np.array(edge_types, dtype),
        "node_mask": np.ones(3, dtype),
    }
    return tf.data.Dataset.from_tensors((graph, 0))


@pytest.mark.parametrize("validate", [True, False])
@pytest.mark.parametrize("dtype", ["int64", "uint32", "uint64"])
def test_padded_batch_narrows_wide_indices_to_int32(dtype, validate):
    batched = kr.graphs.padded_batch(
        _wide_dataset([(0, 1), (1, 2)], [1, 0], dtype),
        2,
        num_edges=3,
        validate=validate,
    )
    batch, _ = next(iter(batched))
    expected = kr.graphs.encode_graphs(
        [{"edges": [(0, 1, 1), (1, 2, 0)]}], num_edges=3
    )
    for name in ("edges", "edge_types", "node_mask"):
        assert batch[name].dtype == tf.int32, name
        np.testing.assert_array_equal(batch[name].numpy(), expected[name])


@pytest.mark.parametrize("validate", [True, False])
@pytest.mark.parametrize(
    "dtype, edges, edge_types, message",
    [
        ("int64", [(0, 2**32 + 1)], [0], r"`edges`.*int32.*4294967297"),
        ("int64", [(0, 1)], [2**32], r"`edge_types`.*\[0\]=4294967296"),
        ("uint64", [(0, 2**64 - 1)], [0], r"`edges`.*18446744073709551615"),
    ],
    ids=["int64 node", "int64 type", "uint64 node"],
)
def test_padded_batch_never_wraps_an_index(
    dtype, edges, edge_types, message, validate
):
    # Even without `validate`: the model's int32 input would read
    # 2**32 + 1 as node 1.
    batched = kr.graphs.padded_batch(
        _wide_dataset(edges, edge_types, dtype), 2, validate=validate
    )
    with pytest.raises(tf.errors.InvalidArgumentError, match=message):
        next(iter(batched))


@pytest.mark.parametrize(
    ("budgets", "message"),
    [
        ({"num_nodes": 3}, r"\[2\] \[of the dataset.*\[4\] \[nodes, more "),
        ({"num_edges": 2}, r"\[2\] \[of the dataset.*\[4\] \[edges, more "),
    ],
)
def test_graph_larger_than_the_budget_is_named(budgets, message):
    # Upstream: DataLossError "Attempted to pad to a smaller size than the
    # input element", naming neither the graph nor the budget.
    (argument,) = budgets
    batched = kr.graphs.padded_batch(_dataset(_graphs()), 2, **budgets)
    with pytest.raises(
        tf.errors.InvalidArgumentError,
        match=message + f"than {argument}={budgets[argument]}",
    ):
        list(batched)


def test_empty_dataset_raises():
    # Upstream `fit` returned at once, trained nothing and said nothing.
    empty = _dataset(_graphs()).filter(lambda graph, target: False)
    with pytest.raises(tf.errors.InvalidArgumentError, match="gives no batch"):
        list(kr.graphs.padded_batch(empty, 2))
    known = _dataset(_graphs()).apply(
        tf.data.experimental.assert_cardinality(3)
    )
    with pytest.raises(ValueError, match="`dataset`.*gives no graph|batch"):
        kr.graphs.padded_batch(known, 4, drop_remainder=True)
    assert len(list(kr.graphs.padded_batch(known, 2))) == 2
