"""The binary gold tree of a ListOps expression, over its tokens."""

from keras_recurrent.datasets.listops import LISTOPS_OPERATORS


def listops_binary_tree(tree):
    """Rewrites a ListOps gold tree into the original's binary tree.

    Nangia & Bowman's gold parses are binary trees whose leaves are the
    tokens: `[MAX 2 [MIN 3 4 ] ]` is
    `((("[MAX", "2"), (("[MIN", "3"), "4"), "]")), "]")`, i.e. the operator
    is combined with its arguments one by one, left to right, and then with
    the closing bracket. This is the tree of the published Tree-LSTM result.
    Encode it with `labeled=False` (inner nodes get the label `None`, id 1
    of `kr.datasets.LISTOPS_VOCABULARY`) for an N-ary cell of arity 2.

    Args:
        tree: A gold tree from `kr.datasets.listops`, e.g.
            `("[MAX", "2", ("[MIN", "3", "4"))`, or a digit string.

    Returns:
        Nested pairs of tokens.

    Raises:
        ValueError: If `tree` is not a ListOps tree.

    Example:

    >>> kr.datasets.listops_binary_tree(("[MAX", "2", ("[MIN", "3", "4")))
    ((('[MAX', '2'), ((('[MIN', '3'), '4'), ']')), ']')

    Reference:
        - [Nangia & Bowman, 2018. ListOps: A Diagnostic Dataset for Latent
          Tree Learning](https://arxiv.org/abs/1804.06028)
    """
    if isinstance(tree, str):
        if tree not in {str(digit) for digit in range(10)}:
            raise ValueError(
                f"A ListOps leaf must be a digit string. Received: {tree!r}"
            )
        return tree
    if (
        not isinstance(tree, (tuple, list))
        or len(tree) < 3
        or tree[0] not in LISTOPS_OPERATORS
    ):
        raise ValueError(
            "A ListOps node must be a tuple (operator, argument, argument, "
            f"...) with an operator in {LISTOPS_OPERATORS}. Received: "
            f"tree={tree!r}"
        )
    binary = tree[0]
    for arg in tree[1:]:
        binary = (binary, listops_binary_tree(arg))
    return (binary, "]")
