"""Keras inputs for the tree tensors."""

import keras

from keras_recurrent._checks import check_bool
from keras_recurrent._checks import check_positive_int
from keras_recurrent.layers._concrete import index_input_dtype
from keras_recurrent.trees.schedule import TREE_LEVELS


def tree_inputs(
    num_children, *, num_nodes=None, node_features=None, levels=True
):
    """Makes the `keras.Input`s of a functional tree model.

    The inputs are named after the tree tensors, so a model built on this
    dict takes the dict that `kr.trees.encode_trees` returns, and
    `kr.export.export_saved_model` names its signature inputs after them.

    Args:
        num_children: Positive integer `K`, the number of child slots.
        num_nodes: Optional positive integer `N`; `None` (default) for any
            padded number of nodes.
        node_features: Optional positive integer `D`. With `None` (default)
            the first input is int32 `"node_tokens"` `(batch, N)`, to embed;
            else float32 `"node_inputs"` `(batch, N, D)`.
        levels: Whether to add the int32 input `"tree_levels"` `(batch, L,
            W)`, the level schedule that `kr.trees.encode_trees` and
            `kr.trees.padded_batch` add to each batch by default; pass it to
            the tree layer (the fourth input, or its dict key) for the fast
            path under XLA and on JAX, where a layer without it warns.
            Defaults to `True`. `False` for a model that is served without
            it (TensorFlow without XLA and PyTorch do not read it).

    Returns:
        A dict of `KerasTensor`s: `"node_tokens"` or `"node_inputs"`,
        `"children"` int64 `(batch, N, K)` (int32 on JAX without 64-bit
        types; int64 so that Keras does not narrow a child `2**32 + 1`
        into node 1 before the layer checks it;
        `kr.export.export_saved_model` serves it as int32),
        `"node_mask"` int32 `(batch, N)` (int32, not bool: Keras 3's
        `fit` under `MirroredStrategy` cannot take boolean inputs) and,
        with `levels`,
        `"tree_levels"`.

    Keras casts the data of an input to its dtype before any layer runs,
    so float `children` fed to the int64 `"children"` are truncated (a
    child `1.7` arrives as `1`) and a float `node_mask` of `0.5` arrives
    as 0 (padding). Pass integers (as `kr.trees.encode_trees` does);
    `kr.trees.validate_tree_tensors`, `kr.trees.padded_batch` and an eager
    call of the layers refuse float `children` and `node_mask`.

    Example:

    >>> inputs = kr.trees.tree_inputs(2)
    >>> embedded = keras.layers.Embedding(20, 8)(inputs["node_tokens"])
    >>> tree_tensors = {**inputs, "node_inputs": embedded}
    >>> del tree_tensors["node_tokens"]
    >>> root = kr.layers.NaryTreeLSTM(16, arity=2)(tree_tensors)
    >>> keras.Model(inputs, root).output_shape
    (None, 16)
    """
    num_children = check_positive_int("num_children", num_children)
    num_nodes = check_positive_int("num_nodes", num_nodes, allow_none=True)
    node_features = check_positive_int(
        "node_features", node_features, allow_none=True
    )
    if node_features is None:
        first = {
            "node_tokens": keras.Input(
                (num_nodes,), dtype="int32", name="node_tokens"
            )
        }
    else:
        first = {
            "node_inputs": keras.Input(
                (num_nodes, node_features), name="node_inputs"
            )
        }
    inputs = {
        **first,
        "children": keras.Input(
            (num_nodes, num_children),
            dtype=index_input_dtype(),
            name="children",
        ),
        "node_mask": keras.Input((num_nodes,), dtype="int32", name="node_mask"),
    }
    if check_bool("levels", levels):
        inputs[TREE_LEVELS] = keras.Input(
            (None, None), dtype="int32", name=TREE_LEVELS
        )
    return inputs
