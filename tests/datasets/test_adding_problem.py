import keras
import numpy as np
import pytest

import keras_recurrent as kr


def _marked_steps(x):
    """Indices (sample, step) of the markers, in order."""
    return np.nonzero(x[:, :, 1])


def test_shapes_and_dtypes():
    x, y, lengths = kr.datasets.adding_problem(7, length=12)
    assert x.shape == (7, 12, 2) and x.dtype == np.float32
    assert y.shape == (7, 1) and y.dtype == np.float32
    assert lengths.shape == (7,) and lengths.dtype == np.int32
    np.testing.assert_array_equal(lengths, np.full(7, 12))


def test_length_two_marks_both_steps():
    # With two steps, each half has a single step: both are marked and the
    # target is the sum of the whole value channel.
    x, y, _ = kr.datasets.adding_problem(5, length=2, seed=3)
    np.testing.assert_array_equal(x[:, :, 1], np.ones((5, 2)))
    np.testing.assert_array_equal(y[:, 0], x[:, 0, 0] + x[:, 1, 0])


@pytest.mark.parametrize("min_length", [None, 5])
def test_targets_are_sums_of_the_two_marked_values(min_length):
    x, y, lengths = kr.datasets.adding_problem(
        300, length=21, min_length=min_length, seed=1
    )
    markers = x[:, :, 1]
    np.testing.assert_array_equal(markers.sum(axis=1), np.full(300, 2.0))
    assert set(np.unique(markers)) == {0.0, 1.0}
    expected = (x[:, :, 0] * markers).sum(axis=1, dtype=np.float32)
    np.testing.assert_allclose(y[:, 0], expected, rtol=0, atol=1e-6)

    samples, steps = _marked_steps(x)
    first, second = steps[0::2], steps[1::2]
    np.testing.assert_array_equal(samples[0::2], np.arange(300))
    halves = lengths // 2
    assert np.all(first < halves)
    assert np.all((second >= halves) & (second < lengths))


def test_marker_positions_cover_both_halves():
    x, _, _ = kr.datasets.adding_problem(2000, length=10, seed=0)
    _, steps = _marked_steps(x)
    np.testing.assert_array_equal(np.unique(steps[0::2]), np.arange(5))
    np.testing.assert_array_equal(np.unique(steps[1::2]), np.arange(5, 10))


def test_values_are_in_half_open_unit_interval():
    x, _, _ = kr.datasets.adding_problem(500, length=30, seed=2)
    values = x[:, :, 0]
    assert values.min() > 0.0 and values.max() <= 1.0
    # Roughly uniform: mean 1/2, variance 1/12.
    np.testing.assert_allclose(values.mean(), 0.5, atol=0.01)
    np.testing.assert_allclose(values.var(), 1 / 12, atol=0.005)


def test_variable_length_padding_is_zero_and_masking_recovers_it():
    x, _, lengths = kr.datasets.adding_problem(
        400, length=16, min_length=4, seed=5
    )
    np.testing.assert_array_equal(np.unique(lengths), np.arange(4, 17))
    is_real = np.arange(16)[None, :] < lengths[:, None]
    np.testing.assert_array_equal(x[~is_real], 0.0)
    assert np.all(x[is_real][:, 0] > 0.0)

    mask = keras.layers.Masking(0.0).compute_mask(x)
    np.testing.assert_array_equal(keras.ops.convert_to_numpy(mask), is_real)


def test_min_length_equal_to_length_gives_fixed_length():
    _, _, lengths = kr.datasets.adding_problem(
        20, length=8, min_length=8, seed=0
    )
    np.testing.assert_array_equal(lengths, np.full(20, 8))


@pytest.mark.parametrize("min_length", [None, 3])
def test_same_seed_gives_same_data(min_length):
    first = kr.datasets.adding_problem(
        50, length=9, min_length=min_length, seed=11
    )
    second = kr.datasets.adding_problem(
        50, length=9, min_length=min_length, seed=11
    )
    for a, b in zip(first, second, strict=True):
        np.testing.assert_array_equal(a, b)


def test_different_seeds_give_different_data():
    x0, y0, _ = kr.datasets.adding_problem(50, length=9, seed=0)
    x1, y1, _ = kr.datasets.adding_problem(50, length=9, seed=1)
    x2, y2, _ = kr.datasets.adding_problem(50, length=9, seed=(0, 1))
    assert not np.array_equal(x0, x1) and not np.array_equal(y0, y1)
    assert not np.array_equal(x0, x2) and not np.array_equal(x1, x2)
    assert not np.array_equal(y0, y2)


def test_numpy_integer_arguments_are_accepted():
    x, _, _ = kr.datasets.adding_problem(
        np.int64(3), length=np.int32(6), seed=np.int64(4)
    )
    np.testing.assert_array_equal(
        x, kr.datasets.adding_problem(3, length=6, seed=4)[0]
    )


def test_baseline_mse():
    assert kr.datasets.adding_problem_baseline_mse() == pytest.approx(1 / 6)
    _, y, _ = kr.datasets.adding_problem(20000, length=10, seed=0)
    np.testing.assert_allclose(y.mean(), 1.0, atol=0.01)
    baseline = kr.datasets.adding_problem_baseline_mse(y)
    np.testing.assert_allclose(baseline, 1 / 6, atol=0.005)
    np.testing.assert_allclose(
        baseline, np.mean((y.astype(np.float64) - 1.0) ** 2)
    )
    assert kr.datasets.adding_problem_baseline_mse([[1.0], [1.5]]) == 0.125


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"num_samples": 0}, "num_samples=0"),
        ({"num_samples": -3}, "num_samples=-3"),
        ({"num_samples": 2.0}, "num_samples=2.0"),
        ({"num_samples": True}, "num_samples=True"),
        ({"length": 1}, "length=1"),
        ({"length": "50"}, "length='50'"),
        ({"min_length": 1}, "min_length=1"),
        ({"min_length": 11}, "min_length=11"),
        ({"min_length": 2.5}, "min_length=2.5"),
        ({"seed": -1}, "seed=-1"),
        ({"seed": 0.5}, "seed=0.5"),
        ({"seed": ()}, "seed=()"),
        ({"seed": (1, -2)}, r"seed=\(1, -2\)"),
        ({"seed": None}, "seed=None"),
    ],
)
def test_bad_arguments_raise(kwargs, message):
    arguments = {"num_samples": 4, "length": 10, **kwargs}
    with pytest.raises(ValueError, match=message):
        kr.datasets.adding_problem(arguments.pop("num_samples"), **arguments)


def test_baseline_mse_rejects_empty_targets():
    with pytest.raises(ValueError, match="targets"):
        kr.datasets.adding_problem_baseline_mse(np.zeros((0, 1)))
