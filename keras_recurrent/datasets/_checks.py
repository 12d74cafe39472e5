"""Argument checks shared by the dataset generators and builder configs."""

import numbers


def check_int(name, value, minimum, maximum=None, allow_none=False):
    """Returns `value` as an `int`, or raises a `ValueError` naming it.

    `value` must be an integer (not a bool) in `[minimum, maximum]`
    (`maximum=None`: no upper bound), or `None` when `allow_none`.
    """
    if value is None and allow_none:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Integral)
        or value < minimum
        or (maximum is not None and value > maximum)
    ):
        bound = f">= {minimum}" if maximum is None else f"in [{minimum}, "
        bound += "" if maximum is None else f"{maximum}]"
        raise ValueError(
            f"Argument `{name}` must be an integer {bound}"
            f"{' or None' if allow_none else ''}. Received: {name}={value!r}"
        )
    return int(value)


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
