"""The program evaluation TFDS builder and its config, generated locally."""

import dataclasses

import numpy as np
import tensorflow_datasets as tfds

from keras_recurrent.datasets._builders import GeneratedSplits
from keras_recurrent.datasets._builders import SplitSizes
from keras_recurrent.datasets.program_eval import PROGRAM_EVAL_OPERATIONS
from keras_recurrent.datasets.program_eval import PROGRAM_EVAL_VOCABULARY
from keras_recurrent.datasets.program_eval import check_program_arguments
from keras_recurrent.datasets.program_eval import program_eval

_CITATION = """\
@article{zaremba2014learning,
  title={Learning to Execute},
  author={Zaremba, Wojciech and Sutskever, Ilya},
  journal={arXiv preprint arXiv:1410.4615},
  year={2014}
}
"""

_LENGTHS = (1, 2, 3, 4, 5, 6)
_NESTINGS = (1, 2, 3)


def _ids(text):
    return np.array(
        [PROGRAM_EVAL_VOCABULARY[character] for character in text],
        dtype=np.int32,
    )


def _tokens():
    return tfds.features.Tensor(
        shape=(None,), dtype=np.int32, encoding=tfds.features.Encoding.ZLIB
    )


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


class ProgramEval(GeneratedSplits, tfds.core.GeneratorBasedBuilder):
    """TFDS builder for program evaluation (`"program_eval"`).

    The programs of "Learning to Execute" (Zaremba & Sutskever, 2014) and
    what they print, as `kr.datasets.program_eval` writes them. Registered
    with TFDS when `keras_recurrent.datasets` is imported. Nothing is
    downloaded: split `train`, `validation` and `test` are generated with
    `split=` the split's name (a hash of a program's text fixes its split,
    as in the original, so the splits share no program) and seed
    `(config.seed, 0)`, `(config.seed, 1)`, `(config.seed, 2)`; building
    twice gives identical data. Examples are stored in generation order
    (`disable_shuffling=True`).

    Features:
    - `program`, `target`: text, the program (lines joined by newlines)
      and what it prints;
    - `program_tokens`, `target_tokens`: int32 `(length,)`, the same
      characters as ids of `kr.datasets.PROGRAM_EVAL_VOCABULARY` (without
      the `@` and `.` that `kr.datasets.program_eval_arrays` adds);
    - `operations`: the operations composed, in order, as class ids of
      `kr.datasets.PROGRAM_EVAL_OPERATIONS`.

    Supervised keys are `("program", "target")`.

    Configs `length_L_nesting_N` for `L` in 1 to 6 and `N` in 1 to 3
    (20000/1000/1000 examples, all six operations, seed 0); the default is
    `length_6_nesting_3`, the original's target difficulty. Pass a
    `ProgramEvalConfig` as `config=` for other difficulties, operations,
    sizes or seeds.

    Args:
        data_dir: Directory to write and read the prepared data.
        config: A config name or a `ProgramEvalConfig`.
        **kwargs: Other `tfds.core.DatasetBuilder` arguments.

    Example:

    >>> import tensorflow_datasets as tfds
    >>> import keras_recurrent as kr  # registers "program_eval"
    >>> test = tfds.load("program_eval/length_2_nesting_2", split="test",
    ...                  data_dir=data_dir)

    Reference:
        - [Zaremba & Sutskever, 2014. Learning to Execute](
          https://arxiv.org/abs/1410.4615)
    """

    VERSION = tfds.core.Version("1.0.0")
    RELEASE_NOTES = {"1.0.0": "Initial release."}
    BUILDER_CONFIGS = [
        ProgramEvalConfig(
            name=f"length_{length}_nesting_{nesting}",
            description=(
                f"Numbers of {length} digits, {nesting} operations composed."
            ),
            length=length,
            nesting=nesting,
        )
        for length in _LENGTHS
        for nesting in _NESTINGS
    ]
    DEFAULT_BUILDER_CONFIG_NAME = "length_6_nesting_3"

    def _info(self):
        return tfds.core.DatasetInfo(
            builder=self,
            description=(
                "Learning to Execute (Zaremba & Sutskever, 2014): short "
                "Python programs of additions, subtractions, small "
                "multiplications, variable assignments, if-else expressions "
                "and small for-loops, and what they print."
            ),
            features=tfds.features.FeaturesDict(
                {
                    "program": tfds.features.Text(),
                    "target": tfds.features.Text(),
                    "program_tokens": _tokens(),
                    "target_tokens": _tokens(),
                    "operations": tfds.features.Sequence(
                        tfds.features.ClassLabel(
                            names=list(PROGRAM_EVAL_OPERATIONS)
                        )
                    ),
                }
            ),
            supervised_keys=("program", "target"),
            disable_shuffling=True,
            homepage="https://github.com/wojciechz/learning_to_execute",
            citation=_CITATION,
        )

    def _generate_examples(self, split, num_examples):
        config = self.builder_config
        data = program_eval(
            num_examples,
            config.length,
            config.nesting,
            operations=config.operations,
            strategy=config.strategy,
            split=split,
            seed=self._split_seed(split),
        )
        for index in range(num_examples):
            program = data["programs"][index]
            target = data["targets"][index]
            yield (
                index,
                {
                    "program": program,
                    "target": target,
                    "program_tokens": _ids(program),
                    "target_tokens": _ids(target),
                    "operations": list(data["operations"][index]),
                },
            )
