"""The level schedule of a batch of trees, computed on the host.

The Tree-LSTM layers update many nodes of many trees in one batched step.
Which nodes each step updates is plain integer data that the host works
out with the batch, as DGL's topological frontiers and TF Fold's
depth-wise batching do, rather than something the compiled program must
discover. `tree_levels` makes it; `kr.trees.encode_trees` and
`kr.trees.padded_batch` add it to each batch under the key `"tree_levels"`,
and the layers take it as an optional fourth input.

The schedule is `(B, L, W)`: step `l` of the compiled level loop updates
the `B * W` nodes listed in `[:, l, :]` (`-1` pads), through a window of
`B * W` rows. Leaves are not listed (the layers compute them all at once,
before the loop); every inner node is listed once, after its inner
children.

Where a node goes:

- Unpacked (`pack=False`), row `b` lists nodes of tree `b` only, by their
  index within the tree, so `model.fit`, `predict` and `tf.data` can
  slice, shuffle and batch the schedule along the batch axis like the
  other tree tensors. A step then holds at most `W` nodes of each tree,
  and a batch takes as many steps as its slowest tree needs.
- Packed (`pack=True`), the trees of each group of `PACKED_TREES`
  consecutive rows share their rows' `PACKED_TREES * W` slots per step, so
  a tree with many nodes ready borrows the slots of trees with few: for
  ListOps batches, 2 to 3 window rows per inner node against 5 to 7
  unpacked. Entry `v` of row `b`, in a group that starts at row `g` and
  holds `G` trees, is node `v % N` of tree
  `g + (b - g + v // N) % G`, so an unpacked schedule reads the same
  either way. A packed schedule belongs to its batch: slicing the batch
  anywhere but at multiples of `PACKED_TREES` rows, or shuffling it,
  breaks it (the layers check it: a `ValueError` where checks run, NaN
  for the trees affected under compilation).

Within a group (a tree, unpacked), the steps follow Hu's list schedule:
at each step the ready nodes (those whose inner children are done)
farthest from their root go first, which takes the fewest steps that `W`
slots per tree allow (Hu 1961, optimal for forests). `W` is the power of
two that minimizes the estimated cost `L * (B * W + STEP_COST_ROWS)` of
the loop, and `L` is rounded up to a bucket size (`bucket_size`), so that
compiled code sees few shapes.

Reference:
- [Hu 1961, "Parallel Sequencing and Assembly Line Problems"](
  https://doi.org/10.1287/opre.9.6.841)
"""

import numpy as np

from keras_recurrent._checks import check_bool
from keras_recurrent._checks import check_positive_int

TREE_LEVELS = "tree_levels"

# Consecutive trees that share the slots of a packed schedule
# (`tree_levels(..., pack=True)`); the layers read the schedule with the
# same groups.
PACKED_TREES = 8

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


def tree_levels(
    children, node_mask, *, level_width=None, round_up=True, pack=False
):
    """The level schedule of a batch of padded trees (NumPy).

    Args:
        children: int `(B, N, K)` array, as `kr.trees.encode_trees` makes
            it (`-1` for empty slots).
        node_mask: `(B, N)` array, nonzero for real nodes.
        level_width: Optional positive integer `W`, the slots per tree and
            step. Defaults to the power of two that minimizes the
            estimated cost of the loop (see the module docstring).
        round_up: Whether to round the number of steps `L` up to
            `bucket_size`. Defaults to `True`.
        pack: Whether the trees of each group of `PACKED_TREES` (8)
            consecutive rows share their slots, for fewer, fuller steps. A
            packed schedule must reach the layer with its batch whole (or
            split at multiples of 8 rows), unshuffled. Defaults to `False`:
            each row lists its own tree's nodes, and the schedule slices
            along the batch axis like the other tree tensors.

    Returns:
        An int32 array `(B, L, W)`: row `[b, l]` lists the inner nodes
        that step `l` updates, padded with `-1`; unpacked, the nodes of
        tree `b` by their index; packed, as the module docstring says.
        Every inner node is listed once, after its inner children. `L` is
        the number of steps (at least 1). A tree that breaks the rules of
        the tree tensors (`kr.trees.validate_tree_tensors`) gets an
        arbitrary schedule: the layers check the schedule against
        `children`.

    Example:

    >>> batch = kr.trees.encode_trees(["(1 2 3)", "(4 (5 6) 7)"])
    >>> kr.trees.tree_levels(batch["children"], batch["node_mask"]).tolist()
    [[[2], [-1]], [[1], [3]]]
    >>> kr.trees.tree_levels(
    ...     batch["children"], batch["node_mask"], pack=True).tolist()
    [[[5], [7]], [[6], [-1]]]
    """
    children = np.asarray(children)
    real = np.asarray(node_mask) != 0
    if children.ndim != 3 or real.shape != children.shape[:2]:
        raise ValueError(
            "Arguments `children` `(B, N, K)` and `node_mask` `(B, N)` must "
            "agree. Received: children.shape="
            f"{children.shape}, node_mask.shape={real.shape}"
        )
    level_width = check_positive_int(
        "level_width", level_width, allow_none=True
    )
    pack = check_bool("pack", pack)
    forest = _Forest(children, real, PACKED_TREES if pack else 1)
    if level_width is None:
        width, steps = forest.cheapest_width()
    else:
        width = int(level_width)
        steps = forest.hu_steps(width)
    num_steps = max(len(steps), 1)
    if round_up:
        num_steps = bucket_size(num_steps)
    return forest.schedule(steps, width, num_steps)


def pad_tree_levels(levels, shape):
    """Pads a level schedule to a larger `(L, W)`, with `-1` (NumPy).

    Padding steps and slots are no-ops: a layer reads the same outputs
    from the padded schedule. Compiled code sees the shape `(B, L, W)`
    alone, and a model exported with fixed sizes (PyTorch's ONNX export,
    LiteRT) takes the shape it was exported with.

    Args:
        levels: int `(B, L, W)` array, as `tree_levels` makes it.
        shape: `(num_levels, level_width)`, at least `(L, W)`.

    Returns:
        An int32 array `(B, num_levels, level_width)`.

    Example:

    >>> batch = kr.trees.encode_trees(["(1 2 3)", "(4 (5 6) 7)"])
    >>> kr.trees.pad_tree_levels(batch["tree_levels"], (3, 2)).shape
    (2, 3, 2)
    """
    levels = np.asarray(levels)
    if levels.ndim != 3:
        raise ValueError(
            "Argument `levels` must be a `(B, L, W)` schedule. Received: "
            f"levels.shape={levels.shape}"
        )
    if (
        not isinstance(shape, (tuple, list))
        or len(shape) != 2
        or any(
            not isinstance(size, (int, np.integer)) or size < old
            for size, old in zip(shape, levels.shape[1:])
        )
    ):
        raise ValueError(
            "Argument `shape` must be `(num_levels, level_width)`, at least "
            f"the schedule's {levels.shape[1:]}. Received: shape={shape!r}"
        )
    pad = [(0, 0)] + [
        (0, int(size) - old) for size, old in zip(shape, levels.shape[1:])
    ]
    return np.pad(levels.astype(np.int32), pad, constant_values=-1)


class _Forest:
    """The inner nodes of a batch of trees, as rows of the flat batch
    (`b * N + node`), with what Hu's list schedule needs."""

    def __init__(self, children, real, group_size):
        batch_size, num_nodes, _ = children.shape
        total = batch_size * num_nodes
        self.batch_size, self.num_nodes = batch_size, num_nodes
        valid = real[..., None] & (children >= 0) & (children < num_nodes)
        offsets = (np.arange(batch_size, dtype=np.int64) * num_nodes)[:, None]
        inner = valid.any(axis=-1).reshape(-1)
        # Each row's children as rows (`total`, a done row, in empty
        # slots), and one parent per row (`-1`: none; in a bad tree with
        # shared children, one of them).
        child_rows = np.where(
            valid, children.astype(np.int64) + offsets[..., None], total
        ).reshape(total, -1)
        parent = np.full(total + 1, -1, np.int64)
        for slot in range(child_rows.shape[1]):
            parent[child_rows[:, slot]] = np.arange(total)
        parent = parent[:total]
        self.rows = np.nonzero(inner)[0]
        self.parent = parent
        self.inner = inner
        self.depth = _depths(parent, num_nodes)
        tree = np.arange(total) // num_nodes
        self.group = tree // group_size
        first_tree = self.group * group_size
        self.first_tree = first_tree
        self.group_trees = np.minimum(group_size, batch_size - first_tree)
        # The inner rows by group, then farthest from the root first, then
        # row; `place` is each row's position in that order.
        self.by_priority = self.rows[
            np.lexsort(
                (self.rows, -self.depth[self.rows], self.group[self.rows])
            )
        ]
        self.place = np.zeros(total, np.int64)
        self.place[self.by_priority] = np.arange(len(self.by_priority))

    def hu_steps(self, width):
        """The rows updated at each step, each step's rows sorted by group
        then priority (a list of arrays), with `width` slots per tree of
        each group: Hu's list schedule."""
        # Inner children not done yet, per row (one parent per child).
        waiting = np.zeros(len(self.inner), np.int64)
        parents = self.parent[self.rows]
        np.add.at(waiting, parents[parents >= 0], 1)
        # The ready nodes, as their places in `self.by_priority`.
        ready = np.sort(self.place[self.rows[waiting[self.rows] == 0]])
        capacity = self.group_trees * width
        todo = self.inner.copy()
        left, steps = len(self.rows), []
        while left:
            if not len(ready):
                # Only in a bad tree (a cycle): the rest in any order;
                # the layers reject the tree anyway.
                ready = np.sort(self.place[np.nonzero(todo)[0]])
            rows = self.by_priority[ready]
            take = _rank_in_group(self.group[rows]) < capacity[rows]
            done = rows[take]
            steps.append(done)
            todo[done] = False
            left -= len(done)
            parents = self.parent[done]
            parents = parents[parents >= 0]
            np.subtract.at(waiting, parents, 1)
            freed = parents[(waiting[parents] == 0) & todo[parents]]
            ready = ready[~take]
            if len(freed):
                ready = np.sort(
                    np.concatenate([ready, self.place[np.unique(freed)]])
                )
        return steps

    def cheapest_width(self):
        """`(W, steps)` for the power of two `W` that minimizes the
        estimated cost `bucket_size(L) * (B * W + STEP_COST_ROWS)`.

        Hu's schedule takes about as many steps as the bound
        `max(longest chain, a group's nodes over its slots)`: the widths
        are tried by their bound's cost, until no bound beats the best
        schedule found."""
        # At least one step, also for a batch with no inner node (where
        # the bound below is 1 at every width).
        longest = max(int(self.depth[self.rows].max(initial=-1)) + 1, 1)
        per_group = np.bincount(self.group[self.rows])
        slots = self.group_trees[
            np.searchsorted(self.group, np.arange(len(per_group)))
        ]
        candidates, width = [], 1
        while True:
            bound = max(
                longest,
                int((-(-per_group // (slots * width))).max(initial=0)),
                1,
            )
            candidates.append((self._cost(bound, width), width))
            if bound == longest:
                break
            width *= 2
        best = None
        for bound_cost, width in sorted(candidates):
            if best is not None and bound_cost >= best[0]:
                break
            steps = self.hu_steps(width)
            cost = self._cost(len(steps), width)
            if best is None or cost < best[0]:
                best = (cost, width, steps)
        return best[1], best[2]

    def _cost(self, num_steps, width):
        return bucket_size(num_steps) * (
            self.batch_size * width + STEP_COST_ROWS
        )

    def schedule(self, steps, width, num_steps):
        """The `(B, num_steps, width)` int32 schedule of `steps`."""
        num_nodes = self.num_nodes
        schedule = np.full((self.batch_size, num_steps, width), -1, np.int32)
        for step, rows in enumerate(steps):
            rank = _rank_in_group(self.group[rows])
            first = self.first_tree[rows]
            slot_row = first + rank // width
            tree = rows // num_nodes
            shift = (tree - slot_row) % self.group_trees[rows]
            schedule[slot_row, step, rank % width] = (
                shift * num_nodes + rows % num_nodes
            )
        return schedule


def _rank_in_group(group):
    """Each entry's position among the entries of its group; `group`
    sorted."""
    return np.arange(len(group)) - np.searchsorted(group, group)


def _depths(parent, num_nodes):
    """Each row's distance to its root (`parent` `-1`), by pointer
    jumping; a cycle (a bad tree) stops at an arbitrary depth."""
    depth = (parent >= 0).astype(np.int64)
    above = parent.copy()
    for _ in range(max(int(num_nodes), 1).bit_length() + 1):
        has = above >= 0
        if not has.any():
            break
        target = above[has]
        depth[has] += depth[target]
        above[has] = above[target]
    return depth
