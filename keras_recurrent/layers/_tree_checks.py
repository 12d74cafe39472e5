"""The tree layers' checks: `TREE_RULES` eagerly, traced and as flags."""

import keras
from keras import ops

from keras_recurrent._checks import check_float_dtype
from keras_recurrent._checks import named_errors
from keras_recurrent._rules import any_bad_example
from keras_recurrent._rules import check_at_least_one
from keras_recurrent._rules import check_named_shapes
from keras_recurrent.layers._tf_checks import assert_rules
from keras_recurrent.layers._tf_checks import check_host_arrays
from keras_recurrent.layers._tf_checks import raise_problem
from keras_recurrent.layers._tree_levels import flat_child_rows
from keras_recurrent.layers._tree_levels import node_parents
from keras_recurrent.trees.validation import TREE_RULES
from keras_recurrent.trees.validation import TREE_TENSOR_NAMES
from keras_recurrent.trees.validation import check_tree_index_dtypes
from keras_recurrent.trees.validation import check_tree_shapes
from keras_recurrent.trees.validation import find_tree_problem
from keras_recurrent.trees.validation import tree_flags


def check_tree_input_shapes(layer, shapes, arity=None):
    """Static checks of the three input shapes (list, in the list order)."""
    check_named_shapes(layer, check_tree_shapes, shapes, arity=arity)
    with named_errors(layer):
        check_at_least_one("node", "children", tuple(shapes[1]))


def check_tree_dtypes(layer, node_inputs, children, node_mask):
    """Float `node_inputs` and `check_tree_index_dtypes`, naming `layer`."""
    check_float_dtype(layer, node_inputs, "node_inputs")
    with named_errors(layer):
        check_tree_index_dtypes(children, node_mask)


def check_host_children(layer, inputs):
    """Checks NumPy `children` that Keras would narrow before `call`."""
    check_host_arrays(
        layer,
        inputs,
        TREE_TENSOR_NAMES,
        lambda _, *shapes: check_tree_shapes(None, *shapes),
        find_tree_problem,
    )


def children_as_int32(layer, children, node_mask):
    """`children` as int32, and whether they were concrete, so checked
    (before the cast: `2**32 + 1` must not wrap into node 1). Traced, a
    child the cast would change becomes `N`, which the checks refuse."""
    checked = raise_problem(layer, find_tree_problem, children, node_mask)
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
    layer, children, node_mask, first_parent, last_parent, node_of_row, checked
):
    """`last_parent`, after assertions of `TREE_RULES` in traced TensorFlow
    (unless `checked`); the parents are `node_parents` of the real nodes,
    and `node_of_row` maps each row of the flat batch to its real node."""
    if checked or keras.backend.backend() != "tensorflow":
        return last_parent
    # Padding rows (`node_of_row` past the real nodes) get one parent, 0.
    # One gather for both.
    parents = ops.stack([first_parent, last_parent], axis=1)
    parents = ops.concatenate([parents, ops.zeros((1, 2), "int32")])
    parents = ops.take(parents, node_of_row, axis=0)
    first, last = parents[:, 0], parents[:, 1]
    flags = tree_flags(ops, children, ops.cast(node_mask, "bool"), first, last)
    return assert_rules(
        layer, [last_parent], "tree", TREE_RULES, flags, num_nodes="num_nodes"
    )[0]


def bad_trees(children, real):
    """`(batch,)` bool: the trees that break any of `TREE_RULES`, for the
    static-shape path, where no assertion can run."""
    child_rows = flat_child_rows(
        children, ops.shape(real)[0] * ops.shape(real)[1]
    )
    first, last = node_parents(child_rows)
    return any_bad_example(ops, tree_flags(ops, children, real, first, last))
