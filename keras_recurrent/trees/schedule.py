"""The level schedule of a batch of trees, computed on the host.

The Tree-LSTM layers update many nodes of many trees in one batched step.
Which nodes each step updates is plain integer data that the host works
out with the batch, as DGL's topological frontiers and TF Fold's
depth-wise batching do, rather than something the compiled program must
discover. `tree_levels` makes it; `kr.trees.encode_trees` and
`kr.trees.padded_batch` add it to each batch under the key `"tree_levels"`,
and the layers take it as an optional fourth input.

The schedule is one per tree, `(L, W)` (batched: `(B, L, W)`), so that
`model.fit`, `predict` and `tf.data` slice and batch it along the batch
axis like the other tree tensors. Row `l` lists the inner nodes of the
tree (their indices within the tree) that step `l` of the level loop
updates, `-1` padded; leaves are not listed (the layers compute them all
at once, before the loop). The nodes go by height (a leaf has height 0, a
node one more than its tallest child), lowest first, so that a node comes
after all its children: step `l` reads only leaves and nodes of earlier
steps. The inner nodes of one height fill `ceil(count / W)` steps of `W`
nodes each.

A step of the compiled loop works on a window of `B * W` rows, so `W` is
chosen per batch: a wide `W` (a whole height per step) gives few steps but
mostly padding in the windows (one tree's widest height is far more than
its share of the batch's), `W = 1` tight windows but a step per inner
node. `tree_levels` takes the power of two that minimizes the estimated
cost `L * (B * W + STEP_COST_ROWS)` of the loop. `L` is rounded up to a
bucket size (`bucket_size`), so that compiled code sees few shapes.
"""

import numpy as np

TREE_LEVELS = "tree_levels"

# The fixed cost of one step of the level loop, in rows of its window (the
# per-row cost is a few small matmuls): it weighs fewer, wider steps
# against more, tighter ones.
STEP_COST_ROWS = 256


def bucket_size(size):
    """`size` rounded up to one of a few bucket sizes (at least 1).

    1, 2, 4, 8, then four sizes per doubling (10, 12, 14, 16, 20, 24, 28,
    32, 40, ...): at most 25% more than `size` past 8, and a handful of
    shapes for compiled code.
    """
    size = max(int(size), 1)
    if size <= 8:
        return 1 << (size - 1).bit_length()
    step = 1 << ((size - 1).bit_length() - 3)
    return -(-size // step) * step


def tree_levels(children, node_mask, *, level_width=None, round_up=True):
    """The level schedule of a batch of padded trees (NumPy).

    Args:
        children: int `(B, N, K)` array, as `kr.trees.encode_trees` makes
            it (`-1` for empty slots).
        node_mask: `(B, N)` array, nonzero for real nodes.
        level_width: Optional positive integer `W`, the most nodes of one
            tree per step. Defaults to the power of two that minimizes the
            estimated cost of the loop (see the module docstring).
        round_up: Whether to round the number of steps `L` up to
            `bucket_size`. Defaults to `True`.

    Returns:
        An int32 array `(B, L, W)`: row `[b, l]` lists the inner nodes of
        tree `b` that step `l` updates, padded with `-1`: the nodes of
        height 1 in increasing order, `W` per step, then those of height 2,
        and so on. `L` is the most steps a tree of the batch needs
        (at least 1). A tree that breaks the rules of the tree tensors
        (`kr.trees.validate_tree_tensors`) gets an arbitrary schedule: the
        layers check the schedule against `children`.

    Example:

    >>> batch = kr.trees.encode_trees(["(1 2 3)", "(4 (5 6) 7)"])
    >>> kr.trees.tree_levels(batch["children"], batch["node_mask"]).tolist()
    [[[2], [-1]], [[1], [3]]]
    """
    children = np.asarray(children)
    real = np.asarray(node_mask) != 0
    if children.ndim != 3 or real.shape != children.shape[:2]:
        raise ValueError(
            "Arguments `children` `(B, N, K)` and `node_mask` `(B, N)` must "
            "agree. Received: children.shape="
            f"{children.shape}, node_mask.shape={real.shape}"
        )
    batch_size, num_nodes, _ = children.shape
    total = batch_size * num_nodes
    valid = real[..., None] & (children >= 0) & (children < num_nodes)
    inner = valid.any(axis=-1)
    # The inner nodes' children as rows of the flat batch, `total` (a row
    # of height -1) in empty slots.
    offsets = (np.arange(batch_size, dtype=np.int64) * num_nodes)[:, None]
    inner_rows = np.nonzero(inner.reshape(-1))[0]
    child_rows = np.where(
        valid, children.astype(np.int64) + offsets[..., None], total
    ).reshape(total, -1)[inner_rows]
    height = np.zeros(total + 1, np.int64)
    height[total] = -1
    # One round per level: a node's height is final once its children's
    # are. A cycle (a bad tree) would not settle: the rounds stop at N.
    for _ in range(num_nodes):
        child_height = height[child_rows]
        # A maximum per slot: NumPy's reduction over a short last axis
        # is many times slower.
        tallest = child_height[:, 0]
        for slot in range(1, child_height.shape[1]):
            tallest = np.maximum(tallest, child_height[:, slot])
        new = np.minimum(tallest + 1, num_nodes)
        if np.array_equal(new, height[inner_rows]):
            break
        height[inner_rows] = new
    height = height[:total].reshape(batch_size, num_nodes)
    levels = np.where(inner, height - 1, -1)
    num_heights = max(int(levels.max(initial=-1)) + 1, 1)
    tree_of, node = np.nonzero(levels >= 0)  # By tree, then node.
    level = levels[tree_of, node]
    # The inner nodes of each (tree, height), and each node's rank among
    # them (in node order).
    key = tree_of * num_heights + level
    order = np.argsort(key, kind="stable")
    key, tree_of, node, level = (a[order] for a in (key, tree_of, node, level))
    rank = np.arange(len(key)) - np.searchsorted(key, key, side="left")
    counts = np.bincount(key, minlength=batch_size * num_heights).reshape(
        batch_size, num_heights
    )
    if level_width is None:
        level_width = _cheapest_width(counts, batch_size)
    elif (
        isinstance(level_width, bool)
        or not isinstance(level_width, (int, np.integer))
        or level_width < 1
    ):
        raise ValueError(
            "Argument `level_width` must be a positive integer or None. "
            f"Received: level_width={level_width!r}"
        )
    width = int(level_width)
    steps = -(-counts // width)  # Steps per (tree, height).
    first_step = np.cumsum(steps, axis=1) - steps
    num_steps = max(int(steps.sum(axis=1).max(initial=0)), 1)
    if round_up:
        num_steps = bucket_size(num_steps)
    schedule = np.full((batch_size, num_steps, width), -1, np.int32)
    schedule[
        tree_of, first_step[tree_of, level] + rank // width, rank % width
    ] = node
    return schedule


def _cheapest_width(counts, batch_size):
    """The power of two `W` that minimizes `L * (B * W + STEP_COST_ROWS)`,
    `L` the most steps of a tree with `W` nodes per step; `counts` `(B,
    heights)` are the inner nodes of each tree at each height."""
    widest = max(int(counts.max(initial=0)), 1)
    best, best_cost = 1, None
    width = 1
    while True:
        num_steps = max(int((-(-counts // width)).sum(axis=1).max()), 1)
        cost = bucket_size(num_steps) * (batch_size * width + STEP_COST_ROWS)
        if best_cost is None or cost < best_cost:
            best, best_cost = width, cost
        if width >= widest:
            return best
        width *= 2
