import functools

import numpy as np
import pytest
import tensorflow_datasets as tfds

import keras_recurrent as kr
from tests.datasets.builder_helpers import SPLITS
from tests.datasets.builder_helpers import build
from tests.datasets.builder_helpers import build_twice
from tests.datasets.builder_helpers import read_examples
from tests.datasets.builder_helpers import small_config_maker
from tests.datasets.builder_helpers import split_sizes

_small_config = small_config_maker(
    kr.datasets.ProgramEvalConfig, "small", length=2, nesting=2
)
_read_all = read_examples
_build = functools.partial(build, "program_eval")


def test_registered_with_tfds():
    assert tfds.builder_cls("program_eval") is kr.datasets.ProgramEval
    configs = kr.datasets.ProgramEval.builder_configs
    assert len(configs) == 18
    config = configs["length_4_nesting_2"]
    assert (config.length, config.nesting) == (4, 2)
    assert config.operations == kr.datasets.PROGRAM_EVAL_OPERATIONS
    assert kr.datasets.ProgramEval.DEFAULT_BUILDER_CONFIG_NAME in configs


def test_build_matches_generator_and_is_deterministic(tmp_path):
    config = _small_config(seed=3)
    first, second = build_twice("program_eval", config, tmp_path)
    info = first.info
    assert split_sizes(info) == {"train": 30, "validation": 6, "test": 5}
    assert info.supervised_keys == ("program", "target")
    vocabulary = kr.datasets.PROGRAM_EVAL_VOCABULARY
    seen = {}
    for index, split in enumerate(SPLITS):
        stored = _read_all(first, split)
        again = _read_all(second, split)
        data = kr.datasets.program_eval(
            len(stored), 2, 2, split=split, seed=(3, index)
        )
        for offset, (example, repeat) in enumerate(zip(stored, again)):
            for key in example:
                np.testing.assert_array_equal(example[key], repeat[key])
            program = example["program"].decode()
            target = example["target"].decode()
            assert program == data["programs"][offset]
            assert target == data["targets"][offset]
            assert kr.datasets.program_split(program, target) == split
            np.testing.assert_array_equal(
                example["program_tokens"], [vocabulary[c] for c in program]
            )
            np.testing.assert_array_equal(
                example["target_tokens"], [vocabulary[c] for c in target]
            )
            names = [
                kr.datasets.PROGRAM_EVAL_OPERATIONS[i]
                for i in example["operations"]
            ]
            assert tuple(names) == data["operations"][offset]
        seen[split] = {example["program"] for example in stored}
    assert not seen["train"] & seen["validation"]
    assert not seen["train"] & seen["test"]
    assert not seen["validation"] & seen["test"]


def test_config_arguments_reach_the_programs(tmp_path):
    config = _small_config(
        name="loops",
        length=1,
        nesting=3,
        operations=("small_loop",),
        strategy="mix",
        num_train_examples=20,
    )
    builder = _build(config, tmp_path)
    stored = _read_all(builder, "train")
    loop = kr.datasets.PROGRAM_EVAL_OPERATIONS.index("small_loop")
    nestings = {len(example["operations"]) for example in stored}
    assert nestings <= {1, 2, 3} and len(nestings) > 1
    for example in stored:
        assert set(example["operations"]) == {loop}
        assert example["program"].decode().count("for x in") == len(
            example["operations"]
        )


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"length": 0}, "length=0"),
        ({"nesting": 11}, "nesting=11"),
        ({"operations": ("modulo",)}, "modulo"),
        ({"strategy": "naive"}, "strategy='naive'"),
        ({"num_train_examples": 0}, "num_train_examples=0"),
        ({"seed": -1}, "seed=-1"),
    ],
)
def test_bad_config_raises(kwargs, message):
    with pytest.raises(ValueError, match=message):
        _small_config(**kwargs)
