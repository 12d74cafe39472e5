"""Checks of the graph tensors inside the graph layers, eager and traced.

Three layers of defence, so that bad input never yields a finite wrong
number:

- static (rank, last-axis sizes, dtypes, `N = 0`): a `ValueError` while
  the layer is built or traced;
- values, on concrete tensors (eager execution): a `ValueError` naming the
  first bad entry; inside a traced TensorFlow function (`fit`, `predict`,
  a SavedModel): run-time assertions that run before any op that reads an
  index, so that their named `InvalidArgumentError` is the one raised;
- everywhere, also where assertions do not exist (XLA, traced JAX or
  PyTorch code): a per-graph validity flag. Bad edges are neutralized into
  padding rows, so that they cannot touch any graph, and the layers turn
  the outputs of an invalid graph into NaN.
"""

import keras
import numpy as np
from keras import ops

from keras_recurrent.graphs.validation import GRAPH_TENSOR_NAMES
from keras_recurrent.graphs.validation import check_graph_shapes
from keras_recurrent.graphs.validation import find_edge_problem
from keras_recurrent.graphs.validation import find_node_mask_problem
from keras_recurrent.layers._concrete import concrete_numpy
from keras_recurrent.layers._concrete import narrowed_by_conversion
from keras_recurrent.layers._concrete import on_meta_device
from keras_recurrent.layers._tf_checks import after_shape_assertions
from keras_recurrent.layers._tf_checks import after_value_assertions


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
            f"Received: inputs={describe_inputs(inputs)}"
        )
    return list(inputs)


def describe_inputs(inputs):
    """A short description of a wrong `inputs` structure for a message."""
    shape = getattr(inputs, "shape", None)
    if shape is not None:
        return f"a single tensor of shape {tuple(shape)}"
    if isinstance(inputs, (list, tuple)) and all(
        size is None or isinstance(size, int) for size in inputs
    ):
        # `build` gets a single tensor's shape.
        return f"a single tensor of shape {tuple(inputs)}"
    if isinstance(inputs, (list, tuple)):
        items = ", ".join(describe_inputs(item) for item in inputs)
        return f"{type(inputs).__name__} of {len(inputs)} ({items})"
    return f"{type(inputs).__name__} {inputs!r}"[:200]


def check_graph_input_shapes(layer, shapes):
    """Static checks of the four input shapes (list, in the list order)."""
    try:
        check_graph_shapes(*[_shape(shape) for shape in shapes])
    except ValueError as error:
        raise ValueError(f"{type(layer).__name__}: {error}") from None


def prepare_graph_inputs(layer, inputs, num_edge_types, features=None):
    """Checks the graph tensors and makes invalid graphs harmless.

    Args:
        layer: The calling layer, named in messages.
        inputs: The layer's list or dict of the four graph tensors.
        num_edge_types: The number of edge types.
        features: Optional width `D` the layer was built for.

    Returns:
        `node_inputs`, `edges` (int32, every bad edge turned into a `-1`
        padding row), `edge_types` (int32, 0 on padding rows), `node_mask`
        (bool) and `valid`, bool `(batch,)`: whether each graph was valid.

    Raises:
        ValueError: If a static shape or dtype is wrong, or (eagerly) a
            value is; inside a traced TensorFlow function the value checks
            raise an `InvalidArgumentError` at run time instead.
    """
    tensors = unpack_graph_inputs(layer, inputs)
    check_static_graph_inputs(layer, tensors, features)
    arrays = concrete_numpy(*tensors[1:])
    traced_tf = arrays is None and keras.backend.backend() == "tensorflow"
    if arrays is not None:
        _raise_on_bad_values(layer, *arrays, num_edge_types)
    elif traced_tf:
        tensors = after_shape_assertions(layer, tensors, features)
    node_inputs, edges, edge_types, node_mask = tensors
    flags = _edge_flags(edges, edge_types, node_mask, num_edge_types)
    valid = ops.logical_not(
        ops.logical_or(
            ops.any(flags["bad_edge"], axis=1),
            ops.any(flags["bad_mask"], axis=1),
        )
    )
    # Under XLA a served `(B, E, 3)` cannot be stopped by an assertion:
    # every graph of such a batch is invalid.
    valid = ops.logical_and(valid, ops.equal(ops.shape(edges)[2], 2))
    if traced_tf:
        valid = after_value_assertions(layer, flags, num_edge_types, valid)
    return (
        node_inputs,
        flags["edges"],
        flags["edge_types"],
        ops.cast(node_mask, "bool"),
        valid,
    )


def check_host_graph(layer, inputs, num_edge_types):
    """Checks NumPy index arrays that Keras would narrow before `call`.

    With JAX, `Layer.__call__` converts int64 `edges` to int32 first, and
    `2**32 + 1` would reach `call` as node 1 (see
    `narrowed_by_conversion`); the values are checked here, as given.
    Anything else is left to `call`, which names the problem.
    """
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
    problem = find_node_mask_problem(node_mask)
    if problem is None:
        problem = find_edge_problem(edges, edge_types, node_mask, num_types)
    if problem is not None:
        raise ValueError(f"{type(layer).__name__} {layer.name!r}: {problem}")


def _edge_flags(edges, edge_types, node_mask, num_edge_types):
    """Per-edge problems and the neutralized edges, with `keras.ops` only.

    Comparisons run on the input dtype, before any cast, so that a float
    `2.6` or an int64 `2**32 + 1` cannot turn into a valid-looking index.
    """
    num_nodes = ops.shape(node_mask)[1]
    sources, targets = edges[..., 0], edges[..., 1]
    real = ops.logical_not(
        ops.logical_and(ops.equal(sources, -1), ops.equal(targets, -1))
    )
    in_range = ops.logical_and(
        _whole_in_range(sources, num_nodes), _whole_in_range(targets, num_nodes)
    )
    fits = ops.logical_and(real, in_range)
    # A zero column after the last node: out-of-range reads land there, so
    # the gather never leaves the tensor (also with N = 0).
    mask_values = ops.cast(node_mask, "float32")
    is_real_node = ops.cast(ops.not_equal(mask_values, 0), "int32")
    is_real_node = ops.pad(is_real_node, [[0, 0], [0, 1]])
    source_index = ops.cast(ops.where(fits, sources, num_nodes), "int32")
    target_index = ops.cast(ops.where(fits, targets, num_nodes), "int32")
    joins_real = ops.logical_and(
        ops.take_along_axis(is_real_node, source_index, axis=1) > 0,
        ops.take_along_axis(is_real_node, target_index, axis=1) > 0,
    )
    type_ok = _whole_in_range(edge_types, num_edge_types)
    good = ops.logical_and(ops.logical_and(fits, joins_real), type_ok)
    return {
        "out_of_range": ops.logical_and(real, ops.logical_not(in_range)),
        "on_padding": ops.logical_and(fits, ops.logical_not(joins_real)),
        "bad_type": ops.logical_and(real, ops.logical_not(type_ok)),
        "bad_edge": ops.logical_and(real, ops.logical_not(good)),
        "bad_mask": non_binary_mask(node_mask),
        "edges": ops.stack([source_index, target_index], axis=-1)
        * ops.expand_dims(ops.cast(good, "int32"), -1)
        - ops.expand_dims(ops.cast(ops.logical_not(good), "int32"), -1),
        "edge_types": ops.cast(ops.where(good, edge_types, 0), "int32"),
    }


def non_binary_mask(node_mask):
    """`(batch, N)` bool: the `node_mask` entries other than 0 and 1 (`2`,
    `-1`, `0.5`, NaN), which no layer reads as a real or a padding node."""
    values = ops.cast(node_mask, "float32")
    return ops.logical_and(ops.not_equal(values, 0), ops.not_equal(values, 1))


def _whole_in_range(values, stop):
    """Whether `values` are whole numbers in `[0, stop)`."""
    dtype = keras.backend.standardize_dtype(values.dtype)
    limit = ops.cast(stop, dtype)
    inside = ops.logical_and(
        ops.greater_equal(values, ops.zeros((), dtype)),
        ops.less(values, limit),
    )
    if "float" in dtype:
        # NaN fails `values == floor(values)`, and so fails here too.
        inside = ops.logical_and(inside, ops.equal(values, ops.floor(values)))
    return inside


def _shape(shape):
    return None if shape is None else tuple(shape)
