"""`examples/listops.py` on files of the ListOps release."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from tests.datasets.builder_helpers import LISTOPS_SAMPLE
from tests.datasets.builder_helpers import needs_listops_sample
from tests.examples import EXAMPLES
from tests.examples import load_example


@pytest.fixture(scope="module")
def example():
    return load_example("listops")


@pytest.fixture
def release_files(tmp_path):
    lines = LISTOPS_SAMPLE.read_text().splitlines(keepends=True)
    train, test = tmp_path / "train.tsv", tmp_path / "test.tsv"
    train.write_text("".join(lines[:300]))
    test.write_text("".join(lines[900:]))
    return train, test


def _lengths(path):
    return np.array(
        [
            sum(token not in "()" for token in line.split("\t")[1].split())
            for line in path.read_text().splitlines()
        ]
    )


def _chain(n):
    """A tree of `n` nodes: node i's child is node i - 1, the root last."""
    children = np.full((n, 2), -1)
    children[1:, 0] = np.arange(n - 1)
    return children


@needs_listops_sample
def test_long_expressions_are_skipped_in_training_only(example, release_files):
    train, test = release_files
    args = example.argparse.Namespace(
        train_file=str(train),
        test_file=str(test),
        max_length=40,
        validation_size=30,
        train_size=20000,
    )
    splits = example.release_splits(args)
    lengths = _lengths(train)
    short = np.flatnonzero(lengths <= 40)
    assert len(short) < 300
    assert len(splits["train"]["labels"]) == len(short) - 30
    assert len(splits["validation"]["labels"]) == 30
    for name in ("train", "validation"):
        assert max(len(t) for t in splits[name]["tokens"]) <= 40
    # Every test expression stays, the long ones too, in file order.
    assert len(splits["test"]["labels"]) == 100
    assert max(len(t) for t in splits["test"]["tokens"]) == _lengths(test).max()
    assert _lengths(test).max() > 40
    # --train-size takes the first of the short ones.
    args.train_size = 50
    capped = example.release_splits(args)
    assert capped["train"]["tokens"] == splits["train"]["tokens"][:50]
    # Without --train-file, only the test split comes from a file.
    args.train_file = None
    assert list(example.release_splits(args)) == ["test"]


@needs_listops_sample
def test_command_line_on_release_files(release_files, tmp_path):
    train, test = release_files
    out = tmp_path / "results.json"
    result = subprocess.run(
        [
            sys.executable,
            str(EXAMPLES / "listops.py"),
            *("--train-file", str(train), "--test-file", str(test)),
            *("--max-length", "60", "--validation-size", "40"),
            *("--epochs", "2", "--units", "8", "--embedding-dim", "4"),
            *("--curriculum", "1", "--curriculum-length", "20"),
            *("--models", "nary", "--json-out", str(out)),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "KERAS_BACKEND": "tensorflow"},
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Warning" not in result.stderr, result.stderr[-3000:]
    long_train = int(np.sum(_lengths(train) > 60))
    long_test = int(np.sum(_lengths(test) > 60))
    assert f"300 expressions, {long_train} longer than 60" in result.stdout
    assert f"100 expressions, all tested ({long_test} longer" in result.stdout
    assert "tested on 100 expressions" in result.stdout
    (record,) = json.loads(out.read_text())["results"]
    assert 0.0 <= record["test_accuracy"] <= 1.0
    # The accuracy by length covers every test expression, and the total
    # is the count-weighted mean of the bins.
    table = record["test_by_length"]
    assert [row["bin"] for row in table] == [
        "<= 50",
        "51-100",
        "101-200",
        "> 200",
    ]
    lengths = _lengths(test)
    assert [row["count"] for row in table] == [
        int(np.sum(lengths <= 50)),
        int(np.sum((lengths > 50) & (lengths <= 100))),
        int(np.sum((lengths > 100) & (lengths <= 200))),
        int(np.sum(lengths > 200)),
    ]
    weighted = sum(
        row["count"] * row["accuracy"] for row in table if row["count"]
    )
    assert weighted / 100 == pytest.approx(record["test_accuracy"])
    assert "Test accuracy % by expression length" in result.stdout
    assert 0 < record["training_seconds"] <= record["seconds"]
    assert [row["epoch"] for row in record["curve"]] == [1, 2]


def test_a_train_file_needs_a_test_file(tmp_path):
    result = subprocess.run(
        [
            sys.executable,
            str(EXAMPLES / "listops.py"),
            *("--train-file", str(tmp_path / "train.tsv")),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "KERAS_BACKEND": "tensorflow"},
        timeout=600,
    )
    assert result.returncode == 2
    assert "--train-file needs --test-file" in result.stderr


@needs_listops_sample
def test_without_max_length_every_expression_trains(example, release_files):
    train, test = release_files
    args = example.argparse.Namespace(
        train_file=str(train),
        test_file=str(test),
        max_length=None,
        validation_size=30,
        train_size=20000,
    )
    splits = example.release_splits(args)
    assert len(splits["train"]["labels"]) == 270
    assert max(len(t) for t in splits["train"]["tokens"]) == max(
        _lengths(train)[:270]
    )


def test_size_batches_keep_to_the_budgets(example):
    rng = np.random.default_rng(0)
    sizes = rng.integers(1, 300, size=500)
    batches, padded = example.size_batches(sizes, 16, 1000)
    everything = np.concatenate(batches)
    assert sorted(everything.tolist()) == list(range(500))
    for batch, size in zip(batches, padded):
        assert len(batch) <= 16
        assert size == example.kr.trees.bucket_size(sizes[batch].max())
        assert size >= sizes[batch].max()
        # Within the node budget, unless a single example exceeds it.
        assert len(batch) * size <= 1000 or len(batch) == 1
    # Sizes rise from batch to batch, and batches are as full as allowed:
    # one more example would break a budget.
    for batch, following in zip(batches, batches[1:]):
        assert sizes[batch].max() <= sizes[following].min()
        more = example.kr.trees.bucket_size(sizes[following[0]])
        assert len(batch) == 16 or (len(batch) + 1) * more > 1000
    # Small examples fill whole batches; the longest come few at a time.
    assert len(batches[0]) == 16
    assert all(
        len(batch) <= 1000 // size
        for batch, size in zip(batches, padded)
        if size >= 200
    )


def test_size_batches_pad_to_the_bucket_size(example):
    sizes = np.array([3, 37, 12, 9])

    encoded = [
        {
            "node_tokens": np.ones(n, "int32"),
            "children": _chain(n),
            "node_mask": np.ones(n, "int32"),
        }
        for n in sizes
    ]
    batches = example.SizeBatches(
        encoded, [0, 1, 2, 3], 2, 10**6, shuffle=False, seed=0
    )
    assert [b.tolist() for b in batches.batches] == [[0, 3], [2, 1]]
    first, labels = batches[0]
    assert first["node_tokens"].shape == (2, 10)  # bucket_size(9)
    assert first["tree_levels"].shape[0] == 2
    second, labels = batches[1]
    assert second["children"].shape == (2, 40, 2)  # bucket_size(37)
    assert labels.tolist() == [2, 1]


def test_weighted_batches_count_every_expression_the_same(example):
    sizes = [3, 5, 40, 60, 70]
    encoded = [
        {
            "node_tokens": np.ones(n, "int32"),
            "children": _chain(n),
            "node_mask": np.ones(n, "int32"),
        }
        for n in sizes
    ]
    labels = [0, 1, 2, 3, 4]
    # Two small ones fill a batch of 2; the node budget takes the long ones
    # one at a time.
    batches = example.SizeBatches(
        encoded, labels, 2, 100, shuffle=False, seed=0, weighted=True
    )
    weights = [batches[i][2].tolist() for i in range(len(batches))]
    assert weights == [[1.0, 1.0], [0.5], [0.5], [0.5]]
    # A mean over the batch weighted so is the sum over its expressions
    # divided by `batch_size`, whatever the batch holds.
    losses = np.array([0.3, 0.7])
    assert np.mean(losses * weights[0]) * 2 == losses.sum()
    assert np.mean(losses[:1] * weights[1]) * 1 == losses[0] / 2
    unweighted = example.SizeBatches(
        encoded, labels, 2, 100, shuffle=False, seed=0
    )
    assert len(unweighted[1]) == 2


def test_curriculum_trains_on_the_short_expressions_first(example):
    sizes = [3, 5, 9, 12, 30, 45]
    encoded = [
        {
            "node_tokens": np.full(n, i + 1, "int32"),
            "children": _chain(n),
            "node_mask": np.ones(n, "int32"),
        }
        for i, n in enumerate(sizes)
    ]
    lengths = [2, 3, 5, 6, 15, 23]  # tokens
    args = example.argparse.Namespace(
        batch_size=4,
        batch_nodes=1000,
        seed=0,
        weighting="expression",
        epochs=5,
        curriculum=2,
        curriculum_length=5,
    )
    schedule = example.epoch_batches(encoded, list(range(6)), lengths, args)
    assert len(schedule) == 5
    short, every = schedule[0], schedule[-1]
    assert schedule[1] is short and schedule[2] is every
    # The first epochs see the labels of the expressions of at most 5
    # tokens, then every expression.
    seen = sorted(np.concatenate([short[i][1] for i in range(len(short))]))
    assert seen == [0, 1, 2]
    seen = sorted(np.concatenate([every[i][1] for i in range(len(every))]))
    assert seen == [0, 1, 2, 3, 4, 5]
    assert short.weighted and every.weighted
    # Without a curriculum (or with one longer than the training), one set.
    args.curriculum = 0
    schedule = example.epoch_batches(encoded, list(range(6)), lengths, args)
    assert len(schedule) == 5 and len({id(b) for b in schedule}) == 1
    args.curriculum = 9
    schedule = example.epoch_batches(encoded, list(range(6)), lengths, args)
    assert len(schedule) == 5 and len(schedule[-1].labels) == 3


def test_generated_splits_are_drawn_from_one_shuffled_pool(example):
    args = example.argparse.Namespace(
        train_size=120,
        validation_size=40,
        test_size=40,
        max_length=None,
        seed=3,
    )
    splits = example.generated_splits(args)
    data = example.kr.datasets.listops(200, seed=3)
    pool = [tuple(t) for t in data["tokens"]]
    drawn = [tuple(t) for name in splits for t in splits[name]["tokens"]]
    assert sorted(drawn) == sorted(pool)
    # Not in the order drawn (the generator draws the short ones first).
    assert [tuple(t) for t in splits["test"]["tokens"]] != pool[-40:]
    # Rows stay together: each tree keeps its label and tokens.
    label_of = dict(zip(data["trees"], data["labels"].tolist()))
    for split in splits.values():
        assert [label_of[t] for t in split["trees"]] == split["labels"].tolist()


def test_accuracy_by_length_bins(example):
    lengths = np.array([4, 50, 51, 100, 101, 200, 201, 700])
    correct = np.array([1, 0, 1, 1, 0, 0, 1, 0], bool)
    table = example.accuracy_by_length(correct, lengths)
    assert [(row["bin"], row["count"]) for row in table] == [
        ("<= 50", 2),
        ("51-100", 2),
        ("101-200", 2),
        ("> 200", 2),
    ]
    assert [row["accuracy"] for row in table] == [0.5, 1.0, 0.0, 0.5]
    table = example.accuracy_by_length(correct[:2], lengths[:2])
    assert table[1] == {"bin": "51-100", "count": 0, "accuracy": None}


@pytest.mark.parametrize("text", ["0", "-3", "x"])
def test_sizes_must_be_positive(example, text):
    with pytest.raises(example.argparse.ArgumentTypeError, match=text):
        example.positive_int(text)


@pytest.mark.parametrize("text", ["-1", "x"])
def test_curriculum_epochs_must_not_be_negative(example, text):
    with pytest.raises(
        example.argparse.ArgumentTypeError, match="non-negative.*" + text
    ):
        example.non_negative_int(text)
    assert example.non_negative_int("0") == 0
