"""The ListOps TFDS builder and its config, generated locally or read."""

import dataclasses
import os

import numpy as np
import tensorflow_datasets as tfds

from keras_recurrent._checks import check_at_most
from keras_recurrent._checks import check_bool
from keras_recurrent.datasets._builders import PackagedBuilder
from keras_recurrent.datasets._builders import SplitSizes
from keras_recurrent.datasets._checks import check_int
from keras_recurrent.datasets.listops import LISTOPS_VOCABULARY
from keras_recurrent.datasets.listops import listops
from keras_recurrent.datasets.listops import listops_binary_tree
from keras_recurrent.datasets.listops import read_listops_tsv
from keras_recurrent.trees.encoding import encode_tree

_CITATION = """\
@inproceedings{nangia2018listops,
  title={ListOps: A Diagnostic Dataset for Latent Tree Learning},
  author={Nangia, Nikita and Bowman, Samuel},
  booktitle={Proceedings of the 2018 Conference of the North American
             Chapter of the Association for Computational Linguistics:
             Student Research Workshop},
  pages={92--99},
  year={2018}
}
"""


def _ids(width=None):
    """A ragged int32 feature: `(None,)`, or `(None, width)` with `width`."""
    shape = (None,) if width is None else (None, width)
    return tfds.features.Tensor(
        shape=shape, dtype=np.int32, encoding=tfds.features.Encoding.ZLIB
    )


@dataclasses.dataclass(eq=False)
class ListOpsConfig(SplitSizes, tfds.core.BuilderConfig):
    """Configuration of one `listops` TFDS dataset.

    All splits come from one call of `kr.datasets.listops` with the config's
    limits and `seed`, `unique=True`: train first, then validation, then
    test, so no expression is in two splits, and the same config always
    gives the same data.

    With `release=True`, the splits are instead the files of the ListOps
    release (`label<TAB>binary parse`, read with
    `kr.datasets.read_listops_tsv`) in `release_dir`, or in the builder's
    manual dir when `release_dir` is `None`: `train*.tsv` is the train
    split, `test*.tsv` the test split and `dev*.tsv` or `valid*.tsv`, if
    there is one, the validation split. Every expression is kept, in file
    order; the limits and sizes do not apply.

    Args:
        name: String, the config name, as in `"listops/NAME"`.
        max_depth: Integer in `[1, 200]`, the deepest operator nesting.
            Defaults to `19` (the original's `MAX_DEPTH = 20`).
        max_args: Integer >= 2, the most arguments of an operator. Defaults
            to `5`.
        min_length: Optional integer >= 4, the fewest tokens. Defaults to
            `None`.
        max_length: Optional integer >= 4, the most tokens. Defaults to
            `None`.
        num_train_examples: Positive integer. Defaults to `90000`.
        num_validation_examples: Positive integer. Defaults to `5000`.
        num_test_examples: Positive integer. Defaults to `5000`.
        seed: Non-negative integer. Defaults to `0`.
        release: Whether to read the release's files instead of
            generating. Defaults to `False`.
        release_dir: Optional string, the directory of the release's files
            (with `release=True`). Defaults to `None`: the builder's manual
            dir (`tfds.download.DownloadConfig(manual_dir=...)`).
        **kwargs: The other `tfds.core.BuilderConfig` fields (`version`,
            `description`, ...).

    Example:

    >>> config = kr.datasets.ListOpsConfig(
    ...     name="small", max_length=50, num_train_examples=100,
    ...     num_validation_examples=10, num_test_examples=10)
    >>> builder = tfds.builder("listops", config=config, data_dir=data_dir)
    >>> builder.download_and_prepare()
    >>> published = kr.datasets.ListOpsConfig(
    ...     name="published", release=True, release_dir="listops_release")

    Reference:
        - [Nangia & Bowman, 2018. ListOps: A Diagnostic Dataset for Latent
          Tree Learning](https://arxiv.org/abs/1804.06028)
    """

    max_depth: int = 19
    max_args: int = 5
    min_length: int | None = None
    max_length: int | None = None
    num_train_examples: int = 90000
    num_validation_examples: int = 5000
    num_test_examples: int = 5000
    seed: int = 0
    release: bool = False
    release_dir: str | None = None

    def __post_init__(self):
        check_bool("release", self.release)
        if self.release_dir is not None and not self.release:
            raise ValueError(
                "Argument `release_dir` is only read with `release=True`. "
                f"Received: release_dir={self.release_dir!r}, release=False"
            )
        check_int("max_depth", self.max_depth, 1, 200)
        check_int("max_args", self.max_args, 2)
        check_int("min_length", self.min_length, 4, allow_none=True)
        check_int("max_length", self.max_length, 4, allow_none=True)
        check_at_most(
            "min_length", self.min_length, "max_length", self.max_length
        )
        self._check_split_sizes()


class ListOps(PackagedBuilder, tfds.core.GeneratorBasedBuilder):
    """TFDS builder for ListOps (`"listops"`), Nangia & Bowman (2018).

    Registered with TFDS when `keras_recurrent.datasets` is imported.
    Nothing is downloaded: all splits come from one call of
    `kr.datasets.listops` (with `unique=True`, so the splits share no
    expression) with the config's limits and seed; building twice gives
    identical data. Examples are stored in generation order
    (`disable_shuffling=True`).

    Features (ids of `kr.datasets.LISTOPS_VOCABULARY`):
    - `tokens`: int32 `(length,)`, the bracketed token sequence;
    - `node_tokens`, int32 `(nodes,)`, and `children`, int32
      `(nodes, max_args)`: the gold tree (operators at the inner nodes,
      digits at the leaves) in post-order, as `kr.trees.encode_tree` gives;
    - `binary_node_tokens` and `binary_children` `(binary_nodes, 2)`: the
      original's binary tree over the tokens (`listops_binary_tree`);
    - `label`: the value, a `ClassLabel` with 10 classes.

    Supervised keys are `("tokens", "label")`. Batch the trees with
    `kr.trees.padded_batch`.

    Configs: `default` (90000/5000/5000 examples, the original's limits:
    depth 19, 5 arguments), `max_length_100` (same, at most 100 tokens),
    and `release`, the published files themselves (`train_d20s.tsv`,
    `test_d20s.tsv`), from the manual dir. Pass a `ListOpsConfig` as
    `config=` for other limits, sizes or seeds, or `release=True,
    release_dir=...` for release files in a directory of yours.

    Args:
        data_dir: Directory to write and read the prepared data.
        config: A config name or a `ListOpsConfig`.
        **kwargs: Other `tfds.core.DatasetBuilder` arguments.

    Example:

    >>> import tensorflow_datasets as tfds
    >>> import keras_recurrent as kr  # registers "listops"
    >>> train = tfds.load("listops/max_length_100", split="train",
    ...                   data_dir=data_dir)

    Reference:
        - [Nangia & Bowman, 2018. ListOps: A Diagnostic Dataset for Latent
          Tree Learning](https://arxiv.org/abs/1804.06028)
    """

    # TFDS would derive "list_ops" from the class name.
    name = "listops"
    VERSION = tfds.core.Version("1.0.0")
    RELEASE_NOTES = {"1.0.0": "Initial release."}
    BUILDER_CONFIGS = [
        ListOpsConfig(
            name="default",
            description="The original's limits: depth 19, 5 arguments.",
        ),
        ListOpsConfig(
            name="max_length_100",
            description="At most 100 tokens.",
            max_length=100,
        ),
        ListOpsConfig(
            name="release",
            description="The published files, from the manual dir.",
            release=True,
        ),
    ]
    MANUAL_DOWNLOAD_INSTRUCTIONS = (
        "For the `release` config, put the ListOps release's files "
        "(`train_d20s.tsv`, `test_d20s.tsv`, from "
        "https://github.com/nyu-mll/spinn/tree/listops-release) in the "
        "manual dir."
    )
    DEFAULT_BUILDER_CONFIG_NAME = "default"

    def _info(self):
        config = self.builder_config
        return tfds.core.DatasetInfo(
            builder=self,
            description=(
                "ListOps (Nangia & Bowman, 2018): the value of nested MIN, "
                "MAX, MED and SM (sum modulo 10) operations on digits, with "
                "the gold tree of each expression."
            ),
            features=tfds.features.FeaturesDict(
                {
                    "tokens": _ids(),
                    "node_tokens": _ids(),
                    "children": _ids(config.max_args),
                    "binary_node_tokens": _ids(),
                    "binary_children": _ids(2),
                    "label": tfds.features.ClassLabel(num_classes=10),
                }
            ),
            supervised_keys=("tokens", "label"),
            disable_shuffling=True,
            homepage="https://github.com/nyu-mll/spinn/tree/listops-release",
            citation=_CITATION,
        )

    def _split_generators(self, dl_manager):
        config = self.builder_config
        if config.release:
            return self._release_splits(
                config.release_dir or os.fspath(dl_manager.manual_dir)
            )
        data = listops(
            sum(config.split_sizes.values()),
            max_depth=config.max_depth,
            max_args=config.max_args,
            min_length=config.min_length,
            max_length=config.max_length,
            seed=config.seed,
        )
        splits, start = {}, 0
        for split, num_examples in config.split_sizes.items():
            splits[split] = self._generate_examples(
                data, start, start + num_examples
            )
            start += num_examples
        return splits

    def _release_splits(self, directory):
        """The splits of the release's files in `directory`, by file name."""
        prefixes = {
            "train": ("train",),
            "validation": ("dev", "valid"),
            "test": ("test",),
        }
        names = sorted(
            name for name in os.listdir(directory) if name.endswith(".tsv")
        )
        splits = {}
        for split, starts in prefixes.items():
            files = [name for name in names if name.startswith(starts)]
            if len(files) > 1:
                raise ValueError(
                    f"{directory} holds {len(files)} files for the {split} "
                    f"split, {files}; keep one."
                )
            if files:
                data = read_listops_tsv(os.path.join(directory, files[0]))
                splits[split] = self._generate_examples(
                    data, 0, len(data["labels"])
                )
        if not splits:
            raise ValueError(
                f"{directory} holds no ListOps release file (train*.tsv, "
                f"dev*.tsv, valid*.tsv or test*.tsv). Received: {names}"
            )
        return splits

    def _generate_examples(self, data, start, stop):
        max_args = self.builder_config.max_args
        for index in range(start, stop):
            tree = data["trees"][index]
            gold = encode_tree(
                tree, vocabulary=LISTOPS_VOCABULARY, num_children=max_args
            )
            binary = encode_tree(
                listops_binary_tree(tree),
                vocabulary=LISTOPS_VOCABULARY,
                labeled=False,
                num_children=2,
            )
            yield (
                index - start,
                {
                    "tokens": np.array(
                        [LISTOPS_VOCABULARY[t] for t in data["tokens"][index]],
                        dtype=np.int32,
                    ),
                    "node_tokens": gold["node_tokens"],
                    "children": gold["children"],
                    "binary_node_tokens": binary["node_tokens"],
                    "binary_children": binary["children"],
                    "label": int(data["labels"][index]),
                },
            )
