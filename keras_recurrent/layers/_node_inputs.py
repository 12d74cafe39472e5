"""Shared input handling of the per-node output layers (readout, selection)."""

import keras
from keras import ops

from keras_recurrent._checks import check_known_last_axis
from keras_recurrent._checks import named_errors
from keras_recurrent._rules import check_ranks
from keras_recurrent._rules import check_sizes
from keras_recurrent.graphs.validation import find_node_mask_problem
from keras_recurrent.graphs.validation import non_binary
from keras_recurrent.layers._tf_checks import raise_problem

NODE_INPUT_LAYOUTS = {
    "node_states": "(batch, num_nodes, units)",
    "node_inputs": "(batch, num_nodes, features)",
    "node_mask": "(batch, num_nodes)",
}


def unpack_node_inputs(layer, inputs):
    """`[node_states, node_inputs, node_mask]` from the layer's inputs."""
    if not isinstance(inputs, (list, tuple)) or len(inputs) != 3:
        raise ValueError(
            f"{type(layer).__name__} takes the list `[node_states, "
            f"node_inputs, node_mask]`. Received: inputs={inputs!r}"
        )
    return list(inputs)


def check_node_input_shapes(layer, shapes):
    """Checks the ranks and agreeing sizes; returns the feature size."""
    shapes = dict(
        zip(
            NODE_INPUT_LAYOUTS,
            (None if shape is None else tuple(shape) for shape in shapes),
        )
    )
    groups = [
        (axis, label, tuple(NODE_INPUT_LAYOUTS))
        for axis, label in ((0, "batch size"), (1, "number of nodes"))
    ]
    with named_errors(layer):
        check_ranks(shapes, NODE_INPUT_LAYOUTS)
        check_sizes("node", shapes, groups)
        return sum(
            check_known_last_axis(name, shapes[name])[-1]
            for name in ("node_states", "node_inputs")
        )


def node_features(node_states, node_inputs, node_mask, dtype, layer=None):
    """`[h_v, x_v]` per node, zeroed at padding, the bool mask `(B, N)`,
    and `valid`, bool `(B,)` (or `None` for a bool mask): whether each
    graph's `node_mask` holds only 0 and 1.

    With `layer`, a concrete `node_mask` entry other than 0 or 1 (`2`, `-1`,
    `0.5`, NaN) raises a `ValueError` naming the layer, the graph, the node
    and the value, as `GatedGraph` refuses it; where no error can be raised
    (traced code), the caller turns the outputs of graphs that are not
    `valid` into NaN (`poison_invalid_graphs`), rather than read such an
    entry as a real node.
    """
    valid = None
    if keras.backend.standardize_dtype(node_mask.dtype) != "bool":
        if layer is not None:
            raise_problem(layer, find_node_mask_problem, node_mask)
        valid = ops.logical_not(ops.any(non_binary(ops, node_mask), axis=1))
    is_real = ops.cast(node_mask, "bool")
    features = ops.concatenate(
        [ops.cast(node_states, dtype), ops.cast(node_inputs, dtype)], axis=-1
    )
    features = zero_padding(features, ops.expand_dims(is_real, -1))
    return features, is_real, valid


def zero_padding(values, is_real):
    """`values` with the entries where `is_real` (bool, broadcastable) is
    False set to zero, whatever they hold (even NaN or infinity).

    On TensorFlow this is a division by the 0/1 mask, `divide_no_nan`:
    tf2onnx (`model.export(format="onnx")`) writes a float `where` as
    `c * x + (1 - c) * y`, so a NaN in a padding row gave `0 * NaN = NaN`,
    while it converts `DivNoNan` to an ONNX `Where`. Its TensorFlow gradient
    is 0 at padding. Elsewhere a `where` (in JAX and PyTorch the gradient of
    `x / 0` would be NaN at padding).
    """
    if keras.backend.backend() == "tensorflow":
        return ops.divide_no_nan(values, ops.cast(is_real, values.dtype))
    return ops.where(is_real, values, ops.zeros_like(values))


def unpack_node_input_shapes(layer, input_shape):
    """The three shapes of `build`, refusing a single tensor's shape.

    A single `(batch, N, F)` tensor has a shape of three entries too, so
    the list check alone would let it through to a cryptic error.
    """
    shapes = unpack_node_inputs(layer, input_shape)
    if any(shape is None or isinstance(shape, int) for shape in shapes):
        raise ValueError(
            f"{type(layer).__name__} takes the list `[node_states, "
            "node_inputs, node_mask]`, not a single tensor. Received: "
            f"inputs of shape {tuple(input_shape)}"
        )
    return shapes
