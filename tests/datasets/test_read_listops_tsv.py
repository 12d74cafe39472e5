"""`read_listops_tsv` on the published ListOps sample and on bad lines."""

from pathlib import Path

import numpy as np
import pytest

import keras_recurrent as kr
from tests.datasets.test_listops import _reference_value
from tests.datasets.test_listops import _tree_from_tokens

SAMPLE = (
    Path(__file__).resolve().parents[2].parent
    / "shared"
    / "data"
    / "listops"
    / "test_d20s_last1000.tsv"
)
needs_sample = pytest.mark.skipif(
    not SAMPLE.exists(),
    reason=f"the published ListOps sample is not at {SAMPLE} (../shared)",
)


def _parse_text(binary):
    """A binary tree from `listops_binary_tree` written as the release
    writes it: `( ( [MED 7 ) ] )`."""
    if isinstance(binary, str):
        return binary
    return f"( {_parse_text(binary[0])} {_parse_text(binary[1])} )"


@pytest.fixture(scope="module")
def sample():
    return kr.datasets.read_listops_tsv(SAMPLE)


@needs_sample
def test_reads_every_line_of_the_published_sample(sample):
    lines = SAMPLE.read_text().splitlines()
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


@needs_sample
def test_the_first_line(sample):
    # 2	( ( ( ( [MED 7 ) 0 ) ( ( ( ( [MAX 0 ) 2 ) 0 ) ] ) ) ] )
    assert sample["trees"][0] == ("[MED", "7", "0", ("[MAX", "0", "2", "0"))
    assert " ".join(sample["tokens"][0]) == "[MED 7 0 [MAX 0 2 0 ] ]"
    assert sample["labels"][0] == 2
    assert sample["depths"][0] == 2


@needs_sample
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
