"""The tree layers' checks: `TREE_RULES` eagerly, traced and as flags."""

import keras
import numpy as np
from keras import ops

from keras_recurrent._checks import check_float_dtype
from keras_recurrent._rules import any_bad_example
from keras_recurrent._rules import unpack_inputs
from keras_recurrent.layers._concrete import concrete_numpy
from keras_recurrent.layers._concrete import narrowed_by_conversion
from keras_recurrent.layers._tf_checks import after_assertions
from keras_recurrent.layers._tf_checks import rule_assertions
from keras_recurrent.layers._tree_levels import flat_child_rows
from keras_recurrent.layers._tree_levels import reduce_parents
from keras_recurrent.trees.validation import TREE_RULES
from keras_recurrent.trees.validation import TREE_TENSOR_NAMES
from keras_recurrent.trees.validation import check_tree_shapes
from keras_recurrent.trees.validation import find_tree_problem
from keras_recurrent.trees.validation import tree_flags


def unpack_tree_inputs(layer, inputs):
    """`[node_inputs, children, node_mask]` from a list or a dict."""
    return unpack_inputs(layer, inputs, TREE_TENSOR_NAMES)


def check_tree_input_shapes(layer, shapes, arity=None):
    """Static checks of the three input shapes (list, in the list order)."""
    try:
        check_tree_shapes(
            *[None if shape is None else tuple(shape) for shape in shapes],
            arity=arity,
        )
    except ValueError as error:
        raise ValueError(f"{type(layer).__name__}: {error}") from None
    num_nodes = shapes[1][1]
    if num_nodes == 0:
        raise ValueError(
            f"{type(layer).__name__} needs trees of at least one (padded) "
            "node, `N >= 1`. Received: "
            f"children.shape={tuple(shapes[1])}"
        )


def check_tree_dtypes(layer, node_inputs, children, node_mask):
    """Static dtype checks: float `node_inputs`, integer `children` (a
    float `1.7` is not truncated into node 1) and a bool or integer
    `node_mask` (a float `0.5` is not read as a real node)."""
    check_float_dtype(layer, node_inputs, "node_inputs")
    name = type(layer).__name__
    children_dtype = keras.backend.standardize_dtype(children.dtype)
    if "int" not in children_dtype:
        raise ValueError(
            f"{name} expects integer `children` (node indices, -1 for an "
            "empty slot); floats are not truncated into indices. "
            f"Received: children.dtype={children_dtype}"
        )
    mask_dtype = keras.backend.standardize_dtype(node_mask.dtype)
    if mask_dtype != "bool" and "int" not in mask_dtype:
        raise ValueError(
            f"{name} expects a bool or integer `node_mask` (nonzero for "
            f"real nodes). Received: node_mask.dtype={mask_dtype}"
        )


def check_host_children(layer, inputs):
    """Checks NumPy `children` that Keras would narrow before `call`
    (see `narrowed_by_conversion`); anything else is left to `call`."""
    try:
        _, children, node_mask = unpack_tree_inputs(layer, inputs)
    except ValueError:
        return
    if not narrowed_by_conversion(children, node_mask):
        return
    children, node_mask = np.asarray(children), np.asarray(node_mask)
    if children.ndim == 3 and node_mask.shape == children.shape[:2]:
        check_children_eagerly(layer, children, node_mask)


def children_as_int32(layer, children, node_mask):
    """`children` as int32, and whether they were checked eagerly.

    The range is checked on the input dtype, before the cast: an int64
    child `2**32 + 1` must not wrap into node 1. Concrete values are
    checked here (a `ValueError` naming the value received). Traced, a
    child that the cast would change becomes `N`, out of range, which the
    traced checks (`check_children`, `bad_trees`) then refuse.
    """
    checked = check_children_eagerly(layer, children, node_mask)
    narrow = ops.cast(children, "int32")
    dtype = keras.backend.standardize_dtype(children.dtype)
    if checked or dtype in ("int8", "int16", "int32", "uint8", "uint16"):
        return narrow, checked
    exact = ops.equal(ops.cast(narrow, dtype), children)
    if dtype.startswith("uint"):
        # 2**32 - 1 would survive the round trip as -1, an empty slot.
        exact = ops.logical_and(exact, ops.greater_equal(narrow, 0))
    return ops.where(exact, narrow, ops.shape(children)[1]), checked


def check_children(
    layer,
    children,
    node_mask,
    first_parent,
    last_parent,
    node_of_row,
    checked_eagerly=False,
):
    """Raises on bad `children`; returns `last_parent`, after the checks.

    `first_parent` and `last_parent` are `reduce_parents` (`segment_min`
    and `segment_max`) of the real nodes' children, numbered as the real
    nodes; `node_of_row` `(batch * N,)` maps each row of the flat batch to
    its real node (the number of real nodes for padding).

    Concrete tensors that were not `checked_eagerly` raise a `ValueError`;
    traced with TensorFlow, `TREE_RULES` become run-time assertions, which
    the returned tensor depends on (the level loop runs after them); other
    backends have no assertion, and skip them.
    """
    if checked_eagerly or check_children_eagerly(layer, children, node_mask):
        return last_parent
    if keras.backend.backend() != "tensorflow":
        return last_parent
    # Padding rows (`node_of_row` past the real nodes) get one parent, 0.
    # One gather for both.
    parents = ops.stack([first_parent, last_parent], axis=1)
    parents = ops.take(
        ops.concatenate([parents, ops.zeros((1, 2), "int32")]),
        node_of_row,
        axis=0,
    )
    first, last = parents[:, 0], parents[:, 1]
    flags = tree_flags(ops, children, ops.cast(node_mask, "bool"), first, last)
    [last_parent] = after_assertions(
        [last_parent],
        lambda: rule_assertions(
            layer, TREE_RULES, flags, "tree", "node", num_nodes="num_nodes"
        ),
        any_bad=ops.any(any_bad_example(ops, flags)),
    )
    return last_parent


def check_children_eagerly(layer, children, node_mask):
    """Raises a `ValueError` naming the first bad node of concrete tree
    tensors; returns whether they were concrete (checked)."""
    arrays = concrete_numpy(children, node_mask)
    if arrays is None:
        return False
    problem = find_tree_problem(*arrays)
    if problem is not None:
        raise ValueError(f"{type(layer).__name__} {layer.name!r}: {problem}")
    return True


def bad_trees(children, real):
    """`(batch,)` bool: the trees that break any of `TREE_RULES`, for the
    static-shape path, where no assertion can run; `real` is the bool
    `(batch, N)` mask."""
    child_rows = flat_child_rows(
        children, ops.shape(real)[0] * ops.shape(real)[1]
    )
    first = reduce_parents(child_rows, ops.segment_min)
    last = reduce_parents(child_rows, ops.segment_max)
    return any_bad_example(ops, tree_flags(ops, children, real, first, last))
