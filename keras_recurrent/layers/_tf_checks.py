"""The tree and graph layers' executor of their rule tables: concrete
tensors raise a `ValueError` naming the layer; traced TensorFlow gets
run-time assertions (`keras.ops` has none); under XLA, where `Assert` is a
no-op, the layers give bad trees and graphs NaN instead.
"""

import numpy as np
from keras import ops

from keras_recurrent._rules import any_bad_example
from keras_recurrent._rules import raise_message
from keras_recurrent._rules import unpack_inputs
from keras_recurrent.layers._concrete import concrete_numpy
from keras_recurrent.layers._concrete import narrowed_by_conversion


def prefix(layer):
    """`"ClassName 'name': "`, which starts a problem's message."""
    return f"{type(layer).__name__} {layer.name!r}: "


def raise_problem(layer, find_problem, *tensors, **options):
    """Raises `find_problem(*arrays, **options)`'s message, if any, when
    `tensors` are concrete; returns whether they were (checked)."""
    arrays = concrete_numpy(*tensors)
    if arrays is not None:
        raise_message(find_problem(*arrays, **options), prefix(layer))
    return arrays is not None


def check_host_arrays(layer, inputs, names, check_shapes, find_problem, **kw):
    """Raises `find_problem`'s message on NumPy index arrays (all inputs but
    the first) that Keras would narrow before `call`; inputs that
    `unpack_inputs` or `check_shapes` refuse are left to `call`."""
    try:
        tensors = unpack_inputs(layer, inputs, names)
    except ValueError:
        return
    if narrowed_by_conversion(*tensors[1:]):
        arrays = [np.asarray(tensor) for tensor in tensors[1:]]
        try:
            check_shapes(np.shape(tensors[0]), *[a.shape for a in arrays])
        except ValueError:
            return
        raise_message(find_problem(*arrays, **kw), prefix(layer))


def after_assertions(tensors, assertions, any_bad=None):
    """`tensors`, readable only after the `(condition, data)` pairs of
    `assertions` passed, in order (the first problem is named). With
    `any_bad`, true when one fails, `assertions` is a function, built and
    run in a `tf.cond` branch taken only then: good inputs pay for
    `any_bad` alone."""
    import tensorflow as tf

    def checked(assertions):
        chain = []
        for condition, data in assertions:
            with tf.control_dependencies(chain):
                chain = [tf.debugging.Assert(condition, data)]
        with tf.control_dependencies(chain):
            return [tf.identity(tensor) for tensor in tensors]

    if any_bad is None:
        return checked(assertions)
    return tf.cond(
        any_bad,
        lambda: checked(assertions()),
        lambda: [tf.identity(tensor) for tensor in tensors],
    )


def assert_rules(layer, tensors, structure, rules, flags, **names):
    """`tensors` after assertions that no item breaks a rule of `rules`,
    with their `(batch, n)` bool `flags`: a failure gives the statement
    (placeholders filled from `names`) and the first bad item, e.g. "First
    bad edge (graph, edge): 1 0"."""

    def assertions():
        return [
            _rule_assertion(layer, rule, bad, names, structure)
            for rule, bad in zip(rules, flags, strict=True)
            if rule.traced
        ]

    any_bad = ops.any(any_bad_example(ops, flags))
    return after_assertions(tensors, assertions, any_bad=any_bad)


def _rule_assertion(layer, rule, bad, names, structure):
    flat = ops.reshape(bad, (-1,))
    # A trailing False keeps `argmax` defined for batches without entries.
    padded = ops.concatenate(
        [ops.cast(flat, "int32"), ops.zeros((1,), "int32")]
    )
    first = ops.argmax(padded)
    # In `first`'s dtype: with a float64 `floatx`, Keras makes the maximum
    # of a dynamic int32 size and a Python int an int64.
    row_length = ops.cast(ops.maximum(ops.shape(bad)[1], 1), first.dtype)
    return ops.logical_not(ops.any(flat)), [
        prefix(layer) + rule.statement.format(**names),
        f"First bad {rule.item} ({structure}, {rule.item}):",
        first // row_length,
        first % row_length,
    ]
