"""Argument checks shared by the dataset generators and builder configs."""

import numbers

from keras_recurrent._checks import check_int  # noqa: F401


def check_seed(seed):
    """Accepts a non-negative integer or a non-empty tuple/list of them."""
    entries = seed if isinstance(seed, (tuple, list)) else (seed,)
    valid = len(entries) > 0 and all(
        isinstance(entry, numbers.Integral)
        and not isinstance(entry, bool)
        and entry >= 0
        for entry in entries
    )
    if not valid:
        raise ValueError(
            "Argument `seed` must be a non-negative integer or a non-empty "
            f"tuple of them. Received: seed={seed!r}"
        )
    if isinstance(seed, (tuple, list)):
        return [int(entry) for entry in seed]
    return int(seed)
