"""What `kr.trees.padded_batch` and `kr.graphs.padded_batch` share.

A dataset's elements nest tensors in dicts, tuples and lists; some dicts
are one tree or one graph ("matches", found by a predicate). These helpers
find them, give `tf.data.Dataset.padded_batch` its padded shapes and
values, and swap checked tensors into an element. Only `tf.data` needs
TensorFlow, so it is imported inside.
"""

from collections.abc import Mapping

from keras_recurrent._checks import DTYPE_KINDS
from keras_recurrent._checks import dtype_name


def check_dataset(dataset):
    """Raises unless `dataset` is a `tf.data.Dataset`."""
    import tensorflow as tf

    if not isinstance(dataset, tf.data.Dataset):
        raise ValueError(
            "Argument `dataset` must be a `tf.data.Dataset`. "
            f"Received: dataset of type {type(dataset)}"
        )


def find_matches(structure, is_match):
    """The parts of a nested `structure` (dicts, tuples, lists) for which
    `is_match` is true, depth first; a match is not searched inside."""
    if is_match(structure):
        return [structure]
    if isinstance(structure, Mapping):
        items = structure.values()
    elif isinstance(structure, (tuple, list)):
        items = structure
    else:
        return []
    return [found for item in items for found in find_matches(item, is_match)]


def padding_of(spec, is_match, pad_match):
    """`(padded_shapes, padding_values)` for `Dataset.padded_batch`.

    Args:
        spec: A dataset's `element_spec`.
        is_match: Whether a part of `spec` is one tree or graph dict.
        pad_match: Maps such a dict to its `(shapes, values)` dicts.

    Returns:
        Two structures like `spec`: every other `tf.TensorSpec` keeps its
        shape (padded to the longest in the batch) and is padded with
        zeros (`""` for strings).

    Raises:
        ValueError: If `spec` holds anything but dicts, tuples, lists and
            dense `tf.TensorSpec`s.
    """
    import tensorflow as tf

    if is_match(spec):
        return pad_match(spec)
    if isinstance(spec, Mapping):
        pairs = {
            key: padding_of(value, is_match, pad_match)
            for key, value in spec.items()
        }
        return (
            {key: pair[0] for key, pair in pairs.items()},
            {key: pair[1] for key, pair in pairs.items()},
        )
    if isinstance(spec, (tuple, list)):
        pairs = [padding_of(value, is_match, pad_match) for value in spec]
        return (
            type(spec)(pair[0] for pair in pairs),
            type(spec)(pair[1] for pair in pairs),
        )
    if not isinstance(spec, tf.TensorSpec):
        raise ValueError(
            "Argument `dataset` must have elements of dense tensors in "
            f"dicts, tuples or lists. Received: element_spec={spec!r}"
        )
    return spec.shape, zero(spec.dtype)


def zero(dtype):
    """The scalar padding value of a component that is not a tree/graph."""
    import tensorflow as tf

    if dtype == tf.string:
        return tf.constant("", tf.string)
    return tf.zeros((), dtype)


def with_checked_tensors(element, is_match, check):
    """A dataset element with one tensor of each match replaced.

    `element` is the tuple `Dataset.map` passes (one item for a dataset of
    single structures); `check(match)` returns `(tensor, checked)`, and
    `checked` takes the place of `tensor`, so that the check is part of the
    data path (a mere control dependency can be pruned).
    """
    import tensorflow as tf

    element = element[0] if len(element) == 1 else element
    replacements = {}
    for match in find_matches(element, is_match):
        tensor, checked = check(match)
        replacements[id(tensor)] = checked
    return tf.nest.pack_sequence_as(
        element,
        [
            replacements.get(id(value), value)
            for value in tf.nest.flatten(element)
        ],
    )


# The int32 range of the index tensors a model reads (`keras.Input` dtype).
INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1


def map_matches(structure, is_match, function):
    """`structure` with `function` applied to each match in it."""
    if is_match(structure):
        return function(structure)
    if isinstance(structure, Mapping):
        return {
            key: map_matches(value, is_match, function)
            for key, value in structure.items()
        }
    if isinstance(structure, (tuple, list)):
        return type(structure)(
            map_matches(item, is_match, function) for item in structure
        )
    return structure


def with_int32_indices(element, is_match, names):
    """A dataset element whose index tensors `names` of each match are int32.

    A component of another integer dtype (int64, uint32, uint64, ...) is
    checked on the host (`tf.numpy_function`) to lie in the int32 range,
    then cast: the model's int32 `keras.Input` would otherwise wrap
    `2**32 + 1` into node 1. A value out of range stops the iteration with
    an `InvalidArgumentError` that names the component and the value.
    """
    import tensorflow as tf

    element = element[0] if len(element) == 1 else element

    def narrow(match):
        narrowed = dict(match)
        for name in names:
            tensor = match.get(name)
            if tensor is None or not tensor.dtype.is_integer:
                continue
            if tensor.dtype == tf.int32:
                continue
            checked = tf.numpy_function(
                lambda values, name=name: to_int32(name, values),
                [tensor],
                tf.int32,
                stateful=False,
            )
            checked.set_shape(tensor.shape)
            narrowed[name] = checked
        return narrowed

    return map_matches(element, is_match, narrow)


def int32_problem(name, values):
    """A message naming the first value of `values` (a NumPy integer array)
    outside the int32 range, or `None`."""
    import numpy as np

    values = np.asarray(values)
    dtype = dtype_name(values.dtype)
    if values.size == 0 or not DTYPE_KINDS["boolean or integer"](dtype):
        return None
    if dtype == "int32":
        return None
    outside = (
        (values > INT32_MAX)
        if values.dtype.kind == "u"
        else ((values < INT32_MIN) | (values > INT32_MAX))
    )
    if not outside.any():
        return None
    index = tuple(np.argwhere(outside)[0].tolist())
    return (
        f"`{name}` must hold values in the int32 range [-2**31, 2**31) of "
        "the model's inputs (a wider index would be read as another one). "
        f"Received: {name}{list(index)}={values[index].item()} "
        f"(dtype {values.dtype})"
    )


def to_int32(name, values):
    """`values` (NumPy integers) as int32, or a `ValueError` naming `name`
    and the first value outside the int32 range."""
    import numpy as np

    problem = int32_problem(name, values)
    if problem is not None:
        raise ValueError(problem)
    return np.asarray(values).astype(np.int32)
