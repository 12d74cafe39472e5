"""Guards of the `padded_batch` pipelines of trees and graphs.

`tf.data`'s `padded_batch` fails on an element larger than a fixed budget
with a `DataLossError` ("Attempted to pad to a smaller size than the input
element") that names neither the element nor the budget, and an empty
dataset makes `fit` return at once without a word. These guards name them.
"""

from keras_recurrent._batching import find_matches


def within_budgets(dataset, is_match, budgets, kind):
    """`dataset`, with a run-time check that each of its trees or graphs
    fits the padded sizes.

    Args:
        dataset: The unbatched `tf.data.Dataset`.
        is_match: Whether a structure of the elements is a tree/graph dict.
        budgets: List of `(key, axis_name, argument, budget)`: the dict's
            `key` tensor must have at most `budget` rows (`None`: no
            budget); `axis_name` (`"nodes"`, `"edges"`) and `argument`
            (`"num_nodes"`) name them in the error.
        kind: `"tree"` or `"graph"`.
    """
    import tensorflow as tf

    budgets = [entry for entry in budgets if entry[3] is not None]
    if not budgets:
        return dataset

    def check(index, element):
        checks = []
        for structure in find_matches(element, is_match):
            for key, axis_name, argument, budget in budgets:
                size = tf.shape(structure[key])[0]
                checks.append(
                    tf.debugging.Assert(
                        size <= budget,
                        [
                            f"kr.{kind}s.padded_batch: {kind}",
                            index,
                            "of the dataset (zero-based, before batching) has",
                            size,
                            f"{axis_name}, more than {argument}={budget}. "
                            f"Pass a larger `{argument}` (or None, to pad "
                            f"each batch to its largest {kind}), or leave "
                            f"the larger {kind}s out.",
                        ],
                    )
                )
        with tf.control_dependencies(checks):
            return tf.nest.map_structure(tf.identity, element)

    return dataset.enumerate().map(check)


def fail_when_empty(batched, kind):
    """`batched`, which raises rather than give no batch at all.

    A dataset known to give no batch (an empty one, or fewer elements than
    `batch_size` with `drop_remainder=True`) is a `ValueError` at once;
    one of unknown size (`from_generator`, `filter`) stops an iteration that
    gives no batch with an `InvalidArgumentError`.
    """
    import tensorflow as tf

    message = (
        f"kr.{kind}s.padded_batch: the dataset gives no batch (it holds no "
        f"{kind}, or fewer than `batch_size` with `drop_remainder=True`), "
        "so `fit` would train nothing (and `evaluate` or `predict` would "
        f"see no data). Check the dataset's source and filters."
    )
    cardinality = int(batched.cardinality())
    if cardinality == 0:
        raise ValueError(f"Argument `dataset`: {message}")
    if cardinality != tf.data.UNKNOWN_CARDINALITY:
        return batched
    spec = batched.element_spec
    filler = tf.nest.map_structure(
        lambda component: tf.zeros(
            [0 if size is None else size for size in component.shape],
            component.dtype,
        ),
        spec,
    )
    marked = batched.map(lambda *element: (_pack(element), False))
    end = tf.data.Dataset.from_tensors((filler, True))

    def count(batches, item):
        element, is_end = item
        check = tf.debugging.Assert(
            tf.logical_or(tf.logical_not(is_end), batches > 0), [message]
        )
        with tf.control_dependencies([check]):
            batches = tf.identity(batches) + 1
        return batches, (element, is_end)

    return (
        marked.concatenate(end)
        .scan(tf.constant(0, tf.int64), count)
        .filter(lambda element, is_end: tf.logical_not(is_end))
        .map(lambda element, is_end: element)
    )


def _pack(element):
    """The element of a dataset from the arguments `Dataset.map` passes."""
    return element[0] if len(element) == 1 else element
