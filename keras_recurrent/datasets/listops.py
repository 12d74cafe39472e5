"""ListOps: nested list operations on digits, generated or read.

The generator, the binary gold trees, the token vocabulary and the reader
of the published files, which share the tree helpers.
"""

import gc
import numbers

import numpy as np

from keras_recurrent._checks import check_at_most
from keras_recurrent._checks import check_bool
from keras_recurrent._checks import check_option
from keras_recurrent._checks import invalid
from keras_recurrent.datasets._checks import check_int
from keras_recurrent.datasets._checks import check_seed
from keras_recurrent.datasets._text import check_file
from keras_recurrent.datasets._text import line_error
from keras_recurrent.datasets._text import read_lines
from keras_recurrent.datasets._uniforms import Uniforms

LISTOPS_OPERATORS = ("[MIN", "[MAX", "[MED", "[SM")
# 0 pads; 1 is the label of the inner nodes of `listops_binary_tree`, which
# carry no token; then the ten digits, the four operators and the closing
# bracket.
LISTOPS_VOCABULARY = {
    None: 1,
    **{str(digit): digit + 2 for digit in range(10)},
    "[MIN": 12,
    "[MAX": 13,
    "[MED": 14,
    "[SM": 15,
    "]": 16,
}
"""Dict from ListOps token to integer id, for `kr.trees.encode_tree`.

Id 0 is padding, id 1 the label `None` of the inner nodes that
`kr.datasets.listops_binary_tree` adds, ids 2 to 11 the digits `"0"` to
`"9"`, then `"[MIN"`, `"[MAX"`, `"[MED"`, `"[SM"` (12 to 15) and the closing
bracket `"]"` (16). An embedding needs `input_dim=17`.
"""

_MAX_DEPTH_LIMIT = 200
_DIGITS = frozenset(str(digit) for digit in range(10))


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


def _apply(operator, values):
    if operator == "[MIN":
        return min(values)
    if operator == "[MAX":
        return max(values)
    if operator == "[MED":
        # As the original: `int(np.median(...))`, so an even count takes
        # the floor of the mean of the two middle values.
        return int(np.median(values))
    return sum(values) % 10


def _evaluate(tree):
    """The value of a gold tree; iterative, so any depth evaluates."""
    if isinstance(tree, str):
        return int(tree)
    # Each frame: the node, and the values of its arguments so far.
    stack, value = [(tree, [])], None
    while True:
        node, values = stack[-1]
        if len(values) < len(node) - 1:
            argument = node[1 + len(values)]
            if isinstance(argument, str):
                values.append(int(argument))
            else:
                stack.append((argument, []))
            continue
        stack.pop()
        value = _apply(node[0], values)
        if not stack:
            return value
        stack[-1][1].append(value)


def _tokens(tree, out):
    """Appends the bracketed tokens of a gold tree to `out`; iterative."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            out.append(node)
        else:
            out.append(node[0])
            stack.append("]")
            stack.extend(reversed(node[1:]))
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
        raise invalid(
            "branch_probability", branch_probability, "a float in (0, 1]"
        )
    min_length = check_int("min_length", min_length, 4, allow_none=True)
    max_length = check_int("max_length", max_length, 4, allow_none=True)
    check_at_most("min_length", min_length, "max_length", max_length)
    check_bool("unique", unique)
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
        _check_leaf(tree)
        return tree
    # Post-order without recursion, so any depth converts: each frame is a
    # node and the binary trees of its arguments so far.
    _check_node(tree)
    stack = [(tree, [])]
    while True:
        node, done = stack[-1]
        if len(done) < len(node) - 1:
            argument = node[1 + len(done)]
            if isinstance(argument, str):
                _check_leaf(argument)
                done.append(argument)
            else:
                _check_node(argument)
                stack.append((argument, []))
            continue
        stack.pop()
        binary = node[0]
        for argument in done:
            binary = (binary, argument)
        if not stack:
            return (binary, "]")
        stack[-1][1].append((binary, "]"))


def _check_leaf(tree):
    if tree not in _DIGITS:
        raise ValueError(
            f"A ListOps leaf must be a digit string. Received: {tree!r}"
        )


def _check_node(tree):
    if (
        not isinstance(tree, (tuple, list))
        or len(tree) < 3
        or tree[0] not in LISTOPS_OPERATORS
    ):
        raise ValueError(
            "A ListOps node must be a tuple (operator, argument, argument, "
            f"...) with an operator in {LISTOPS_OPERATORS}. Received: "
            f"tree={_brief_tree(tree)}"
        )


def _brief_tree(tree, limit=200):
    """`repr(tree)` for an error message: without recursion (a deep tree's
    `repr` would raise `RecursionError`), cut after about `limit`
    characters."""
    parts, size, stack = [], 0, [tree]
    while stack and size <= limit:
        item = stack.pop()
        if isinstance(item, _Text):
            part = item.text
        elif isinstance(item, tuple):
            part = "("
            closing = ",)" if len(item) == 1 else ")"
            stack.append(_Text(closing))
            for index in range(len(item) - 1, -1, -1):
                stack.append(item[index])
                if index:
                    stack.append(_Text(", "))
        elif isinstance(item, list):
            part = "["
            stack.append(_Text("]"))
            for index in range(len(item) - 1, -1, -1):
                stack.append(item[index])
                if index:
                    stack.append(_Text(", "))
        else:
            part = repr(item)
        parts.append(part)
        size += len(part)
    text = "".join(parts)
    return text if not stack else text[:limit] + "..."


class _Text:
    """Literal text in `_brief_tree`'s stack, told apart from tree items."""

    __slots__ = ("text",)

    def __init__(self, text):
        self.text = text


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

    The file is UTF-8 text (a byte order mark is skipped), with `\\n` or
    `\\r\\n` line endings; blank lines and whitespace at the end of a
    line are ignored. Expressions of any depth parse (without recursion).
    The whole file is held in memory; `kr.datasets.iter_listops_tsv` reads
    it one example at a time.

    Args:
        path: String or path-like, a `.tsv` file of the release.

    Returns:
        A dict: `"tokens"`, a list of token lists (`["[MED", "7", "0",
        "]"]`); `"trees"`, a list of gold trees (`("[MED", "7", "0")`);
        `"labels"`, an int32 array of the values; `"depths"`, an int32 array
        of the operator nesting depths.

    Raises:
        ValueError: If `path` is a directory, or a line is malformed: not
            `label<TAB>parse`, a label that is not a digit, unbalanced
            brackets, a parse that is not a ListOps binary parse, or a label
            that is not the expression's value; or if the file is not UTF-8
            text (a byte that is not UTF-8, a NUL byte, a line over
            `MAX_LINE_BYTES` = 8 MiB, a gzip or UTF-16 file). The message
            names the file and the line number.

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
    trees, tokens, labels = [], [], []
    for example in iter_listops_tsv(path):
        trees.append(example["tree"])
        tokens.append(example["tokens"])
        labels.append(example["label"])
    return {
        "tokens": tokens,
        "trees": trees,
        "labels": np.array(labels, dtype="int32"),
        "depths": np.array([_depth(t) for t in tokens], dtype="int32"),
    }


def iter_listops_tsv(path):
    """Reads a ListOps release file one example at a time.

    The streaming form of `kr.datasets.read_listops_tsv`: it reads and
    checks the file as that function does, but yields each example as soon
    as its line is read, holding one line at a time, so a file of any size
    reads in constant memory (a 200 MB file in the same peak memory as a
    1 KB one; the figures are in docs/experiments.md).
    `kr.datasets.listops_tsv_dataset` wraps it in a `tf.data.Dataset`.

    Args:
        path: String or path-like, a `.tsv` file of the release.

    Yields:
        A dict per example, in file order: `"tokens"` (a list of token
        strings), `"tree"` (the gold tree), `"label"` and `"depth"`
        (Python integers), and `"line"`, its line number in the file.

    Raises:
        ValueError: As `read_listops_tsv`: a `path` that is a directory
            at once, a bad line when the iteration reaches it.

    Example:

    >>> for example in kr.datasets.iter_listops_tsv(  # doctest: +SKIP
    ...         "train_d20s.tsv"):
    ...     tree = kr.datasets.listops_binary_tree(example["tree"])
    """
    return _examples(check_file("path", path))


_FORMS = ("binary", "gold", "tokens")


def listops_tsv_dataset(path, *, form="binary", num_children=None):
    """A `tf.data.Dataset` that streams a ListOps release file.

    The examples of `kr.datasets.iter_listops_tsv`, read from the file as
    the dataset is iterated (one line at a time, so a file of any size
    streams in constant memory, and each epoch reads the file again),
    encoded for the layers: each element is a pair `(inputs, label)`, the
    label an int32 scalar, ready for `kr.trees.padded_batch` and `fit`.

    Args:
        path: String or path-like, a `.tsv` file of the release.
        form: What `inputs` holds. `"binary"` (default): the original's
            binary parse (`kr.datasets.listops_binary_tree`, the tree of
            the published Tree-LSTM result) as `kr.trees.encode_tree`
            encodes it with `labeled=False`, a dict of `"node_tokens"`
            int32 `(n,)`, `"children"` int32 `(n, 2)` and `"node_mask"`
            int32 `(n,)`, for `kr.layers.NaryTreeLSTM(arity=2)`. `"gold"`:
            the gold tree (operators at the inner nodes, digits at the
            leaves), the same dict with `"children"` of shape
            `(n, num_children)`, for `kr.layers.ChildSumTreeLSTM`.
            `"tokens"`: the bracketed token sequence as int32 ids
            `(length,)`, for a sequence model (batch it with
            `tf.data.Dataset.padded_batch`; id 0 is padding). Token ids are
            those of `kr.datasets.LISTOPS_VOCABULARY`.
        num_children: Optional integer >= 2, the child slots of the gold
            trees (`form="gold"` only). Defaults to `5`, the release's
            most arguments; an expression with more raises when reached.

    Returns:
        A `tf.data.Dataset` of `(inputs, label)` pairs, in file order.

    Raises:
        ValueError: On a bad `form` or `num_children`, a `path` that is a
            directory, or a file that is not UTF-8 text (gzip, UTF-16, a
            first line that is not UTF-8), at once.
            A malformed line, or an expression with more than
            `num_children` arguments, stops the iteration when
            it is reached, with an error whose message is
            `kr.datasets.read_listops_tsv`'s (the file and the line).
        FileNotFoundError: If there is no file at `path`, at once.

    Example:

    >>> train = kr.datasets.listops_tsv_dataset(  # doctest: +SKIP
    ...     "train_d20s.tsv").shuffle(10_000)
    >>> batches = kr.trees.padded_batch(  # doctest: +SKIP
    ...     train, 64, bucket_boundaries=[64, 128, 256])
    >>> trees, labels = next(iter(batches))  # doctest: +SKIP

    Reference:
        - [Nangia & Bowman, 2018. ListOps: A Diagnostic Dataset for Latent
          Tree Learning](https://arxiv.org/abs/1804.06028)
    """
    import tensorflow as tf  # Only `tf.data` needs it.

    from keras_recurrent.trees.batching import tree_spec
    from keras_recurrent.trees.encoding import encode_tree

    path = check_file("path", path)
    # The file is opened, and its first line read, now: an absent file, a
    # gzip or UTF-16 one raises here rather than at the first `fit` step.
    for _ in read_lines(path):
        break
    form = check_option("form", form, _FORMS)
    if form == "gold":
        num_children = check_int(
            "num_children", 5 if num_children is None else num_children, 2
        )
    elif num_children is not None:
        raise ValueError(
            'Argument `num_children` is only read with `form="gold"` (a '
            "binary tree has 2 child slots). Received: "
            f"num_children={num_children!r}, form={form!r}"
        )
    if form == "tokens":
        inputs_spec = tf.TensorSpec((None,), tf.int32, name="tokens")
    else:
        inputs_spec = tree_spec(2 if form == "binary" else num_children)
    label_spec = tf.TensorSpec((), tf.int32, name="label")

    def encoded():
        for example in _examples(path):
            if form == "tokens":
                inputs = np.array(
                    [LISTOPS_VOCABULARY[t] for t in example["tokens"]],
                    dtype=np.int32,
                )
            elif form == "binary":
                inputs = encode_tree(
                    listops_binary_tree(example["tree"]),
                    vocabulary=LISTOPS_VOCABULARY,
                    labeled=False,
                    num_children=2,
                )
            else:
                try:
                    inputs = encode_tree(
                        example["tree"],
                        vocabulary=LISTOPS_VOCABULARY,
                        num_children=num_children,
                    )
                except ValueError:
                    raise ValueError(
                        f"{path}, line {example['line']}: an operator has "
                        f"more than num_children={num_children} arguments; "
                        "pass a larger `num_children`."
                    ) from None
            yield inputs, np.int32(example["label"])

    return tf.data.Dataset.from_generator(
        encoded, output_signature=(inputs_spec, label_spec)
    )


def _examples(path):
    found = False
    for number, line in read_lines(path):
        if not line.strip():
            continue
        try:
            label, tree, tokens = _parse_line(line)
        except ValueError as error:
            raise line_error(path, number, error, line) from None
        found = True
        yield {
            "tokens": tokens,
            "tree": tree,
            "label": label,
            "depth": _depth(tokens),
            "line": number,
        }
    if not found:
        raise ValueError(f"{path} holds no ListOps line.")


# One string object per token: a file's millions of `"[MAX"` tokens share
# one, which keeps what the reader returns small.
_CANONICAL = {
    token: token for token in (*LISTOPS_OPERATORS, "]", "(", ")", *_DIGITS)
}


def _parse_line(line):
    """The label, gold tree and tokens of one line; raises a ValueError
    (without the line number) if the line is not a valid ListOps example.

    Iterative throughout, so an expression of any depth parses."""
    fields = line.rstrip().split("\t")
    if len(fields) != 2:
        raise ValueError(
            f"expected `label<TAB>binary parse`, found {len(fields)} "
            "tab-separated fields"
        )
    label, parse = fields[0].strip(), fields[1].split()
    if label not in _DIGITS:
        raise ValueError(f"the label must be a digit 0-9, not {label!r}")
    parse = [_CANONICAL.get(token, token) for token in parse]
    # Python's garbage collector would walk the growing nested tuples over
    # and over: without the pause, a 10,000-deep line takes 25 times as
    # long. Nothing here makes reference cycles.
    paused = gc.isenabled()
    gc.disable()
    try:
        tree, value = _gold_tree(_nested(parse))
    finally:
        if paused:
            gc.enable()
    # `_gold_tree` inverts `listops_binary_tree` exactly: it accepts only
    # `((op a1) .. ak) ]` pairs with digit leaves, so the binary tree of
    # what it returns is the parse itself, and the parse's tokens less
    # its brackets are the expression's tokens.
    if value != int(label):
        raise ValueError(
            f"the expression evaluates to {value}, not to the label {label}"
        )
    tokens = [token for token in parse if token != "(" and token != ")"]
    return int(label), tree, tokens


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
                    f"a bracket holds {len(node)} items, not 2: "
                    f"{_brief_tree(node)}"
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
    `("[MED", "7", "0")`. Returns the gold tree and its value.

    Without recursion: `work` holds the binary nodes still to convert and,
    for each operator, a marker to combine its arguments' results from
    `done` once they are all there."""
    work, done = [binary], []
    while work:
        node = work.pop()
        if isinstance(node, _Combine):
            count = len(node.arguments)
            results = done[len(done) - count :]
            del done[len(done) - count :]
            done.append(
                (
                    (node.operator, *(tree for tree, _ in results)),
                    _apply(node.operator, [value for _, value in results]),
                )
            )
            continue
        if isinstance(node, str):
            if node not in _DIGITS:
                raise ValueError(f"a leaf must be a digit, not {node!r}")
            done.append((node, int(node)))
            continue
        if node[1] != "]":
            raise ValueError(
                f"an operator must end with `]`: {_brief_tree(node)}"
            )
        arguments, head = [], node[0]
        while isinstance(head, tuple):
            head, argument = head
            arguments.append(argument)
        if isinstance(head, str) and head.startswith("["):
            if head not in LISTOPS_OPERATORS:
                raise ValueError(
                    f"unknown operator {head!r}; the operators are "
                    f"{LISTOPS_OPERATORS} (upper case)"
                )
        if head not in LISTOPS_OPERATORS or len(arguments) < 2:
            raise ValueError(
                f"an operator of {LISTOPS_OPERATORS} must take at least two "
                f"arguments: {_brief_tree(node)}"
            )
        # `arguments` runs last to first; popped, the first comes first.
        work.append(_Combine(head, arguments))
        work.extend(arguments)
    return done[0]


class _Combine:
    """In `_gold_tree`'s work stack: combine an operator's arguments."""

    __slots__ = ("operator", "arguments")

    def __init__(self, operator, arguments):
        self.operator = operator
        self.arguments = arguments
