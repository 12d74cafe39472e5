"""Argument checks shared by the whole package: each returns the checked
value (a plain `int`/`float` where that matters) or raises a `ValueError`
naming the argument and the value received."""

import contextlib
import numbers

import keras
import numpy as np


def invalid(name, value, expected, allow_none=False, context=None):
    """The `ValueError`: argument `name` must be `expected` (or `None`);
    `context` (e.g. `"for task='regression'"`) ends the requirement."""
    return ValueError(
        f"Argument `{name}` must be {expected}"
        f"{' or None' if allow_none else ''}"
        f"{' ' + context if context else ''}. Received: {name}={value!r}"
    )


@contextlib.contextmanager
def named_errors(layer):
    """Runs a block whose `ValueError` gets `"ClassName: "` of `layer`."""
    try:
        yield
    except ValueError as error:
        raise ValueError(f"{type(layer).__name__}: {error}") from None


def _is_int(value):
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_real(value):
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def is_positive_int(value):
    """Whether `value` is an integer (not a bool) of at least 1."""
    return _is_int(value) and value > 0


def check_int(
    name, value, minimum=None, maximum=None, allow_none=False, context=None
):
    """`value` as an `int` in `[minimum, maximum]` (`None`: unbounded)."""
    if value is None and allow_none:
        return None
    if (
        not _is_int(value)
        or (minimum is not None and value < minimum)
        or (maximum is not None and value > maximum)
    ):
        if maximum is not None:
            bound = f" in [{minimum}, {maximum}]"
        else:
            bound = "" if minimum is None else f" >= {minimum}"
        raise invalid(name, value, f"an integer{bound}", allow_none, context)
    return int(value)


def check_layer_seed(seed):
    """A layer's or cell's `seed`: an integer or `None`, as
    `keras.random.SeedGenerator` takes it."""
    return check_int("seed", seed, allow_none=True)


def check_output_units(output_units, task, *, classification):
    """A HyperModel's `output_units`: at least 2 classes, or 1 target."""
    minimum, context = (2 if classification else 1), f"for task={task!r}"
    return check_int("output_units", output_units, minimum, context=context)


def _checker(expected, accepts, convert=None):
    """A check `(name, value, allow_none=False)`: `value` (through
    `convert`) if `accepts(value)`, else `invalid(..., expected)`."""

    def check(name, value, allow_none=False):
        if value is None and allow_none:
            return None
        if not accepts(value):
            raise invalid(name, value, expected, allow_none)
        return value if convert is None else convert(value)

    return check


_positive_int = _checker("a positive integer", is_positive_int, int)
_non_negative_int = _checker(
    "a non-negative integer", lambda v: _is_int(v) and v >= 0, int
)
# Booleans (not `"yes"`, `1` or `0`), non-empty strings, positive floats.
check_bool = _checker(
    "a boolean", lambda v: isinstance(v, (bool, np.bool_)), bool
)
check_string = _checker(
    "a non-empty string", lambda v: isinstance(v, str) and v != ""
)
check_positive_float = _checker(
    "a positive float", lambda v: _is_real(v) and v > 0, float
)


def check_positive_int(name, value, allow_none=False, allow_zero=False):
    """`value` as an `int` above 0 (or at least 0 with `allow_zero`)."""
    check = _non_negative_int if allow_zero else _positive_int
    return check(name, value, allow_none)


def check_rate(name, value):
    """`value` as a `float` in `[0, 1)`."""
    if not _is_real(value):
        raise invalid(name, value, "a float in [0, 1)")
    if not 0.0 <= value < 1.0:
        raise invalid(name, value, "in [0, 1)")
    return float(value)


def check_at_most(name, value, limit_name, limit):
    """`value` unless it exceeds `limit` (`None` on either side passes)."""
    if value is not None and limit is not None and value > limit:
        raise ValueError(
            f"Argument `{name}` must be <= `{limit_name}`. "
            f"Received: {name}={value}, {limit_name}={limit}"
        )
    return value


def check_not_empty(name, value):
    """`value` unless it is an empty array or sequence."""
    if (value.size if hasattr(value, "size") else len(value)) == 0:
        shown = (
            f".shape={value.shape}"
            if hasattr(value, "shape")
            else f"={value!r}"
        )
        raise ValueError(
            f"Argument `{name}` must not be empty. Received: {name}{shown}"
        )
    return value


def check_option(name, value, allowed, allow_none=False):
    """The spelling in `allowed` of the option `value` names, ignoring
    case (`"LSTM"` names `"lstm"`): what layers store in their configs."""
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
    """The name of the dtype `value` names (`tf.int32`, `np.int32` and
    `"int32"` all name `"int32"`) if it is one of `allowed`."""
    try:
        dtype = keras.backend.standardize_dtype(value)
    except (TypeError, ValueError, AttributeError):
        dtype = None
    if value is None or dtype not in allowed:
        raise invalid(name, value, f"one of {list(allowed)}")
    return dtype


def check_known_last_axis(name, shape, context=None):
    """`shape` as a tuple unless its last size (which sizes weights) is
    unknown; `context` (e.g. `"for mode='attention'"`) says when."""
    shape = tuple(shape)
    if shape[-1] is None:
        raise ValueError(
            f"The last dimension of `{name}` must be defined"
            f"{' ' + context if context else ''}. "
            f"Received: {name}.shape={shape}"
        )
    return shape


# The one vocabulary of dtype kinds: whether a dtype name is of a kind.
DTYPE_KINDS = {
    "floating-point": lambda dtype: "float" in dtype,
    "integer": lambda dtype: "int" in dtype,
    "boolean or integer": lambda dtype: dtype == "bool" or "int" in dtype,
    "numeric": lambda dtype: dtype.startswith(("int", "uint", "float", "bf")),
    "numeric or boolean": lambda d: d == "bool" or DTYPE_KINDS["numeric"](d),
}


def dtype_name(dtype):
    """The standardized name of a NumPy, TensorFlow, JAX or PyTorch dtype
    (`str(dtype)` where Keras knows none, e.g. for strings)."""
    try:
        return keras.backend.standardize_dtype(dtype)
    except (TypeError, ValueError, AttributeError):
        return str(getattr(dtype, "name", dtype))


def check_tensor_dtype(name, tensor, kind, why=""):
    """Returns the name of the dtype of `tensor` (or NumPy array) `name`,
    or raises "`name` must be {kind}{why}" unless it is of `kind`, a key of
    `DTYPE_KINDS`."""
    dtype = dtype_name(tensor.dtype)
    if not DTYPE_KINDS[kind](dtype):
        raise ValueError(
            f"`{name}` must be {kind}{why}. Received: {name}.dtype={dtype}"
        )
    return dtype


def check_float_dtype(layer, tensor, name="inputs"):
    """Raises unless `tensor` is floating-point (embed integer tokens)."""
    why = " (embed integer tokens first, e.g. with `keras.layers.Embedding`)"
    with named_errors(layer):
        check_tensor_dtype(name, tensor, "floating-point", why)


def float_or_cast(layer, tensor, name="inputs"):
    """`tensor` in a floating-point dtype: integer and boolean values cast
    to `layer.compute_dtype`, as `keras.layers.LSTM` takes them (its first
    matmul promotes them to the kernel's float dtype, Keras' type promotion
    of an integer or boolean with a float being the float); raises for any
    other dtype (strings, complex numbers)."""
    why = (
        " (integers and booleans are cast to the layer's compute dtype, as "
        "`keras.layers.LSTM` casts them)"
    )
    with named_errors(layer):
        dtype = check_tensor_dtype(name, tensor, "numeric or boolean", why)
    if DTYPE_KINDS["floating-point"](dtype):
        return tensor
    return keras.ops.cast(tensor, layer.compute_dtype)
