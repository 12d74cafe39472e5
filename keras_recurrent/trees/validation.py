"""Checking padded tree tensors before they reach a model.

`tree_flags` and `TREE_RULES` are the one table of the tree rules (see
`keras_recurrent._rules` for its executors).
"""

import numpy as np

from keras_recurrent._checks import check_tensor_dtype
from keras_recurrent._rules import NUMPY
from keras_recurrent._rules import Rule
from keras_recurrent._rules import check_ranks
from keras_recurrent._rules import check_sizes
from keras_recurrent._rules import first_problem
from keras_recurrent._rules import raise_message
from keras_recurrent._rules import show

# The three tree tensors, in the order the tree layers take them.
TREE_LAYOUTS = {
    "node_inputs": "(batch, num_nodes, features)",
    "children": "(batch, num_nodes, num_children)",
    "node_mask": "(batch, num_nodes)",
}
TREE_TENSOR_NAMES = tuple(TREE_LAYOUTS)


def validate_tree_tensors(children, node_mask, *, arity=None):
    """Checks a padded batch of trees and raises on bad input.

    The format is the one `kr.layers.ChildSumTreeLSTM` and
    `kr.layers.NaryTreeLSTM` read: `children` `(batch, N, K)` integers, the
    indices of each node's children within the same tree with `-1` for an
    empty slot, and `node_mask` `(batch, N)`, bool or integer, nonzero for
    real nodes. Nodes are in topological order (every child's index is
    smaller than its parent's), real nodes come first and the root is the
    last real node.

    Args:
        children: Integer array-like `(batch, N, K)`.
        node_mask: Bool or integer array-like `(batch, N)`.
        arity: Optional positive integer; when given, `K` must equal it.

    Returns:
        `None`.

    Raises:
        ValueError: If a shape or dtype is wrong, the real nodes do not come
            first, or a child index is out of range, not smaller than its
            parent's, on a padding node, or points to a padding node, a node
            lists a child twice (`[0, 0]`) or is the child of two nodes, or
            a real node other than the root is no node's child; the message
            names the tree and the node.

    Example:

    >>> trees = kr.trees.encode_trees(["(MAX 2 (MIN 3 4))"])
    >>> kr.trees.validate_tree_tensors(trees["children"], trees["node_mask"])
    """
    children, node_mask = np.asarray(children), np.asarray(node_mask)
    check_tree_shapes(None, children.shape, node_mask.shape, arity=arity)
    check_tree_index_dtypes(children, node_mask)
    raise_message(find_tree_problem(children, node_mask))


def check_tree_index_dtypes(children, node_mask):
    """Integer `children` (a float `1.7` is not truncated into node 1) and
    a boolean or integer `node_mask`."""
    why = " (node indices, -1 for an empty slot)"
    check_tensor_dtype("children", children, "integer", why)
    why = " (nonzero for real nodes)"
    check_tensor_dtype("node_mask", node_mask, "boolean or integer", why)


def find_tree_problem(children, node_mask):
    """The message of the first problem of NumPy `children` and
    `node_mask`, naming the tree, the node and the values, or `None`."""
    children = np.asarray(children).astype(np.int64)
    real = np.asarray(node_mask).astype(bool)
    batch_size, num_nodes, _ = children.shape
    # The first and last parent of each node, as `ops.segment_min` and
    # `ops.segment_max` give them in the layers.
    trees, parents, slots = np.nonzero((children >= 0) & (children < num_nodes))
    rows = trees * num_nodes + children[trees, parents, slots]
    first = np.full(batch_size * num_nodes, num_nodes)
    last = np.full(batch_size * num_nodes, -1)
    np.minimum.at(first, rows, parents)
    np.maximum.at(last, rows, parents)
    flags = tree_flags(NUMPY, children, real, first, last)
    arrays = {"children": children, "node_mask": real.astype(int)}
    return first_problem(TREE_RULES, flags, arrays, num_nodes=num_nodes)


def tree_flags(xp, children, real, first_parent, last_parent):
    """For each of `TREE_RULES`, the bool `(batch, N)` flags of bad nodes;
    `first_parent` and `last_parent` `(batch * N,)` are each node's
    smallest and largest parent in any order-preserving numbering (for a
    node without one, `first_parent >= last_parent` and `last_parent < 0`).
    """
    shape = xp.shape(children)
    first, last = (
        xp.reshape(p, shape[:2]) for p in (first_parent, last_parent)
    )
    is_child = xp.not_equal(children, -1)
    in_range = xp.logical_and(
        xp.greater_equal(children, 0), xp.less(children, shape[1])
    )
    # With the real nodes first (the first rule, reported before this
    # one), a child is real when its index is below the number of them.
    num_real = xp.sum(xp.cast(real, "int32"), axis=1)
    padding_child = xp.greater_equal(children, xp.reshape(num_real, (-1, 1, 1)))
    node_index = xp.reshape(xp.arange(shape[1], dtype="int32"), (1, -1, 1))
    later = xp.concatenate([real[:, 1:], xp.zeros_like(real[:, :1])], axis=1)
    ordered = xp.sort(children, axis=-1)

    def any_slot(bad, also):
        return xp.any(xp.logical_and(bad, also), axis=-1)

    return [
        xp.logical_and(xp.logical_not(real), later),
        any_slot(is_child, xp.logical_not(in_range)),
        any_slot(is_child, xp.logical_not(xp.expand_dims(real, -1))),
        any_slot(in_range, padding_child),
        any_slot(in_range, xp.greater_equal(children, node_index)),
        any_slot(
            xp.equal(ordered[..., 1:], ordered[..., :-1]),
            xp.greater_equal(ordered[..., 1:], 0),
        ),
        xp.less(first, last),
        xp.logical_and(xp.logical_and(real, later), xp.less(last, 0)),
    ]


def _children(a, tree, node):
    return show(a, "children", tree, node)


def _repeated(a, tree, node):
    ordered = np.sort(a["children"][tree, node])
    twice = ordered[1:][(ordered[1:] == ordered[:-1]) & (ordered[1:] >= 0)]
    return (
        f"node {node} of tree {tree} lists node {twice[0]} twice, in "
        + _children(a, tree, node)
    )


def _parents(a, tree, node):
    parents = np.unique(np.nonzero(a["children"][tree] == node)[0])
    return f"node {node} of tree {tree} is a child of nodes {parents.tolist()}"


def _orphan(a, tree, node):
    size = int(a["node_mask"][tree].sum())
    return (
        f"node {node} of tree {tree} is neither the root nor the child of "
        f"any node, in children[{tree}]={a['children'][tree, :size].tolist()}"
    )


# In the order of `tree_flags`, which is the order they are reported in.
TREE_RULES = (
    Rule(
        "`node_mask` must put the real nodes first (the root is the last "
        "real node).",
        lambda a, tree, node: show(a, "node_mask", tree),
    ),
    Rule(
        "`children` must hold node indices in [0, {num_nodes}) (the padded "
        "number of nodes), or -1 for an empty slot.",
        _children,
    ),
    Rule(
        "`children` of a padding node (zero `node_mask`) must be -1.",
        _children,
    ),
    Rule(
        "`children` must only point to real nodes (nonzero `node_mask`).",
        lambda a, tree, node: (
            f"{_children(a, tree, node)}, where {show(a, 'node_mask', tree)}"
        ),
    ),
    Rule(
        "`children` must be in topological order: every child's index "
        "smaller than its parent's (no cycles).",
        _children,
    ),
    Rule(
        "`children` must form trees: a node lists each child once.", _repeated
    ),
    Rule(
        "`children` must form trees: every node is the child of at most "
        "one node.",
        _parents,
    ),
    Rule(
        "`children` must connect every real node to the root (the last "
        "real node).",
        _orphan,
    ),
)


def check_tree_shapes(
    node_inputs_shape, children_shape, node_mask_shape, *, arity=None
):
    """Checks ranks, agreeing sizes (`None` matches anything; a `None`
    `node_inputs_shape` is skipped) and `K` against `arity`."""
    shapes = {"children": children_shape, "node_mask": node_mask_shape}
    if node_inputs_shape is not None:
        shapes = {"node_inputs": node_inputs_shape, **shapes}
    groups = ((0, "batch size", shapes), (1, "number of nodes", shapes))
    check_ranks(shapes, TREE_LAYOUTS)
    check_sizes("tree", shapes, groups)
    if arity is not None and children_shape[-1] != arity:
        raise ValueError(
            f"`children` must have arity={arity} child slots, "
            f"(batch, num_nodes, {arity}). "
            f"Received: children.shape={tuple(children_shape)}"
        )
