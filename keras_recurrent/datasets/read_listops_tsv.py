"""Reads the published ListOps files (`label<TAB>binary parse`)."""

import os

import numpy as np

from keras_recurrent.datasets.listops import LISTOPS_OPERATORS
from keras_recurrent.datasets.listops import _depth
from keras_recurrent.datasets.listops import _evaluate
from keras_recurrent.datasets.listops import _tokens
from keras_recurrent.datasets.listops_binary_tree import listops_binary_tree

_DIGITS = frozenset(str(digit) for digit in range(10))


def read_listops_tsv(path):
    """Reads a file of the ListOps release (Nangia & Bowman, 2018).

    Each line of the release (`train_d20s.tsv`, `test_d20s.tsv`) is a label,
    a tab, and the binary gold parse of the expression over its tokens,
    e.g. `2<TAB>( ( ( [MED 7 ) 0 ) ] )` for `[MED 7 0 ]`: the operator is
    combined with its arguments one at a time, then with `]`. The reader
    turns each parse back into the expression's gold tree, checks that
    `kr.datasets.listops_binary_tree` gives exactly the same binary parse
    and that the expression evaluates to the label, and returns what
    `kr.datasets.listops` returns, in file order.

    Args:
        path: String or path-like, a `.tsv` file of the release.

    Returns:
        A dict: `"tokens"`, a list of token lists (`["[MED", "7", "0",
        "]"]`); `"trees"`, a list of gold trees (`("[MED", "7", "0")`);
        `"labels"`, an int32 array of the values; `"depths"`, an int32 array
        of the operator nesting depths.

    Raises:
        ValueError: If a line is malformed: not `label<TAB>parse`, a label
            that is not a digit, unbalanced brackets, a parse that is not a
            ListOps binary parse, or a label that is not the expression's
            value. The message names the file and the line number.

    Example:

    >>> data = kr.datasets.read_listops_tsv("test_d20s.tsv")  # doctest: +SKIP
    >>> " ".join(data["tokens"][0]), int(data["labels"][0])  # doctest: +SKIP
    ('[MED 7 0 [MAX 0 2 0 ] ]', 2)
    >>> batch = kr.trees.encode_trees(  # doctest: +SKIP
    ...     [kr.datasets.listops_binary_tree(t) for t in data["trees"]],
    ...     vocabulary=kr.datasets.LISTOPS_VOCABULARY, labeled=False,
    ...     num_children=2)

    Reference:
        - [Nangia & Bowman, 2018. ListOps: A Diagnostic Dataset for Latent
          Tree Learning](https://arxiv.org/abs/1804.06028)
    """
    path = os.fspath(path)
    trees, tokens, labels = [], [], []
    with open(path, encoding="utf-8") as file:
        for number, line in enumerate(file, start=1):
            if not line.strip():
                continue
            try:
                label, tree = _parse_line(line)
            except ValueError as error:
                raise ValueError(
                    f"{path}, line {number}: {error}. Received: {line!r}"
                ) from None
            trees.append(tree)
            tokens.append(_tokens(tree, []))
            labels.append(label)
    if not trees:
        raise ValueError(f"{path} holds no ListOps line.")
    return {
        "tokens": tokens,
        "trees": trees,
        "labels": np.array(labels, dtype="int32"),
        "depths": np.array([_depth(t) for t in tokens], dtype="int32"),
    }


def _parse_line(line):
    """The label and gold tree of one line; raises a ValueError (without
    the line number) if the line is not a valid ListOps example."""
    fields = line.rstrip("\r\n").split("\t")
    if len(fields) != 2:
        raise ValueError(
            f"expected `label<TAB>binary parse`, found {len(fields)} "
            "tab-separated fields"
        )
    label, parse = fields[0].strip(), fields[1].split()
    if label not in _DIGITS:
        raise ValueError(f"the label must be a digit 0-9, not {label!r}")
    tree = _gold_tree(_nested(parse))
    if listops_binary_tree(tree) != _nested(parse):
        raise ValueError("the parse is not the binary gold tree it encodes")
    value = _evaluate(tree)
    if value != int(label):
        raise ValueError(
            f"the expression evaluates to {value}, not to the label {label}"
        )
    return int(label), tree


def _nested(parse):
    """`( ( [MED 7 ) ] )` as nested pairs of tokens."""
    stack = [[]]
    for token in parse:
        if token == "(":
            stack.append([])
        elif token == ")":
            if len(stack) == 1:
                raise ValueError("a `)` closes no `(`")
            node = stack.pop()
            if len(node) != 2:
                raise ValueError(
                    f"a bracket holds {len(node)} items, not 2: {node!r}"
                )
            stack[-1].append(tuple(node))
        else:
            stack[-1].append(token)
    if len(stack) != 1:
        raise ValueError(f"{len(stack) - 1} `(` left unclosed")
    if len(stack[0]) != 1:
        raise ValueError(
            f"the parse holds {len(stack[0])} trees side by side, not one"
        )
    return stack[0][0]


def _gold_tree(binary):
    """Inverts `listops_binary_tree`: `((("[MED", "7"), "0"), "]")` is
    `("[MED", "7", "0")`."""
    if isinstance(binary, str):
        if binary not in _DIGITS:
            raise ValueError(f"a leaf must be a digit, not {binary!r}")
        return binary
    if binary[1] != "]":
        raise ValueError(f"an operator must end with `]`: {binary!r}")
    arguments, head = [], binary[0]
    while isinstance(head, tuple):
        head, argument = head
        arguments.append(_gold_tree(argument))
    if head not in LISTOPS_OPERATORS or len(arguments) < 2:
        raise ValueError(
            f"an operator of {LISTOPS_OPERATORS} must take at least two "
            f"arguments: {binary!r}"
        )
    return (head, *reversed(arguments))
