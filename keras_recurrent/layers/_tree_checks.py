"""Checks of the tree tensors inside the tree layers, eager and traced."""

import keras
import numpy as np
from keras import ops

from keras_recurrent._checks import check_float_dtype
from keras_recurrent.layers._concrete import concrete_numpy
from keras_recurrent.layers._concrete import narrowed_by_conversion
from keras_recurrent.layers._tf_checks import assert_no_bad_node

# Re-exported: the tree layers import it from here.
from keras_recurrent.layers._tf_checks import in_xla_context  # noqa: F401
from keras_recurrent.layers._tree_levels import flat_child_rows
from keras_recurrent.layers._tree_levels import reduce_parents
from keras_recurrent.trees.validation import TREE_TENSOR_NAMES
from keras_recurrent.trees.validation import check_tree_shapes
from keras_recurrent.trees.validation import find_tree_problem


def unpack_tree_inputs(layer, inputs):
    """`[node_inputs, children, node_mask]` from a list or a dict."""
    if isinstance(inputs, dict):
        missing = [name for name in TREE_TENSOR_NAMES if name not in inputs]
        if missing:
            raise ValueError(
                f"{type(layer).__name__} takes a dict with the keys "
                f"{list(TREE_TENSOR_NAMES)}. Received keys: {sorted(inputs)}"
            )
        return [inputs[name] for name in TREE_TENSOR_NAMES]
    # A single shape (`build` of a layer called on one tensor) is a tuple
    # of sizes, not of three shapes.
    if (
        not isinstance(inputs, (list, tuple))
        or len(inputs) != 3
        or any(item is None or isinstance(item, int) for item in inputs)
    ):
        raise ValueError(
            f"{type(layer).__name__} takes the list `[node_inputs, children, "
            "node_mask]` (or a dict with these keys). "
            f"Received: inputs={inputs!r}"
        )
    return list(inputs)


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
    """Static dtype checks: float `node_inputs`, integer `children` and a
    bool or integer `node_mask`.

    Float `children` would be truncated (a child `1.7` read as node 1) and a
    float `node_mask` read as real wherever nonzero (0.5 included), so both
    are rejected rather than converted.
    """
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
    """Checks NumPy `children` that Keras would narrow before `call`.

    With JAX, `Layer.__call__` converts an int64 array to int32 first, and
    `2**32 + 1` would reach `call` as node 1 (see
    `narrowed_by_conversion`); the values are checked here, as given.
    Anything else is left to `call`, which names the problem.
    """
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

    `first_parent` and `last_parent` are `reduce_parents` of the real
    nodes' children, numbered as the real nodes, with `ops.segment_min` and
    `ops.segment_max` (the layer needs the parents anyway; the check that
    no node has two parents compares them); `node_of_row` `(batch * N,)`
    maps each row of the flat batch to its real node (the number of real
    nodes for padding).

    On concrete tensors (eager execution) this is a `ValueError` naming the
    first bad node. While tracing, the checks become part of the graph and
    fail at run time: with TensorFlow, through `tf.debugging.Assert` (an
    `InvalidArgumentError`), and the returned tensor depends on them, so
    the level loop, which reads it, runs after them. Other backends have no
    graph assertion that `keras.ops` offers, so traced checks are skipped
    there. `checked_eagerly`: the concrete values were already checked
    (by `children_as_int32`, on the input dtype).
    """
    if checked_eagerly or check_children_eagerly(layer, children, node_mask):
        return last_parent
    if keras.backend.backend() != "tensorflow":
        return last_parent
    real = ops.cast(node_mask, "bool")
    num_nodes = ops.shape(children)[1]
    # All problems in a few ops: a real node's children must lie in
    # [-1, its own index), a padding node's must be -1, and the real nodes
    # must come first (then a child before a real parent is real, too).
    # Only when one of them fails are the checks below run, to say which.
    node_index = ops.reshape(ops.arange(num_nodes, dtype="int32"), (1, -1))
    upper = ops.expand_dims(ops.where(real, node_index - 1, -1), -1)
    any_bad = ops.logical_or(
        ops.any(
            ops.logical_or(ops.less(children, -1), ops.greater(children, upper))
        ),
        ops.any(ops.logical_and(ops.logical_not(real[:, :-1]), real[:, 1:])),
    )
    # The level loop needs trees: a node with two parents would be put one
    # level below only one of them. Without a parent, `first_parent` is the
    # largest integer and `last_parent` the smallest; with one, they are
    # equal. Two slots of one parent naming the same child are refused by
    # `repeated_children` (the child's state would be added in twice).
    shared = ops.less(first_parent, last_parent)
    repeated = repeated_children(children)
    # Every real node but the root (the last real node) is a child: an
    # orphan would be left out of the root's state.
    has_parent = ops.reshape(
        ops.take(
            ops.concatenate(
                [ops.greater_equal(last_parent, 0), ops.ones((1,), "bool")]
            ),
            node_of_row,
        ),
        ops.shape(real),
    )
    later = ops.concatenate([real[:, 1:], ops.zeros_like(real[:, :1])], axis=1)
    orphan = ops.logical_and(
        ops.logical_and(real, later), ops.logical_not(has_parent)
    )
    any_bad = ops.logical_or(
        any_bad, ops.logical_or(ops.any(shared), ops.any(orphan))
    )
    any_bad = ops.logical_or(any_bad, ops.any(repeated))
    return assert_no_bad_node(
        last_parent,
        any_bad,
        lambda: _named_checks(
            layer,
            children,
            real,
            # Per row of the flat batch (false for padding).
            ops.take(
                ops.concatenate([shared, ops.zeros((1,), "bool")]),
                node_of_row,
            ),
            orphan,
            repeated,
        ),
    )


def repeated_children(children):
    """`(batch, N)` bool: the nodes that name one child in two slots."""
    ordered = ops.sort(children, axis=-1)
    return ops.any(
        ops.logical_and(
            ops.equal(ordered[..., 1:], ordered[..., :-1]),
            ops.greater_equal(ordered[..., 1:], 0),
        ),
        axis=-1,
    )


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


def _named_checks(layer, children, real, shared, orphan, repeated):
    """Each check of `check_children` alone: `(bad, message)` pairs;
    `shared` `(batch * N,)` marks the children of more than one node,
    `orphan` `(batch, N)` the real nodes that are neither the root nor a
    child, `repeated` `(batch, N)` the nodes that list a child twice."""
    num_nodes = ops.shape(children)[1]
    is_child = ops.not_equal(children, -1)
    padding_first = ops.logical_and(ops.logical_not(real[:, :-1]), real[:, 1:])
    out_of_range = ops.logical_and(
        is_child,
        ops.logical_or(
            ops.less(children, 0), ops.greater_equal(children, num_nodes)
        ),
    )
    in_range = ops.logical_and(is_child, ops.logical_not(out_of_range))
    on_padding = ops.logical_and(
        is_child, ops.logical_not(ops.expand_dims(real, -1))
    )
    batch_size, _, width = ops.shape(children)
    child_real = ops.take_along_axis(
        ops.cast(real, "int32"),
        ops.reshape(ops.where(in_range, children, 0), (batch_size, -1)),
        axis=1,
    )
    to_padding = ops.logical_and(
        in_range,
        ops.equal(ops.reshape(child_real, (batch_size, num_nodes, width)), 0),
    )
    node_index = ops.reshape(ops.arange(num_nodes, dtype="int32"), (1, -1, 1))
    not_before = ops.logical_and(
        in_range, ops.greater_equal(children, node_index)
    )
    shared = ops.reshape(shared, (batch_size, num_nodes, 1))
    prefix = f"{type(layer).__name__} {layer.name!r}: "
    checks = [
        (
            ops.expand_dims(padding_first, -1),
            "`node_mask` must put the real nodes first.",
        ),
        (
            out_of_range,
            "`children` must hold node indices in [0, num_nodes), or -1 for "
            "an empty slot.",
        ),
        (
            on_padding,
            "`children` of a padding node (zero `node_mask`) must be -1.",
        ),
        (
            to_padding,
            "`children` must only point to real nodes (nonzero `node_mask`).",
        ),
        (
            not_before,
            "`children` must be in topological order: every child's index "
            "smaller than its parent's (no cycles).",
        ),
        (
            ops.expand_dims(repeated, -1),
            "`children` must form trees: a node lists each child once.",
        ),
        (
            shared,
            "`children` must form trees: every node is the child of at "
            "most one node.",
        ),
        (
            ops.expand_dims(orphan, -1),
            "`children` must connect every real node to the root (the "
            "last real node): a real node is neither the root nor a child.",
        ),
    ]
    return [(bad, prefix + message) for bad, message in checks]


def bad_trees(children, real):
    """`(batch,)` bool: the trees with any problem `check_children` names.

    For the static-shape path, where no assertion can run: a tree with a
    child index out of range, not smaller than its parent's, on or to a
    padding node, padding before a real node, a child of two nodes or
    listed twice by one, or a real node that is neither the root (the last
    real node) nor a child.
    `real` is the bool `(batch, N)` mask.
    """
    batch_size, num_nodes = ops.shape(children)[0], ops.shape(children)[1]
    total = batch_size * num_nodes
    node_index = ops.reshape(ops.arange(num_nodes, dtype="int32"), (1, -1))
    later = ops.concatenate([real[:, 1:], ops.zeros_like(real[:, :1])], axis=1)
    padding_first = ops.logical_and(ops.logical_not(real), later)
    # A real node's children lie in [-1, its own index); a padding node's
    # are -1. With the real nodes first, a child is then real, too.
    upper = ops.expand_dims(ops.where(real, node_index - 1, -1), -1)
    out_of_range = ops.any(
        ops.logical_or(ops.less(children, -1), ops.greater(children, upper)),
        axis=-1,
    )
    child_rows = flat_child_rows(children, total)
    first = reduce_parents(child_rows, ops.segment_min)
    last = reduce_parents(child_rows, ops.segment_max)
    shared = ops.reshape(ops.less(first, last), (batch_size, num_nodes))
    has_parent = ops.reshape(
        ops.greater_equal(last, 0), (batch_size, num_nodes)
    )
    orphan = ops.logical_and(
        ops.logical_and(real, later), ops.logical_not(has_parent)
    )
    bad = ops.logical_or(
        ops.logical_or(padding_first, out_of_range),
        ops.logical_or(shared, orphan),
    )
    bad = ops.logical_or(bad, repeated_children(children))
    return ops.any(bad, axis=1)
