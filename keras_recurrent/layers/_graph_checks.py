"""The graph layers' checks, so that bad input never yields a finite wrong
number: static problems (ranks, sizes, dtypes) raise a `ValueError` when
built or traced; the value rules of `graphs.validation` raise one on
concrete tensors, become run-time assertions in traced TensorFlow (before
any op reads an index), and everywhere give the graph a validity flag:
bad edges become padding rows and the layers give invalid graphs NaN.
"""

import keras
import numpy as np
from keras import ops

from keras_recurrent._rules import any_bad_example
from keras_recurrent._rules import any_of
from keras_recurrent._rules import ranks
from keras_recurrent._rules import unpack_inputs
from keras_recurrent.graphs.validation import EDGE_RULES
from keras_recurrent.graphs.validation import GRAPH_LAYOUTS
from keras_recurrent.graphs.validation import GRAPH_SIZE_GROUPS
from keras_recurrent.graphs.validation import GRAPH_TENSOR_NAMES
from keras_recurrent.graphs.validation import NODE_MASK_RULE
from keras_recurrent.graphs.validation import check_graph_shapes
from keras_recurrent.graphs.validation import find_graph_problem
from keras_recurrent.graphs.validation import graph_flags
from keras_recurrent.graphs.validation import non_binary
from keras_recurrent.layers._concrete import concrete_numpy
from keras_recurrent.layers._concrete import narrowed_by_conversion
from keras_recurrent.layers._concrete import on_meta_device
from keras_recurrent.layers._tf_checks import after_assertions
from keras_recurrent.layers._tf_checks import rule_assertions


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
    try:
        check_graph_shapes(
            *[None if shape is None else tuple(shape) for shape in shapes]
        )
    except ValueError as error:
        raise ValueError(f"{type(layer).__name__}: {error}") from None


def prepare_graph_inputs(layer, inputs, num_edge_types, features=None):
    """Checks the graph tensors of `layer` (built for `features` wide
    `node_inputs`, if given) and makes invalid graphs harmless.

    Returns `node_inputs`, `edges` (int32, every bad edge turned into a
    `-1` padding row), `edge_types` (int32, 0 on padding rows), `node_mask`
    (bool) and `valid`, bool `(batch,)`: whether each graph was valid.
    """
    tensors = unpack_graph_inputs(layer, inputs)
    check_static_graph_inputs(layer, tensors, features)
    arrays = concrete_numpy(*tensors[1:])
    traced_tf = arrays is None and keras.backend.backend() == "tensorflow"
    if arrays is not None:
        _raise_on_bad_values(layer, *arrays, num_edge_types)
    elif traced_tf:
        tensors = after_assertions(
            tensors, _shape_assertions(layer, tensors, features)
        )
    node_inputs, edges, edge_types, node_mask = tensors
    bad_nodes, bad_edges, real = graph_flags(
        ops, edges, edge_types, node_mask, num_edge_types
    )
    bad_edge = any_of(ops, bad_edges)
    # Under XLA a served `(B, E, 3)` cannot be stopped by an assertion:
    # every graph of such a batch is invalid.
    valid = ops.logical_and(
        ops.logical_not(any_bad_example(ops, [bad_nodes, bad_edge])),
        ops.equal(ops.shape(edges)[2], 2),
    )
    if traced_tf:
        names = {"num_nodes": "num_nodes", "allowed": f"[0, {num_edge_types})"}
        [valid] = after_assertions(
            [valid],
            lambda: (
                rule_assertions(
                    layer,
                    [NODE_MASK_RULE],
                    [bad_nodes],
                    "graph",
                    "node",
                    **names,
                )
                + rule_assertions(
                    layer, EDGE_RULES, bad_edges, "graph", "edge", **names
                )
            ),
            any_bad=ops.any(any_bad_example(ops, [bad_nodes, *bad_edges])),
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
    """Checks NumPy index arrays that Keras would narrow before `call`
    (see `narrowed_by_conversion`); anything else is left to `call`."""
    try:
        tensors = unpack_graph_inputs(layer, inputs)
    except ValueError:
        return
    if not narrowed_by_conversion(*tensors[1:]):
        return
    arrays = [np.asarray(tensor) for tensor in tensors]
    try:
        check_graph_shapes(*[array.shape for array in arrays])
    except ValueError:
        return
    _raise_on_bad_values(layer, *arrays[1:], num_edge_types)


def poison_invalid_graphs(outputs, valid):
    """`outputs` `(batch, ...)` with NaN in every entry of invalid graphs."""
    if on_meta_device(outputs):
        # PyTorch shape inference: no values to poison, and `full_like`
        # cannot fill a tensor on the "meta" device.
        return outputs
    valid = ops.reshape(valid, (-1,) + (1,) * (len(outputs.shape) - 1))
    return ops.where(valid, outputs, ops.full_like(outputs, float("nan")))


def check_static_graph_inputs(layer, tensors, features=None):
    """Ranks, sizes, dtypes and node width known when tracing."""
    check_graph_input_shapes(layer, [tensor.shape for tensor in tensors])
    name = type(layer).__name__
    for tensor_name, tensor in zip(GRAPH_TENSOR_NAMES, tensors, strict=True):
        dtype = keras.backend.standardize_dtype(tensor.dtype)
        numeric = dtype.startswith(("int", "uint", "float", "bfloat"))
        if not numeric and not (tensor_name == "node_mask" and dtype == "bool"):
            raise ValueError(
                f"{name}: `{tensor_name}` must be numeric"
                + (" or bool" if tensor_name == "node_mask" else "")
                + f". Received: {tensor_name}.dtype={dtype}"
            )
    width = tensors[0].shape[-1]
    if features is not None and width is not None and width != features:
        raise ValueError(
            f"{name} {layer.name!r} was built for `node_inputs` with "
            f"{features} features. Received: "
            f"node_inputs.shape={tuple(tensors[0].shape)}"
        )


def _raise_on_bad_values(layer, edges, edge_types, node_mask, num_types):
    problem = find_graph_problem(edges, edge_types, node_mask, num_types)
    if problem is not None:
        raise ValueError(f"{type(layer).__name__} {layer.name!r}: {problem}")


def non_binary_mask(node_mask):
    """`(batch, N)` bool: the `node_mask` entries other than 0 and 1 (`2`,
    `-1`, `0.5`, NaN), which no layer reads as a real or a padding node."""
    return non_binary(ops, node_mask)


def _shape_assertions(layer, tensors, features):
    """Run-time shape checks for `after_assertions` (TensorFlow only): a
    served signature may have unknown sizes (or let a caller pass shapes
    its spec does not allow), and no later op must fail on them first."""
    import tensorflow as tf

    rank = ranks(GRAPH_LAYOUTS)
    named = dict(zip(GRAPH_TENSOR_NAMES, tensors, strict=True))
    # The sizes of each tensor, then -1 for the axes it lacks.
    dims = {
        name: tf.concat([tf.shape(tensor), -tf.ones([rank[name]], "int32")], 0)
        for name, tensor in named.items()
    }
    conditions = [
        (
            tf.reduce_all(
                [tf.equal(tf.rank(named[n]), rank[n]) for n in named]
            ),
            f"the graph tensors must have the ranks "
            f"{', '.join(str(r) for r in rank.values())}.",
        ),
        (tf.equal(dims["edges"][2], 2), "`edges` must be (batch, E, 2)."),
        *(
            (
                tf.reduce_all(
                    [
                        tf.equal(dims[n][axis], dims[names[0]][axis])
                        for n in names
                    ]
                ),
                f"the graph tensors disagree on the {label}.",
            )
            for axis, label, names in GRAPH_SIZE_GROUPS
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
    prefix = f"{type(layer).__name__} {layer.name!r}: "
    shapes = []
    for name, tensor in named.items():
        shapes += [f"{name}.shape=", tf.shape(tensor)]
    return [
        (condition, [prefix + message, "Received:", *shapes])
        for condition, message in conditions
    ]
