"""Batching single trees in `tf.data` pipelines."""

from collections.abc import Mapping

import numpy as np

from keras_recurrent._batching import check_dataset
from keras_recurrent._batching import find_matches
from keras_recurrent._batching import padding_of
from keras_recurrent._batching import with_checked_tensors
from keras_recurrent._batching import with_int32_indices
from keras_recurrent._checks import check_bool
from keras_recurrent._checks import check_positive_int
from keras_recurrent._dataset_guards import fail_when_empty
from keras_recurrent._dataset_guards import within_budgets
from keras_recurrent._rules import FINITE_INPUTS_RULE
from keras_recurrent._rules import first_problem
from keras_recurrent.trees.schedule import TREE_LEVELS
from keras_recurrent.trees.schedule import pad_tree_levels
from keras_recurrent.trees.schedule import tree_levels

# The keys of one tree as `encode_tree` makes it; `node_inputs` (float
# features) may stand in for `node_tokens`.
_TREE_KEYS = ("children", "node_mask")
# The integer components that reach the model as int32 `keras.Input`s.
_INDEX_KEYS = ("node_tokens", "children", "node_mask")


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
    levels=True,
    pad_to_bucket_boundary=False,
    pack_levels=True,
    level_shapes=None,
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
            nodes (static shapes); a larger tree stops the iteration with an
            `InvalidArgumentError` naming its index in the dataset, its
            number of nodes and `num_nodes`. Defaults to the largest tree of
            each batch. Not with `bucket_boundaries`.
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
        levels: Whether to add to each batch's tree dict the level
            schedule `"tree_levels"` `(batch, L, W)` (`kr.trees.tree_levels`,
            in a `tf.numpy_function`), which the tree layers take as a
            fourth input (the fast path under XLA and on JAX). Defaults to
            `True`.
        pad_to_bucket_boundary: With `bucket_boundaries`, whether to pad
            each batch to one less than its bucket's upper boundary rather
            than to its largest tree, so that compiled code (XLA, JAX) sees
            one number of nodes per bucket (every tree must then have fewer
            nodes than the last boundary). Defaults to `False`.
        pack_levels: Whether each batch's schedule packs the nodes of
            groups of 8 trees into shared slots (`kr.trees.tree_levels(...,
            pack=True)`): fewer, fuller steps. The batch must then reach
            the model whole, or split at multiples of 8 trees (as
            `tf.distribute` splits a global batch of a multiple of 8 times
            the replicas). Defaults to `True`; `False` gives a schedule per
            tree, which survives any split.
        level_shapes: Optional fixed shapes `(L, W)` of `"tree_levels"`:
            one pair for every batch, or, with `bucket_boundaries`, a list
            of one pair per boundary (the batches of trees below
            `bucket_boundaries[i]` and above the one before). Each batch's
            schedule then has `W` slots per tree (or group) and is padded
            to `L` steps (`kr.trees.pad_tree_levels`; padding steps and
            slots are no-ops), so that with `num_nodes`, or
            `pad_to_bucket_boundary=True`, compiled code sees one batch
            shape per bucket: at most one compilation per bucket. A batch
            that needs more than `L` steps stops the iteration with an
            `InvalidArgumentError` naming them. Defaults to `None`: `L`
            and `W` picked per batch (`kr.trees.tree_levels`: `W` a power
            of two, `L` rounded up by `kr.trees.bucket_size`), so buckets
            of their own bound the shapes: a few per node bucket. Pick `L`
            from the data: the largest number of steps of a pass without
            it. Under XLA on TensorFlow the padding steps cost nothing (the
            level loop stops after the last step that updates a node); on
            JAX a padding step costs as much as a step.

    A dataset that gives no batch (no tree, or fewer than `batch_size` with
    `drop_remainder=True`) is a `ValueError` when its size is known, else
    stops the iteration with an `InvalidArgumentError` once it ends without
    a batch: `fit` would otherwise train nothing without a word.

    Returns:
        The batched `tf.data.Dataset`; each tree dict becomes the padded
        tensors `(batch, N)`, `(batch, N, K)`, `(batch, N)`, and with
        `levels`, `"tree_levels"` int32 `(batch, L, W)`. Integer
        `node_tokens`, `children` and `node_mask` of another dtype (int64,
        uint64, ...) come out as int32, the dtype of the model's inputs; a
        value outside the int32 range stops the iteration with an
        `InvalidArgumentError` naming it, even with `validate=False` (the
        model's int32 inputs would wrap it into another node).

    Example:

    >>> batched = kr.trees.padded_batch(
    ...     dataset, 64, bucket_boundaries=[16, 32, 64])
    >>> trees, labels = next(iter(batched))
    >>> trees["children"].shape
    TensorShape([64, None, 2])
    """
    import tensorflow as tf  # Only `tf.data` needs it.

    check_dataset(dataset)
    batch_size = check_positive_int("batch_size", batch_size)
    num_nodes = check_positive_int("num_nodes", num_nodes, allow_none=True)
    boundaries = _check_bucket_boundaries(bucket_boundaries, num_nodes)
    spec = dataset.element_spec
    padding_of(spec, _is_tree_spec, lambda tree: ({}, {}))
    if len(find_matches(spec, _is_tree_spec)) != 1:
        raise ValueError(
            "Argument `dataset` must have elements that hold one tree dict "
            f"with the keys {list(_TREE_KEYS)}. "
            f"Received: element_spec={spec!r}"
        )
    # Indices of a wider integer dtype (int64, uint64, ...) are checked and
    # narrowed here, whatever `validate`: the model's int32 inputs would
    # wrap them into other nodes.
    dataset = dataset.map(
        lambda *element: with_int32_indices(element, _is_tree_spec, _INDEX_KEYS)
    )
    spec = dataset.element_spec
    padded_shapes, padding_values = padding_of(
        spec, _is_tree_spec, lambda tree: _tree_padding(tree, num_nodes)
    )
    if validate:
        dataset = dataset.map(_validated)
    dataset = within_budgets(
        dataset,
        _is_tree_spec,
        [("node_mask", "nodes", "num_nodes", num_nodes)],
        "tree",
    )
    check_bool("levels", levels)
    check_bool("pad_to_bucket_boundary", pad_to_bucket_boundary)
    pack_levels = check_bool("pack_levels", pack_levels)
    level_shapes = _check_level_shapes(level_shapes, boundaries)
    if boundaries is None:
        batched = dataset.padded_batch(
            batch_size,
            padded_shapes=padded_shapes,
            padding_values=padding_values,
            drop_remainder=drop_remainder,
        )
    else:

        def tree_size(*element):
            (tree,) = find_matches(element, _is_tree_spec)
            return tf.shape(tree["node_mask"])[0]

        batched = dataset.bucket_by_sequence_length(
            tree_size,
            bucket_boundaries=boundaries,
            bucket_batch_sizes=[batch_size] * (len(boundaries) + 1),
            padded_shapes=padded_shapes,
            padding_values=padding_values,
            drop_remainder=drop_remainder,
            pad_to_bucket_boundary=pad_to_bucket_boundary,
        )
    if levels:
        batched = batched.map(
            lambda *element: _with_levels(
                element, pack_levels, level_shapes, boundaries
            )
        )
    return fail_when_empty(batched, "tree")


def _check_level_shapes(level_shapes, boundaries):
    """`level_shapes` as a list of one `(L, W)` per bucket (or `None`)."""
    if level_shapes is None:
        return None

    def is_pair(value):
        return (
            isinstance(value, (tuple, list))
            and len(value) == 2
            and all(
                isinstance(size, int) and not isinstance(size, bool)
                for size in value
            )
            and min(value) >= 1
        )

    num = 1 if boundaries is None else len(boundaries)
    shapes = [level_shapes] * num if is_pair(level_shapes) else level_shapes
    if (
        not isinstance(shapes, (tuple, list))
        or len(shapes) != num
        or not all(is_pair(shape) for shape in shapes)
    ):
        raise ValueError(
            "Argument `level_shapes` must be a pair `(L, W)` of positive "
            "integers or, with `bucket_boundaries`, a list of one pair per "
            f"boundary ({num}). Received: level_shapes={level_shapes!r}"
        )
    return [tuple(shape) for shape in shapes]


def _with_levels(element, pack, level_shapes=None, boundaries=None):
    """A batch with `"tree_levels"` added to its tree dict."""
    import tensorflow as tf

    def schedule(children, node_mask):
        if level_shapes is None:
            return tree_levels(children, node_mask, pack=pack)
        # The bucket of the batch's largest tree.
        size = int(np.max(np.sum(node_mask != 0, axis=1), initial=0))
        bucket = 0
        if boundaries is not None:
            bucket = min(
                int(np.searchsorted(boundaries, size, side="right")),
                len(boundaries) - 1,
            )
        num_levels, width = level_shapes[bucket]
        levels = tree_levels(
            children, node_mask, level_width=width, round_up=False, pack=pack
        )
        if levels.shape[1] > num_levels:
            raise ValueError(
                f"A batch of trees of up to {size} nodes needs "
                f"{levels.shape[1]} steps of {width} slots, more than "
                f"`level_shapes` gives its bucket: {(num_levels, width)}. "
                "Raise that `L` (or `W`)."
            )
        return pad_tree_levels(levels, (num_levels, width))

    def add(tree):
        levels = tf.numpy_function(
            schedule,
            [tree["children"], tree["node_mask"]],
            tf.int32,
            stateful=False,
        )
        levels.set_shape([tree["children"].shape[0], None, None])
        return {**tree, TREE_LEVELS: levels}

    return _map_trees(element[0] if len(element) == 1 else element, add)


def _map_trees(structure, function):
    """`structure` with `function` applied to each tree dict in it."""
    if _is_tree_spec(structure):
        return function(structure)
    if isinstance(structure, Mapping):
        return {
            key: _map_trees(value, function) for key, value in structure.items()
        }
    if isinstance(structure, (tuple, list)):
        return type(structure)(_map_trees(item, function) for item in structure)
    return structure


def _check_bucket_boundaries(bucket_boundaries, num_nodes):
    """`bucket_boundaries` as a list (or `None`), else raises."""
    if bucket_boundaries is None:
        return None
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
    return boundaries


def _tree_padding(tree, num_nodes):
    """The padded shapes and values of one tree dict's spec: `children`
    with -1, the rest with zeros; the node axis to `num_nodes`."""
    import tensorflow as tf

    shapes, values = {}, {}
    for key, value in tree.items():
        shape = value.shape.as_list()
        if key in ("node_tokens", "node_inputs", "children", "node_mask"):
            shape[0] = num_nodes
        shapes[key] = tf.TensorShape(shape)
        # `tf.zeros`: a bool `node_mask` pads with False.
        values[key] = (
            tf.constant(-1, value.dtype)
            if key == "children"
            else tf.zeros((), value.dtype)
        )
    return shapes, values


def _validated(*element):
    """`element` with its tree's `children` passed through the checks."""
    return with_checked_tensors(element, _is_tree_spec, _checked_children)


def _checked_children(tree):
    """The tree's `children` and a copy that passes through the checks."""
    import tensorflow as tf

    children = tree["children"]
    node_inputs = tree.get("node_inputs")
    extra = (
        [node_inputs]
        if node_inputs is not None and node_inputs.dtype.is_floating
        else []
    )
    checked = tf.numpy_function(
        _check_tree,
        [children, tree["node_mask"], *extra],
        children.dtype,
        stateful=False,
    )
    checked.set_shape(children.shape)
    return children, checked


def _check_tree(children, node_mask, *node_inputs):
    """Raises a `ValueError` on a bad tree (NumPy arrays); returns
    `children`."""
    from keras_recurrent.trees.validation import validate_tree_tensors

    validate_tree_tensors(children[None], node_mask[None])
    for values in node_inputs:
        real = (node_mask != 0).reshape((-1,) + (1,) * (values.ndim - 1))
        problem = first_problem(
            [FINITE_INPUTS_RULE],
            [~np.isfinite(values) & real],
            {"node_inputs": values},
        )
        if problem:
            raise ValueError(problem)
    return children


def _is_tree_spec(spec):
    return isinstance(spec, Mapping) and set(_TREE_KEYS) <= set(spec)
