import warnings

import keras
import numpy as np
import pytest

import keras_recurrent as kr

VOCABULARY = {"MAX": 10, "MIN": 11, **{str(d): d for d in range(10)}}


def test_parse_tree():
    assert kr.trees.parse_tree("(MAX 2 (MIN 3 4))") == (
        "MAX",
        "2",
        ("MIN", "3", "4"),
    )
    assert kr.trees.parse_tree(" 7 ") == "7"
    assert kr.trees.parse_tree("((a b) c)") == (("a", "b"), "c")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("(MAX 2", "Unbalanced '\\('"),
        ("MAX 2)", "Unbalanced '\\)'"),
        ("(MAX ())", "Empty"),
        ("(1) (2)", "exactly one tree"),
        ("", "exactly one tree"),
    ],
)
def test_parse_tree_errors(text, message):
    with pytest.raises(ValueError, match=message):
        kr.trees.parse_tree(text)


def test_post_order_of_strings_and_nested_structures():
    expected = (["2", "3", "4", "MIN", "MAX"], [[], [], [], [1, 2], [0, 3]])
    assert kr.trees.post_order("(MAX 2 (MIN 3 4))") == expected
    assert kr.trees.post_order(["MAX", "2", ("MIN", "3", "4")]) == expected
    assert kr.trees.post_order((("a", "b"), "c"), labeled=False) == (
        ["a", "b", None, "c", None],
        [[], [], [0, 1], [], [2, 3]],
    )
    assert kr.trees.post_order(5) == ([5], [[]])


def test_binarize_left_and_right():
    left = kr.trees.post_order(
        "(MAX 1 2 3 4)", binarize="left", intermediate_label="+"
    )
    # ((1 2) 3) 4
    assert left == (
        ["1", "2", "+", "3", "+", "4", "MAX"],
        [[], [], [0, 1], [], [2, 3], [], [4, 5]],
    )
    right = kr.trees.post_order("(MAX 1 2 3 4)", binarize="right")
    # 1 (2 (3 4))
    assert right == (
        ["1", "2", "3", "4", None, None, "MAX"],
        [[], [], [], [], [2, 3], [1, 4], [0, 5]],
    )
    # Nodes with one or two children stay as they are.
    assert kr.trees.post_order("(A (B 1) 2)", binarize="left") == (
        kr.trees.post_order("(A (B 1) 2)")
    )
    with pytest.raises(ValueError, match="binarize='up'"):
        kr.trees.post_order("(A 1)", binarize="up")


def test_deep_chain_does_not_recurse():
    tree = "0"
    for depth in range(1, 3000):
        tree = (str(depth), tree)
    labels, children = kr.trees.post_order(tree)
    assert len(labels) == 3000 and labels[-1] == "2999"
    assert children[-1] == [2998]


def test_from_parents():
    # 3 is the root, with children 0 and 4; 4 has children 1 and 2.
    labels, children = kr.trees.from_parents(
        [3, 4, 4, -1, 3], ["a", "b", "c", "root", "d"]
    )
    assert labels == ["a", "b", "c", "d", "root"]
    assert children == [[], [], [], [1, 2], [0, 3]]
    assert kr.trees.from_parents(np.array([-1])) == ([0], [[]])
    assert kr.trees.from_parents([3, 3, 3, -1], binarize="left") == (
        [0, 1, None, 2, 3],
        [[], [], [0, 1], [], [2, 3]],
    )


@pytest.mark.parametrize(
    ("parents", "message"),
    [
        ([-1, -1], "exactly one root"),
        ([1, 0], "exactly one root"),
        ([-1, 5], "parents\\[1\\]=5"),
        ([-1, 1], "parents\\[1\\]=1"),
        ([-1, 2, 1], "cycle"),
    ],
)
def test_from_parents_errors(parents, message):
    with pytest.raises(ValueError, match=message):
        kr.trees.from_parents(parents)


def test_encode_tree():
    tree = kr.trees.encode_tree("(MAX 2 (MIN 3 4))", vocabulary=VOCABULARY)
    np.testing.assert_array_equal(tree["node_tokens"], [2, 3, 4, 11, 10])
    np.testing.assert_array_equal(
        tree["children"], [[-1, -1], [-1, -1], [-1, -1], [1, 2], [0, 3]]
    )
    np.testing.assert_array_equal(tree["node_mask"], [1] * 5)
    assert {array.dtype for array in tree.values()} == {np.dtype("int32")}
    wide = kr.trees.encode_tree("(1 2)", num_children=3)
    np.testing.assert_array_equal(wide["children"], [[-1, -1, -1], [0, -1, -1]])
    np.testing.assert_array_equal(wide["node_tokens"], [2, 1])
    leaf = kr.trees.encode_tree(4)
    assert leaf["children"].shape == (1, 1)
    unlabeled = kr.trees.encode_tree(((1, 2), 3), labeled=False)
    np.testing.assert_array_equal(unlabeled["node_tokens"], [1, 2, 0, 3, 0])
    pairs = kr.trees.encode_tree(
        kr.trees.from_parents([-1, 0], ["MAX", "2"]), vocabulary=VOCABULARY
    )
    np.testing.assert_array_equal(pairs["node_tokens"], [2, 10])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"tree": "(MAX 1 2 3)", "num_children": 2}, "3 children"),
        ({"tree": "(MAX 1 2)"}, "labels must be integers.*'MAX'"),
        ({"tree": "(MED 1 2)", "vocabulary": VOCABULARY}, "'MED' is not"),
        ({"tree": "(1 2)", "num_children": 0}, "num_children=0"),
        ({"tree": (("a", "b"),)}, "label, not a subtree"),
        ({"tree": "(1 2)", "labeled": "yes"}, "labeled='yes'"),
    ],
)
def test_encode_tree_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        kr.trees.encode_tree(**kwargs)


def test_encode_trees_pads_and_validates():
    batch = kr.trees.encode_trees(
        ["(MAX 1 2 3)", "7", kr.trees.encode_tree("(1 2)", num_children=1)],
        vocabulary=VOCABULARY,
        num_nodes=5,
    )
    assert batch["children"].shape == (3, 5, 3)
    np.testing.assert_array_equal(
        batch["node_mask"], [[1, 1, 1, 1, 0], [1, 0, 0, 0, 0], [1, 1, 0, 0, 0]]
    )
    np.testing.assert_array_equal(batch["node_tokens"][1], [7, 0, 0, 0, 0])
    np.testing.assert_array_equal(batch["children"][2, 1], [0, -1, -1])
    assert np.all(batch["children"][batch["node_mask"] == 0] == -1)
    kr.trees.validate_tree_tensors(
        batch["children"], batch["node_mask"], arity=3
    )
    binary = kr.trees.encode_trees(
        ["(MAX 1 2 3)"], vocabulary=VOCABULARY, binarize="left"
    )
    assert binary["children"].shape == (1, 5, 2)
    with pytest.raises(ValueError, match="more than num_nodes=2"):
        kr.trees.encode_trees(["(1 2 3)"], num_nodes=2)
    with pytest.raises(ValueError, match="list of trees"):
        kr.trees.encode_trees("(1 2)")


def test_validate_tree_tensors_errors():
    batch = kr.trees.encode_trees(["(1 2 3)"])
    with pytest.raises(ValueError, match="arity=3"):
        kr.trees.validate_tree_tensors(
            batch["children"], batch["node_mask"], arity=3
        )
    with pytest.raises(ValueError, match="`children` must be integer"):
        kr.trees.validate_tree_tensors(
            batch["children"].astype(float), batch["node_mask"]
        )
    with pytest.raises(ValueError, match="rank 2"):
        kr.trees.validate_tree_tensors(batch["children"], batch["node_mask"][0])
    pair = kr.trees.encode_trees(["(1 2)"], num_children=2)
    children = pair["children"].copy()
    children[0, 1] = [0, 0]
    # Two slots naming one child is not a tree: the layers would add the
    # child's state in twice.
    with pytest.raises(ValueError, match="node 1 of tree 0 lists node 0 twice"):
        kr.trees.validate_tree_tensors(children, pair["node_mask"])
    children = batch["children"].copy()
    children[0, 2] = [0, -1]
    # Node 1 ("3") is neither the root nor a child: an orphan, which the
    # root's state would silently leave out.
    with pytest.raises(ValueError, match="node 1 of tree 0 is neither"):
        kr.trees.validate_tree_tensors(children, batch["node_mask"])
    children = kr.trees.encode_trees(["(1 (2 3) 4)"])["children"].copy()
    children[0, 2, 0] = 0  # Leaf "4" also gets leaf "3", a child of "2".
    with pytest.raises(
        ValueError, match="node 0 of tree 0 .* nodes \\[1, 2\\]"
    ):
        kr.trees.validate_tree_tensors(children, np.ones((1, 4), "int32"))


@pytest.mark.parametrize(
    ("children", "message"),
    [
        ([[], [0], [0]], "at most one node"),
        ([[], [], [1]], "neither the root nor"),
        ([[1], [], [0]], "topological order"),
        ([[], [5]], "in \\[0, 2\\)"),
    ],
)
def test_encode_tree_checks_a_given_pair(children, message):
    labels = list(range(len(children)))
    with pytest.raises(ValueError, match=f"`tree` is no tree.*{message}"):
        kr.trees.encode_tree((labels, children))


def test_binarized_nodes_share_token_zero_with_padding_harmlessly():
    batch = kr.trees.encode_trees(
        ["(1 2 3 4)", "(5 6)"], binarize="left", num_nodes=6
    )
    # Post-order of "(1 2 3 4)" made binary: 2, 3, (2 3), 4, root 1.
    np.testing.assert_array_equal(
        batch["node_tokens"], [[2, 3, 0, 4, 1, 0], [6, 5, 0, 0, 0, 0]]
    )
    np.testing.assert_array_equal(
        batch["node_mask"], [[1, 1, 1, 1, 1, 0], [1, 1, 0, 0, 0, 0]]
    )
    embedding = keras.layers.Embedding(10, 4)
    layer = kr.layers.NaryTreeLSTM(5, arity=2, return_nodes=True)

    def node_states(tokens):
        inputs = embedding(tokens)
        return keras.ops.convert_to_numpy(
            layer([inputs, batch["children"], batch["node_mask"]])
        )

    states = node_states(batch["node_tokens"])
    # Padding's token never matters: the layers read `node_mask`.
    padding = np.where(batch["node_mask"] == 0, 9, batch["node_tokens"])
    np.testing.assert_array_equal(node_states(padding), states)
    # The added node's token does: it is a node like any other.
    added = batch["node_tokens"].copy()
    added[0, 2] = 9
    changed = node_states(added)
    # It and its ancestor, the root, change; the other nodes do not.
    assert np.abs(changed[0, [2, 4]] - states[0, [2, 4]]).min() > 0
    np.testing.assert_array_equal(changed[0, [0, 1, 3]], states[0, [0, 1, 3]])
    np.testing.assert_array_equal(changed[1], states[1])

    # Its own token, through `intermediate_label` and the vocabulary.
    vocabulary = {"<bin>": 7, **{str(d): d for d in range(7)}}
    own = kr.trees.encode_trees(
        ["(1 2 3 4)"],
        binarize="left",
        intermediate_label="<bin>",
        vocabulary=vocabulary,
    )
    assert own["node_tokens"].tolist() == [[2, 3, 7, 4, 1]]


WIDE = 2**32 + 1  # As int32: 1, a valid node of the trees below.


def _dict_tree(children, **overrides):
    """The dict `encode_tree` gives for `(1 2 3)`, with other `children`."""
    return {
        "node_tokens": np.array([2, 3, 1]),
        "children": np.asarray(children),
        "node_mask": np.ones(3, "int32"),
        **overrides,
    }


def test_encode_trees_takes_wide_dicts_as_their_values():
    narrow = kr.trees.encode_trees(["(1 2 3)"], levels=False)
    for dtype in ("int64", "int16"):
        tree = {key: value[0].astype(dtype) for key, value in narrow.items()}
        batch = kr.trees.encode_trees([tree], levels=False)
        for key, value in narrow.items():
            assert batch[key].dtype == np.int32
            np.testing.assert_array_equal(batch[key], value)


@pytest.mark.parametrize(
    "tree, message",
    [
        (
            _dict_tree([[-1, -1], [-1, -1], [0, WIDE]]),
            r"trees\[0\]\['children'\].*int32 range.*\[2, 1\]=4294967297",
        ),
        (
            _dict_tree(np.array([[0, 0], [0, 0], [0, 2**64 - 1]], "uint64")),
            r"trees\[0\]\['children'\].*=18446744073709551615",
        ),
        (
            _dict_tree([[-1, -1], [-1, -1], [0, 1]], node_mask=[1, 1, 2**32]),
            r"trees\[0\]\['node_mask'\].*\[2\]=4294967296",
        ),
        (
            _dict_tree(
                [[-1, -1], [-1, -1], [0, 1]], node_tokens=[2, 3, -(2**40)]
            ),
            r"trees\[0\]\['node_tokens'\].*=-1099511627776",
        ),
        (
            {"tokens": [1, 2, 3], "children": [[1, 2], [-1, -1], [-1, -1]]},
            r"keys \['node_tokens', 'children', 'node_mask'\].*"
            r"trees\[0\] with the keys \['children', 'tokens'\]",
        ),
        (
            _dict_tree([[-1, -1], [-1, -1], [0, 1]], levels=[1]),
            r"Received: trees\[0\] with the keys .*'levels'",
        ),
        (
            _dict_tree([[1, 2], [-1, -1], [-1, -1]]),
            r"trees\[0\] is no tree: .*topological order",
        ),
        (
            _dict_tree([[-1, -1], [-1, -1], [0, 0]]),
            r"trees\[0\] is no tree: .*lists node 0 twice",
        ),
        (
            _dict_tree([[-1, -1], [-1, -1], [0.0, 1.0]]),
            r"trees\[0\]\['children'\]` must hold integers.*float64",
        ),
        (
            _dict_tree([-1, -1, 0]),
            r"`children` `\(n, K\)`.*children.shape=\(3,\)",
        ),
    ],
    ids=[
        "int64 child 2**32+1",
        "uint64 child",
        "int64 mask",
        "int64 token",
        "unknown keys",
        "extra key",
        "not topological",
        "repeated child",
        "float children",
        "children rank 1",
    ],
)
def test_encode_trees_refuses_bad_dicts(tree, message):
    with pytest.raises(ValueError, match=message):
        kr.trees.encode_trees([tree], levels=False)


@pytest.mark.parametrize(
    "tree, message",
    [
        (
            ([1, 2, 3], [[], [], [0, WIDE]]),
            r"node 2 has the child 4294967297",
        ),
        (
            ([1, 2, 3], [[], [], list(np.array([0, WIDE], "int64"))]),
            r"node 2 has the child 4294967297",
        ),
        (([1, 2], [[], [0, 0]]), r"node 1 of tree 0 lists node 0 twice"),
        (([1, 2**31], [[], [0]]), r"token 2147483648 for node 1"),
        ("(4294967297 2)", r"token 4294967297 for node 1"),
    ],
    ids=["python child", "int64 child", "repeated child", "label", "string"],
)
def test_encode_tree_never_wraps_an_index(tree, message):
    with pytest.raises(ValueError, match=message):
        kr.trees.encode_tree(tree)


def test_encoded_trees_feed_a_default_tree_model_without_warnings():
    # The documented path: `encode_trees` output into a model built on
    # `tree_inputs(K)` defaults. Keras warns "The structure of `inputs`
    # doesn't match the expected structure" when the dicts differ (e.g.
    # `tree_levels` given to a model without that input).
    inputs = kr.trees.tree_inputs(2)
    tensors = dict(inputs)
    tensors["node_inputs"] = keras.layers.Embedding(10, 4)(
        tensors.pop("node_tokens")
    )
    root = kr.layers.NaryTreeLSTM(3, arity=2)(tensors)
    model = keras.Model(inputs, keras.layers.Dense(1)(root))
    model.compile("sgd", "mse")
    trees = kr.trees.encode_trees(["(1 2 3)", "(4 (5 6) 7)"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model(trees)
        model.predict(trees, verbose=0)
        model.fit(trees, np.zeros((2, 1)), verbose=0)
