"""Checks of the graph tensors inside the graph layers, eager and traced."""

import keras
from keras import ops

from keras_recurrent.graphs.validation import GRAPH_TENSOR_NAMES
from keras_recurrent.graphs.validation import check_graph_shapes
from keras_recurrent.graphs.validation import find_edge_problem
from keras_recurrent.layers._concrete import concrete_numpy


def unpack_graph_inputs(layer, inputs):
    """`[node_inputs, edges, edge_types, node_mask]` from a list or a dict."""
    if isinstance(inputs, dict):
        missing = [name for name in GRAPH_TENSOR_NAMES if name not in inputs]
        if missing:
            raise ValueError(
                f"{type(layer).__name__} takes a dict with the keys "
                f"{list(GRAPH_TENSOR_NAMES)}. Received keys: {sorted(inputs)}"
            )
        return [inputs[name] for name in GRAPH_TENSOR_NAMES]
    if not isinstance(inputs, (list, tuple)) or len(inputs) != 4:
        raise ValueError(
            f"{type(layer).__name__} takes the list `[node_inputs, edges, "
            "edge_types, node_mask]` (or a dict with these keys). "
            f"Received: inputs={inputs!r}"
        )
    return list(inputs)


def check_graph_input_shapes(layer, shapes):
    """Static checks of the four input shapes (list, in the list order)."""
    try:
        check_graph_shapes(*[_shape(shape) for shape in shapes])
    except ValueError as error:
        raise ValueError(f"{type(layer).__name__}: {error}") from None


def check_edges(layer, edges, edge_types, node_mask, num_edge_types):
    """Raises if a real edge is out of range, on padding, or badly typed.

    On concrete tensors (eager execution) this is a `ValueError` naming the
    first bad edge. While tracing, the check becomes part of the graph and
    fails at run time: with TensorFlow, through `tf.debugging.Assert` (an
    `InvalidArgumentError`); other backends have no graph assertion that
    `keras.ops` offers, so traced checks are skipped there.
    """
    arrays = concrete_numpy(edges, edge_types, node_mask)
    if arrays is not None:
        problem = find_edge_problem(*arrays, num_edge_types=num_edge_types)
        if problem is not None:
            raise ValueError(
                f"{type(layer).__name__} {layer.name!r}: {problem}"
            )
        return
    if keras.backend.backend() != "tensorflow":
        return
    num_nodes = ops.shape(node_mask)[1]
    sources, targets = edges[..., 0], edges[..., 1]
    real = ops.logical_not(
        ops.logical_and(ops.equal(sources, -1), ops.equal(targets, -1))
    )
    outside = ops.logical_or(
        ops.logical_or(
            ops.less(sources, 0), ops.greater_equal(sources, num_nodes)
        ),
        ops.logical_or(
            ops.less(targets, 0), ops.greater_equal(targets, num_nodes)
        ),
    )
    out_of_range = ops.logical_and(real, outside)
    in_range = ops.logical_and(real, ops.logical_not(outside))
    real_node = ops.cast(node_mask, "int32")
    source_real = ops.take_along_axis(
        real_node, ops.where(in_range, sources, 0), axis=1
    )
    target_real = ops.take_along_axis(
        real_node, ops.where(in_range, targets, 0), axis=1
    )
    on_padding = ops.logical_and(
        in_range, ops.equal(source_real * target_real, 0)
    )
    bad_type = ops.logical_and(
        real,
        ops.logical_or(
            ops.less(edge_types, 0),
            ops.greater_equal(edge_types, num_edge_types),
        ),
    )
    prefix = f"{type(layer).__name__} {layer.name!r}: "
    _assert_no_bad_edge(
        out_of_range,
        prefix + "`edges` must hold node indices in [0, num_nodes), or -1 in "
        "both columns of a padding row.",
    )
    _assert_no_bad_edge(
        on_padding,
        prefix + "`edges` must only join real nodes (nonzero `node_mask`).",
    )
    _assert_no_bad_edge(
        bad_type,
        prefix
        + f"`edge_types` of real edges must be in [0, {num_edge_types}).",
    )


def _assert_no_bad_edge(bad, message):
    """A run-time assertion in a traced TensorFlow graph (TF backend only).

    `keras.ops` has no assertion, so this is the one place that uses
    TensorFlow directly. Under XLA (`jit_compile=True`) `Assert` compiles to
    a no-op.
    """
    import tensorflow as tf

    flat = ops.reshape(bad, (-1,))
    # A trailing False keeps `argmax` defined for batches without edges.
    padded = ops.concatenate(
        [ops.cast(flat, "int32"), ops.zeros((1,), "int32")]
    )
    first = ops.argmax(padded)
    # In `first`'s dtype: with a float64 `floatx`, Keras makes the maximum
    # of a dynamic int32 size and a Python int an int64.
    num_edges = ops.cast(ops.maximum(ops.shape(bad)[1], 1), first.dtype)
    tf.debugging.Assert(
        ops.logical_not(ops.any(flat)),
        [
            message,
            "First bad edge (graph, edge):",
            first // num_edges,
            first % num_edges,
        ],
    )


def _shape(shape):
    return None if shape is None else tuple(shape)
