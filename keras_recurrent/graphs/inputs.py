"""Keras inputs for the graph tensors."""

import keras

from keras_recurrent._checks import check_dtype
from keras_recurrent._checks import check_positive_int
from keras_recurrent.layers._concrete import index_input_dtype


def graph_inputs(
    node_features,
    *,
    num_nodes=None,
    num_edges=None,
    node_mask_dtype="int32",
):
    """Makes the four `keras.Input`s of a functional graph model.

    The inputs are named after the graph tensors, so a model built on this
    dict takes the dict that `kr.graphs.encode_graphs` returns, and
    `kr.export.export_saved_model` names its signature inputs
    `node_inputs`, `edges`, `edge_types` and `node_mask`.

    Args:
        node_features: Positive integer, the number of node features `D`.
        num_nodes: Optional positive integer `N`; `None` (default) for any
            padded number of nodes.
        num_edges: Optional positive integer `E`; `None` (default) for any
            padded number of edges.
        node_mask_dtype: `"int32"` (default) or `"bool"`. Keras 3's `fit`
            under `MirroredStrategy` cannot take boolean inputs.

    Keras casts the data of an input to its dtype before any layer runs,
    so float `edges` fed to the int64 `"edges"` are truncated: a row
    `(2, 2.6)` arrives as `(2, 2)`. Pass integers (as
    `kr.graphs.encode_graphs` does); `kr.graphs.validate_graph_tensors`
    and the `tf.data` helpers refuse float edges. Likewise a float
    `node_mask` entry of `0.5` arrives as 0 (padding) in `fit`/`predict`
    and in a SavedModel, while an eager call of the layers refuses it.

    Returns:
        A dict of `KerasTensor`s: `"node_inputs"` float32 `(batch, N,
        D)`, `"edges"` int64 `(batch, E, 2)`, `"edge_types"` int64
        `(batch, E)` (int32 on JAX without 64-bit types; int64 so that
        Keras does not narrow an index `2**32 + 1` into 1 before the
        layer checks it; `kr.export.export_saved_model` serves them as
        int32), `"node_mask"` `(batch, N)`.

    Example:

    >>> inputs = kr.graphs.graph_inputs(4)
    >>> states = kr.layers.GatedGraph(16, num_edge_types=2)(inputs)
    >>> scores = kr.layers.NodeSelection()(
    ...     [states, inputs["node_inputs"], inputs["node_mask"]]
    ... )
    >>> model = keras.Model(inputs, scores)
    >>> model.output_shape
    (None, None)
    """
    node_features = check_positive_int("node_features", node_features)
    num_nodes = check_positive_int("num_nodes", num_nodes, allow_none=True)
    num_edges = check_positive_int("num_edges", num_edges, allow_none=True)
    node_mask_dtype = check_dtype(
        "node_mask_dtype", node_mask_dtype, ("int32", "bool")
    )
    return {
        "node_inputs": keras.Input(
            (num_nodes, node_features), name="node_inputs"
        ),
        "edges": keras.Input(
            (num_edges, 2), dtype=index_input_dtype(), name="edges"
        ),
        "edge_types": keras.Input(
            (num_edges,), dtype=index_input_dtype(), name="edge_types"
        ),
        "node_mask": keras.Input(
            (num_nodes,), dtype=node_mask_dtype, name="node_mask"
        ),
    }
