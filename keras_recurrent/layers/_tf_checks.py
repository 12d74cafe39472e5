"""Run-time checks in traced TensorFlow graphs, for the tree and graph layers.

`keras.ops` has no assertion, so this module is the one place that uses
TensorFlow directly (each function imports it, as only the TensorFlow
backend calls them; `in_xla_context` returns early on the others). Eagerly
the layers raise a `ValueError` from NumPy checks instead, and under XLA,
where `Assert` compiles to a no-op, they give bad trees and graphs NaN
outputs.
"""

import keras
from keras import ops

from keras_recurrent.graphs.validation import GRAPH_TENSOR_NAMES

_GRAPH_RANKS = {
    "node_inputs": 3,
    "edges": 3,
    "edge_types": 2,
    "node_mask": 2,
}


def in_xla_context():
    """Whether the layer is being traced for XLA (`jit_compile=True`).

    True on every backend but TensorFlow and PyTorch, whose traced code is
    compiled whole by XLA (JAX), and inside a TensorFlow function compiled
    with XLA: there, shapes must be static and run-time assertions do not
    run.
    """
    backend = keras.backend.backend()
    if backend == "torch":
        return False
    if backend != "tensorflow":
        return True
    import tensorflow as tf

    return tf.__internal__.get_enclosing_xla_context() is not None


def assert_batch_size(tensor, expected, message):
    """`tensor`, checked at run time to have `expected` rows (TF only).

    Under XLA, where `Assert` is a no-op, the batch size is set statically
    instead, and compiling for another size fails on that shape.
    """
    import tensorflow as tf

    if in_xla_context():
        return tf.ensure_shape(tensor, (expected, *tensor.shape[1:]))
    received = tf.shape(tensor)[0]
    check = tf.debugging.Assert(
        tf.equal(received, expected),
        [message + "Received: a batch of", received, "sequences"],
    )
    with tf.control_dependencies([check]):
        return tf.identity(tensor)


def assert_no_bad_node(tensor, any_bad, named_checks):
    """Run-time assertions in a traced TensorFlow graph (TF backend only).

    `named_checks()` builds the `(bad, message)` pairs; it only runs, in a
    `tf.cond` branch, when `any_bad` is true. The returned copy of `tensor`
    depends on the result. Not used under XLA (`jit_compile=True`), where
    `Assert` would compile to a no-op: the static-shape path gives bad trees
    NaN outputs instead (`_tree_checks.bad_trees`).
    """
    import tensorflow as tf

    def fail():
        asserts = []
        for bad, message in named_checks():
            any_bad = ops.any(bad, axis=-1)
            flat = ops.reshape(any_bad, (-1,))
            first = ops.argmax(ops.cast(flat, "int32"))
            num_nodes = ops.shape(any_bad)[1]
            asserts.append(
                tf.debugging.Assert(
                    ops.logical_not(ops.any(flat)),
                    [
                        message,
                        "First bad node (tree, node):",
                        first // num_nodes,
                        first % num_nodes,
                    ],
                )
            )
        with tf.control_dependencies(asserts):
            return tf.identity(tensor)

    return tf.cond(any_bad, fail, lambda: tf.identity(tensor))


def after_shape_assertions(layer, tensors, features):
    """The tensors, readable only after run-time shape assertions passed.

    A served signature may have unknown sizes (or let a caller pass shapes
    its spec does not allow); these checks run first, so that no later op
    fails on the shape with a message that does not name it.
    """
    import tensorflow as tf

    prefix = f"{type(layer).__name__} {layer.name!r}: "
    dims = {
        name: _padded_shape(tensor, _GRAPH_RANKS[name])
        for name, tensor in zip(GRAPH_TENSOR_NAMES, tensors, strict=True)
    }
    ranks_ok = tf.reduce_all(
        [
            tf.equal(tf.rank(tensor), _GRAPH_RANKS[name])
            for name, tensor in zip(GRAPH_TENSOR_NAMES, tensors, strict=True)
        ]
    )
    conditions = [
        (ranks_ok, "the graph tensors must have the ranks 3, 3, 2, 2."),
        (tf.equal(dims["edges"][2], 2), "`edges` must be (batch, E, 2)."),
        (
            tf.reduce_all(
                [tf.equal(dims[name][0], dims["edges"][0]) for name in dims]
            ),
            "the graph tensors disagree on the batch size.",
        ),
        (
            tf.equal(dims["node_inputs"][1], dims["node_mask"][1]),
            "`node_inputs` and `node_mask` disagree on the number of nodes.",
        ),
        (
            tf.equal(dims["edges"][1], dims["edge_types"][1]),
            "`edges` and `edge_types` disagree on the number of edges.",
        ),
        (
            tf.greater(dims["node_mask"][1], 0),
            "the graph tensors must have at least one node slot.",
        ),
    ]
    if features is not None:
        conditions.append(
            (
                tf.equal(dims["node_inputs"][2], features),
                f"`node_inputs` must have {features} features.",
            )
        )
    shapes = []
    for name, tensor in zip(GRAPH_TENSOR_NAMES, tensors, strict=True):
        shapes += [f"{name}.shape=", tf.shape(tensor)]
    # In order, so that the first problem (a rank before a size) is named.
    assertions = []
    for condition, message in conditions:
        with tf.control_dependencies(assertions):
            assertions = [
                tf.debugging.Assert(
                    condition, [prefix + message, "Received:", *shapes]
                )
            ]
    with tf.control_dependencies(assertions):
        return [tf.identity(tensor) for tensor in tensors]


def _padded_shape(tensor, rank):
    """The first `rank` sizes of `tensor`, -1 for axes it lacks."""
    import tensorflow as tf

    shape = tf.concat([tf.shape(tensor), -tf.ones([rank], "int32")], 0)
    return shape[:rank]


def after_value_assertions(layer, flags, num_edge_types, valid):
    """`valid`, readable only after the run-time value assertions passed.

    `flags` are the per-edge problems of `_graph_checks._edge_flags`.
    """
    import tensorflow as tf

    prefix = f"{type(layer).__name__} {layer.name!r}: "
    checks = [
        (
            flags["bad_mask"],
            "`node_mask` must be 1 (or True) for real nodes and 0 for padding.",
            "First bad entry (graph, node):",
        ),
        (
            flags["out_of_range"],
            "`edges` must hold node indices in [0, num_nodes) (whole "
            "numbers), or -1 in both columns of a padding row.",
            None,
        ),
        (
            flags["on_padding"],
            "`edges` must only join real nodes (nonzero `node_mask`).",
            None,
        ),
        (
            flags["bad_type"],
            f"`edge_types` of real edges must be in [0, {num_edge_types}).",
            None,
        ),
    ]
    assertions = []
    for bad, message, label in checks:
        with tf.control_dependencies(assertions):
            assertions = [_assert_nothing_bad(bad, prefix + message, label)]
    with tf.control_dependencies(assertions):
        return tf.identity(valid)


def _assert_nothing_bad(bad, message, label=None):
    """A run-time assertion in a traced TensorFlow graph (TF backend only).

    Under XLA (`jit_compile=True`) `Assert` compiles to
    a no-op; the NaN outputs of invalid graphs stand in for it there.
    """
    import tensorflow as tf

    flat = ops.reshape(bad, (-1,))
    # A trailing False keeps `argmax` defined for batches without entries.
    padded = ops.concatenate(
        [ops.cast(flat, "int32"), ops.zeros((1,), "int32")]
    )
    first = ops.argmax(padded)
    # In `first`'s dtype: with a float64 `floatx`, Keras makes the maximum
    # of a dynamic int32 size and a Python int an int64.
    row_length = ops.cast(ops.maximum(ops.shape(bad)[1], 1), first.dtype)
    return tf.debugging.Assert(
        ops.logical_not(ops.any(flat)),
        [
            message,
            label or "First bad edge (graph, edge):",
            first // row_length,
            first % row_length,
        ],
    )
