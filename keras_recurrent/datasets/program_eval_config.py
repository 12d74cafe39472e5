"""Configuration of the `program_eval` TFDS builder."""

import dataclasses

import tensorflow_datasets as tfds

from keras_recurrent.datasets._builders import SplitSizes
from keras_recurrent.datasets.program_eval import PROGRAM_EVAL_OPERATIONS
from keras_recurrent.datasets.program_eval import check_program_arguments


@dataclasses.dataclass(eq=False)
class ProgramEvalConfig(SplitSizes, tfds.core.BuilderConfig):
    """Configuration of one `program_eval` TFDS dataset.

    Split `train`, `validation` and `test` come from
    `kr.datasets.program_eval` with the config's arguments, `split=` the
    split's name and seed `(seed, 0)`, `(seed, 1)` and `(seed, 2)`: the
    split of a program is fixed by a hash of its text, as in the original,
    so no program is in two splits, and the same config always gives the
    same data.

    Args:
        name: String, the config name, as in `"program_eval/NAME"`.
        length: Integer in `[1, 15]`, the number of digits of the numbers.
            Defaults to `6` (the original's `target_length`).
        nesting: Integer in `[1, 10]`, the number of operations composed.
            Defaults to `3` (the original's `target_nesting`).
        operations: Non-empty tuple of names from
            `kr.datasets.PROGRAM_EVAL_OPERATIONS`. Defaults to all six.
        strategy: `"baseline"` or `"mix"` (see `kr.datasets.program_eval`).
            Defaults to `"baseline"`.
        num_train_examples: Positive integer. Defaults to `20000`.
        num_validation_examples: Positive integer. Defaults to `1000`.
        num_test_examples: Positive integer. Defaults to `1000`.
        seed: Non-negative integer. Defaults to `0`.
        **kwargs: The other `tfds.core.BuilderConfig` fields (`version`,
            `description`, ...).

    Example:

    >>> config = kr.datasets.ProgramEvalConfig(
    ...     name="small", length=2, nesting=2, num_train_examples=100,
    ...     num_validation_examples=10, num_test_examples=10)
    >>> builder = tfds.builder("program_eval", config=config,
    ...                        data_dir=data_dir)
    >>> builder.download_and_prepare()

    Reference:
        - [Zaremba & Sutskever, 2014. Learning to Execute](
          https://arxiv.org/abs/1410.4615)
    """

    length: int = 6
    nesting: int = 3
    operations: tuple = PROGRAM_EVAL_OPERATIONS
    strategy: str = "baseline"
    num_train_examples: int = 20000
    num_validation_examples: int = 1000
    num_test_examples: int = 1000
    seed: int = 0

    def __post_init__(self):
        _, _, self.operations, self.strategy = check_program_arguments(
            self.length, self.nesting, self.operations, self.strategy
        )
        self._check_split_sizes()
