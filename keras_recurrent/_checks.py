"""Argument checks shared by the whole package.

Each returns the checked value (as a plain Python `int`/`float` where that
matters) or raises a `ValueError` that names the argument and the value
received.
"""

import numbers

import keras
import numpy as np


def invalid(name, value, expected, allow_none=False):
    """The `ValueError` for the argument `name`, which must be `expected`
    (e.g. `"a boolean"`), or `None` too when `allow_none`, but is `value`.

    The one spelling of the package's argument messages.
    """
    return ValueError(
        f"Argument `{name}` must be {expected}"
        f"{' or None' if allow_none else ''}. Received: {name}={value!r}"
    )


def is_positive_int(value):
    """Whether `value` is an integer (not a bool) of at least 1."""
    return (
        isinstance(value, numbers.Integral)
        and not isinstance(value, bool)
        and value > 0
    )


def check_int(
    name, value, minimum=None, maximum=None, allow_none=False, context=None
):
    """Returns `value` as an `int`, or raises a `ValueError` naming it.

    `value` must be an integer (not a bool) in `[minimum, maximum]` (`None`:
    no bound on that side), or `None` when `allow_none`. `context` (e.g.
    `"for task='regression'"`) follows the bound in the message, where the
    bound depends on another argument.
    """
    if value is None and allow_none:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Integral)
        or (minimum is not None and value < minimum)
        or (maximum is not None and value > maximum)
    ):
        if maximum is not None:
            bound = f" in [{minimum}, {maximum}]"
        else:
            bound = "" if minimum is None else f" >= {minimum}"
        raise ValueError(
            f"Argument `{name}` must be an integer{bound}"
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
        raise invalid(name, value, f"a {kind} integer", allow_none)
    return int(value)


def check_rate(name, value):
    """Returns `value` as a `float` if it is in `[0, 1)`, else raises."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise invalid(name, value, "a float in [0, 1)")
    if not 0.0 <= value < 1.0:
        raise invalid(name, value, "in [0, 1)")
    return float(value)


def check_positive_float(name, value, allow_none=False):
    """Returns `value` as a `float` if it is a number above 0, else raises.

    With `allow_none`, `None` passes and is returned.
    """
    if value is None and allow_none:
        return None
    real = isinstance(value, numbers.Real) and not isinstance(value, bool)
    if not (real and value > 0):
        raise invalid(name, value, "a positive float", allow_none)
    return float(value)


def check_at_most(name, value, limit_name, limit):
    """Returns `value` unless it exceeds the argument `limit_name`; `None`
    on either side passes (no value, or no limit)."""
    if value is not None and limit is not None and value > limit:
        raise ValueError(
            f"Argument `{name}` must be <= `{limit_name}`. "
            f"Received: {name}={value}, {limit_name}={limit}"
        )
    return value


def check_not_empty(name, value):
    """Returns `value` unless it is empty: an array of size 0, or a
    sequence of length 0."""
    empty = value.size == 0 if hasattr(value, "size") else len(value) == 0
    if empty:
        received = (
            f"{name}.shape={value.shape}"
            if hasattr(value, "shape")
            else f"{name}={value!r}"
        )
        raise ValueError(
            f"Argument `{name}` must not be empty. Received: {received}"
        )
    return value


def check_bool(name, value, allow_none=False):
    """Returns `value` as a Python bool if it is one (or a NumPy bool), else
    raises: `"yes"`, `1` or `0` are refused, not coerced. With
    `allow_none`, `None` passes and is returned."""
    if value is None and allow_none:
        return None
    if not isinstance(value, (bool, np.bool_)):
        raise invalid(name, value, "a boolean", allow_none)
    return bool(value)


def check_string(name, value, allow_none=False):
    """Returns `value` if it is a non-empty string, else raises. With
    `allow_none`, `None` passes and is returned."""
    if value is None and allow_none:
        return None
    if not isinstance(value, str) or not value:
        raise invalid(name, value, "a non-empty string", allow_none)
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


def check_dtype(name, value, allowed):
    """Returns the name of the dtype `value` names if it is one of the
    names `allowed` (`"int32"`, `tf.int32` and `np.int32` all name
    `"int32"`), else raises."""
    try:
        dtype = keras.backend.standardize_dtype(value)
    except (TypeError, ValueError, AttributeError):
        dtype = None
    if value is None or dtype not in allowed:
        raise invalid(name, value, f"one of {list(allowed)}")
    return dtype


def check_known_last_axis(name, shape, context=None):
    """Returns `shape` as a tuple unless its last size is unknown.

    Weights are sized by the last axis, so `build` needs it; `context`
    (e.g. `"for mode='attention'"`) says when, where it depends on another
    argument.
    """
    shape = tuple(shape)
    if shape[-1] is None:
        raise ValueError(
            f"The last dimension of `{name}` must be defined"
            f"{' ' + context if context else ''}. "
            f"Received: {name}.shape={shape}"
        )
    return shape


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
