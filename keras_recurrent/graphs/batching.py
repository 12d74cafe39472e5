"""Batching single graphs in `tf.data` pipelines."""

import functools
from collections.abc import Mapping

import tensorflow as tf

from keras_recurrent._batching import check_dataset
from keras_recurrent._batching import find_matches
from keras_recurrent._batching import padding_of
from keras_recurrent._batching import with_checked_tensors
from keras_recurrent._batching import with_int32_indices
from keras_recurrent._batching import zero
from keras_recurrent._checks import check_dtype
from keras_recurrent._checks import check_positive_int
from keras_recurrent._dataset_guards import fail_when_empty
from keras_recurrent._dataset_guards import within_budgets
from keras_recurrent.graphs.validation import GRAPH_TENSOR_NAMES
from keras_recurrent.graphs.validation import validate_graph_tensors


def graph_spec(node_features, *, node_mask_dtype="int32"):
    """The `tf.TensorSpec`s of one unpadded graph, as `encode_graph` makes it.

    Use it as (part of) the `output_signature` of
    `tf.data.Dataset.from_generator` over `kr.graphs.encode_graph` dicts,
    then batch with `kr.graphs.padded_batch`.

    Args:
        node_features: Positive integer, the number of node features `D`.
        node_mask_dtype: `"int32"` (default) or `"bool"`.

    Returns:
        A dict of `tf.TensorSpec`: `"node_inputs"` float32 `(None, D)`,
        `"edges"` int32 `(None, 2)`, `"edge_types"` int32 `(None,)`,
        `"node_mask"` `(None,)`.

    Example:

    >>> def graphs():
    ...     yield kr.graphs.encode_graph([(0, 1), (1, 2)]), 2
    >>> dataset = tf.data.Dataset.from_generator(
    ...     graphs,
    ...     output_signature=(
    ...         kr.graphs.graph_spec(1), tf.TensorSpec((), tf.int32)
    ...     ),
    ... )
    """
    node_features = check_positive_int("node_features", node_features)
    node_mask_dtype = check_dtype(
        "node_mask_dtype", node_mask_dtype, ("int32", "bool")
    )
    return {
        "node_inputs": tf.TensorSpec(
            (None, node_features), tf.float32, name="node_inputs"
        ),
        "edges": tf.TensorSpec((None, 2), tf.int32, name="edges"),
        "edge_types": tf.TensorSpec((None,), tf.int32, name="edge_types"),
        "node_mask": tf.TensorSpec(
            (None,), tf.as_dtype(node_mask_dtype), name="node_mask"
        ),
    }


def padded_batch(
    dataset,
    batch_size,
    *,
    num_nodes=None,
    num_edges=None,
    drop_remainder=False,
    validate=True,
    num_edge_types=None,
):
    """Batches a `tf.data.Dataset` of single graphs into padded graph tensors.

    Every dict in the dataset's elements that has the four keys
    `"node_inputs"`, `"edges"`, `"edge_types"` and `"node_mask"` (one graph,
    as `kr.graphs.encode_graph` makes it; see `kr.graphs.graph_spec`) is
    padded as `kr.graphs.encode_graphs` pads: padding nodes get zero inputs
    and a zero mask, padding edges are `(-1, -1)` rows of type 0. Other
    components (targets, weights) are padded with zeros to the longest in the
    batch, so elements may be `(graph, target)` tuples as `fit` expects.

    Args:
        dataset: A `tf.data.Dataset` whose elements hold one or more graph
            dicts.
        batch_size: Positive integer, the number of graphs per batch.
        num_nodes: Optional positive integer `N`, the padded number of nodes
            of every batch; a larger graph stops the iteration with an
            `InvalidArgumentError` naming its index in the dataset, its
            number of nodes and `num_nodes`. Defaults to the largest graph
            of each batch. A fixed size gives
            static shapes (one trace) and is needed for XLA.
        num_edges: Optional non-negative integer `E`, the padded number of
            edges (a graph with more is named as with `num_nodes`);
            defaults to the most edges of a graph of each batch.
        drop_remainder: Whether to drop the last, smaller batch.
            Defaults to `False`.
        validate: Whether to check every graph before it is batched, as
            `kr.graphs.validate_graph_tensors` does (in a
            `tf.numpy_function`): an edge outside the graph or into its
            padding, an edge type out of range, a `node_mask` other than
            0/1, or a NaN or infinite node input stops the iteration with
            an `InvalidArgumentError` naming the problem, rather than reach
            a model (where, compiled with XLA, it would only give NaN).
            Defaults to `True`.
        num_edge_types: Optional positive integer; with `validate`, edge
            types must lie in `[0, num_edge_types)`.

    A dataset that gives no batch (no graph, or fewer than `batch_size`
    with `drop_remainder=True`) is a `ValueError` when its size is known,
    else stops the iteration with an `InvalidArgumentError` once it ends
    without a batch: `fit` would otherwise train nothing without a word.

    Returns:
        The batched `tf.data.Dataset`; each graph dict becomes the padded
        tensors `(batch, N, D)`, `(batch, E, 2)`, `(batch, E)`,
        `(batch, N)`. Integer `edges`, `edge_types` and `node_mask` of
        another dtype (int64, uint64, ...) come out as int32, the dtype of
        the model's inputs; a value outside the int32 range stops the
        iteration with an `InvalidArgumentError` naming it, even with
        `validate=False` (the model's int32 inputs would wrap it into
        another node).

    Example:

    >>> batched = kr.graphs.padded_batch(dataset, 32, num_nodes=50)
    >>> batched.element_spec[0]["node_inputs"].shape
    TensorShape([None, 50, 1])
    >>> graphs, targets = next(iter(batched))
    >>> model.fit(batched, epochs=10)
    """
    check_dataset(dataset)
    batch_size = check_positive_int("batch_size", batch_size)
    num_nodes = check_positive_int("num_nodes", num_nodes, allow_none=True)
    num_edges = check_positive_int(
        "num_edges", num_edges, allow_none=True, allow_zero=True
    )
    num_edge_types = check_positive_int(
        "num_edge_types", num_edge_types, allow_none=True
    )
    spec = dataset.element_spec
    padding_of(spec, _is_graph_spec, _check_graph_spec)
    if not find_matches(spec, _is_graph_spec):
        raise ValueError(
            "Argument `dataset` must have elements that hold a graph dict "
            f"with the keys {list(GRAPH_TENSOR_NAMES)}. "
            f"Received: element_spec={spec!r}"
        )
    # Indices of a wider integer dtype (int64, uint64, ...) are checked and
    # narrowed here, whatever `validate`: the model's int32 inputs would
    # wrap them into other nodes.
    dataset = dataset.map(
        lambda *element: with_int32_indices(
            element, _is_graph_spec, ("edges", "edge_types", "node_mask")
        )
    )
    spec = dataset.element_spec
    padded_shapes, padding_values = padding_of(
        spec,
        _is_graph_spec,
        lambda graph: _graph_padding(graph, num_nodes, num_edges),
    )
    if validate:
        dataset = dataset.map(
            lambda *element: _validated(element, num_edge_types)
        )
    dataset = within_budgets(
        dataset,
        _is_graph_spec,
        [
            ("node_mask", "nodes", "num_nodes", num_nodes),
            ("edges", "edges", "num_edges", num_edges),
        ],
        "graph",
    )
    batched = dataset.padded_batch(
        batch_size,
        padded_shapes=padded_shapes,
        padding_values=padding_values,
        drop_remainder=drop_remainder,
    )
    return fail_when_empty(batched, "graph")


def _validated(element, num_edge_types):
    """`element` with each graph's `edges` passed through the checks."""
    return with_checked_tensors(
        element,
        _is_graph_spec,
        lambda graph: _checked_edges(graph, num_edge_types),
    )


def _checked_edges(graph, num_edge_types):
    """The graph's `edges` and a copy that passes through the checks."""
    edges = graph["edges"]
    checked = tf.numpy_function(
        functools.partial(_check_graph, num_edge_types=num_edge_types),
        [graph[name] for name in GRAPH_TENSOR_NAMES],
        edges.dtype,
        stateful=False,
    )
    checked.set_shape(edges.shape)
    return edges, checked


def _check_graph(node_inputs, edges, edge_types, node_mask, num_edge_types):
    """Raises a `ValueError` on a bad graph (NumPy arrays); returns
    `edges`."""
    validate_graph_tensors(
        node_inputs[None],
        edges[None],
        edge_types[None],
        node_mask[None],
        num_edge_types=num_edge_types,
    )
    return edges


def _is_graph_spec(spec):
    return isinstance(spec, Mapping) and set(GRAPH_TENSOR_NAMES) <= set(spec)


# The dtypes a graph's tensors may have: floats would be truncated into the
# int32 model inputs (a fractional edge silently rounded).
_DTYPES = {
    "node_inputs": ("floating-point", lambda dtype: dtype.is_floating),
    "edges": ("integer", lambda dtype: dtype.is_integer),
    "edge_types": ("integer", lambda dtype: dtype.is_integer),
    "node_mask": (
        "integer or boolean",
        lambda dtype: dtype.is_integer or dtype.is_bool,
    ),
}


def _check_graph_spec(spec):
    """Raises unless one graph's spec has the right ranks and dtypes."""
    expected_ranks = {
        "node_inputs": 2,
        "edges": 2,
        "edge_types": 1,
        "node_mask": 1,
    }
    for name, rank in expected_ranks.items():
        if spec[name].shape.rank != rank:
            raise ValueError(
                f"A single graph's `{name}` must have rank {rank} (no batch "
                f"axis). Received: {name} spec {spec[name]!r}"
            )
    for name, (kind, accepts) in _DTYPES.items():
        if not accepts(spec[name].dtype):
            raise ValueError(
                f"A single graph's `{name}` must be {kind}. "
                f"Received: {name} spec {spec[name]!r}"
            )
    if spec["edges"].shape[-1] not in (None, 2):
        raise ValueError(
            "A single graph's `edges` must be `(source, target)` rows of "
            "shape (E, 2); put edge types in `edge_types`. "
            f"Received: edges spec {spec['edges']!r}"
        )
    return {}, {}


def _graph_padding(spec, num_nodes, num_edges):
    _check_graph_spec(spec)
    padded_shapes = {}
    padding_values = {}
    for name, component in spec.items():
        shape = component.shape
        if name in ("node_inputs", "node_mask"):
            shape = tf.TensorShape([num_nodes]).concatenate(shape[1:])
        elif name in ("edges", "edge_types"):
            shape = tf.TensorShape([num_edges]).concatenate(shape[1:])
        padded_shapes[name] = shape
        padding_values[name] = (
            tf.constant(-1, component.dtype)
            if name == "edges"
            else zero(component.dtype)
        )
    return padded_shapes, padding_values
