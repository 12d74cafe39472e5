"""The N-ary Tree-LSTM of Tai et al. (2015), batched level by level."""

import keras

from keras_recurrent.layers._tree_lstm_layer import TreeLSTMLayer
from keras_recurrent.layers.nary_tree_lstm_cell import NaryTreeLSTMCell


@keras.saving.register_keras_serializable(package="keras_recurrent")
class NaryTreeLSTM(TreeLSTMLayer):
    """N-ary Tree-LSTM over a batch of padded trees with ordered children.

    Call it on the list `[node_inputs, children, node_mask]` (or a dict with
    these keys): a batch of trees padded to `N` nodes with `K = arity` child
    slots, as `kr.trees.encode_trees(..., num_children=arity)` encodes them
    (`binarize="left"` or `"right"` makes any tree binary). Slot `l` of a
    node is its `l`-th child; an empty slot (`-1`) contributes zero `h` and
    `c`. Every node `j` with input `x_j` and child states `h_l, c_l`,
    `l = 1 .. K`, computes, as in Tai et al. (2015):

    ```
    i_j  = σ(x_j W_i + Σ_l h_l U^i_l + b_i)
    f_jk = σ(x_j W_f + Σ_l h_l U^f_kl + b_f)     for k = 1 .. K
    o_j  = σ(x_j W_o + Σ_l h_l U^o_l + b_o)
    u_j  = tanh(x_j W_u + Σ_l h_l U^u_l + b_u)
    c_j  = i_j ⊙ u_j + Σ_k f_jk ⊙ c_k
    h_j  = o_j ⊙ tanh(c_j)
    ```

    σ is `recurrent_activation` and tanh is `activation`. Each forget gate
    `f_jk` reads the states of all children, so a node can weigh one
    child's memory by another's state.

    On a chain (node `t` the child of node `t + 1`, in slot 1) the layer is
    exactly `keras.layers.LSTM` over the nodes in order, with the gate
    blocks reordered from `[i, f, o, u]` to Keras' `[i, f, c, o]`: for
    `arity=1` with the whole `recurrent_kernel`, for a larger arity with its
    slot-1 rows and the columns `[i, f_1, o, u]` (the other forget gates
    multiply empty slots, whose `c` is zero).

    The layer is `kr.layers.TreeRNN` over a `kr.layers.NaryTreeLSTMCell`
    (`layer.cell`), level-batched as `kr.layers.ChildSumTreeLSTM` (the
    leaves at once, then one step per level of inner nodes; with static
    shapes under XLA and with JAX, fed by `tree_levels`), with the same
    input checks and the same NaN outputs for a tree with bad `children`
    in compiled code; in addition, `children` must have exactly `arity`
    slots (a `ValueError` when the layer is built). A node naming one
    child in two slots (`[0, 0]`) is refused like any other non-tree: a
    tree node has each child once, in one slot. Each argument of the cell
    is also a read-only property of the layer.

    Weights (`layer.cell.*`, also `layer.kernel`, ...), with `x` blocks in
    the order `[i, f, o, u]`:

    - `kernel`: `(D, 4 * units)`, the `W`; the one `W_f` serves every `f_k`.
    - `recurrent_kernel`: `(arity * units, (3 + arity) * units)`: rows are
      the child slots stacked `[h_1; ...; h_K]`, column blocks
      `[i, f_1, ..., f_K, o, u]`; block `(l, f_k)` is `U^f_kl`.
    - `bias`: `(4 * units,)`, blocks `[i, f, o, u]`, if `use_bias`.

    Args:
        units: Positive integer, the dimensionality of `h` and `c`.
        arity: Positive integer `K`, the number of ordered child slots.
            Defaults to 2.
        return_nodes: Whether to return the states of all nodes,
            `(batch, N, units)`, instead of the root's, `(batch, units)`.
            Defaults to `False`.
        return_state: Whether to also return the cell states `c` (of all
            nodes or of the root, like the outputs). Defaults to `False`.
        **kwargs: The other arguments of `kr.layers.NaryTreeLSTMCell`
            (`activation`, `dropout`, `seed`, the initializers,
            regularizers and constraints of its weights, ...), and standard
            layer keyword arguments, such as `name` and `dtype` (mixed
            precision policies included).

    Call arguments:
        inputs: The list `[node_inputs, children, node_mask, tree_levels]`
            (`tree_levels` may be left out), or a dict with these keys:

            - `node_inputs`: float `(batch, N, D)`;
            - `children`: int `(batch, N, arity)`, child indices within the
              same tree, `-1` for an empty slot;
            - `node_mask`: bool or int `(batch, N)`, nonzero for real nodes;
            - `tree_levels`: int `(batch, L, W)`, the level schedule
              (`kr.trees.tree_levels`), read under XLA and on JAX.
        training: Python boolean; dropout is active only when `True`.

    Returns:
        The root states `(batch, units)`, or with `return_nodes` the node
        states `(batch, N, units)` (zeros at padding); with `return_state`
        the list `[h, c]` of such tensors. An empty tree gives zeros.

    Example:

    >>> trees = kr.trees.encode_trees(
    ...     ["(1 2 3 4)", "(5 6)"], binarize="left", num_children=2)
    >>> node_inputs = keras.layers.Embedding(10, 8)(trees["node_tokens"])
    >>> layer = kr.layers.NaryTreeLSTM(16, arity=2)
    >>> layer({**trees, "node_inputs": node_inputs}).shape
    TensorShape([2, 16])
    >>> layer.recurrent_kernel.shape  # [h_1; h_2] x [i, f_1, f_2, o, u]
    TensorShape([32, 80])

    Reference:
        - [Tai et al., 2015. Improved Semantic Representations From
          Tree-Structured Long Short-Term Memory Networks](
          https://arxiv.org/abs/1503.00075)
    """

    cell_class = NaryTreeLSTMCell

    def __init__(self, units, arity=2, **kwargs):
        super().__init__(units=units, arity=arity, **kwargs)
