"""Configuration of the `listops` TFDS builder."""

import dataclasses

import tensorflow_datasets as tfds

from keras_recurrent.datasets._builders import SplitSizes
from keras_recurrent.datasets._checks import check_int


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
        if not isinstance(self.release, bool):
            raise ValueError(
                "Argument `release` must be a boolean. "
                f"Received: release={self.release!r}"
            )
        if self.release_dir is not None and not self.release:
            raise ValueError(
                "Argument `release_dir` is only read with `release=True`. "
                f"Received: release_dir={self.release_dir!r}, release=False"
            )
        check_int("max_depth", self.max_depth, 1)
        if self.max_depth > 200:
            raise ValueError(
                "Argument `max_depth` must be <= 200. "
                f"Received: max_depth={self.max_depth!r}"
            )
        check_int("max_args", self.max_args, 2)
        check_int("min_length", self.min_length, 4, allow_none=True)
        check_int("max_length", self.max_length, 4, allow_none=True)
        if (
            self.min_length is not None
            and self.max_length is not None
            and self.min_length > self.max_length
        ):
            raise ValueError(
                "Argument `min_length` must be <= `max_length`. Received: "
                f"min_length={self.min_length}, max_length={self.max_length}"
            )
        self._check_split_sizes()
