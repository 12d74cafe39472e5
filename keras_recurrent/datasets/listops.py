"""ListOps: nested list operations on digits, generated."""

import numbers

import numpy as np

from keras_recurrent.datasets._checks import check_int
from keras_recurrent.datasets._checks import check_seed
from keras_recurrent.datasets._uniforms import Uniforms

LISTOPS_OPERATORS = ("[MIN", "[MAX", "[MED", "[SM")
_MAX_DEPTH_LIMIT = 200


def _sample_tree(draws, depth, max_depth, max_args, branch_probability):
    """One draw of the original `generate_tree(depth)`, in the same order.

    Below the depth limit a node is an operator with probability
    `branch_probability` (the original's `VALUE_P`): its number of
    arguments, then the arguments, then the operator are drawn.
    """
    if depth < max_depth and draws.next() <= branch_probability:
        num_args = draws.integer(2, max_args)
        args = [
            _sample_tree(
                draws, depth + 1, max_depth, max_args, branch_probability
            )
            for _ in range(num_args)
        ]
        operator = LISTOPS_OPERATORS[draws.integer(0, 3)]
        return (operator, *args)
    return str(draws.integer(0, 9))


def _evaluate(tree):
    if isinstance(tree, str):
        return int(tree)
    values = [_evaluate(arg) for arg in tree[1:]]
    operator = tree[0]
    if operator == "[MIN":
        return min(values)
    if operator == "[MAX":
        return max(values)
    if operator == "[MED":
        # As the original: `int(np.median(...))`, so an even count takes
        # the floor of the mean of the two middle values.
        return int(np.median(values))
    return sum(values) % 10


def _tokens(tree, out):
    if isinstance(tree, str):
        out.append(tree)
        return out
    out.append(tree[0])
    for arg in tree[1:]:
        _tokens(arg, out)
    out.append("]")
    return out


def listops(
    num_samples,
    *,
    max_depth=19,
    max_args=5,
    branch_probability=0.25,
    min_length=None,
    max_length=None,
    unique=True,
    seed=0,
):
    """Generates ListOps expressions (Nangia & Bowman, 2018).

    An expression applies `MIN`, `MAX`, `MED` (median, rounded down) or `SM`
    (sum modulo 10) to 2 to `max_args` arguments, each a digit 0-9 or an
    expression; its label is its value, a digit. The sequence form is the
    original's bracketed token list, e.g.
    `["[MAX", "2", "[MIN", "3", "4", "]", "]"]` for
    `[MAX 2 [MIN 3 4 ] ]`; the gold tree is the nested tuple
    `("[MAX", "2", ("[MIN", "3", "4"))`, whose first item is the node's
    label (the operator token), as `kr.trees.encode_tree` reads it with
    `vocabulary=kr.datasets.LISTOPS_VOCABULARY`.

    The sampling is the original `generate_tree` of `make_data.py`: below
    the depth limit a node is an operator with probability
    `branch_probability` (the original's `VALUE_P = 0.25`, which despite
    its name is the probability of an operator, not of a digit), with a
    number of arguments uniform in `[2, max_args]` and an operator uniform
    among the four; at the depth limit it is a digit. Unlike the original,
    a bare digit is never a sample (the root is redrawn), and the random
    source is NumPy's, so the samples differ from the published files but
    follow the same distribution. As in the original, `unique=True` keeps
    only distinct expressions.

    Args:
        num_samples: Positive integer, the number of expressions.
        max_depth: Integer in `[1, 200]`, the most operators nested on a
            path from the root (the deepest bracket nesting). Defaults to
            `19`, the original's `MAX_DEPTH = 20` (which counts the root as
            depth 1 and makes every node at depth 20 a digit).
        max_args: Integer >= 2, the most arguments of an operator. Defaults
            to `5`.
        branch_probability: Float in `(0, 1]`, the probability that a node
            above the depth limit is an operator. Defaults to `0.25`.
        min_length: Optional integer >= 4, the fewest tokens of a sample;
            shorter draws are rejected. Defaults to `None`.
        max_length: Optional integer >= 4, the most tokens of a sample;
            longer draws are rejected. Defaults to `None`.
        unique: Whether all samples must be distinct. Defaults to `True`.
        seed: Non-negative integer, or a tuple of them, for
            `numpy.random.default_rng`. The same arguments always give the
            same samples. Defaults to `0`.

    Returns:
        A dict: `"tokens"`, a list of token lists; `"trees"`, a list of
        gold trees (nested tuples of strings); `"labels"`, an int32 array
        `(num_samples,)` of values; `"depths"`, an int32 array of the
        operator nesting depths.

    Raises:
        ValueError: On bad arguments, or if the limits leave too few
            possible samples to draw `num_samples` of them.

    Example:

    >>> data = kr.datasets.listops(2, seed=0)
    >>> " ".join(data["tokens"][0])  # doctest: +SKIP
    '[SM 2 [MIN 3 4 ] 5 ]'
    >>> batch = kr.trees.encode_trees(
    ...     data["trees"], vocabulary=kr.datasets.LISTOPS_VOCABULARY)

    Reference:
        - [Nangia & Bowman, 2018. ListOps: A Diagnostic Dataset for Latent
          Tree Learning](https://arxiv.org/abs/1804.06028)
    """
    num_samples = check_int("num_samples", num_samples, 1)
    max_depth = check_int("max_depth", max_depth, 1, _MAX_DEPTH_LIMIT)
    max_args = check_int("max_args", max_args, 2)
    if (
        isinstance(branch_probability, bool)
        or not isinstance(branch_probability, numbers.Real)
        or not 0.0 < branch_probability <= 1.0
    ):
        raise ValueError(
            "Argument `branch_probability` must be a float in (0, 1]. "
            f"Received: branch_probability={branch_probability!r}"
        )
    min_length = check_int("min_length", min_length, 4, allow_none=True)
    max_length = check_int("max_length", max_length, 4, allow_none=True)
    if (
        min_length is not None
        and max_length is not None
        and min_length > max_length
    ):
        raise ValueError(
            "Argument `min_length` must be <= `max_length`. Received: "
            f"min_length={min_length}, max_length={max_length}"
        )
    if not isinstance(unique, bool):
        raise ValueError(
            f"Argument `unique` must be a boolean. Received: unique={unique!r}"
        )
    draws = Uniforms(np.random.default_rng(check_seed(seed)))

    trees, tokens, seen = [], [], set()
    attempts, max_attempts = 0, 1000 * num_samples + 100_000
    while len(trees) < num_samples:
        attempts += 1
        if attempts > max_attempts:
            raise ValueError(
                f"Drew only {len(trees)} of num_samples={num_samples} "
                f"samples in {max_attempts} draws: the limits (max_depth="
                f"{max_depth}, max_args={max_args}, min_length={min_length}, "
                f"max_length={max_length}, unique={unique}) admit too few. "
                "Relax them or ask for fewer samples."
            )
        tree = _sample_tree(draws, 0, max_depth, max_args, branch_probability)
        if isinstance(tree, str):
            continue
        sequence = _tokens(tree, [])
        if min_length is not None and len(sequence) < min_length:
            continue
        if max_length is not None and len(sequence) > max_length:
            continue
        if unique:
            if tree in seen:
                continue
            seen.add(tree)
        trees.append(tree)
        tokens.append(sequence)
    labels = np.array([_evaluate(tree) for tree in trees], dtype="int32")
    depths = np.array([_depth(sequence) for sequence in tokens], dtype="int32")
    return {
        "tokens": tokens,
        "trees": trees,
        "labels": labels,
        "depths": depths,
    }


def _depth(sequence):
    depth = deepest = 0
    for token in sequence:
        if token == "]":
            depth -= 1
        elif token in LISTOPS_OPERATORS:
            depth += 1
            deepest = max(deepest, depth)
    return deepest
