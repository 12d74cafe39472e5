"""What the generated datasets' TFDS configs and builders share."""

import inspect

import tensorflow_datasets as tfds

from keras_recurrent.datasets._checks import check_int

_SPLIT_INDEX = {"train": 0, "validation": 1, "test": 2}


class SplitSizes:
    """Mixin for a builder config with the fields `num_train_examples`,
    `num_validation_examples`, `num_test_examples` and `seed`."""

    def _check_split_sizes(self):
        check_int("num_train_examples", self.num_train_examples, 1)
        check_int("num_validation_examples", self.num_validation_examples, 1)
        check_int("num_test_examples", self.num_test_examples, 1)
        check_int("seed", self.seed, 0)

    @property
    def split_sizes(self):
        """Dict from split name to number of examples, in split order."""
        return {
            "train": self.num_train_examples,
            "validation": self.num_validation_examples,
            "test": self.num_test_examples,
        }


class PackagedBuilder:
    """Mixin for a TFDS builder defined in this package."""

    # TFDS 4.9.10 finds a packaged builder's file through
    # `importlib_resources`, which it only installs on Python < 3.9, so
    # building fails with ModuleNotFoundError (tensorflow/datasets#11212).
    # The builder's module file is known; only its checksums sibling is
    # looked up.
    @tfds.core.utils.classproperty
    @classmethod
    def code_path(cls):
        return tfds.core.Path(inspect.getfile(cls))


class GeneratedSplits(PackagedBuilder):
    """Mixin for a builder whose splits are generated one at a time by its
    `_generate_examples(split, num_examples)`."""

    def _split_generators(self, dl_manager):
        del dl_manager  # Everything is generated; nothing is downloaded.
        return {
            split: self._generate_examples(split, num_examples)
            for split, num_examples in self.builder_config.split_sizes.items()
        }

    def _split_seed(self, split):
        """`(config.seed, i)` for the `i`-th split, so that the splits are
        independent draws and the same config always gives the same data."""
        return (self.builder_config.seed, _SPLIT_INDEX[split])
