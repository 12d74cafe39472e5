"""Encoding Python trees into the padded tree tensors of the tree layers."""

import re

import numpy as np

from keras_recurrent._batching import INT32_MAX
from keras_recurrent._batching import INT32_MIN
from keras_recurrent._batching import int32_problem
from keras_recurrent._checks import check_bool
from keras_recurrent._checks import check_option
from keras_recurrent._checks import check_positive_int
from keras_recurrent._rules import at_least_one
from keras_recurrent.trees.schedule import TREE_LEVELS
from keras_recurrent.trees.schedule import tree_levels
from keras_recurrent.trees.validation import find_tree_problem

_TOKEN = re.compile(r"\(|\)|[^\s()]+")
_DIRECTIONS = ("left", "right")


class _Intermediate:
    """A node that `binarize` inserts, with the children it groups."""

    def __init__(self, label, children):
        self.label = label
        self.children = children


def parse_tree(text):
    """Parses a bracketed string such as `"(MAX 2 (MIN 3 4))"`.

    Every `(...)` becomes a tuple of its items, every other token a string:
    `"(MAX 2 (MIN 3 4))"` gives `("MAX", "2", ("MIN", "3", "4"))`.

    Args:
        text: A string holding exactly one tree (or a single token).

    Returns:
        Nested tuples of strings.

    Raises:
        ValueError: If the brackets do not balance, a pair is empty, or the
            string holds no tree or more than one.

    Example:

    >>> kr.trees.parse_tree("(MAX 2 (MIN 3 4))")
    ('MAX', '2', ('MIN', '3', '4'))
    """
    if not isinstance(text, str):
        raise ValueError(
            f"Argument `text` must be a string. Received: text={text!r}"
        )
    stack = [[]]
    for token in _TOKEN.findall(text):
        if token == "(":
            stack.append([])
        elif token == ")":
            if len(stack) == 1:
                raise ValueError(
                    "Unbalanced ')' in the tree string. "
                    f"Received: text={text!r}"
                )
            items = stack.pop()
            if not items:
                raise ValueError(
                    f"Empty '()' in the tree string. Received: text={text!r}"
                )
            stack[-1].append(tuple(items))
        else:
            stack[-1].append(token)
    if len(stack) != 1:
        raise ValueError(
            f"Unbalanced '(' in the tree string. Received: text={text!r}"
        )
    if len(stack[0]) != 1:
        raise ValueError(
            "The tree string must hold exactly one tree. "
            f"Received: text={text!r}"
        )
    return stack[0][0]


def post_order(tree, *, labeled=True, binarize=None, intermediate_label=None):
    """Lists the nodes of a tree in post-order, with their children.

    A tree is a bracketed string (see `parse_tree`) or nested tuples and
    lists. With `labeled=True` (default) the first item of every tuple is
    the node's label and the other items its children, as in
    `("MAX", 2, ("MIN", 3, 4))` or `"(MAX 2 (MIN 3 4))"`; with
    `labeled=False` every item is a child and inner nodes have the label
    `None`, as in `(("a", "b"), "c")`. Anything else is a leaf, its own
    label.

    Post-order puts every child before its parent (children left to right)
    and the root last: the topological order the tree layers need.

    Args:
        tree: A bracketed string, or nested tuples and lists.
        labeled: Whether the first item of each tuple is the node's label.
            Defaults to `True`.
        binarize: `None` (default), `"left"` or `"right"`. A node with more
            than two children `c_1 .. c_k` is rewritten with new inner nodes
            into `((c_1 c_2) c_3) .. c_k` (left-branching) or
            `c_1 (c_2 (.. c_k))` (right-branching), for N-ary cells of
            arity 2. The node keeps its label; the new nodes get
            `intermediate_label`. Options are case-insensitive.
        intermediate_label: The label of the nodes that `binarize` adds.
            Defaults to `None`.

    Returns:
        A tuple `(labels, children)`: the label of every node and the list
        of its children's indices, in post-order.

    Example:

    >>> kr.trees.post_order("(MAX 2 (MIN 3 4))")
    (['2', '3', '4', 'MIN', 'MAX'], [[], [], [], [1, 2], [0, 3]])
    """
    if isinstance(tree, str):
        tree = parse_tree(tree)
    check_bool("labeled", labeled)

    def expand(node):
        if isinstance(node, (tuple, list)):
            if not node:
                raise ValueError(
                    "A tree node must not be empty. Received: an empty "
                    f"{type(node).__name__} in tree={tree!r}"
                )
            if labeled:
                if isinstance(node[0], (tuple, list)):
                    raise ValueError(
                        "With labeled=True the first item of each node is "
                        f"its label, not a subtree. Received: node={node!r}"
                    )
                return node[0], list(node[1:])
            return None, list(node)
        return node, []

    return _post_order(tree, expand, binarize, intermediate_label)


def from_parents(
    parents, labels=None, *, binarize=None, intermediate_label=None
):
    """Lists the nodes of a tree given as parent indices, in post-order.

    Args:
        parents: Sequence of integers, the index of each node's parent and
            `-1` for the root (exactly one). Nodes may be in any order; the
            children of a node keep the order of their indices.
        labels: Optional sequence of node labels, one per node. Defaults to
            the node indices.
        binarize: `None`, `"left"` or `"right"`, as in `post_order`.
        intermediate_label: The label of the nodes that `binarize` adds.

    Returns:
        A tuple `(labels, children)` in post-order, as `post_order` returns.

    Raises:
        ValueError: If there is not exactly one root, a parent index is out
            of range, or the parents form a cycle.

    Example:

    >>> kr.trees.from_parents([2, 2, -1], ["a", "b", "+"])
    (['a', 'b', '+'], [[], [], [0, 1]])
    """
    _check_whole_numbers("parents", np.asarray(parents).reshape(-1))
    parents = [int(parent) for parent in np.asarray(parents).reshape(-1)]
    num_nodes = len(parents)
    labels = list(range(num_nodes)) if labels is None else list(labels)
    if len(labels) != num_nodes:
        raise ValueError(
            "Arguments `labels` and `parents` must have the same length. "
            f"Received: len(labels)={len(labels)}, len(parents)={num_nodes}"
        )
    roots = [node for node, parent in enumerate(parents) if parent == -1]
    if len(roots) != 1:
        raise ValueError(
            "Argument `parents` must have exactly one root (-1). "
            f"Received: parents={parents}"
        )
    kids = [[] for _ in range(num_nodes)]
    for node, parent in enumerate(parents):
        if parent == -1:
            continue
        if not 0 <= parent < num_nodes or parent == node:
            raise ValueError(
                f"Argument `parents` must hold indices in [0, {num_nodes}) "
                f"other than the node's own, or -1. Received: parents[{node}]"
                f"={parent}"
            )
        kids[parent].append(node)
    reached, frontier = 1, [roots[0]]
    while frontier:
        node = frontier.pop()
        reached += len(kids[node])
        frontier.extend(kids[node])
    if reached != num_nodes:
        raise ValueError(
            "Argument `parents` must form one tree: some nodes are not "
            f"reached from the root (a cycle). Received: parents={parents}"
        )
    return _post_order(
        roots[0],
        lambda node: (labels[node], kids[node]),
        binarize,
        intermediate_label,
    )


def encode_tree(
    tree,
    *,
    vocabulary=None,
    labeled=True,
    binarize=None,
    intermediate_label=None,
    num_children=None,
):
    """Encodes one tree into unpadded tree arrays.

    Args:
        tree: A bracketed string or nested tuples and lists (see
            `post_order`), or a `(labels, children)` pair as `post_order` and
            `from_parents` return.
        vocabulary: Optional dict mapping labels to integer token ids, or a
            callable doing so. With `None` (default) labels must be integers
            (or strings of digits). The label `None` (the inner nodes of
            `labeled=False` trees, and the nodes `binarize` adds without an
            `intermediate_label`) maps to `vocabulary[None]` if present,
            else to token 0; see the note below.
        labeled: As in `post_order`. Defaults to `True`.
        binarize: `None`, `"left"` or `"right"`, as in `post_order`.
        intermediate_label: The label of the nodes `binarize` adds, looked
            up in `vocabulary` like any other. Defaults to `None` (token 0).
        num_children: Optional positive integer `K`, the number of child
            slots. Defaults to the most children of a node (at least 1).

    Returns:
        A dict of NumPy int32 arrays: `"node_tokens"` `(n,)`, `"children"`
        `(n, K)` (`-1` for empty slots) and `"node_mask"` `(n,)` (ones), for
        the `n` nodes in post-order.

    Raises:
        ValueError: If a node has more than `num_children` children, a
            label is not in the vocabulary, or a `(labels, children)` pair
            is no tree in post-order (as `kr.trees.validate_tree_tensors`
            checks).

    Note: token 0 is both "no label" and, in `encode_trees`, the token of
    padding nodes. They can share it because the tree layers tell padding
    from nodes by `node_mask` alone: a padding node's token, embedded or
    not, never reaches an output, so 0 stays free to be a real token (here
    the label-less one). A reserved id of its own would have to lie outside
    a vocabulary the encoder does not know (labels may be any integers).
    To give the added nodes their own embedding, pass an
    `intermediate_label` and give it an id in `vocabulary` (or map `None`
    there).

    Example:

    >>> vocabulary = {"MAX": 10, "MIN": 11, **{str(d): d for d in range(10)}}
    >>> tree = kr.trees.encode_tree("(MAX 2 (MIN 3 4))", vocabulary=vocabulary)
    >>> tree["children"].tolist()
    [[-1, -1], [-1, -1], [-1, -1], [1, 2], [0, 3]]
    """
    num_children = check_positive_int(
        "num_children", num_children, allow_none=True
    )
    if _is_node_list(tree):
        labels, children = tree
        if not len(labels):
            raise ValueError(
                f"{at_least_one('node', 'tree')} Received: tree={tree!r}"
            )
        for node, kids in enumerate(children):
            kids = np.asarray(kids)
            _check_whole_numbers(f"children[{node}]", kids)
            # Checked on the values as given: the int32 array below would
            # wrap a child 2**32 + 1 into node 1. (Smaller bad indices are
            # named by `find_tree_problem` below.)
            outside = (kids < INT32_MIN) | (kids > INT32_MAX)
            if outside.any():
                raise ValueError(
                    "Argument `tree` must list children by their node index "
                    f"in [0, {len(labels)}) (the number of nodes). Received: "
                    f"node {node} has the child {kids[outside][0].item()} in "
                    f"children[{node}]={kids.tolist()}"
                )
    else:
        labels, children = post_order(
            tree,
            labeled=labeled,
            binarize=binarize,
            intermediate_label=intermediate_label,
        )
    most = max([len(kids) for kids in children] + [1])
    if num_children is None:
        num_children = most
    elif most > num_children:
        node = next(i for i, kids in enumerate(children) if len(kids) == most)
        raise ValueError(
            f"A node has {most} children, more than "
            f"num_children={num_children}. Received: node {node} (label "
            f"{labels[node]!r}) of tree={tree!r}"
        )
    array = np.full((len(labels), num_children), -1, dtype="int32")
    for node, kids in enumerate(children):
        array[node, : len(kids)] = kids
    if _is_node_list(tree):
        # A pair given as it is, not from `post_order`: check it is a tree.
        problem = find_tree_problem(
            array[None], np.ones((1, len(labels)), bool)
        )
        if problem is not None:
            raise ValueError(f"Argument `tree` is no tree: {problem}")
    tokens = [_token(label, vocabulary) for label in labels]
    for node, token in enumerate(tokens):
        if not INT32_MIN <= token <= INT32_MAX:
            raise ValueError(
                "Token ids must lie in the int32 range [-2**31, 2**31) of "
                f"the model's inputs. Received: token {token} for node "
                f"{node} (label {labels[node]!r})"
            )
    return {
        "node_tokens": np.array(tokens, dtype="int32"),
        "children": array,
        "node_mask": np.ones(len(labels), dtype="int32"),
    }


def _check_whole_numbers(name, values):
    """Raises unless `values` (a NumPy array) holds only whole numbers.

    `int()` would truncate a child or parent index of `1.7` to `1`, which
    is then silently another node.
    """
    if values.size == 0 or np.issubdtype(values.dtype, np.integer):
        return
    numeric = np.issubdtype(values.dtype, np.floating)
    whole = numeric and bool(np.all(np.isfinite(values)))
    whole = whole and bool(np.all(values == np.floor(values)))
    if not whole:
        raise ValueError(
            f"Argument `{name}` must hold integer node indices. "
            f"Received: {name}={values.tolist()}"
        )


def encode_trees(
    trees,
    *,
    vocabulary=None,
    labeled=True,
    binarize=None,
    intermediate_label=None,
    num_nodes=None,
    num_children=None,
    levels=True,
    pack_levels=False,
):
    """Encodes and pads a batch of trees into the tree tensors.

    Args:
        trees: Sequence of trees, each anything `encode_tree` takes or a
            dict that `encode_tree` returned.
        vocabulary, labeled, binarize, intermediate_label: As in
            `encode_tree`.
        num_nodes: Optional positive integer `N`, the padded number of nodes.
            Defaults to the largest tree.
        num_children: Optional positive integer `K`. Defaults to the most
            children of a node in the batch (at least 1).
        levels: Whether to add the level schedule `"tree_levels"` (see
            `kr.trees.tree_levels`), which the tree layers take as a fourth
            input to run their level loop without working it out (the fast
            path under XLA and on JAX). Defaults to `True`.
        pack_levels: Whether the schedule packs the nodes of groups of 8
            trees into shared slots (`kr.trees.tree_levels(...,
            pack=True)`): fewer, fuller steps, for a batch that reaches the
            model whole (`train_on_batch`, one batch per step of a
            generator). Defaults to `False`, a schedule that `fit` and
            `predict` can slice and shuffle with the other arrays.

    Returns:
        A dict of NumPy int32 arrays: `"node_tokens"` `(B, N)` (0 at
        padding), `"children"` `(B, N, K)` (`-1` for empty slots and
        padding) and `"node_mask"` `(B, N)`. Embed `node_tokens` (e.g. with
        `keras.layers.Embedding`, without `mask_zero`) to get the layers'
        `node_inputs`. Padding shares token 0 with label-less nodes (see
        `encode_tree`); the layers ignore padding by `node_mask`, whatever
        its token. With `levels`, also `"tree_levels"` `(B, L, W)`.

    Example:

    >>> batch = kr.trees.encode_trees(["(1 2 3)", "(4 (5 6) 7)"])
    >>> batch["children"].shape
    (2, 4, 2)
    """
    if isinstance(trees, (str, dict)) or not hasattr(trees, "__len__"):
        raise ValueError(
            "Argument `trees` must be a list of trees. "
            f"Received: trees={trees!r}"
        )
    num_nodes = check_positive_int("num_nodes", num_nodes, allow_none=True)
    num_children = check_positive_int(
        "num_children", num_children, allow_none=True
    )
    encoded = [
        _checked_tree_dict(tree, index)
        if isinstance(tree, dict)
        else encode_tree(
            tree,
            vocabulary=vocabulary,
            labeled=labeled,
            binarize=binarize,
            intermediate_label=intermediate_label,
            num_children=num_children,
        )
        for index, tree in enumerate(trees)
    ]
    sizes = [len(tree["node_mask"]) for tree in encoded]
    most_children = max(
        [tree["children"].shape[1] for tree in encoded if len(tree["children"])]
        + [1]
    )
    width = num_children or most_children
    length = num_nodes or max(sizes + [1])
    if max(sizes + [0]) > length:
        raise ValueError(
            f"A tree has {max(sizes)} nodes, more than num_nodes={length}."
        )
    batch = {
        "node_tokens": np.zeros((len(encoded), length), dtype="int32"),
        "children": np.full((len(encoded), length, width), -1, dtype="int32"),
        "node_mask": np.zeros((len(encoded), length), dtype="int32"),
    }
    for index, tree in enumerate(encoded):
        size = sizes[index]
        kids = tree["children"]
        if kids.shape[1] > width and (kids[:, width:] >= 0).any():
            raise ValueError(
                f"Tree {index} has a node with more than num_children="
                f"{width} children."
            )
        used = kids[:, :width]
        batch["node_tokens"][index, :size] = tree["node_tokens"]
        batch["children"][index, :size, : used.shape[1]] = used
        batch["node_mask"][index, :size] = tree["node_mask"]
    pack_levels = check_bool("pack_levels", pack_levels)
    if check_bool("levels", levels):
        batch[TREE_LEVELS] = tree_levels(
            batch["children"], batch["node_mask"], pack=pack_levels
        )
    return batch


# The keys of a tree dict, as `encode_tree` returns it.
_TREE_DICT_KEYS = ("node_tokens", "children", "node_mask")


def _checked_tree_dict(tree, index):
    """The arrays of `trees[index]`, a dict as `encode_tree` returns, as
    int32 after checking keys, dtypes, shapes, the int32 range (checked on
    the values as given, so that `2**32 + 1` is not read as node 1) and
    that `children` form a tree; else a `ValueError` naming the tree."""
    name = f"trees[{index}]"
    if set(tree) != set(_TREE_DICT_KEYS):
        raise ValueError(
            f"A tree dict must have the keys {list(_TREE_DICT_KEYS)}, as "
            "`kr.trees.encode_tree` returns it (or pass the tree itself: a "
            "string, nested tuples or a `(labels, children)` pair). "
            f"Received: {name} with the keys {sorted(map(str, tree))}"
        )
    arrays = {key: np.asarray(tree[key]) for key in _TREE_DICT_KEYS}
    size = arrays["node_mask"].shape[0] if arrays["node_mask"].ndim else -1
    for key, array in arrays.items():
        rank = 2 if key == "children" else 1
        if array.ndim != rank or array.shape[0] != size:
            raise ValueError(
                f"In a tree dict, `node_tokens` and `node_mask` must be "
                f"`(n,)` and `children` `(n, K)`. Received: {name} with "
                + ", ".join(f"{k}.shape={a.shape}" for k, a in arrays.items())
            )
        integer = array.dtype.kind in "iu" or (
            key == "node_mask" and array.dtype == bool
        )
        if array.size and not integer:
            raise ValueError(
                f"`{name}['{key}']` must hold integers. "
                f"Received: dtype {array.dtype}"
            )
        problem = int32_problem(f"{name}['{key}']", array)
        if problem is not None:
            raise ValueError(problem)
    checked = {key: array.astype("int32") for key, array in arrays.items()}
    problem = find_tree_problem(
        checked["children"][None], checked["node_mask"][None]
    )
    if problem is not None:
        raise ValueError(f"{name} is no tree: {problem}")
    return checked


def _post_order(root, expand, binarize, intermediate_label):
    """Iterative post-order (deep chains do not hit the recursion limit)."""
    binarize = check_option("binarize", binarize, _DIRECTIONS, allow_none=True)

    def node_children(node):
        if isinstance(node, _Intermediate):
            label, kids = node.label, node.children
        else:
            label, kids = expand(node)
        if binarize is not None and len(kids) > 2:
            if binarize == "left":
                kids = [_Intermediate(intermediate_label, kids[:-1]), kids[-1]]
            else:
                kids = [kids[0], _Intermediate(intermediate_label, kids[1:])]
        return label, kids

    labels, children = [], []
    # Each stack entry: (label, child nodes, indices of the done children).
    label, kids = node_children(root)
    stack = [(label, kids, [])]
    while stack:
        label, kids, done = stack[-1]
        if len(done) < len(kids):
            child_label, child_kids = node_children(kids[len(done)])
            stack.append((child_label, child_kids, []))
            continue
        stack.pop()
        labels.append(label)
        children.append(done)
        if stack:
            stack[-1][2].append(len(labels) - 1)
        if len(labels) > 10_000_000:
            raise ValueError("The tree has more than 10 million nodes.")
    return labels, children


def _is_node_list(tree):
    return (
        isinstance(tree, tuple)
        and len(tree) == 2
        and isinstance(tree[0], list)
        and isinstance(tree[1], list)
        and all(isinstance(kids, list) for kids in tree[1])
    )


def _token(label, vocabulary):
    if label is None and not (
        isinstance(vocabulary, dict) and None in vocabulary
    ):
        return 0
    if vocabulary is None:
        if isinstance(label, (int, np.integer)) and not isinstance(label, bool):
            return int(label)
        if isinstance(label, str) and label.isdigit():
            return int(label)
        raise ValueError(
            "Without a `vocabulary`, node labels must be integers. "
            f"Received: label={label!r}"
        )
    if callable(vocabulary):
        return int(vocabulary(label))
    if label not in vocabulary:
        raise ValueError(
            f"Node label {label!r} is not in `vocabulary`. "
            f"Received: vocabulary keys {sorted(map(str, vocabulary))[:20]}"
        )
    return int(vocabulary[label])
