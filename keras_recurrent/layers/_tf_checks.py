"""Run-time assertions in traced TensorFlow graphs.

`keras.ops` has no assertion, so these functions use TensorFlow directly;
only the TensorFlow backend calls them. Under XLA, where `Assert` compiles
to a no-op, the layers give bad trees and graphs NaN outputs instead.
"""

from keras import ops

from keras_recurrent.layers._concrete import in_xla_context


def assert_batch_size(tensor, expected, message):
    """`tensor`, checked at run time to have `expected` rows (TF only).

    Under XLA, where `Assert` is a no-op, the batch size is set statically
    instead, and compiling for another size fails on that shape.
    """
    import tensorflow as tf

    if in_xla_context():
        return tf.ensure_shape(tensor, (expected, *tensor.shape[1:]))
    received = tf.shape(tensor)[0]
    [tensor] = after_assertions(
        [tensor],
        [
            (
                tf.equal(received, expected),
                [message + "Received: a batch of", received, "sequences"],
            )
        ],
    )
    return tensor


def after_assertions(tensors, assertions, any_bad=None):
    """`tensors`, readable only after run-time assertions passed.

    `assertions` are `(condition, data)` pairs for `tf.debugging.Assert`;
    each runs after the previous one, so that the first problem is named.
    With `any_bad`, a bool scalar that is true when one of them fails,
    `assertions` is a function that returns the pairs, built and run in a
    `tf.cond` branch taken only then: good inputs pay for `any_bad` alone,
    not for each assertion's message.
    """
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


def rule_assertions(layer, rules, flags, structure, item, **names):
    """`(condition, data)` pairs for `after_assertions`: for each `Rule` of
    `rules` and its `(batch, n)` bool `flags`, that no item is bad, or the
    statement (its placeholders filled from `names`) and the first bad
    item, e.g. "First bad edge (graph, edge): 1 0"."""
    prefix = f"{type(layer).__name__} {layer.name!r}: "
    assertions = []
    for rule, bad in zip(rules, flags, strict=True):
        if not rule.traced:
            continue
        flat = ops.reshape(bad, (-1,))
        # A trailing False keeps `argmax` defined for batches without entries.
        padded = ops.concatenate(
            [ops.cast(flat, "int32"), ops.zeros((1,), "int32")]
        )
        first = ops.argmax(padded)
        # In `first`'s dtype: with a float64 `floatx`, Keras makes the
        # maximum of a dynamic int32 size and a Python int an int64.
        row_length = ops.cast(ops.maximum(ops.shape(bad)[1], 1), first.dtype)
        assertions.append(
            (
                ops.logical_not(ops.any(flat)),
                [
                    prefix + rule.statement.format(**names),
                    f"First bad {item} ({structure}, {item}):",
                    first // row_length,
                    first % row_length,
                ],
            )
        )
    return assertions
