"""Argument checks shared by the whole package.

Each returns the checked value (as a plain Python `int`/`float` where that
matters) or raises a `ValueError` that names the argument and the value
received.
"""

import numbers

import keras


def is_positive_int(value):
    """Whether `value` is an integer (not a bool) of at least 1."""
    return (
        isinstance(value, numbers.Integral)
        and not isinstance(value, bool)
        and value > 0
    )


def check_int(
    name, value, minimum, maximum=None, allow_none=False, context=None
):
    """Returns `value` as an `int`, or raises a `ValueError` naming it.

    `value` must be an integer (not a bool) in `[minimum, maximum]`
    (`maximum=None`: no upper bound), or `None` when `allow_none`.
    `context` (e.g. `"for task='regression'"`) follows the bound in the
    message, where the bound depends on another argument.
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
            f"{' or None' if allow_none else ''}"
            f"{' ' + context if context else ''}. Received: {name}={value!r}"
        )
    return int(value)


def check_output_units(output_units, task, *, classification):
    """Returns a HyperModel's `output_units` as an `int`, or raises.

    A classification head needs at least 2 classes, any other at least 1
    target; the message names `task`, on which the bound depends.
    """
    return check_int(
        "output_units",
        output_units,
        2 if classification else 1,
        context=f"for task={task!r}",
    )


def check_positive_int(name, value, allow_none=False, allow_zero=False):
    """Returns `value` as an `int` if it is a positive integer, else raises.

    With `allow_zero`, zero passes too ("a non-negative integer"); with
    `allow_none`, `None` passes and is returned.
    """
    if value is None and allow_none:
        return None
    lowest = 0 if allow_zero else 1
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Integral)
        or value < lowest
    ):
        kind = "non-negative" if allow_zero else "positive"
        raise ValueError(
            f"Argument `{name}` must be a {kind} integer"
            f"{' or None' if allow_none else ''}. Received: {name}={value!r}"
        )
    return int(value)


def check_rate(name, value):
    """Returns `value` as a `float` if it is in `[0, 1)`, else raises."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(
            f"Argument `{name}` must be a float in [0, 1). "
            f"Received: {name}={value!r}"
        )
    if not 0.0 <= value < 1.0:
        raise ValueError(
            f"Argument `{name}` must be in [0, 1). Received: {name}={value!r}"
        )
    return float(value)


def check_bool(name, value):
    """Returns `value` if it is a Python bool, else raises."""
    if not isinstance(value, bool):
        raise ValueError(
            f"Argument `{name}` must be a boolean. Received: {name}={value!r}"
        )
    return value


def check_option(name, value, allowed, allow_none=False):
    """Returns the option of `allowed` that `value` names, ignoring case.

    Options are case-insensitive everywhere in the package: `"LSTM"`,
    `"Lstm"` and `"lstm"` all name the option `"lstm"`. The value returned is
    the spelling in `allowed` (lower case for all but the Greff et al.
    variant names), which is what layers store in their configs.

    Args:
        name: The argument's name, for the error message.
        value: The value received.
        allowed: The options, in their canonical spelling (any iterable of
            strings, e.g. a tuple or the keys of a dict).
        allow_none: Whether `None` passes (and is returned).

    Returns:
        The canonical spelling of `value`, or `None`.

    Raises:
        ValueError: If `value` is not a string naming one of `allowed`.
    """
    allowed = tuple(allowed)
    if value is None and allow_none:
        return None
    if isinstance(value, str):
        for option in allowed:
            if value.lower() == option.lower():
                return option
    raise ValueError(
        f"Argument `{name}` must be {'None or ' if allow_none else ''}one of "
        f"{list(allowed)} (case-insensitive). Received: {name}={value!r}"
    )


def check_float_dtype(layer, tensor, name="inputs"):
    """Raises unless `tensor` has a floating-point dtype.

    Integer tokens must be embedded first; the error says so, names
    `layer`'s class and the argument, and gives the dtype received.
    """
    dtype = keras.backend.standardize_dtype(tensor.dtype)
    if "float" not in dtype:
        raise ValueError(
            f"{type(layer).__name__} expects floating-point `{name}` (embed "
            "integer tokens first, e.g. with `keras.layers.Embedding`). "
            f"Received: {name}.dtype={dtype}"
        )
