"""Traced TensorFlow assertions of the rule tables name the first bad item
with its structure and kind, e.g. "First bad edge (graph, edge): 1 2"."""

import pytest
import tensorflow as tf

import keras_recurrent as kr
from tests.layers import graph_reference
from tests.layers.test_tree_lstm_bad_inputs import VALUE_CASES
from tests.layers.test_tree_lstm_bad_inputs import base_inputs


def _traced_error(layer, inputs):
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        tf.function(lambda tensors: layer(tensors))(inputs)
    return str(info.value)


def test_graph_assertions_name_the_bad_edge_or_node():
    graphs = graph_reference.random_graphs()
    layer = kr.layers.GatedGraph(4, 2, propagation_steps=1)
    bad_type = {**graphs, "edge_types": graphs["edge_types"].copy()}
    bad_type["edge_types"][1, 2] = 5  # A real edge of graph 1.
    message = _traced_error(layer, bad_type)
    assert "`edge_types` of real edges must be in [0, 2)." in message
    assert "First bad edge (graph, edge):" in message
    bad_mask = {**graphs, "node_mask": graphs["node_mask"].astype("int32")}
    bad_mask["node_mask"][2, 1] = 2
    message = _traced_error(layer, bad_mask)
    assert "`node_mask` must be 1 (or True) for real nodes" in message
    assert "First bad node (graph, node):" in message


def test_tree_assertions_name_the_bad_node():
    corrupt, statement = VALUE_CASES["cycle"]
    message = _traced_error(
        kr.layers.ChildSumTreeLSTM(3), corrupt(base_inputs())
    )
    assert statement in message
    assert "First bad node (tree, node):" in message
