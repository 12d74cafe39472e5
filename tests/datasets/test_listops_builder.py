import functools

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_datasets as tfds

import keras_recurrent as kr
from tests.datasets.builder_helpers import LISTOPS_SAMPLE
from tests.datasets.builder_helpers import SPLITS
from tests.datasets.builder_helpers import build
from tests.datasets.builder_helpers import build_twice
from tests.datasets.builder_helpers import read_examples
from tests.datasets.builder_helpers import small_config_maker
from tests.datasets.builder_helpers import split_sizes

_KEYS = (
    "tokens",
    "node_tokens",
    "children",
    "binary_node_tokens",
    "binary_children",
    "label",
)

_small_config = small_config_maker(
    kr.datasets.ListOpsConfig, "small", max_length=30
)
_read_all = read_examples
_build = functools.partial(build, "listops")


def test_registered_with_tfds():
    assert tfds.builder_cls("listops") is kr.datasets.ListOps
    configs = kr.datasets.ListOps.builder_configs
    assert {"default", "max_length_100"} <= set(configs)
    assert configs["max_length_100"].max_length == 100


def test_build_matches_generator_and_is_deterministic(tmp_path):
    config = _small_config(seed=3)
    first, second = build_twice("listops", config, tmp_path)
    info = first.info
    assert split_sizes(info) == {"train": 30, "validation": 6, "test": 5}
    assert info.supervised_keys == ("tokens", "label")

    data = kr.datasets.listops(41, max_length=30, seed=3)
    vocabulary = kr.datasets.LISTOPS_VOCABULARY
    start = 0
    for split in SPLITS:
        stored = _read_all(first, split)
        again = _read_all(second, split)
        for example, repeat in zip(stored, again):
            for key in _KEYS:
                np.testing.assert_array_equal(example[key], repeat[key])
        for offset, example in enumerate(stored):
            index = start + offset
            assert example["label"] == data["labels"][index]
            np.testing.assert_array_equal(
                example["tokens"],
                [vocabulary[token] for token in data["tokens"][index]],
            )
            gold = kr.trees.encode_tree(
                data["trees"][index], vocabulary=vocabulary, num_children=5
            )
            np.testing.assert_array_equal(example["children"], gold["children"])
            np.testing.assert_array_equal(
                example["node_tokens"], gold["node_tokens"]
            )
            assert example["binary_children"].shape[1] == 2
            # Binary tree: one leaf per token, one inner node fewer.
            assert len(example["binary_node_tokens"]) == (
                2 * len(example["tokens"]) - 1
            )
        start += len(stored)


def test_trees_batch_for_the_layers(tmp_path):
    builder = _build(_small_config(name="small_batch"), tmp_path)
    dataset = builder.as_dataset(split="train").map(
        lambda example: (
            {
                "node_tokens": example["binary_node_tokens"],
                "children": example["binary_children"],
                "node_mask": tf.ones_like(example["binary_node_tokens"]),
            },
            example["label"],
        )
    )
    inputs, labels = next(
        iter(
            dataset.padded_batch(
                8,
                padding_values=(
                    {"node_tokens": 0, "children": -1, "node_mask": 0},
                    np.int64(0),
                ),
            )
        )
    )
    kr.trees.validate_tree_tensors(
        inputs["children"].numpy(), inputs["node_mask"].numpy(), arity=2
    )
    assert labels.shape == (8,)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"max_depth": 0}, "max_depth=0"),
        ({"max_args": 1}, "max_args=1"),
        ({"min_length": 40}, "min_length=40"),
        ({"num_train_examples": 0}, "num_train_examples=0"),
        ({"seed": -1}, "seed=-1"),
    ],
)
def test_bad_config_raises(kwargs, message):
    with pytest.raises(ValueError, match=message):
        _small_config(**kwargs)


@pytest.fixture
def release_dir(tmp_path):
    if not LISTOPS_SAMPLE.exists():
        pytest.skip(f"the published ListOps sample is not at {LISTOPS_SAMPLE}")
    lines = LISTOPS_SAMPLE.read_text().splitlines(keepends=True)
    directory = tmp_path / "release"
    directory.mkdir()
    (directory / "train_d20s.tsv").write_text("".join(lines[:12]))
    (directory / "test_d20s.tsv").write_text("".join(lines[-7:]))
    (directory / "README").write_text("not a split")
    return directory


def _check_release_split(builder, split, path):
    data = kr.datasets.read_listops_tsv(path)
    stored = _read_all(builder, split)
    assert len(stored) == len(data["labels"])
    vocabulary = kr.datasets.LISTOPS_VOCABULARY
    for example, tree, tokens, label in zip(
        stored, data["trees"], data["tokens"], data["labels"]
    ):
        assert example["label"] == label
        np.testing.assert_array_equal(
            example["tokens"], [vocabulary[token] for token in tokens]
        )
        binary = kr.trees.encode_tree(
            kr.datasets.listops_binary_tree(tree),
            vocabulary=vocabulary,
            labeled=False,
            num_children=2,
        )
        np.testing.assert_array_equal(
            example["binary_children"], binary["children"]
        )


def test_release_files_from_a_directory(release_dir, tmp_path):
    config = kr.datasets.ListOpsConfig(
        name="mine", release=True, release_dir=str(release_dir)
    )
    builder = _build(config, tmp_path / "data")
    assert set(builder.info.splits) == {"train", "test"}
    _check_release_split(builder, "train", release_dir / "train_d20s.tsv")
    _check_release_split(builder, "test", release_dir / "test_d20s.tsv")


def test_release_config_reads_the_manual_dir(release_dir, tmp_path):
    builder = tfds.builder("listops/release", data_dir=tmp_path / "data")
    builder.download_and_prepare(
        download_config=tfds.download.DownloadConfig(manual_dir=release_dir)
    )
    assert builder.info.splits["train"].num_examples == 12
    _check_release_split(builder, "test", release_dir / "test_d20s.tsv")


def test_release_errors(tmp_path):
    with pytest.raises(ValueError, match="only read with `release=True`"):
        kr.datasets.ListOpsConfig(name="x", release_dir=str(tmp_path))
    with pytest.raises(ValueError, match="Received: release='yes'"):
        kr.datasets.ListOpsConfig(name="x", release="yes")
    config = kr.datasets.ListOpsConfig(
        name="empty", release=True, release_dir=str(tmp_path)
    )
    with pytest.raises(ValueError, match="holds no ListOps release file"):
        _build(config, tmp_path / "data")
