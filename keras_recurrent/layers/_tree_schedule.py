"""The host-made level schedule (`tree_levels`) in the Tree-LSTM layers:
reading it from the inputs, checking it against `children`, and turning it
into the rows that each step of the level loop updates."""

from keras import ops

from keras_recurrent._checks import named_errors
from keras_recurrent._rules import check_ranks
from keras_recurrent._rules import check_sizes
from keras_recurrent.layers._concrete import concrete_numpy
from keras_recurrent.layers._tree_levels import flat_child_rows
from keras_recurrent.layers._tree_levels import good_child_rows
from keras_recurrent.layers._tree_levels import padded_schedule
from keras_recurrent.trees.schedule import PACKED_TREES
from keras_recurrent.trees.schedule import TREE_LEVELS


def split_schedule(inputs):
    """`(tree inputs, tree_levels or None)`: the optional schedule, the
    fourth list item or the dict key `"tree_levels"`, apart from the three
    tree tensors (or their shapes)."""
    if isinstance(inputs, dict):
        if TREE_LEVELS not in inputs:
            return inputs, None
        rest = {key: inputs[key] for key in inputs if key != TREE_LEVELS}
        return rest, inputs[TREE_LEVELS]
    if (
        isinstance(inputs, (list, tuple))
        and len(inputs) == 4
        and not any(item is None or isinstance(item, int) for item in inputs)
    ):
        return list(inputs[:3]), inputs[3]
    return inputs, None


def check_schedule_shape(layer, levels_shape, children_shape):
    """Static checks of the shape of `tree_levels`: `(batch, L, W)`."""
    shapes = {
        TREE_LEVELS: tuple(levels_shape),
        "children": tuple(children_shape),
    }
    layouts = {TREE_LEVELS: "(batch, num_levels, level_width)"}
    with named_errors(layer):
        check_ranks({TREE_LEVELS: shapes[TREE_LEVELS]}, layouts)
        check_sizes("tree", shapes, [(0, "batch size", tuple(shapes))])


def bad_schedules(levels, children, real):
    """`(batch,)` bool: the trees whose `levels` disagree with `children`.

    The rule, written once: `levels` `(B, L, W)` lists each real inner node
    (a real node with a child) of a tree exactly once and no other node
    (`-1` pads), and every child of a listed node is a leaf or listed at an
    earlier level. `children` `(B, N, K)` int32, `real` `(B, N)` bool.
    `check_schedule_eagerly` raises on it; compiled code gives the trees
    NaN.
    """
    batch_size, num_nodes = ops.shape(children)[0], ops.shape(children)[1]
    num_levels, width = ops.shape(levels)[1], ops.shape(levels)[2]
    total = batch_size * num_nodes
    out_of_range = ops.any(
        ops.reshape(
            ops.logical_or(
                ops.less(levels, -1),
                ops.greater_equal(
                    levels,
                    ops.reshape(packed_groups(batch_size)[1], (-1, 1, 1))
                    * num_nodes,
                ),
            ),
            (batch_size, -1),
        ),
        axis=1,
    )
    rows = ops.reshape(schedule_rows(levels, num_nodes), (-1,))
    scheduled = ops.less(rows, total)
    # `rows` is level-major (`schedule_rows`): entry `l * B * W + i` is
    # in level `l`.
    step = ops.reshape(
        ops.broadcast_to(
            ops.reshape(ops.arange(num_levels, dtype="int32"), (-1, 1)),
            (num_levels, batch_size * width),
        ),
        (-1,),
    )
    # Each row's count of entries and, where it has one entry (the others
    # are bad), its step: one segment sum (tf2onnx converts no segment
    # max).
    sums = ops.segment_sum(
        ops.stack(
            [ops.cast(scheduled, "int32"), ops.where(scheduled, step, 0)],
            axis=1,
        ),
        rows,
        num_segments=total + 1,
    )[:total]
    counts = sums[:, 0]
    step_of = ops.where(ops.greater(counts, 0), sums[:, 1], -1)
    flat_real = ops.reshape(real, (-1,))
    child_rows = flat_child_rows(children, total)
    inner = ops.logical_and(
        flat_real, ops.any(ops.less(child_rows, total), axis=1)
    )
    # Logical ops, not a `where` of booleans (which onnxruntime lacks).
    wrong_count = ops.logical_or(
        ops.logical_and(inner, ops.not_equal(counts, 1)),
        ops.logical_and(ops.logical_not(inner), ops.greater(counts, 0)),
    )
    child_step = take_flat(
        ops.concatenate([step_of, ops.full((1,), -1, "int32")]), child_rows
    )
    too_early = ops.logical_and(
        inner,
        ops.any(
            ops.greater_equal(child_step, ops.expand_dims(step_of, -1)),
            axis=1,
        ),
    )
    bad_node = ops.reshape(
        ops.logical_or(wrong_count, too_early), (batch_size, num_nodes)
    )
    return ops.logical_or(out_of_range, ops.any(bad_node, axis=1))


def check_schedule_eagerly(layer, levels, children, node_mask):
    """Raises a `ValueError` naming the first tree whose concrete
    `tree_levels` disagree with `children` (`bad_schedules`)."""
    arrays = concrete_numpy(levels, children, node_mask)
    if arrays is None:
        return
    levels, children, node_mask = arrays
    bad = ops.convert_to_numpy(
        bad_schedules(
            ops.convert_to_tensor(levels.astype("int32")),
            ops.convert_to_tensor(children.astype("int32")),
            ops.convert_to_tensor(node_mask != 0),
        )
    )
    if bad.any():
        tree = int(bad.nonzero()[0][0])
        raise ValueError(
            f"{type(layer).__name__} {layer.name!r}: `tree_levels` must "
            "list every inner node of a tree once, after its inner children "
            "(as `kr.trees.tree_levels` makes them from `children`; a "
            "packed schedule only fits its own batch, whole or split at "
            f"multiples of {PACKED_TREES} rows, unshuffled). "
            f"Received: tree_levels[{tree}]={levels[tree].tolist()} for "
            f"children[{tree}]={children[tree].tolist()}"
        )


def take_flat(values, indices):
    """`ops.take(values, indices)` of a 1-D `values`, as a gather of rows:
    PyTorch's `ops.take` of a 1-D tensor squeezes an axis of any size,
    which its ONNX export writes as an invalid `Squeeze`."""
    dtype = values.dtype
    rows = ops.expand_dims(ops.cast(values, "int32"), 1)
    return ops.cast(ops.take(rows, indices, axis=0)[..., 0], dtype)


def packed_groups(batch_size):
    """`(first, size)`, each `(B,)` int32: the first row of each row's
    group of `PACKED_TREES` trees (`kr.trees.tree_levels(..., pack=True)`)
    and the number of trees in the group."""
    row = ops.arange(batch_size, dtype="int32")
    first = (row // PACKED_TREES) * PACKED_TREES
    return first, ops.minimum(PACKED_TREES, batch_size - first)


def schedule_rows(levels, num_nodes):
    """`(L, B * W)` int32: the rows of the flat batch (`b * N + node`) that
    each step of the level loop updates, `B * N` (the zero row) for the
    padding entries (and any entry out of range).

    Entry `v` of row `b`, in a group of `G` trees from row `g`, is node
    `v % N` of tree `g + (b - g + v // N) % G` (`kr.trees.tree_levels`):
    tree `b` itself for `v < N`, an unpacked schedule."""
    batch_size = ops.shape(levels)[0]
    total = batch_size * num_nodes
    first, size = (
        ops.reshape(part, (-1, 1, 1)) for part in packed_groups(batch_size)
    )
    valid = ops.logical_and(
        ops.greater_equal(levels, 0), ops.less(levels, size * num_nodes)
    )
    entry = ops.where(valid, levels, 0)
    row = ops.reshape(ops.arange(batch_size, dtype="int32"), (-1, 1, 1))
    tree = first + ops.mod(row - first + entry // num_nodes, size)
    rows = ops.where(valid, tree * num_nodes + ops.mod(entry, num_nodes), total)
    return ops.reshape(
        ops.transpose(rows, (1, 0, 2)), (ops.shape(levels)[1], -1)
    )


def host_schedule(levels, children, real, bad):
    """The schedule read from the host's `levels` (`tree_levels`, checked
    by the caller): step `l` updates the `B * W` rows that `levels[:, l]`
    lists (`schedule_rows`), `L` steps of static number; the rows of the
    trees in `bad` write nothing."""
    total = ops.shape(children)[0] * ops.shape(children)[1]
    flat_good, child_rows = good_child_rows(children, real, bad)
    rows = schedule_rows(levels, ops.shape(children)[1])
    good_row = ops.concatenate([flat_good, ops.zeros((1,), "bool")])
    step_rows = ops.where(take_flat(good_row, rows), rows, total)

    def level_rows(level, child_rows):
        rows = step_rows[level]
        return (
            rows,
            ops.take(child_rows, rows, axis=0),
            rows,
            ops.less(rows, total),
        )

    num_steps = step_rows.shape[0]
    if num_steps is None:
        # A `tf.function` traced for any shape, compiled by XLA for each.
        num_steps = ops.shape(step_rows)[0]
    # Under XLA the loop stops after the last step that updates a node: the
    # padding steps of a schedule padded to a fixed `L` (`pad_tree_levels`,
    # `padded_batch`'s `level_shapes`, `tree_levels`' rounding) cost
    # nothing there.
    updates = ops.any(ops.less(step_rows, total), axis=1)
    used = ops.max(
        ops.where(updates, ops.arange(1, num_steps + 1, dtype="int32"), 0),
        initial=0,
    )
    return padded_schedule(
        flat_good,
        child_rows,
        real,
        bad,
        level_rows,
        (0, used, num_steps),
        dense=True,
    )
