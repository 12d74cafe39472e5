"""The level computation of the Tree-LSTM layers: which nodes each step of
the level loop updates, and which rows they read."""

from keras import ops


def flat_child_rows(children, empty):
    """`(batch * N, K)`: each slot's child as its row `b * N + child` of the
    flattened batch, `empty` for an empty (or out-of-range) slot."""
    batch_size, num_nodes = ops.shape(children)[0], ops.shape(children)[1]
    offsets = ops.reshape(
        ops.arange(batch_size, dtype="int32") * num_nodes, (-1, 1, 1)
    )
    valid = ops.logical_and(
        ops.greater_equal(children, 0), ops.less(children, num_nodes)
    )
    return ops.reshape(
        ops.where(valid, children + offsets, empty),
        (batch_size * num_nodes, ops.shape(children)[2]),
    )


def reduce_parents(children, segment_reduction):
    """`(n,)`: `segment_reduction` (e.g. `ops.segment_max`) of the parents
    of each of `n` nodes; `children` `(n, K)` holds the nodes' children,
    `n` for an empty slot. A node without a parent gets the reduction's
    empty value."""
    num, width = ops.shape(children)[0], ops.shape(children)[1]
    parents = ops.broadcast_to(
        ops.reshape(ops.arange(num, dtype="int32"), (-1, 1)), (num, width)
    )
    # Empty slots count for an extra node, dropped after.
    return segment_reduction(
        ops.reshape(parents, (-1,)),
        ops.reshape(children, (-1,)),
        num_segments=num + 1,
    )[:num]


def node_levels(children, parent):
    """The level of every node: 0 for leaves, then deepest nodes first.

    `children` `(n, K)` are the nodes' children, `n` for an empty slot;
    `parent` `(n,)` is the parent of each node (a negative number for
    roots): every node has at most one parent. An inner node at depth `d`
    (its distance from the root) gets level `1 + D - d`, where `D` is the
    largest depth of an inner node, so its inner children (depth `d + 1`)
    come one level earlier and its leaves at level 0. The depths come from
    pointer jumping: `log2(depth)` steps, not one per level.
    """
    num = ops.shape(children)[0]
    indices = ops.arange(num, dtype="int32")
    # Roots are their own parents.
    parent = ops.where(ops.less(parent, 0), indices, parent)

    def body(depth, ancestor, changed):
        # `depth` is the distance to `ancestor`; jump to its ancestor.
        jumped = ops.take(ancestor, ancestor)
        return (
            depth + ops.take(depth, ancestor),
            jumped,
            ops.any(ops.not_equal(jumped, ancestor)),
        )

    depth, _, _ = ops.while_loop(
        lambda depth, ancestor, changed: changed,
        body,
        (
            ops.cast(ops.not_equal(parent, indices), "int32"),
            parent,
            ops.convert_to_tensor(True),
        ),
        # Enough for any forest; bounds the loop on a cycle, which the
        # checks reject only where they run (eagerly, or TensorFlow).
        maximum_iterations=num + 1,
    )
    inner = ops.any(ops.less(children, num), axis=1)
    deepest = ops.max(
        ops.concatenate(
            [ops.where(inner, depth, -1), ops.full((1,), -1, "int32")]
        )
    )
    return ops.where(inner, 1 + deepest - depth, 0)


def static_schedule(children, real, bad):
    """The level schedule of `TreeLSTMBase._call_static`, with static shapes.

    Returns a dict: `real` `(B, N)`, the real nodes of the good trees;
    `child_rows` `(B * N + 1, K)`, each row's children as rows (the zero
    row `B * N` in empty slots, for padding and for the extra row);
    `order`, the inner rows sorted by level followed by the other rows and
    a window's worth of `B * N`; `counts` and `starts` `(N + 1,)`, the size
    and start in `order` of each level; `num_levels`.
    """
    batch_size, num_nodes = ops.shape(children)[0], ops.shape(children)[1]
    total = batch_size * num_nodes
    real = ops.logical_and(real, ops.logical_not(ops.expand_dims(bad, -1)))
    flat_real = ops.reshape(real, (-1,))
    child_rows = ops.where(
        ops.expand_dims(flat_real, -1), flat_child_rows(children, total), total
    )
    levels = node_levels(
        child_rows, reduce_parents(child_rows, ops.segment_max)
    )
    inner = ops.logical_and(flat_real, ops.greater(levels, 0))
    levels = ops.where(inner, levels, 0)
    counts = ops.segment_sum(
        ops.cast(inner, "int32"), levels, num_segments=num_nodes + 1
    )
    # No level holds more than half the nodes (each inner node has a child
    # of its own), so `ceil(N / 2)` rows per tree make a wide enough window,
    # and at least one row for any `N > 0`. Plain arithmetic keeps it a
    # Python number or a symbolic dimension where shapes are static (JAX,
    # also under `jax2tf` with an open `N`), a tensor elsewhere.
    window = batch_size * ((num_nodes + 1) // 2)
    order = ops.cast(
        ops.argsort(ops.where(inner, levels, num_nodes + 1)), "int32"
    )
    return {
        "real": real,
        "child_rows": ops.concatenate(
            [child_rows, ops.full_like(child_rows[:1], total)]
        ),
        "order": ops.concatenate(
            [order, ops.full((window,), total, dtype="int32")]
        ),
        "counts": counts,
        "starts": ops.cumsum(counts) - counts,
        "num_levels": ops.max(
            ops.concatenate([levels, ops.zeros((1,), "int32")])
        )
        + 1,
    }


def real_node_index(children, node_mask):
    """The real nodes of a batch of trees, numbered in row order.

    Node v of tree b is row b * N + v of the flat batch. Past the checks,
    the work is done on the real nodes alone (padding is most of a batch
    of trees of mixed sizes). Returns a dict: `real` `(B * N,)` bool;
    `num_real`; `real_rows`, the rows of the real nodes; `index_of`
    `(B * N + 1,)`, the number of the real node at each row, `num_real`
    for padding and for the extra row `B * N` that `flat_child_rows` gives
    empty slots; `node_children` `(num_real, K)`, each real node's
    children, `num_real` in empty slots.
    """
    total = ops.shape(children)[0] * ops.shape(children)[1]
    real = ops.reshape(ops.cast(node_mask, "bool"), (-1,))
    real_int = ops.cast(real, "int32")
    num_real = ops.sum(real_int)
    real_rows = ops.cast(ops.nonzero(real)[0], "int32")
    index_of = ops.concatenate(
        [
            ops.where(real, ops.cumsum(real_int) - 1, num_real),
            ops.expand_dims(num_real, 0),
        ]
    )
    node_children = ops.take(
        index_of,
        ops.take(flat_child_rows(children, total), real_rows, axis=0),
    )
    return {
        "real": real,
        "num_real": num_real,
        "real_rows": real_rows,
        "index_of": index_of,
        "node_children": node_children,
    }


def level_order(node_children, parent, num_real):
    """The real nodes sorted by level, for the dynamic level loop.

    The real nodes are sorted by level (`node_levels`): the leaves (level
    0) first, then the inner nodes, deepest first. Level `l` is the
    contiguous block `bounds[l]:bounds[l + 1]` of this order; the states
    `h` and `c` live in two arrays in the same order, plus a last all-zero
    row that empty slots read. Returns a dict: `num_real`, `num_levels`,
    `num_leaves`, `by_level` (the real nodes in that order), `slot`
    `(num_real + 1,)` (where each real node sits in it, `num_real` for
    `num_real`), `bounds` `(num_levels + 1,)` and `inner_slots`, the
    children's slots of the inner nodes in that order.
    """
    levels = node_levels(node_children, parent)
    # Not `ops.max(..., initial=-1)`: with PyTorch it puts `initial` on
    # the CPU, next to CUDA tensors.
    num_levels = (
        ops.max(ops.concatenate([levels, ops.full((1,), -1, "int32")])) + 1
    )
    num_leaves = ops.sum(ops.cast(ops.equal(levels, 0), "int32"))
    by_level = ops.cast(ops.argsort(levels), "int32")
    # `slot[node]`: where a real node sits in that order (the inverse
    # permutation, as a segment sum: TensorFlow's `scatter` took several
    # times longer), and the zero row `num_real` for `num_real`.
    slot = ops.concatenate(
        [
            ops.segment_sum(
                ops.arange(num_real, dtype="int32"),
                by_level,
                num_segments=num_real,
            ),
            ops.expand_dims(num_real, 0),
        ]
    )
    bounds = ops.cast(
        ops.searchsorted(
            ops.take(levels, by_level),
            ops.arange(num_levels + 1, dtype="int32"),
        ),
        "int32",
    )
    inner_slots = ops.take(
        slot, ops.take(node_children, by_level[num_leaves:], axis=0)
    )
    return {
        "num_real": num_real,
        "num_levels": num_levels,
        "num_leaves": num_leaves,
        "by_level": by_level,
        "slot": slot,
        "bounds": bounds,
        "inner_slots": inner_slots,
    }
