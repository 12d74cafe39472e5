import functools

import numpy as np
import pytest
import tensorflow_datasets as tfds

import keras_recurrent as kr
from tests.datasets.builder_helpers import SPLITS
from tests.datasets.builder_helpers import build
from tests.datasets.builder_helpers import build_twice
from tests.datasets.builder_helpers import read_arrays
from tests.datasets.builder_helpers import small_config_maker
from tests.datasets.builder_helpers import split_sizes

_small_config = small_config_maker(
    kr.datasets.AddingProblemConfig,
    "length_12_small",
    train=40,
    validation=8,
    test=6,
    length=12,
)
_read_all = functools.partial(read_arrays, keys=("x", "y", "length"))
_build = functools.partial(build, "adding_problem")


def test_registered_with_tfds():
    assert tfds.builder_cls("adding_problem") is kr.datasets.AddingProblem
    configs = kr.datasets.AddingProblem.builder_configs
    assert {"length_50", "length_100_variable"} <= set(configs)
    assert configs["length_100_variable"].min_length == 50
    assert str(kr.datasets.AddingProblem.VERSION) == "1.0.0"


def test_build_matches_generator_and_is_deterministic(tmp_path):
    config = _small_config(seed=3)
    first, second = build_twice("adding_problem", config, tmp_path)

    info = first.info
    assert split_sizes(info) == {"train": 40, "validation": 8, "test": 6}
    assert info.supervised_keys == ("x", "y")
    assert info.features["x"].shape == (12, 2)
    for index, split in enumerate(SPLITS):
        stored = _read_all(first, split)
        again = _read_all(second, split)
        for key in stored:
            np.testing.assert_array_equal(stored[key], again[key])
        x, y, lengths = kr.datasets.adding_problem(
            config.split_sizes[split], length=12, seed=(3, index)
        )
        np.testing.assert_array_equal(stored["x"], x)
        np.testing.assert_array_equal(stored["y"], y)
        np.testing.assert_array_equal(stored["length"], lengths)

    train, validation = (
        _read_all(first, "train"),
        _read_all(first, "validation"),
    )
    assert not np.array_equal(train["x"][:8], validation["x"])


def test_different_config_seeds_differ(tmp_path):
    zero = _read_all(_build(_small_config(), tmp_path), "test")
    one = _read_all(
        _build(_small_config(name="length_12_seed_1", seed=1), tmp_path),
        "test",
    )
    assert not np.array_equal(zero["x"], one["x"])
    assert not np.array_equal(zero["y"], one["y"])


def test_variable_length_config(tmp_path):
    config = _small_config(name="length_12_variable", min_length=4)
    stored = _read_all(_build(config, tmp_path), "train")
    lengths = stored["length"]
    assert lengths.min() >= 4 and lengths.max() <= 12
    assert len(np.unique(lengths)) > 1
    is_real = np.arange(12)[None, :] < lengths[:, None]
    np.testing.assert_array_equal(stored["x"][~is_real], 0.0)
    markers = stored["x"][:, :, 1]
    np.testing.assert_array_equal(markers.sum(axis=1), np.full(40, 2.0))
    np.testing.assert_allclose(
        stored["y"][:, 0],
        (stored["x"][:, :, 0] * markers).sum(axis=1),
        atol=1e-6,
    )


def test_tfds_load_registered_config(tmp_path):
    dataset, info = tfds.load(
        "adding_problem/length_50",
        split="validation",
        data_dir=tmp_path,
        as_supervised=True,
        with_info=True,
    )
    assert info.splits["train"].num_examples == 10000
    assert info.splits["validation"].num_examples == 1000
    assert info.splits["test"].num_examples == 1000
    x, y = next(iter(tfds.as_numpy(dataset.batch(1000))))
    assert x.shape == (1000, 50, 2) and y.shape == (1000, 1)
    assert x.dtype == np.float32 and y.dtype == np.float32
    expected_x, expected_y, _ = kr.datasets.adding_problem(
        1000, length=50, seed=(0, 1)
    )
    np.testing.assert_array_equal(x, expected_x)
    np.testing.assert_array_equal(y, expected_y)

    # A second load reads the prepared files instead of generating anew.
    again = tfds.load(
        "adding_problem/length_50",
        split="validation",
        data_dir=tmp_path,
        as_supervised=True,
        download=False,
    )
    x_again, _ = next(iter(tfds.as_numpy(again.batch(1000))))
    np.testing.assert_array_equal(x_again, x)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"length": 1}, "length=1"),
        ({"min_length": 13}, "min_length=13"),
        ({"num_train_examples": 0}, "num_train_examples=0"),
        ({"num_test_examples": 2.0}, "num_test_examples=2.0"),
        ({"seed": -1}, "seed=-1"),
    ],
)
def test_bad_config_raises(kwargs, message):
    with pytest.raises(ValueError, match=message):
        _small_config(**kwargs)
