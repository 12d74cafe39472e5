import numpy as np
import pytest

import keras_recurrent as kr


def test_levels_by_height_in_steps_of_the_width():
    batch = kr.trees.encode_trees(["(1 2 3)", "(4 (5 6) (7 8) 9)"])
    # Tree 1: nodes 1 and 3 (height 1), root 5 (height 2).
    levels = kr.trees.tree_levels(
        batch["children"], batch["node_mask"], level_width=2
    )
    assert levels.tolist() == [[[2, -1], [-1, -1]], [[1, 3], [5, -1]]]
    one = kr.trees.tree_levels(
        batch["children"], batch["node_mask"], level_width=1, round_up=False
    )
    assert one.tolist() == [[[2], [-1], [-1]], [[1], [3], [5]]]
    np.testing.assert_array_equal(
        batch["tree_levels"],
        kr.trees.tree_levels(batch["children"], batch["node_mask"]),
    )


def test_a_batch_of_single_node_trees_gets_an_empty_schedule():
    # No inner node anywhere: one level with no row (the width search used
    # to double forever and end in an OverflowError).
    batch = kr.trees.encode_trees(["7", "4"])
    levels = kr.trees.tree_levels(batch["children"], batch["node_mask"])
    assert levels.shape[:2] == (2, 1) and (levels == -1).all()
    node_inputs = np.random.default_rng(0).random((2, 1, 3), "float32")
    layer = kr.layers.ChildSumTreeLSTM(2)
    inputs = [node_inputs, batch["children"], batch["node_mask"]]
    np.testing.assert_allclose(
        np.asarray(layer([*inputs, levels])), np.asarray(layer(inputs))
    )


def test_bucket_sizes():
    assert [kr.trees.bucket_size(n) for n in (0, 1, 3, 8, 9, 17, 33)] == [
        1,
        1,
        4,
        8,
        10,
        20,
        40,
    ]


def test_levels_can_be_left_out_and_bad_width():
    batch = kr.trees.encode_trees(["(1 2 3)"], levels=False)
    assert "tree_levels" not in batch
    with pytest.raises(ValueError, match="level_width=0"):
        kr.trees.tree_levels(
            batch["children"], batch["node_mask"], level_width=0
        )


def _steps_of(levels, num_nodes):
    """The `(tree, node)` pairs of each step of `levels`, read as the
    layers read them (the module docstring's rule)."""
    batch_size = levels.shape[0]
    steps = []
    for step in range(levels.shape[1]):
        nodes = []
        for row in range(batch_size):
            first = row // kr.trees.PACKED_TREES * kr.trees.PACKED_TREES
            size = min(kr.trees.PACKED_TREES, batch_size - first)
            for entry in levels[row, step]:
                if entry >= 0:
                    tree = first + (row - first + entry // num_nodes) % size
                    nodes.append((int(tree), int(entry % num_nodes)))
        steps.append(nodes)
    return steps


def _assert_valid(levels, children, node_mask):
    """Every inner node once, after its inner children; nothing else."""
    real = node_mask != 0
    inner = {
        (b, v) for b, v in zip(*np.nonzero(real & (children >= 0).any(-1)))
    }
    step_of = {}
    for step, nodes in enumerate(_steps_of(levels, children.shape[1])):
        for node in nodes:
            assert node in inner and node not in step_of, node
            step_of[node] = step
    assert set(step_of) == inner
    for (b, v), step in step_of.items():
        for child in children[b, v]:
            if (b, child) in inner:
                assert step_of[(b, child)] < step


def _listops_batch(binary, size=64, seed=0):
    data = kr.datasets.listops(size, max_length=100, seed=seed)
    if binary:
        return kr.trees.encode_trees(
            [kr.datasets.listops_binary_tree(t) for t in data["trees"]],
            vocabulary=kr.datasets.LISTOPS_VOCABULARY,
            labeled=False,
            num_children=2,
        )
    return kr.trees.encode_trees(
        data["trees"], vocabulary=kr.datasets.LISTOPS_VOCABULARY
    )


@pytest.mark.parametrize("binary", [False, True])
def test_packed_schedules_are_valid_and_hold_fewer_rows(binary):
    batch = _listops_batch(binary)
    children, node_mask = batch["children"], batch["node_mask"]
    inner = int(((children >= 0).any(-1) & (node_mask != 0)).sum())
    unpacked = kr.trees.tree_levels(children, node_mask)
    packed = kr.trees.tree_levels(children, node_mask, pack=True)
    _assert_valid(unpacked, children, node_mask)
    _assert_valid(packed, children, node_mask)
    # Window rows per inner node (measured: unpacked 5 to 7, packed 2.4 to
    # 3.2 on these batches).
    assert packed.size / inner < 3.5 < unpacked.size / inner


def test_an_unpacked_schedule_survives_shuffling_a_packed_one_splits():
    batch = _listops_batch(True, size=32, seed=3)
    children, node_mask = batch["children"], batch["node_mask"]
    unpacked = kr.trees.tree_levels(children, node_mask)
    order = np.random.default_rng(0).permutation(32)[:20]
    _assert_valid(unpacked[order], children[order], node_mask[order])
    packed = kr.trees.tree_levels(children, node_mask, pack=True)
    for part in (slice(0, 8), slice(8, 24), slice(24, 32)):
        _assert_valid(packed[part], children[part], node_mask[part])
    with pytest.raises(AssertionError):
        _assert_valid(packed[order], children[order], node_mask[order])


def test_hu_schedule_takes_the_fewest_steps():
    # A chain of 4 inner nodes and a bush of 4 inner nodes under a root.
    chain = "(1 (2 (3 (4 5))))"
    bush = "(1 (2 3) (4 5) (6 7) (8 9))"
    batch = kr.trees.encode_trees([chain, bush])
    steps = [
        kr.trees.tree_levels(
            batch["children"],
            batch["node_mask"],
            level_width=width,
            round_up=False,
        ).shape[1]
        for width in (1, 2, 4)
    ]
    # Unpacked: the bush needs 5 steps at one node a step, 3 at two (its
    # 4 leaves' parents, then the root), 2 at four; the chain 4 always.
    assert steps == [5, 4, 4]
    packed = kr.trees.tree_levels(
        batch["children"],
        batch["node_mask"],
        level_width=1,
        pack=True,
        round_up=False,
    )
    # Two slots a step for 9 inner nodes, the chain first: 5 steps.
    assert packed.shape[1] == 5
    _assert_valid(packed, batch["children"], batch["node_mask"])


def test_the_docstring_example_of_a_packed_schedule():
    # Tree 0's root (node 2) and tree 1's nodes 1 and 3 (root): two slots
    # a step for the group of two trees. Step 0 holds tree 1's node 1
    # (farther from its root) in row 0, as entry 4 + 1, and tree 0's root
    # in row 1, as entry 4 + 2 (the other tree of the group); step 1 tree
    # 1's root in row 0.
    batch = kr.trees.encode_trees(["(1 2 3)", "(4 (5 6) 7)"])
    packed = kr.trees.tree_levels(
        batch["children"], batch["node_mask"], pack=True
    )
    assert packed.tolist() == [[[5], [7]], [[6], [-1]]]
    _assert_valid(packed, batch["children"], batch["node_mask"])


def test_pack_must_be_a_bool():
    batch = kr.trees.encode_trees(["(1 2 3)"])
    with pytest.raises(ValueError, match="pack='yes'"):
        kr.trees.tree_levels(batch["children"], batch["node_mask"], pack="yes")
    with pytest.raises(ValueError, match="pack_levels=1"):
        kr.trees.encode_trees(["(1 2 3)"], pack_levels=1)


def test_padded_levels_are_no_ops():
    import keras
    import tensorflow as tf

    batch = kr.trees.encode_trees(["(1 2 (3 4))", "(5 (6 (7 8)) 9)", "3"])
    children, node_mask = batch["children"], batch["node_mask"]
    levels = batch["tree_levels"]
    padded = kr.trees.pad_tree_levels(levels, (levels.shape[1] + 3, 4))
    assert padded.shape == (3, levels.shape[1] + 3, 4)
    assert padded.dtype == np.int32
    np.testing.assert_array_equal(
        padded[:, : levels.shape[1], : levels.shape[2]], levels
    )
    assert (padded[:, levels.shape[1] :] == -1).all()
    assert (padded[:, :, levels.shape[2] :] == -1).all()
    # The layer reads the same outputs from both, under XLA (where it
    # reads the schedule) as without it.
    keras.utils.set_random_seed(0)
    layer = kr.layers.ChildSumTreeLSTM(3, return_nodes=True)
    node_inputs = np.random.default_rng(0).random(children.shape[:2] + (2,))
    node_inputs = node_inputs.astype("float32")
    expected = layer([node_inputs, children, node_mask])
    compiled = tf.function(
        lambda s: layer([node_inputs, children, node_mask, s]),
        jit_compile=True,
    )
    for schedule in (levels, padded):
        np.testing.assert_allclose(compiled(schedule), expected, atol=1e-6)


def test_pad_tree_levels_bad_arguments():
    levels = np.full((2, 3, 2), -1, np.int32)
    with pytest.raises(ValueError, match=r"`levels`.*shape=\(3, 2\)"):
        kr.trees.pad_tree_levels(levels[0], (3, 2))
    for shape in [(2, 2), (3, 1), (3,), "3x2", (3.0, 2)]:
        with pytest.raises(ValueError, match=r"`shape`.*\(3, 2\)"):
            kr.trees.pad_tree_levels(levels, shape)
