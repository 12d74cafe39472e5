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
            *("--epochs", "1", "--units", "8", "--embedding-dim", "4"),
            *("--models", "nary", "--json-out", str(out)),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "KERAS_BACKEND": "tensorflow"},
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    long_train = int(np.sum(_lengths(train) > 60))
    long_test = int(np.sum(_lengths(test) > 60))
    assert f"300 expressions, {long_train} longer than 60" in result.stdout
    assert f"100 expressions, all tested ({long_test} longer" in result.stdout
    assert "tested on 100 expressions" in result.stdout
    (record,) = json.loads(out.read_text())["results"]
    assert 0.0 <= record["test_accuracy"] <= 1.0


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
