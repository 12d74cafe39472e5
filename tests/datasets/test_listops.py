import hashlib

import numpy as np
import pytest

import keras_recurrent as kr
from tests.datasets.builder_helpers import LISTOPS_SAMPLE
from tests.datasets.builder_helpers import needs_listops_sample

_DIGITS = {str(digit) for digit in range(10)}


def _reference_value(tokens):
    """Evaluates the token sequence with a stack, independently of trees."""
    stack = []
    for token in tokens:
        if token == "]":
            args = []
            while not isinstance(stack[-1], str):
                args.append(stack.pop())
            operator = stack.pop()
            args = sorted(args)
            if operator == "[MIN":
                stack.append(args[0])
            elif operator == "[MAX":
                stack.append(args[-1])
            elif operator == "[SM":
                stack.append(sum(args) % 10)
            else:
                middle = len(args) // 2
                if len(args) % 2:
                    stack.append(args[middle])
                else:
                    stack.append((args[middle - 1] + args[middle]) // 2)
        elif token in _DIGITS:
            stack.append(int(token))
        else:
            stack.append(token)
    (value,) = stack
    return value


def _tree_from_tokens(tokens):
    stack = [[]]
    for token in tokens:
        if token == "]":
            items = stack.pop()
            stack[-1].append(tuple(items))
        elif token in _DIGITS:
            stack[-1].append(token)
        else:
            stack.append([token])
    (tree,) = stack[0]
    return tree


def _max_args(tree):
    if isinstance(tree, str):
        return 0
    return max([len(tree) - 1] + [_max_args(arg) for arg in tree[1:]])


def test_labels_match_an_independent_evaluation():
    data = kr.datasets.listops(300, seed=1)
    assert data["labels"].dtype == np.int32
    expected = [_reference_value(tokens) for tokens in data["tokens"]]
    np.testing.assert_array_equal(data["labels"], expected)
    # All four operators and all ten values occur.
    operators = {tree[0] for tree in data["trees"]}
    assert operators == set(kr.datasets.LISTOPS_OPERATORS)
    assert set(data["labels"].tolist()) == set(range(10))


def test_tokens_round_trip_to_tree_and_encode():
    data = kr.datasets.listops(50, seed=2)
    for tokens, tree in zip(data["tokens"], data["trees"]):
        assert _tree_from_tokens(tokens) == tree
        assert tokens[-1] == "]" and tokens[0] == tree[0]
    vocabulary = kr.datasets.LISTOPS_VOCABULARY
    tree = ("[MAX", "2", ("[MIN", "3", "4"))
    encoded = kr.trees.encode_tree(tree, vocabulary=vocabulary)
    assert encoded["node_tokens"].tolist() == [4, 5, 6, 12, 13]
    assert encoded["children"].tolist() == [
        [-1, -1],
        [-1, -1],
        [-1, -1],
        [1, 2],
        [0, 3],
    ]
    batch = kr.trees.encode_trees(data["trees"], vocabulary=vocabulary)
    sizes = batch["node_mask"].sum(axis=1)
    # A tree has one node per token that is not a closing bracket.
    expected = [sum(t != "]" for t in tokens) for tokens in data["tokens"]]
    np.testing.assert_array_equal(sizes, expected)


def test_binary_tree_is_the_original_token_tree():
    tree = ("[MAX", "2", ("[MIN", "3", "4"))
    binary = kr.datasets.listops_binary_tree(tree)
    assert binary == ((("[MAX", "2"), ((("[MIN", "3"), "4"), "]")), "]")
    data = kr.datasets.listops(20, seed=3)
    for tokens, gold in zip(data["tokens"], data["trees"]):
        labels, children = kr.trees.post_order(
            kr.datasets.listops_binary_tree(gold), labeled=False
        )
        # The leaves, left to right, are the token sequence.
        assert [label for label in labels if label is not None] == tokens
        assert all(len(kids) in (0, 2) for kids in children)


def test_limits_are_respected():
    data = kr.datasets.listops(
        200, max_depth=3, max_args=3, min_length=8, max_length=30, seed=4
    )
    lengths = [len(tokens) for tokens in data["tokens"]]
    assert min(lengths) >= 8 and max(lengths) <= 30
    assert data["depths"].max() <= 3
    assert max(_max_args(tree) for tree in data["trees"]) <= 3
    assert len(set(data["trees"])) == 200
    deep = kr.datasets.listops(100, max_depth=1, seed=5)
    assert (deep["depths"] == 1).all()


def test_deterministic_by_seed():
    first = kr.datasets.listops(40, seed=7)
    second = kr.datasets.listops(40, seed=7)
    other = kr.datasets.listops(40, seed=8)
    assert first["trees"] == second["trees"]
    np.testing.assert_array_equal(first["labels"], second["labels"])
    assert first["trees"] != other["trees"]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"num_samples": 0}, "num_samples=0"),
        ({"max_depth": 0}, "max_depth=0"),
        ({"max_depth": 201}, "max_depth=201"),
        ({"max_args": 1}, "max_args=1"),
        ({"branch_probability": 0.0}, "branch_probability=0.0"),
        ({"min_length": 3}, "min_length=3"),
        ({"min_length": 20, "max_length": 10}, "min_length=20"),
        ({"unique": 1}, "unique=1"),
        ({"seed": -1}, "seed=-1"),
        # Only 4 * 10 * 10 expressions of 4 tokens exist.
        (
            {"num_samples": 500, "max_length": 4, "max_depth": 1},
            "num_samples=500",
        ),
    ],
)
def test_bad_arguments_raise(kwargs, message):
    kwargs = {"num_samples": 5, **kwargs}
    with pytest.raises(ValueError, match=message):
        kr.datasets.listops(**kwargs)


def test_binary_tree_rejects_non_listops():
    with pytest.raises(ValueError, match="Received"):
        kr.datasets.listops_binary_tree(("PLUS", "1", "2"))
    with pytest.raises(ValueError, match="12"):
        kr.datasets.listops_binary_tree("12")


# `read_listops_tsv`, on the published ListOps sample and on bad lines.


def _parse_text(binary):
    """A binary tree from `listops_binary_tree` written as the release
    writes it: `( ( [MED 7 ) ] )`."""
    if isinstance(binary, str):
        return binary
    return f"( {_parse_text(binary[0])} {_parse_text(binary[1])} )"


@pytest.fixture(scope="module")
def sample():
    return kr.datasets.read_listops_tsv(LISTOPS_SAMPLE)


@needs_listops_sample
def test_reads_every_line_of_the_published_sample(sample):
    lines = LISTOPS_SAMPLE.read_text().splitlines()
    assert len(sample["trees"]) == len(lines) == 1000
    for line, tree, tokens, label in zip(
        lines, sample["trees"], sample["tokens"], sample["labels"]
    ):
        text_label, parse = line.split("\t")
        assert int(text_label) == label
        # The gold tree gives back the line's binary parse exactly ...
        assert _parse_text(kr.datasets.listops_binary_tree(tree)) == parse
        # ... its tokens are the parse's, brackets left out ...
        assert tokens == [t for t in parse.split() if t not in "()"]
        # ... and an evaluation that knows nothing of trees gives the label.
        assert _reference_value(tokens) == label
        assert _tree_from_tokens(tokens) == tree


@needs_listops_sample
def test_the_first_line(sample):
    # 2	( ( ( ( [MED 7 ) 0 ) ( ( ( ( [MAX 0 ) 2 ) 0 ) ] ) ) ] )
    assert sample["trees"][0] == ("[MED", "7", "0", ("[MAX", "0", "2", "0"))
    assert " ".join(sample["tokens"][0]) == "[MED 7 0 [MAX 0 2 0 ] ]"
    assert sample["labels"][0] == 2
    assert sample["depths"][0] == 2


@needs_listops_sample
def test_returns_what_the_generator_returns(sample):
    generated = kr.datasets.listops(5, seed=0)
    assert sorted(sample) == sorted(generated)
    for key in ("labels", "depths"):
        assert sample[key].dtype == generated[key].dtype == np.int32
        assert sample[key].shape == (1000,)
    # The length statistics the examples report on.
    lengths = np.array([len(tokens) for tokens in sample["tokens"]])
    assert np.median(lengths) == 16
    assert 0.10 < np.mean(lengths > 100) < 0.13
    # The trees encode for both Tree-LSTMs.
    vocabulary = kr.datasets.LISTOPS_VOCABULARY
    gold = kr.trees.encode_trees(
        sample["trees"][:8], vocabulary=vocabulary, num_children=5
    )
    assert gold["children"].shape[-1] == 5
    binary = kr.trees.encode_trees(
        [kr.datasets.listops_binary_tree(t) for t in sample["trees"][:8]],
        vocabulary=vocabulary,
        labeled=False,
        num_children=2,
    )
    # A binary tree over n tokens has 2n - 1 nodes.
    num_tokens = [len(tokens) for tokens in sample["tokens"][:8]]
    assert binary["node_mask"].sum(1).tolist() == [
        2 * n - 1 for n in num_tokens
    ]


def test_reads_a_small_file_without_the_sample(tmp_path):
    path = tmp_path / "small.tsv"
    path.write_text(
        "7\t( ( ( ( [SM 3 ) 4 ) 0 ) ] )\n"
        "\n"
        "4\t( ( ( [MAX 2 ) ( ( ( [MIN 4 ) 9 ) ] ) ) ] )\n"
    )
    data = kr.datasets.read_listops_tsv(path)
    assert data["trees"] == [
        ("[SM", "3", "4", "0"),
        ("[MAX", "2", ("[MIN", "4", "9")),
    ]
    assert data["labels"].tolist() == [7, 4]
    assert data["depths"].tolist() == [1, 2]


_GOOD = "( ( ( [MAX 2 ) 5 ) ] )"


@pytest.mark.parametrize(
    "line, message",
    [
        (f"5 {_GOOD}", "fields"),
        (f"5\t{_GOOD}\textra", "fields"),
        (f"x\t{_GOOD}", "label must be a digit"),
        (f"12\t{_GOOD}", "label must be a digit"),
        (f"4\t{_GOOD}", "evaluates to 5, not to the label 4"),
        ("5\t( ( ( [MAX 2 ) 5 ) ]", "left unclosed"),
        ("5\t( ( [MAX 2 ) 5 ) ] ) )", "closes no"),
        ("5\t( ( [MAX 2 5 ) ] )", "holds 3 items"),
        ("5\t( ( ( [MAX 2 ) 5 ) 9 )", "must end with"),
        ("5\t( ( ( [FOO 2 ) 5 ) ] )", "operator"),
        ("5\t( ( ( [max 2 ) 5 ) ] )", r"unknown operator '\[max'"),
        ("5\t( ( [MAX 2 )\t5 ) ] )", "found 3 tab-separated fields"),
        ("5\t", "found 1 tab-separated fields"),
        ("\u0663\t( ( ( [MAX 2 ) 5 ) ] )", "label must be a digit 0-9"),
        ("5\t( ( ( [MAX 2 ) \u0665 ) ] )", "a leaf must be a digit"),
        ("5\t( ( [MAX 5 ) ] )", "at least two"),
        ("5\t( ( ( [MAX 2 ) x ) ] )", "a leaf must be a digit"),
        ("5\t( ( ( [MAX 2 ) 5 ) ] ) 3", "side by side"),
    ],
)
def test_a_malformed_line_is_named(tmp_path, line, message):
    path = tmp_path / "bad.tsv"
    path.write_text(f"5\t{_GOOD}\n5\t{_GOOD}\n{line}\n")
    with pytest.raises(ValueError, match=message) as info:
        kr.datasets.read_listops_tsv(path)
    assert f"{path}, line 3" in str(info.value)


def test_an_empty_file_is_an_error(tmp_path):
    path = tmp_path / "empty.tsv"
    path.write_text("\n")
    with pytest.raises(ValueError, match="holds no ListOps line"):
        kr.datasets.read_listops_tsv(path)


# Hardening of the reader (issue 26): encodings, depth, streaming.


def _deep_line(depth, label=None, leaf="2"):
    """A line of `[SM [SM .. [SM 2 3 ] .. 3 ] 3 ]`, `depth` operators
    deep, written as the release writes it (built in linear time)."""
    parse = "( ( ( [SM " * depth + leaf + " ) 3 ) ] )" * depth
    tokens = [t for t in parse.split() if t not in "()"]
    value = _reference_value(tokens) if label is None else label
    return f"{value}\t{parse}\n", tokens, value


@pytest.mark.parametrize("depth", [1_000, 10_000])
def test_a_deep_expression_parses_and_encodes(tmp_path, depth):
    line, tokens, value = _deep_line(depth)
    path = tmp_path / "deep.tsv"
    path.write_text(f"5\t{_GOOD}\n{line}")
    data = kr.datasets.read_listops_tsv(path)
    assert data["labels"].tolist() == [5, value]
    assert data["labels"][1] == (2 + 3 * depth) % 10
    assert data["depths"].tolist() == [1, depth]
    assert data["tokens"][1] == tokens
    tree = data["trees"][1]
    # (`==` on tuples this deep is itself recursive: compare them flat.)
    assert _flat(tree) == _flat(_tree_from_tokens(tokens))
    binary_tree = kr.datasets.listops_binary_tree(tree)
    assert _flat(binary_tree) == _flat(_binary_of(tokens))
    # The trees encode, and what they encode is a tree of that height.
    vocabulary = kr.datasets.LISTOPS_VOCABULARY
    gold = kr.trees.encode_tree(tree, vocabulary=vocabulary, num_children=2)
    assert len(gold["node_tokens"]) == 2 * depth + 1
    kr.trees.validate_tree_tensors(
        gold["children"][None], gold["node_mask"][None]
    )
    assert _height(gold["children"]) == depth
    binary = kr.trees.encode_tree(
        binary_tree,
        vocabulary=vocabulary,
        labeled=False,
        num_children=2,
    )
    assert len(binary["node_tokens"]) == 2 * len(tokens) - 1
    assert _height(binary["children"]) == 3 * depth


def _flat(tree):
    """A nested tuple as a flat list with brackets, without recursion."""
    flat, stack = [], [tree]
    while stack:
        item = stack.pop()
        if isinstance(item, tuple):
            flat.append("(")
            stack.append(")")
            stack.extend(reversed(item))
        else:
            flat.append(item)
    return flat


def _binary_of(tokens):
    """The release's binary tree over `tokens`, built with a stack."""
    stack = []
    for token in tokens:
        if token == "]":
            arguments = []
            while not (isinstance(stack[-1], str) and stack[-1][0] == "["):
                arguments.append(stack.pop())
            binary = stack.pop()
            for argument in reversed(arguments):
                binary = (binary, argument)
            stack.append((binary, "]"))
        else:
            stack.append(token)
    (tree,) = stack
    return tree


def _height(children):
    """Edges on the longest root-to-leaf path of a post-order tree."""
    height = [0] * len(children)
    for node, kids in enumerate(children.tolist()):
        height[node] = max([height[kid] + 1 for kid in kids if kid >= 0] + [0])
    return height[-1]


def test_a_deep_bad_line_names_the_file_and_line(tmp_path):
    line, _, _ = _deep_line(5_000, label=0, leaf="x")
    path = tmp_path / "deep.tsv"
    path.write_text(f"5\t{_GOOD}\n{line}")
    with pytest.raises(ValueError, match="a leaf must be a digit") as info:
        kr.datasets.read_listops_tsv(path)
    assert f"{path}, line 2:" in str(info.value)
    assert len(str(info.value)) < 1000
    line, _, value = _deep_line(5_000)
    path.write_text(line.replace(f"{value}\t", f"{(value + 1) % 10}\t"))
    with pytest.raises(ValueError, match=f"evaluates to {value}, not"):
        kr.datasets.read_listops_tsv(path)


def test_binary_tree_of_a_deep_bad_tree_is_an_error():
    tree = ("[SM", "1", "2")
    for _ in range(5_000):
        tree = ("[SM", tree, "3")
    assert kr.datasets.listops_binary_tree(tree)[1] == "]"
    bad = ("[PLUS", "1", "2")
    for _ in range(5_000):
        bad = ("[SM", bad, "3")
    with pytest.raises(ValueError, match=r"Received: tree=\('\[PLUS', '1'"):
        kr.datasets.listops_binary_tree(bad)


@pytest.mark.parametrize(
    "data",
    [
        b"\xef\xbb\xbf5\t" + _GOOD.encode() + b"\n",  # UTF-8 byte order mark
        b"5\t" + _GOOD.encode() + b"\r\n",  # CRLF
        b"5\t" + _GOOD.encode() + b" \t \n",  # whitespace at the end
        b"5\t" + _GOOD.encode(),  # no final newline
    ],
)
def test_valid_files_of_other_editors_read(tmp_path, data):
    path = tmp_path / "file.tsv"
    path.write_bytes(data + b"\n" + data.removeprefix(b"\xef\xbb\xbf"))
    data = kr.datasets.read_listops_tsv(path)
    assert data["trees"] == [("[MAX", "2", "5")] * 2
    assert data["labels"].tolist() == [5, 5]


@pytest.mark.parametrize(
    "data, message",
    [
        (b"\xe9\t" + _GOOD.encode(), r"line 2: byte 0xe9 at offset 0"),
        (b"5\t" + _GOOD.encode() + b"\x00", "line 2: a NUL byte"),
    ],
)
def test_bytes_that_are_not_text_name_the_line(tmp_path, data, message):
    path = tmp_path / "file.tsv"
    path.write_bytes(f"5\t{_GOOD}\n".encode() + data)
    with pytest.raises(ValueError, match=message) as info:
        kr.datasets.read_listops_tsv(path)
    assert str(path) in str(info.value)


def test_a_directory_names_the_argument(tmp_path):
    with pytest.raises(ValueError, match="Argument `path` must be a file"):
        kr.datasets.read_listops_tsv(tmp_path)
    with pytest.raises(ValueError, match="Argument `path` must be a file"):
        kr.datasets.iter_listops_tsv(tmp_path)


def test_iter_listops_tsv_streams(tmp_path):
    path = tmp_path / "file.tsv"
    path.write_text(
        "7\t( ( ( ( [SM 3 ) 4 ) 0 ) ] )\n\n"
        f"5\t{_GOOD}\n"
        "5\t( ( ( [MAX 2 ) x ) ] )\n"
    )
    examples = kr.datasets.iter_listops_tsv(path)
    first = next(examples)
    assert first == {
        "tokens": ["[SM", "3", "4", "0", "]"],
        "tree": ("[SM", "3", "4", "0"),
        "label": 7,
        "depth": 1,
        "line": 1,
    }
    assert next(examples)["line"] == 3
    # The bad line is read, and refused, only when the iteration gets there.
    with pytest.raises(ValueError, match=f"{path}, line 4: a leaf"):
        next(examples)


@needs_listops_sample
def test_iter_listops_tsv_gives_what_read_listops_tsv_gives(sample):
    examples = list(kr.datasets.iter_listops_tsv(LISTOPS_SAMPLE))
    assert [e["tree"] for e in examples] == sample["trees"]
    assert [e["tokens"] for e in examples] == sample["tokens"]
    assert [e["label"] for e in examples] == sample["labels"].tolist()
    assert [e["depth"] for e in examples] == sample["depths"].tolist()
    assert [e["line"] for e in examples] == list(range(1, 1001))


@needs_listops_sample
def test_the_published_sample_reads_as_before(sample):
    # A fingerprint of what the reader returned before the hardening of
    # issue 26 (trees, tokens, labels and depths), so the new line reading
    # and parser change nothing on the published file.
    digest = hashlib.sha256()
    digest.update(repr(sample["trees"]).encode())
    digest.update(repr(sample["tokens"]).encode())
    for key in ("labels", "depths"):
        digest.update(str((sample[key].dtype, sample[key].shape)).encode())
        digest.update(sample[key].tobytes())
    assert digest.hexdigest()[:16] == "4349352fc1830864"


def test_iter_listops_tsv_holds_one_line_at_a_time(tmp_path):
    # The peak of memory allocated while streaming 1,600 lines is about one
    # example's, however many lines the file holds; reading them all holds
    # every tree.
    import tracemalloc

    path = tmp_path / "big.tsv"
    line = "4\t" + "( ( ( [MAX 2 ) ( ( ( [MIN 4 ) 9 ) ] ) ) ] )\n"
    path.write_text(line * 1600)
    peaks = {}
    for name, read in (
        ("iter", lambda: sum(1 for _ in kr.datasets.iter_listops_tsv(path))),
        ("read", lambda: len(kr.datasets.read_listops_tsv(path)["labels"])),
    ):
        tracemalloc.start()
        try:
            assert read() == 1600
            peaks[name] = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert peaks["iter"] < 64 * 1024, peaks
    assert peaks["read"] > 10 * peaks["iter"], peaks


# `listops_tsv_dataset`: the same examples, streamed into `tf.data`.


def _tsv_dataset_file(tmp_path):
    path = tmp_path / "file.tsv"
    path.write_text(
        "7\t( ( ( ( [SM 3 ) 4 ) 0 ) ] )\n\n"
        f"5\t{_GOOD}\n"
        "4\t( ( ( [MAX 2 ) ( ( ( [MIN 4 ) 9 ) ] ) ) ] )\n"
    )
    return path


@pytest.mark.parametrize("form", ["binary", "gold", "tokens"])
def test_listops_tsv_dataset_gives_the_encoded_examples(tmp_path, form):
    path = _tsv_dataset_file(tmp_path)
    vocabulary = kr.datasets.LISTOPS_VOCABULARY
    elements = list(kr.datasets.listops_tsv_dataset(path, form=form))
    examples = list(kr.datasets.iter_listops_tsv(path))
    assert len(elements) == len(examples) == 3
    for (inputs, label), example in zip(elements, examples):
        assert label.dtype.name == "int32"
        assert int(label) == example["label"]
        if form == "tokens":
            expected = [vocabulary[t] for t in example["tokens"]]
            assert inputs.numpy().tolist() == expected
            continue
        tree = example["tree"]
        if form == "binary":
            expected = kr.trees.encode_tree(
                kr.datasets.listops_binary_tree(tree),
                vocabulary=vocabulary,
                labeled=False,
                num_children=2,
            )
        else:
            expected = kr.trees.encode_tree(
                tree, vocabulary=vocabulary, num_children=5
            )
        assert sorted(inputs) == sorted(expected)
        for key in expected:
            np.testing.assert_array_equal(inputs[key].numpy(), expected[key])
    # The first expression, `[SM 3 4 0 ]`: its binary parse has 9 nodes,
    # its gold tree 4, its token sequence 5 tokens.
    first = elements[0][0]
    size = {"binary": 9, "gold": 4, "tokens": 5}[form]
    assert len(first if form == "tokens" else first["node_mask"]) == size


def test_listops_tsv_dataset_batches_for_a_tree_lstm(tmp_path):
    path = _tsv_dataset_file(tmp_path)
    dataset = kr.datasets.listops_tsv_dataset(path)
    trees, labels = next(iter(kr.trees.padded_batch(dataset, 3)))
    assert labels.numpy().tolist() == [7, 5, 4]
    assert trees["children"].shape == (3, 13, 2)
    assert trees["node_mask"].numpy().sum(1).tolist() == [9, 7, 13]
    # Each epoch reads the file again.
    assert len(list(dataset)) == len(list(dataset)) == 3


def test_listops_tsv_dataset_names_a_bad_line_when_reached(tmp_path):
    import tensorflow as tf

    path = tmp_path / "file.tsv"
    path.write_text(f"5\t{_GOOD}\n5\t( ( ( [MAX 2 ) x ) ] )\n")
    iterator = iter(kr.datasets.listops_tsv_dataset(path))
    assert int(next(iterator)[1]) == 5
    with pytest.raises(
        (ValueError, tf.errors.InvalidArgumentError),
        match=f"{path}, line 2: a leaf",
    ):
        next(iterator)
    wide = "( ( ( ( ( ( [SM 1 ) 1 ) 1 ) 1 ) 1 ) ] )"
    path.write_text(f"5\t{wide}\n")
    gold = kr.datasets.listops_tsv_dataset(path, form="gold", num_children=4)
    with pytest.raises(
        tf.errors.InvalidArgumentError,
        match=f"{path}, line 1: an operator has more than num_children=4",
    ):
        list(gold)
    assert len(list(kr.datasets.listops_tsv_dataset(path, form="gold"))) == 1


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"form": "tree"}, "form='tree'"),
        ({"form": "binary", "num_children": 3}, "num_children=3"),
        ({"form": "gold", "num_children": 1}, "num_children=1"),
        ({"form": "gold", "num_children": 2.5}, "num_children=2.5"),
    ],
)
def test_listops_tsv_dataset_bad_arguments(tmp_path, kwargs, message):
    path = _tsv_dataset_file(tmp_path)
    with pytest.raises(ValueError, match=message):
        kr.datasets.listops_tsv_dataset(path, **kwargs)
    with pytest.raises(ValueError, match="Argument `path` must be a file"):
        kr.datasets.listops_tsv_dataset(tmp_path)


def test_listops_tsv_dataset_refuses_a_wrong_file_at_once(tmp_path):
    import gzip

    with pytest.raises(FileNotFoundError, match="absent.tsv"):
        kr.datasets.listops_tsv_dataset(tmp_path / "absent.tsv")
    path = tmp_path / "file.tsv.gz"
    path.write_bytes(gzip.compress(f"5\t{_GOOD}\n".encode()))
    with pytest.raises(ValueError, match="gzip-compressed"):
        kr.datasets.listops_tsv_dataset(path)
    path = tmp_path / "latin1.tsv"
    path.write_bytes(b"\xe9\t" + _GOOD.encode())
    with pytest.raises(ValueError, match="line 1: byte 0xe9"):
        kr.datasets.listops_tsv_dataset(path)


def test_an_empty_file_and_a_bom_alone_are_errors(tmp_path):
    for data in (b"", b"\xef\xbb\xbf", b"\r\n\t\n"):
        path = tmp_path / "empty.tsv"
        path.write_bytes(data)
        with pytest.raises(ValueError, match="holds no ListOps line"):
            kr.datasets.read_listops_tsv(path)
