"""Batching single trees in `tf.data` pipelines."""

from collections.abc import Mapping

import numpy as np

from keras_recurrent._checks import check_positive_int

# The keys of one tree as `encode_tree` makes it; `node_inputs` (float
# features) may stand in for `node_tokens`.
_TREE_KEYS = ("children", "node_mask")


def tree_spec(num_children, *, node_features=None):
    """The `tf.TensorSpec`s of one unpadded tree, as `encode_tree` makes it.

    Use it as (part of) the `output_signature` of
    `tf.data.Dataset.from_generator` over `kr.trees.encode_tree` dicts, then
    batch with `kr.trees.padded_batch`.

    Args:
        num_children: Positive integer `K`, the number of child slots (pass
            `num_children=K` to `encode_tree` so that every tree has it).
        node_features: Optional positive integer `D`. With `None` (default)
            the tree holds int32 `"node_tokens"` `(None,)`; else float32
            `"node_inputs"` `(None, D)`.

    Returns:
        A dict of `tf.TensorSpec`: the tokens or inputs, `"children"` int32
        `(None, K)` and `"node_mask"` int32 `(None,)`.

    Example:

    >>> def trees():
    ...     yield kr.trees.encode_tree("(1 2 3)", num_children=2), 6
    >>> dataset = tf.data.Dataset.from_generator(
    ...     trees,
    ...     output_signature=(
    ...         kr.trees.tree_spec(2), tf.TensorSpec((), tf.int32)
    ...     ),
    ... )
    """
    import tensorflow as tf  # Only `tf.data` needs it.

    num_children = check_positive_int("num_children", num_children)
    node_features = check_positive_int(
        "node_features", node_features, allow_none=True
    )
    if node_features is None:
        features = {
            "node_tokens": tf.TensorSpec((None,), tf.int32, name="node_tokens")
        }
    else:
        features = {
            "node_inputs": tf.TensorSpec(
                (None, node_features), tf.float32, name="node_inputs"
            )
        }
    return {
        **features,
        "children": tf.TensorSpec(
            (None, num_children), tf.int32, name="children"
        ),
        "node_mask": tf.TensorSpec((None,), tf.int32, name="node_mask"),
    }


def padded_batch(
    dataset,
    batch_size,
    *,
    num_nodes=None,
    bucket_boundaries=None,
    drop_remainder=False,
    validate=True,
):
    """Batches a `tf.data.Dataset` of single trees into padded tree tensors.

    Every dict in the dataset's elements with the keys `"children"` and
    `"node_mask"` (one tree, as `kr.trees.encode_tree` makes it; see
    `kr.trees.tree_spec`) is padded as `kr.trees.encode_trees` pads:
    `children` with `-1`, `node_mask`, `node_tokens` and `node_inputs` with
    zeros. Other components (targets) are padded with zeros, so elements may
    be `(tree, target)` tuples as `fit` expects.

    With `bucket_boundaries`, trees are grouped by their number of nodes
    (`tf.data.Dataset.bucket_by_sequence_length`): a batch only holds trees
    of one bucket, so there is less padding, and the level loop of the tree
    layers runs over similar heights.

    Args:
        dataset: A `tf.data.Dataset` whose elements hold one tree dict.
        batch_size: Positive integer, the number of trees per batch.
        num_nodes: Optional positive integer `N`, a fixed padded number of
            nodes (static shapes); `tf.data` raises at run time on a larger
            tree. Defaults to the largest tree of each batch. Not with
            `bucket_boundaries`.
        bucket_boundaries: Optional increasing list of positive integers:
            trees with fewer nodes than `bucket_boundaries[0]` form the
            first bucket, and so on. Defaults to `None`, no bucketing.
        drop_remainder: Whether to drop the last, smaller batch (of each
            bucket). Defaults to `False`.
        validate: Whether to check every tree before it is batched, as
            `kr.trees.validate_tree_tensors` does, and that float
            `node_inputs` of real nodes are finite (in a
            `tf.numpy_function`): a bad tree stops the iteration with an
            `InvalidArgumentError` naming the problem, rather than reach a
            model (where, compiled with XLA, it would only give NaN).
            Defaults to `True`.

    Returns:
        The batched `tf.data.Dataset`; each tree dict becomes the padded
        tensors `(batch, N)`, `(batch, N, K)`, `(batch, N)`.

    Example:

    >>> batched = kr.trees.padded_batch(
    ...     dataset, 64, bucket_boundaries=[16, 32, 64])
    >>> trees, labels = next(iter(batched))
    >>> trees["children"].shape
    TensorShape([64, None, 2])
    """
    import tensorflow as tf  # Only `tf.data` needs it.

    if not isinstance(dataset, tf.data.Dataset):
        raise ValueError(
            "Argument `dataset` must be a `tf.data.Dataset`. "
            f"Received: dataset of type {type(dataset)}"
        )
    batch_size = check_positive_int("batch_size", batch_size)
    num_nodes = check_positive_int("num_nodes", num_nodes, allow_none=True)
    if bucket_boundaries is not None:
        if num_nodes is not None:
            raise ValueError(
                "Arguments `num_nodes` and `bucket_boundaries` exclude each "
                f"other. Received: num_nodes={num_nodes}, "
                f"bucket_boundaries={bucket_boundaries!r}"
            )
        boundaries = list(bucket_boundaries)
        if (
            not boundaries
            or any(
                isinstance(b, bool) or not isinstance(b, int) or b < 1
                for b in boundaries
            )
            or boundaries != sorted(set(boundaries))
        ):
            raise ValueError(
                "Argument `bucket_boundaries` must be a non-empty, strictly "
                "increasing list of positive integers. "
                f"Received: bucket_boundaries={bucket_boundaries!r}"
            )
    spec = dataset.element_spec
    found = []

    def shapes_and_values(spec):
        if _is_tree_spec(spec):
            found.append(spec)
            shapes, values = {}, {}
            for key, value in spec.items():
                shape = value.shape.as_list()
                if key in (
                    "node_tokens",
                    "node_inputs",
                    "children",
                    "node_mask",
                ):
                    shape[0] = num_nodes
                shapes[key] = tf.TensorShape(shape)
                values[key] = tf.constant(
                    -1 if key == "children" else 0, dtype=value.dtype
                )
            return shapes, values
        if isinstance(spec, Mapping):
            pairs = {key: shapes_and_values(v) for key, v in spec.items()}
            return (
                {key: pair[0] for key, pair in pairs.items()},
                {key: pair[1] for key, pair in pairs.items()},
            )
        if isinstance(spec, (tuple, list)):
            pairs = [shapes_and_values(value) for value in spec]
            return (
                type(spec)(pair[0] for pair in pairs),
                type(spec)(pair[1] for pair in pairs),
            )
        if not isinstance(spec, tf.TensorSpec):
            raise ValueError(
                "Argument `dataset` must have elements of dense tensors in "
                f"dicts, tuples or lists. Received: element_spec={spec!r}"
            )
        return spec.shape, tf.constant(0, dtype=spec.dtype)

    padded_shapes, padding_values = shapes_and_values(spec)
    if len(found) != 1:
        raise ValueError(
            "Argument `dataset` must have elements that hold one tree dict "
            f"with the keys {list(_TREE_KEYS)}. "
            f"Received: element_spec={spec!r}"
        )
    if validate:
        dataset = dataset.map(_validated)
    if bucket_boundaries is None:
        return dataset.padded_batch(
            batch_size,
            padded_shapes=padded_shapes,
            padding_values=padding_values,
            drop_remainder=drop_remainder,
        )

    def tree_size(*element):
        tree = _find_tree(element[0] if len(element) == 1 else element)
        return tf.shape(tree["node_mask"])[0]

    return dataset.bucket_by_sequence_length(
        tree_size,
        bucket_boundaries=boundaries,
        bucket_batch_sizes=[batch_size] * (len(boundaries) + 1),
        padded_shapes=padded_shapes,
        padding_values=padding_values,
        drop_remainder=drop_remainder,
    )


def _validated(*element):
    """`element` with its tree's `children` passed through the checks."""
    import tensorflow as tf

    from keras_recurrent.trees.validation import validate_tree_tensors

    element = element[0] if len(element) == 1 else element
    tree = _find_tree(element)

    def check(children, node_mask, *node_inputs):
        validate_tree_tensors(children[None], node_mask[None])
        for values in node_inputs:
            real = (node_mask != 0).reshape((-1,) + (1,) * (values.ndim - 1))
            bad = ~np.isfinite(values) & real
            if bad.any():
                index = tuple(np.argwhere(bad)[0].tolist())
                raise ValueError(
                    "`node_inputs` of real nodes must be finite. Received: "
                    f"node_inputs{list(index)}={values[index].item()}"
                )
        return children

    # The checked `children` replace the tree's own, so that the check is
    # part of the data path (a mere control dependency was pruned).
    children = tree["children"]
    node_inputs = tree.get("node_inputs")
    extra = (
        [node_inputs]
        if node_inputs is not None and node_inputs.dtype.is_floating
        else []
    )
    checked = tf.numpy_function(
        check,
        [children, tree["node_mask"], *extra],
        children.dtype,
        stateful=False,
    )
    checked.set_shape(children.shape)
    return tf.nest.pack_sequence_as(
        element,
        [
            checked if value is children else value
            for value in tf.nest.flatten(element)
        ],
    )


def _is_tree_spec(spec):
    return isinstance(spec, Mapping) and set(_TREE_KEYS) <= set(spec)


def _find_tree(element):
    if _is_tree_spec(element):
        return element
    values = element.values() if isinstance(element, Mapping) else element
    if isinstance(values, (tuple, list)) or isinstance(element, Mapping):
        for value in values:
            if isinstance(value, (Mapping, tuple, list)):
                tree = _find_tree(value)
                if tree is not None:
                    return tree
    return None
