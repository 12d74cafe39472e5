"""The adding problem: a generated long-range memory task."""

import numpy as np

from keras_recurrent._checks import check_at_most
from keras_recurrent._checks import check_not_empty
from keras_recurrent.datasets._checks import check_int
from keras_recurrent.datasets._checks import check_seed

# Each target is the sum of two independent values drawn uniformly from
# (0, 1], so its variance is 2 * 1/12.
_BASELINE_MSE = 1.0 / 6.0


def adding_problem(num_samples, *, length=50, min_length=None, seed=0):
    """Generates the adding problem of Hochreiter & Schmidhuber (1997).

    Each sample is a sequence of `length` steps with two channels. Channel 0
    holds random values drawn uniformly from `(0, 1]`; channel 1 is a marker
    that is 1 at exactly two steps, one in the first half and one in the
    second half of the sample's real length, and 0 elsewhere. The target is
    the sum of the two marked values. This is the setup of Le et al. (2015),
    except that values are drawn from `(0, 1]` rather than `[0, 1)`, so that
    a real step is never all zeros.

    With `min_length`, each sample's real length is drawn uniformly from
    `[min_length, length]` and the steps past it are all-zero padding, so
    `keras.layers.Masking(0.0)` recovers the mask. The halves that hold the
    markers are those of the real length: for a real length `n`, the first
    marker is at a step in `[0, n // 2)` and the second in `[n // 2, n)`.

    A model that always predicts the mean target, 1.0, has a mean squared
    error of 1/6 (see `adding_problem_baseline_mse`); a model has learned
    the task only when it does much better than that.

    Args:
        num_samples: Positive integer, the number of sequences.
        length: Integer >= 2, the number of steps of every sequence (the
            padded length with `min_length`). Defaults to `50`.
        min_length: Optional integer in `[2, length]`. When given, each
            sample's real length is drawn uniformly from
            `[min_length, length]`. Defaults to `None` (every sample is
            `length` steps long).
        seed: Non-negative integer, or a tuple of them, passed to
            `numpy.random.default_rng`. The same arguments always give the
            same data. Defaults to `0`.

    Returns:
        A tuple `(x, y, lengths)`: `x` is a float32 array
        `(num_samples, length, 2)`, `y` a float32 array `(num_samples, 1)`
        and `lengths` an int32 array `(num_samples,)` of real lengths.

    Example:

    >>> x, y, lengths = kr.datasets.adding_problem(4, length=10)
    >>> x.shape, y.shape, lengths.shape
    ((4, 10, 2), (4, 1), (4,))
    >>> bool(np.all(x[:, :, 1].sum(axis=1) == 2))
    True

    Reference:
        - [Hochreiter & Schmidhuber, 1997. Long Short-Term Memory](
          https://doi.org/10.1162/neco.1997.9.8.1735)
        - [Le et al., 2015. A Simple Way to Initialize Recurrent Networks of
          Rectified Linear Units](https://arxiv.org/abs/1504.00941)
    """
    num_samples = check_int("num_samples", num_samples, 1)
    length = check_int("length", length, 2)
    min_length = check_int("min_length", min_length, 2, allow_none=True)
    check_at_most("min_length", min_length, "length", length)
    rng = np.random.default_rng(check_seed(seed))

    if min_length is None:
        lengths = np.full(num_samples, length, dtype=np.int64)
    else:
        lengths = rng.integers(
            min_length, length, size=num_samples, endpoint=True
        )
    halves = lengths // 2
    first = rng.integers(0, halves)
    second = rng.integers(halves, lengths)
    values = 1.0 - rng.random((num_samples, length))

    rows = np.arange(num_samples)
    is_real = np.arange(length)[None, :] < lengths[:, None]
    x = np.zeros((num_samples, length, 2), dtype=np.float32)
    x[:, :, 0] = np.where(is_real, values, 0.0)
    x[rows, first, 1] = 1.0
    x[rows, second, 1] = 1.0
    # Summed in float32 from `x` itself, so that `y` is exactly the sum of
    # the marked entries a model sees.
    y = (x[rows, first, 0] + x[rows, second, 0])[:, None]
    return x, y, lengths.astype(np.int32)


def adding_problem_baseline_mse(targets=None):
    """Mean squared error of always predicting 1.0 on the adding problem.

    1.0 is the expected target, so this is the variance of the targets:
    exactly 1/6 in expectation, since a target is the sum of two
    independent values uniform on `(0, 1]`, each of variance 1/12. It is the
    score to beat: a model whose MSE stays near 1/6 has learned nothing
    beyond the mean (Le et al. 2015 report it as the baseline).

    Args:
        targets: Optional array of targets, e.g. the `y` returned by
            `adding_problem`. When given, the MSE of predicting 1.0 on these
            targets is returned instead of its expectation. Defaults to
            `None`.

    Returns:
        A Python float: 1/6, or the empirical MSE on `targets`.

    Example:

    >>> kr.datasets.adding_problem_baseline_mse()
    0.16666666666666666
    >>> _, y, _ = kr.datasets.adding_problem(10000, length=20)
    >>> round(kr.datasets.adding_problem_baseline_mse(y), 2)
    0.17

    Reference:
        - [Le et al., 2015. A Simple Way to Initialize Recurrent Networks of
          Rectified Linear Units](https://arxiv.org/abs/1504.00941)
    """
    if targets is None:
        return _BASELINE_MSE
    targets = np.asarray(targets, dtype=np.float64)
    check_not_empty("targets", targets)
    return float(np.mean((targets - 1.0) ** 2))
