"""The graph layers' checks: static problems raise when built or traced;
`GRAPH_RULES` raise on concrete tensors, are asserted in traced TensorFlow
(before any op reads an index), and everywhere flag invalid graphs, whose
bad edges become padding rows and whose outputs become NaN.
"""

import functools

import keras
from keras import ops

from keras_recurrent._checks import check_tensor_dtype
from keras_recurrent._checks import named_errors
from keras_recurrent._rules import any_bad_example
from keras_recurrent._rules import at_least_one
from keras_recurrent._rules import check_built_width
from keras_recurrent._rules import check_named_shapes
from keras_recurrent._rules import rank_statement
from keras_recurrent._rules import ranks
from keras_recurrent._rules import sizes_statement
from keras_recurrent._rules import unpack_inputs
from keras_recurrent._rules import width_statement
from keras_recurrent.graphs.validation import EDGE_ROWS
from keras_recurrent.graphs.validation import GRAPH_LAYOUTS
from keras_recurrent.graphs.validation import GRAPH_RULES
from keras_recurrent.graphs.validation import GRAPH_SIZE_GROUPS
from keras_recurrent.graphs.validation import GRAPH_TENSOR_NAMES
from keras_recurrent.graphs.validation import check_graph_shapes
from keras_recurrent.graphs.validation import find_graph_problem
from keras_recurrent.graphs.validation import graph_flags
from keras_recurrent.layers._concrete import on_meta_device
from keras_recurrent.layers._concrete import refuse_torchscript_trace
from keras_recurrent.layers._tf_checks import after_assertions
from keras_recurrent.layers._tf_checks import assert_rules
from keras_recurrent.layers._tf_checks import check_host_arrays
from keras_recurrent.layers._tf_checks import prefix
from keras_recurrent.layers._tf_checks import raise_problem


def unpack_graph_inputs(layer, inputs):
    """`[node_inputs, edges, edge_types, node_mask]` from a list or a dict."""
    return unpack_inputs(layer, inputs, GRAPH_TENSOR_NAMES, describe_inputs)


def describe_inputs(inputs):
    """A short description of a wrong `inputs` structure for a message."""
    shape = getattr(inputs, "shape", None)
    if isinstance(inputs, (list, tuple)) and all(
        size is None or isinstance(size, int) for size in inputs
    ):
        shape = inputs  # `build` gets a single tensor's shape.
    if shape is not None:
        return f"a single tensor of shape {tuple(shape)}"
    if isinstance(inputs, (list, tuple)):
        items = ", ".join(describe_inputs(item) for item in inputs)
        return f"{type(inputs).__name__} of {len(inputs)} ({items})"
    return f"{type(inputs).__name__} {inputs!r}"[:200]


def check_graph_input_shapes(layer, shapes):
    """Static checks of the four input shapes (list, in the list order)."""
    check_named_shapes(layer, check_graph_shapes, shapes)


def prepare_graph_inputs(layer, inputs, num_edge_types, features=None):
    """Checks the graph tensors of `layer` (built for `features` wide
    `node_inputs`, if given); returns `node_inputs`, int32 `edges` (bad ones
    as `-1` padding rows) and `edge_types` (0 on padding rows), the bool
    `node_mask` and `valid`, bool `(batch,)`: whether each graph was valid.
    """
    tensors = unpack_graph_inputs(layer, inputs)
    check_static_graph_inputs(layer, tensors, features)
    refuse_torchscript_trace(
        layer,
        "the traced sizes (Keras traces an open size as 1)",
        "Export with an `input_signature` whose sizes are all known "
        "(batch, `N` and `E`): Keras then exports with `torch.export`, "
        "which the graph layers support. ONNX export from TensorFlow keeps "
        "them open.",
    )
    checked = raise_problem(
        layer, find_graph_problem, *tensors[1:], num_edge_types=num_edge_types
    )
    traced_tf = not checked and keras.backend.backend() == "tensorflow"
    if traced_tf:
        tensors = after_assertions(
            tensors, _shape_assertions(layer, tensors, features)
        )
    node_inputs, edges, edge_types, node_mask = tensors
    bad_nodes, bad_edges, real = graph_flags(
        ops, edges, edge_types, node_mask, num_edge_types
    )
    bad_edge = functools.reduce(ops.logical_or, bad_edges)
    # Under XLA a served `(B, E, 3)` cannot be stopped by an assertion:
    # every graph of such a batch is invalid.
    valid = ops.logical_and(
        ops.logical_not(any_bad_example(ops, [bad_nodes, bad_edge])),
        ops.equal(ops.shape(edges)[2], 2),
    )
    if traced_tf:
        flags = [bad_nodes, *bad_edges]
        names = {"num_nodes": "num_nodes", "allowed": f"[0, {num_edge_types})"}
        [valid] = assert_rules(
            layer, [valid], "graph", GRAPH_RULES, flags, **names
        )
    good = ops.logical_and(real, ops.logical_not(bad_edge))
    return (
        node_inputs,
        ops.cast(
            ops.where(ops.expand_dims(good, -1), edges[..., :2], -1), "int32"
        ),
        ops.cast(ops.where(good, edge_types, 0), "int32"),
        ops.cast(node_mask, "bool"),
        valid,
    )


def check_host_graph(layer, inputs, num_edge_types):
    """Checks NumPy index arrays that Keras would narrow before `call`."""
    check_host_arrays(
        layer,
        inputs,
        GRAPH_TENSOR_NAMES,
        check_graph_shapes,
        find_graph_problem,
        num_edge_types=num_edge_types,
    )


def poison_invalid_graphs(outputs, valid):
    """`outputs` `(batch, ...)` with NaN in every entry of invalid graphs.

    The NaN is a scalar that `where` broadcasts, not a filled tensor: tf2onnx
    (`model.export(format="onnx")` on TensorFlow) writes a select as
    `cond * x + (1 - cond) * y` unless an operand is a constant holding NaN
    or infinity, and `0 * NaN` made every output NaN.
    """
    if on_meta_device(outputs):
        # PyTorch shape inference: no values to poison.
        return outputs
    valid = ops.reshape(valid, (-1,) + (1,) * (len(outputs.shape) - 1))
    return ops.where(valid, outputs, float("nan"))


def check_static_graph_inputs(layer, tensors, features=None):
    """Ranks, sizes, dtypes and node width known when tracing."""
    check_graph_input_shapes(layer, [tensor.shape for tensor in tensors])
    with named_errors(layer):
        for name, tensor in zip(GRAPH_TENSOR_NAMES, tensors, strict=True):
            kind = "numeric or boolean" if name == "node_mask" else "numeric"
            check_tensor_dtype(name, tensor, kind)
        check_built_width(tensors[0].shape, features, "node_inputs")


def _shape_assertions(layer, tensors, features):
    """Run-time shape checks for `after_assertions`: a served signature may
    have unknown sizes (or let a caller pass shapes its spec refuses)."""
    import tensorflow as tf

    rank = ranks(GRAPH_LAYOUTS)
    named = dict(zip(GRAPH_TENSOR_NAMES, tensors, strict=True))
    # The sizes of each tensor, then -1 for the axes it lacks.
    dims = {
        name: tf.concat([tf.shape(tensor), -tf.ones([rank[name]], "int32")], 0)
        for name, tensor in named.items()
    }
    # The rules of `check_graph_shapes`, in its order, and the width.
    conditions = {
        **{
            rank_statement(n, GRAPH_LAYOUTS[n]): tf.equal(tf.rank(t), rank[n])
            for n, t in named.items()
        },
        EDGE_ROWS: tf.equal(dims["edges"][2], 2),
        **{
            sizes_statement("graph", label): [
                tf.equal(dims[n][axis], dims[names[0]][axis]) for n in names
            ]
            for axis, label, names in GRAPH_SIZE_GROUPS
        },
        at_least_one("node", "node_inputs", 1): tf.greater(
            dims["node_inputs"][1], 0
        ),
    }
    if features is not None:
        conditions[width_statement("node_inputs", features)] = tf.equal(
            dims["node_inputs"][2], features
        )
    shapes = [x for n, t in named.items() for x in (f"{n}.shape=", tf.shape(t))]
    return [
        (
            tf.reduce_all(condition)
            if isinstance(condition, list)
            else condition,
            [prefix(layer) + message, "Received:", *shapes],
        )
        for message, condition in conditions.items()
    ]
