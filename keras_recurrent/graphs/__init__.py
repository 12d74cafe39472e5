"""Encoding graphs into the padded graph tensors of the graph layers.

A batch of `B` graphs padded to `N` nodes and `E` edges is four tensors,
in this order (`GRAPH_TENSOR_NAMES`):

- `node_inputs`: float `(B, N, D)`, the node annotations;
- `edges`: int32 `(B, E, 2)`, `(source, target)` node indices within the
  same graph, `-1` rows for padding;
- `edge_types`: int32 `(B, E)`, in `[0, num_edge_types)`;
- `node_mask`: `(B, N)`, bool or integer, nonzero for real nodes.

`encode_graph` and `from_networkx` encode one graph, `encode_graphs` pads and
stacks a batch in NumPy, `padded_batch` does the same in `tf.data`, and
`graph_inputs` makes the matching `keras.Input`s.
"""

from keras_recurrent._lazy import lazy_getattr
from keras_recurrent.graphs.encoding import encode_graph
from keras_recurrent.graphs.encoding import encode_graphs
from keras_recurrent.graphs.inputs import graph_inputs
from keras_recurrent.graphs.networkx_conversion import from_networkx
from keras_recurrent.graphs.validation import GRAPH_TENSOR_NAMES
from keras_recurrent.graphs.validation import validate_graph_tensors

# `tf.data` helpers: imported on first use (TensorFlow).
__getattr__ = lazy_getattr(
    __name__, {"graph_spec": ".batching", "padded_batch": ".batching"}
)

__all__ = [
    "GRAPH_TENSOR_NAMES",
    "encode_graph",
    "encode_graphs",
    "from_networkx",
    "graph_inputs",
    "graph_spec",
    "padded_batch",
    "validate_graph_tensors",
]
