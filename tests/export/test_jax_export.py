"""The jax2tf shapes of the SavedModel made on JAX (any backend runs these)."""

import pytest
import tensorflow as tf

import keras_recurrent as kr
from keras_recurrent.export import _jax_export


def _specs(shapes):
    return [
        tf.TensorSpec(shape, dtype, name=name)
        for name, (shape, dtype) in shapes.items()
    ]


def test_tree_and_graph_tensors_share_node_and_edge_variables():
    graph = _specs(
        {
            "node_inputs": ((None, None, 3), tf.float32),
            "edges": ((None, None, 2), tf.int32),
            "edge_types": ((None, None), tf.int32),
            "node_mask": ((None, None), tf.int32),
        }
    )
    assert _jax_export.polymorphic_shapes(graph) == [
        "(batch, nodes, 3)",
        "(batch, edges, 2)",
        "(batch, edges)",
        "(batch, nodes)",
    ]
    inputs = kr.trees.tree_inputs(2, levels=False)
    trees = _specs({name: (t.shape, t.dtype) for name, t in inputs.items()})
    assert _jax_export.polymorphic_shapes(trees) == [
        "(batch, nodes)",
        "(batch, nodes, 2)",
        "(batch, nodes)",
    ]


def test_other_open_axes_get_their_own_variables():
    specs = _specs(
        {
            "source": ((None, None, 4), tf.float32),
            "target": ((None, None, None), tf.float32),
            "context": ((None, 2), tf.float32),
        }
    )
    assert _jax_export.polymorphic_shapes(specs) == [
        "(batch, d0, 4)",
        "(batch, d1, d2)",
        "(batch, 2)",
    ]
    given = ["(batch, t, 4)", "(batch, t, s)", "(batch, 2)"]
    assert _jax_export.polymorphic_shapes(specs, given) == given
    with pytest.raises(ValueError, match="one jax2tf shape string per model"):
        _jax_export.polymorphic_shapes(specs, given[:2])
