"""The jax2tf shapes of the SavedModel made on JAX (any backend runs these)."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import tensorflow as tf

import keras_recurrent as kr
from keras_recurrent.export import _jax_export
from tests._subprocess import ROOT
from tests._subprocess import skip_unless_installed

# Exports a sequence model (with `lengths`) and a tree model on JAX.
_EXPORT_ON_JAX = textwrap.dedent(
    """
    import sys
    import keras
    import keras_recurrent as kr

    keras.utils.set_random_seed(0)
    frames = keras.Input((None, 3), name="frames")
    x = kr.layers.PeepholeLSTM(2)(keras.layers.Masking()(frames))
    model = keras.Model(frames, keras.layers.Dense(1, name="score")(x))
    kr.export.export_saved_model(model, sys.argv[1] + "/sequence", lengths=True)
    inputs = kr.trees.tree_inputs(2, node_features=3, levels=False)
    root = kr.layers.NaryTreeLSTM(2, arity=2, name="root")(
        [inputs["node_inputs"], inputs["children"], inputs["node_mask"]]
    )
    kr.export.export_saved_model(
        keras.Model(inputs, root), sys.argv[1] + "/tree"
    )
    """
)


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


def test_filler_examples_are_appended_on_the_batch_axis():
    children = tf.zeros((0, 3, 2), tf.int32)
    filled = _jax_export._with_filler(children, tf.constant(1), -1)
    np.testing.assert_array_equal(filled.numpy(), -np.ones((1, 3, 2)))
    mask = tf.ones((2, 4), tf.bool)
    assert _jax_export._with_filler(mask, tf.constant(0), 0).shape == (2, 4)
    grown = _jax_export._with_filler(mask[:0], tf.constant(1), 0)
    np.testing.assert_array_equal(grown.numpy(), np.zeros((1, 4), bool))


@pytest.mark.slow
def test_jax_made_saved_model_serves_empty_batches(tmp_path):
    # Upstream: "Graph execution error: <stack traces unavailable>", since
    # jax2tf's dimension variables are at least 1.
    skip_unless_installed("jax")
    subprocess.run(
        [sys.executable, "-c", _EXPORT_ON_JAX, str(tmp_path)],
        check=True,
        cwd=ROOT,
        env={
            **os.environ,
            "KERAS_BACKEND": "jax",
            "PYTHONPATH": str(ROOT),
            "TF_CPP_MIN_LOG_LEVEL": "3",
        },
        timeout=600,
    )
    serve = tf.saved_model.load(str(tmp_path / "sequence")).signatures["serve"]
    served = serve(frames=tf.zeros((0, 4, 3)), lengths=tf.zeros((0,), tf.int32))
    assert served["score"].shape == (0, 1)
    one = serve(frames=tf.ones((1, 4, 3)), lengths=tf.constant([3]))["score"]
    two = serve(frames=tf.ones((2, 4, 3)), lengths=tf.constant([3, 3]))["score"]
    np.testing.assert_allclose(two.numpy(), np.repeat(one.numpy(), 2, 0))

    serve = tf.saved_model.load(str(tmp_path / "tree")).signatures["serve"]

    def trees(batch, nodes):
        return dict(
            node_inputs=tf.zeros((batch, nodes, 3)),
            children=tf.fill((batch, nodes, 2), -1),
            node_mask=tf.ones((batch, nodes), tf.int32),
        )

    assert serve(**trees(0, 3))["root"].shape == (0, 2)
    with pytest.raises(
        tf.errors.InvalidArgumentError,
        match=r"`children` must have at least one node",
    ):
        serve(**trees(1, 0))
    # The loaded object's `serve` (JAX-made too) takes 64-bit tensors.
    loaded = tf.saved_model.load(str(tmp_path / "sequence"))
    wide = loaded.serve(
        frames=tf.ones((1, 4, 3), tf.float64),
        lengths=tf.constant([3], tf.int64),
    )
    np.testing.assert_array_equal(wide["score"].numpy(), one.numpy())
