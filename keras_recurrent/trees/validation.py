"""Checking padded tree tensors before they reach a model."""

import numpy as np

# Names and order of the three tree tensors, as the tree layers take them.
TREE_TENSOR_NAMES = ("node_inputs", "children", "node_mask")


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
    children = np.asarray(children)
    node_mask = np.asarray(node_mask)
    check_tree_shapes(None, children.shape, node_mask.shape, arity=arity)
    if not np.issubdtype(children.dtype, np.integer):
        raise ValueError(
            "`children` must hold integers. "
            f"Received: children.dtype={children.dtype}"
        )
    if not (
        node_mask.dtype == bool or np.issubdtype(node_mask.dtype, np.integer)
    ):
        raise ValueError(
            "`node_mask` must be boolean or integer. "
            f"Received: node_mask.dtype={node_mask.dtype}"
        )
    problem = find_tree_problem(children, node_mask)
    if problem is not None:
        raise ValueError(problem)


def find_tree_problem(children, node_mask):
    """Describes the first problem of a padded batch of trees, or `None`.

    Args:
        children: Integer NumPy array `(batch, N, K)`.
        node_mask: Bool or integer NumPy array `(batch, N)`.

    Returns:
        A message naming the tree, the node and the offending values, or
        `None` when the batch is valid.
    """
    children = np.asarray(children).astype(np.int64)
    real = np.asarray(node_mask).astype(bool)
    num_nodes = real.shape[1]
    later_real = real[:, 1:] & ~real[:, :-1]
    if later_real.any():
        tree, node = np.argwhere(later_real)[0]
        return (
            "`node_mask` must put the real nodes first (the root is the last "
            f"real node). Received: node_mask[{tree}]="
            f"{real[tree].astype(int).tolist()}"
        )
    is_child = children != -1
    out_of_range = is_child & ((children < 0) | (children >= num_nodes))
    if out_of_range.any():
        tree, node, _ = np.argwhere(out_of_range)[0]
        return (
            f"`children` must hold node indices in [0, {num_nodes}) (the "
            "padded number of nodes), or -1 for an empty slot. Received: "
            f"children[{tree}, {node}]={children[tree, node].tolist()}"
        )
    on_padding = is_child & ~real[:, :, None]
    if on_padding.any():
        tree, node, _ = np.argwhere(on_padding)[0]
        return (
            "`children` of a padding node (zero `node_mask`) must be -1. "
            f"Received: children[{tree}, {node}]="
            f"{children[tree, node].tolist()}"
        )
    tree_index = np.arange(children.shape[0])[:, None, None]
    safe = np.where(is_child, children, 0)
    to_padding = is_child & ~real[tree_index, safe]
    if to_padding.any():
        tree, node, _ = np.argwhere(to_padding)[0]
        return (
            "`children` must only point to real nodes (nonzero "
            f"`node_mask`). Received: children[{tree}, {node}]="
            f"{children[tree, node].tolist()}, where node_mask[{tree}]="
            f"{real[tree].astype(int).tolist()}"
        )
    not_before = is_child & (children >= np.arange(num_nodes)[None, :, None])
    if not_before.any():
        tree, node, _ = np.argwhere(not_before)[0]
        return (
            "`children` must be in topological order: every child's index "
            "smaller than its parent's (no cycles). Received: "
            f"children[{tree}, {node}]={children[tree, node].tolist()}"
        )
    # A child named in two slots of one node: a tree has no such edge, and
    # the layers would add the child's state in twice.
    ordered = np.sort(children, axis=-1)
    repeated = (ordered[..., 1:] == ordered[..., :-1]) & (ordered[..., 1:] >= 0)
    if repeated.any():
        tree, node, slot = np.argwhere(repeated)[0]
        return (
            "`children` must form trees: a node lists each child once. "
            f"Received: node {node} of tree {tree} lists node "
            f"{ordered[tree, node, slot + 1]} twice, in children[{tree}, "
            f"{node}]={children[tree, node].tolist()}"
        )
    # Nodes with two parents, found at once (a loop over the nodes that
    # compares each with all children took 16 s for a 20,001-node tree).
    trees, parents, slots = np.nonzero(is_child)
    edges = np.unique(
        np.stack([trees, children[trees, parents, slots], parents], axis=1),
        axis=0,
    )
    pairs, counts = np.unique(edges[:, :2], axis=0, return_counts=True)
    if (counts > 1).any():
        tree, node = pairs[np.argmax(counts > 1)]
        parents = np.unique(np.nonzero(children[tree] == node)[0])
        if len(parents) > 1:
            return (
                "`children` must form trees: every node is the child of at "
                f"most one node. Received: node {node} of tree {tree} is a "
                f"child of nodes {parents.tolist()}"
            )
    is_child = np.zeros(real.shape, bool)
    trees, _, _ = np.nonzero(children >= 0)
    is_child[trees, children[children >= 0]] = True
    later = np.zeros_like(real)
    later[:, :-1] = real[:, 1:]
    orphan = real & later & ~is_child
    if orphan.any():
        tree, node = np.argwhere(orphan)[0]
        return (
            "`children` must connect every real node to the root (the last "
            f"real node). Received: node {node} of tree {tree} is neither "
            f"the root nor the child of any node, in children[{tree}]="
            f"{children[tree, : int(real[tree].sum())].tolist()}"
        )
    return None


def check_tree_shapes(
    node_inputs_shape, children_shape, node_mask_shape, *, arity=None
):
    """Checks ranks and matching sizes of the tree tensor shapes.

    `None` sizes (unknown while tracing) match anything; a `None` shape for
    `node_inputs` skips it.

    Raises:
        ValueError: If a rank is wrong, the batch or node sizes disagree, or
            `K` disagrees with `arity`.
    """
    shapes = {
        "node_inputs": node_inputs_shape,
        "children": children_shape,
        "node_mask": node_mask_shape,
    }
    ranks = {"node_inputs": 3, "children": 3, "node_mask": 2}
    layouts = {
        "node_inputs": "(batch, num_nodes, features)",
        "children": "(batch, num_nodes, num_children)",
        "node_mask": "(batch, num_nodes)",
    }
    for name, shape in shapes.items():
        if name == "node_inputs" and shape is None:
            continue
        if shape is None or len(shape) != ranks[name]:
            raise ValueError(
                f"`{name}` must have rank {ranks[name]}, {layouts[name]}. "
                f"Received: {name}.shape={_shape(shape)}"
            )
    present = [name for name, shape in shapes.items() if shape is not None]
    for axis, label in ((0, "batch size"), (1, "number of nodes")):
        known = {
            shapes[name][axis]
            for name in present
            if shapes[name][axis] is not None
        }
        if len(known) > 1:
            raise ValueError(
                f"The tree tensors disagree on the {label}. Received shapes: "
                + ", ".join(
                    f"{name}.shape={_shape(shapes[name])}" for name in present
                )
            )
    if arity is not None and children_shape[-1] != arity:
        raise ValueError(
            f"`children` must have arity={arity} child slots, "
            f"(batch, num_nodes, {arity}). "
            f"Received: children.shape={_shape(children_shape)}"
        )


def _shape(shape):
    return None if shape is None else tuple(shape)
