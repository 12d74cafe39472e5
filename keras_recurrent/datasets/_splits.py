"""What the generated datasets' TFDS configs and builders share."""

from keras_recurrent.datasets._checks import check_int


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


class GeneratedSplits:
    """Mixin for a builder whose splits are generated one at a time by its
    `_generate_examples(split, num_examples)`."""

    def _split_generators(self, dl_manager):
        del dl_manager  # Everything is generated; nothing is downloaded.
        return {
            split: self._generate_examples(split, num_examples)
            for split, num_examples in self.builder_config.split_sizes.items()
        }
