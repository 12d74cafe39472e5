"""Shared setup of the TFDS builder tests (not a test module).

Small configs, building a config into a temporary `data_dir` (twice, for
the determinism checks), the number of examples per split, reading a split
back, and the path of the published ListOps sample in `../shared`.
Importing this module turns off the TFDS progress bar.
"""

from pathlib import Path

import numpy as np
import pytest
import tensorflow_datasets as tfds

tfds.disable_progress_bar()

SPLITS = ("train", "validation", "test")

# The last 1000 lines of the ListOps release's test file, kept beside the
# repository (`../shared/data/listops/`), not in it.
LISTOPS_SAMPLE = (
    Path(__file__).resolve().parents[2].parent
    / "shared"
    / "data"
    / "listops"
    / "test_d20s_last1000.tsv"
)
needs_listops_sample = pytest.mark.skipif(
    not LISTOPS_SAMPLE.exists(),
    reason=(
        f"the published ListOps sample is not at {LISTOPS_SAMPLE} (../shared)"
    ),
)


def small_config_maker(
    config_class,
    default_name,
    *,
    train=30,
    validation=6,
    test=5,
    **defaults,
):
    """A `small_config(name=default_name, **kwargs)` making `config_class`.

    Its configs hold `train`/`validation`/`test` examples per split and
    `defaults` for the other arguments; `kwargs` override either.
    """

    def small_config(name=default_name, **kwargs):
        arguments = {
            **defaults,
            "num_train_examples": train,
            "num_validation_examples": validation,
            "num_test_examples": test,
            **kwargs,
        }
        return config_class(name=name, **arguments)

    return small_config


def build(dataset_name, config, data_dir):
    """`tfds.builder(dataset_name, config=config)`, prepared in `data_dir`."""
    builder = tfds.builder(dataset_name, config=config, data_dir=data_dir)
    builder.download_and_prepare()
    return builder


def build_twice(dataset_name, config, tmp_path):
    """Two builders of `config`, prepared apart (`tmp_path / "first"` and
    `tmp_path / "second"`), to check that building is deterministic."""
    return (
        build(dataset_name, config, tmp_path / "first"),
        build(dataset_name, config, tmp_path / "second"),
    )


def split_sizes(info):
    """Dict from split name to number of examples stored, in `SPLITS`."""
    return {name: info.splits[name].num_examples for name in SPLITS}


def read_examples(builder, split):
    """Whole split as a list of NumPy examples, in stored order."""
    dataset = builder.as_dataset(split=split, shuffle_files=False)
    return list(tfds.as_numpy(dataset))


def read_arrays(builder, split, keys):
    """Whole split as NumPy arrays (`keys` stacked), in stored order."""
    examples = read_examples(builder, split)
    return {
        key: np.stack([example[key] for example in examples]) for key in keys
    }
