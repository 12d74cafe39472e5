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
