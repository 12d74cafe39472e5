"""Encoding trees into the padded tree tensors of the tree layers.

A batch of `B` trees padded to `N` nodes and `K` child slots is, for the
layers (`TREE_TENSOR_NAMES`, in this order):

- `node_inputs`: float `(B, N, D)`, the feature of each node (embed the
  `node_tokens` that the encoders give, e.g. with `keras.layers.Embedding`);
- `children`: int32 `(B, N, K)`, the indices of each node's children within
  the same tree, `-1` for an empty slot;
- `node_mask`: `(B, N)`, bool or integer, nonzero for real nodes.

Nodes are in topological order (every child's index is smaller than its
parent's; the encoders use post-order), real nodes come first and the root
is the last real node.

`parse_tree`, `post_order` and `from_parents` read bracketed strings, nested
tuples and lists, and parent-index arrays (with `binarize` for N-ary cells);
`encode_tree` encodes one tree, `encode_trees` pads and stacks a batch in
NumPy, `padded_batch` does the same in `tf.data` (with bucketing by size),
`tree_inputs` makes the matching `keras.Input`s, and
`validate_tree_tensors` checks a batch. `tree_levels` makes the level
schedule (`"tree_levels"`, `(B, L, W)`) that `encode_trees` and
`padded_batch` add to each batch: the layers' optional fourth input;
`pad_tree_levels` pads it to a fixed shape.
"""

from keras_recurrent._lazy import lazy_getattr
from keras_recurrent.trees.encoding import encode_tree
from keras_recurrent.trees.encoding import encode_trees
from keras_recurrent.trees.encoding import from_parents
from keras_recurrent.trees.encoding import parse_tree
from keras_recurrent.trees.encoding import post_order
from keras_recurrent.trees.inputs import tree_inputs
from keras_recurrent.trees.schedule import PACKED_TREES
from keras_recurrent.trees.schedule import bucket_size
from keras_recurrent.trees.schedule import pad_tree_levels
from keras_recurrent.trees.schedule import tree_levels
from keras_recurrent.trees.validation import TREE_TENSOR_NAMES
from keras_recurrent.trees.validation import validate_tree_tensors

# `tf.data` helpers: imported on first use (TensorFlow).
__getattr__ = lazy_getattr(
    __name__, {"padded_batch": ".batching", "tree_spec": ".batching"}
)

__all__ = [
    "PACKED_TREES",
    "TREE_TENSOR_NAMES",
    "encode_tree",
    "encode_trees",
    "from_parents",
    "pad_tree_levels",
    "padded_batch",
    "parse_tree",
    "post_order",
    "bucket_size",
    "tree_inputs",
    "tree_levels",
    "tree_spec",
    "validate_tree_tensors",
]
