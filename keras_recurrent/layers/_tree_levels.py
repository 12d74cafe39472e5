"""The schedules of `TreeRNN`'s level loop: which nodes each step updates,
and which rows they read.

One loop (`TreeRNN`) consumes a schedule, a dict that says where the
states live and what each step reads and writes; this module derives the
schedules. `dynamic_schedule` works on the real nodes alone, sorted by
level in the graph (TensorFlow without XLA, PyTorch: dynamic shapes);
`static_schedule` and `host_schedule` keep every row of the padded batch,
with a window of rows per step, derived in the graph or read from the
host's `tree_levels` (XLA and JAX: static shapes).

A schedule holds:

- `leaf_rows`: the rows of the flat batch (`b * N + v`) whose states the
  leaf pass computes, in state order; `None` for every row, kept where
  `leaf_mask` `(B * N, 1)` is true (zeros elsewhere).
- `inner_rows`: the rows whose inputs the loop reads, in the order of the
  step's `x_rows`; `None` for every row, then the zero row `B * N`.
- `num_states`: the rows of the state arrays before their last, all-zero
  row (which empty child slots read): leaves first, then the inner nodes.
- `level_rows(level)`: a step's `(x_rows, slots, out, valid)`: the rows of
  the loop's inputs, the children's state rows `(M, K)` (the zero row in
  empty slots), the state rows written, and `None` or `(M,)` bool, whether
  each entry is a node (the others write zeros).
- `bounds`: `(first, stop, most)`, the steps `first <= level < stop`, a
  tensor `stop`; `most` (or `None`) bounds it where XLA's gradient, JAX or
  PyTorch's exports need a loop of static length.
- `dense`: whether most of the `most` steps update nodes (a host
  schedule): where a loop must have a static length (JAX, PyTorch's
  exports) it runs them all rather than skip those past `stop`.
- `add_into_zeros`: whether a step adds its states into the zero rows it
  writes (one in-place scatter-add under XLA) instead of updating them.
- `node_states`: `(B * N,)`, each node's state row (the zero row for
  padding); `None` where state row `r` is node row `r`.
- `roots`: `(B,)`, each root's state row (the zero row for an empty tree).
- `bad`: `None`, or `(B,)` bool, the trees that break the rules (compiled
  code cannot raise), whose outputs become NaN.
"""

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


def node_parents(children):
    """`(first, last)`, each `(n,)` int32: the parents of each of `n`
    nodes, as `TREE_RULES`' flags (`tree_flags`) read them. `children`
    `(n, K)` holds the nodes' children, `n` in an empty slot.

    `last` is a node's parent, or `-1` for a node without one; a node in
    several slots (of one or more parents) gets some node number below `n`
    as `last` and `first = last - 1` (`first < last` flags it); otherwise
    `first == last`. Counted with one segment sum, not as the smallest and
    largest parent: tf2onnx converts no segment max or min, and one sum of
    two columns takes no longer than the two reductions.
    """
    num, width = ops.shape(children)[0], ops.shape(children)[1]
    parents = ops.broadcast_to(
        ops.reshape(ops.arange(num, dtype="int32"), (-1, 1)), (num, width)
    )
    parents = ops.reshape(parents, (-1, 1))
    # Empty slots count for an extra node, dropped after.
    sums = ops.segment_sum(
        ops.concatenate([ops.ones_like(parents), parents], axis=1),
        ops.reshape(children, (-1,)),
        num_segments=num + 1,
    )[:num]
    count, total = sums[:, 0], sums[:, 1]
    last = ops.where(ops.greater(count, 0), ops.minimum(total, num - 1), -1)
    return ops.where(ops.greater(count, 1), last - 1, last), last


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


def root_rows(real):
    """`(B,)`: each tree's root as its row `b * N + v` of the flat batch:
    its last real node; `B * N` (the zero row) for an empty tree."""
    batch_size, num_nodes = ops.shape(real)[0], ops.shape(real)[1]
    sizes = ops.sum(ops.cast(real, "int32"), axis=1)
    return ops.where(
        ops.greater(sizes, 0),
        ops.arange(batch_size, dtype="int32") * num_nodes + sizes - 1,
        batch_size * num_nodes,
    )


def good_child_rows(children, real, bad):
    """`(flat_good, child_rows)`: `(B * N,)` bool, the real nodes of the
    trees not in `bad`, and `(B * N, K)`, their children as rows of the flat
    batch (`B * N`, the zero row, in empty slots and for the other rows)."""
    total = ops.shape(children)[0] * ops.shape(children)[1]
    good = ops.logical_and(real, ops.logical_not(ops.expand_dims(bad, -1)))
    flat_good = ops.reshape(good, (-1,))
    child_rows = ops.where(
        ops.expand_dims(flat_good, -1), flat_child_rows(children, total), total
    )
    return flat_good, child_rows


def padded_schedule(
    flat_good, child_rows, real, bad, level_rows, bounds, dense=False
):
    """A schedule over every row of the padded batch (static shapes): what
    `static_schedule` and `host_schedule` share. `flat_good` and
    `child_rows` are `good_child_rows`'; `level_rows(level, child_rows)`
    gives a step's rows, reading `child_rows` with the zero row appended."""
    total = ops.shape(child_rows)[0]
    flat_good = ops.expand_dims(flat_good, -1)
    is_parent = ops.any(ops.less(child_rows, total), axis=1, keepdims=True)
    child_rows = ops.concatenate(
        [child_rows, ops.full_like(child_rows[:1], total)]
    )
    return {
        "leaf_rows": None,
        "leaf_mask": ops.logical_and(flat_good, ops.logical_not(is_parent)),
        "input_mask": flat_good,
        "inner_rows": None,
        "num_states": total,
        "level_rows": lambda level: level_rows(level, child_rows),
        "bounds": bounds,
        "dense": dense,
        "add_into_zeros": True,
        "node_states": lambda: None,
        "roots": lambda: root_rows(real),
        "bad": bad,
    }


def static_schedule(children, real, bad):
    """The schedule derived in the graph with static shapes (XLA and JAX
    without a host schedule).

    Each step updates one level (`node_levels`) of inner nodes through a
    window of `B * ceil(N / 2)` rows of the inner rows sorted by level, up
    to `N` steps. `real` `(B, N)` and `bad` `(B,)` are bool.
    """
    batch_size, num_nodes = ops.shape(children)[0], ops.shape(children)[1]
    total = batch_size * num_nodes
    flat_good, child_rows = good_child_rows(children, real, bad)
    levels = node_levels(child_rows, node_parents(child_rows)[1])
    inner = ops.logical_and(flat_good, ops.greater(levels, 0))
    levels = ops.where(inner, levels, 0)
    counts = ops.segment_sum(
        ops.cast(inner, "int32"), levels, num_segments=num_nodes + 1
    )
    starts = ops.cumsum(counts) - counts
    # No level holds more than half the nodes (each inner node has a child
    # of its own), so `ceil(N / 2)` rows per tree make a wide enough window,
    # and at least one row for any `N > 0`. Plain arithmetic keeps it a
    # Python number or a symbolic dimension where shapes are static (JAX,
    # also under `jax2tf` with an open `N`), a tensor elsewhere.
    window = batch_size * ((num_nodes + 1) // 2)
    order = ops.concatenate(
        [
            ops.cast(
                ops.argsort(ops.where(inner, levels, num_nodes + 1)), "int32"
            ),
            ops.full((window,), total, dtype="int32"),
        ]
    )
    num_levels = (
        ops.max(ops.concatenate([levels, ops.zeros((1,), "int32")])) + 1
    )

    def level_rows(level, child_rows):
        valid = ops.less(ops.arange(window, dtype="int32"), counts[level])
        rows = ops.where(
            valid, ops.slice(order, [starts[level]], [window]), total
        )
        return rows, ops.take(child_rows, rows, axis=0), rows, valid

    # A bound XLA needs for the gradient, and JAX's static loop (a tree has
    # at most N levels).
    return padded_schedule(
        flat_good,
        child_rows,
        real,
        bad,
        level_rows,
        (1, num_levels, num_nodes),
    )


def dynamic_schedule(index, parent, real):
    """The schedule over the real nodes alone (dynamic shapes: TensorFlow
    without XLA, PyTorch), sorted by level in the graph (`level_order`):
    the leaves first, then each level of inner nodes as a contiguous block
    of rows. `index` is `real_node_index`'s, `parent` the checked parent of
    each real node, `real` `(B, N)` bool."""
    total = ops.shape(real)[0] * ops.shape(real)[1]
    order = level_order(index["node_children"], parent, index["num_real"])
    # The rows of the flat batch in level order.
    rows = ops.take(index["real_rows"], order["by_level"])
    num_leaves, bounds = order["num_leaves"], order["bounds"]
    inner_slots = order["inner_slots"]
    slot, index_of = order["slot"], index["index_of"]

    def level_rows(level):
        start, stop = bounds[level], bounds[level + 1]
        block = ops.arange(start - num_leaves, stop - num_leaves)
        # A slice, not `take` (which adds five ops to wrap negative
        # indices): `inner_slots` has no gradient.
        slots = inner_slots[start - num_leaves : stop - num_leaves]
        # The level's nodes are the state rows `start:stop`.
        return block, slots, block + num_leaves, None

    return {
        # Two gathers, so that neither pass slices the other's rows out.
        "leaf_rows": rows[:num_leaves],
        "leaf_mask": None,
        "input_mask": None,
        "inner_rows": rows[num_leaves:],
        "num_states": index["num_real"],
        "level_rows": level_rows,
        "bounds": (1, order["num_levels"], None),
        "dense": False,
        "add_into_zeros": False,
        "node_states": lambda: ops.take(slot, index_of[:total]),
        "roots": lambda: ops.take(slot, ops.take(index_of, root_rows(real))),
        "bad": None,
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
    index_of = ops.concatenate(
        [
            ops.where(real, ops.cumsum(real_int) - 1, num_real),
            ops.expand_dims(num_real, 0),
        ]
    )
    # The inverse of `index_of`, as a segment sum, not `ops.nonzero`: on
    # TensorFlow, its `tf.unstack` of int64 indices is no LiteRT builtin.
    real_rows = ops.segment_sum(
        ops.arange(total, dtype="int32"),
        index_of[:total],
        num_segments=num_real + 1,
    )[:num_real]
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
    # Where each level starts in that order: a sum of counts, not a
    # `searchsorted` (tf2onnx and LiteRT convert no `LowerBound`).
    counts = ops.segment_sum(
        ops.ones_like(levels), levels, num_segments=num_levels
    )
    bounds = ops.concatenate(
        [ops.zeros((1,), "int32"), ops.cast(ops.cumsum(counts), "int32")]
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
