"""The Child-Sum Tree-LSTM of Tai et al. (2015), batched level by level."""

import keras

from keras_recurrent.layers._tree_lstm_layer import TreeLSTMLayer
from keras_recurrent.layers.child_sum_tree_lstm_cell import ChildSumTreeLSTMCell


@keras.saving.register_keras_serializable(package="keras_recurrent")
class ChildSumTreeLSTM(TreeLSTMLayer):
    """Child-Sum Tree-LSTM over a batch of padded trees.

    Call it on the list `[node_inputs, children, node_mask]` (or a dict with
    these keys): a batch of trees padded to `N` nodes and `K` child slots,
    as `kr.trees.encode_trees` encodes them (embed its `node_tokens` into
    `node_inputs` first). Every node `j` with input `x_j` and children
    `C(j)` (in any number and order) computes, as in "Improved Semantic
    Representations From Tree-Structured Long Short-Term Memory Networks"
    (Tai et al., 2015):

    ```
    h̃_j  = Σ_{k ∈ C(j)} h_k
    i_j  = σ(x_j W_i + h̃_j U_i + b_i)
    f_jk = σ(x_j W_f + h_k U_f + b_f)        for each child k
    o_j  = σ(x_j W_o + h̃_j U_o + b_o)
    u_j  = tanh(x_j W_u + h̃_j U_u + b_u)
    c_j  = i_j ⊙ u_j + Σ_{k ∈ C(j)} f_jk ⊙ c_k
    h_j  = o_j ⊙ tanh(c_j)
    ```

    A leaf has `h̃ = 0` and no forget term. σ is `recurrent_activation` and
    tanh is `activation`.

    On a chain (node `t` the only child of node `t + 1`) `h̃ = h_{t-1}` and
    the layer is exactly `keras.layers.LSTM` over the nodes in order
    (`return_nodes` gives its `return_sequences`), with the gate blocks of
    every weight reordered from `[i, f, o, u]` to Keras' `[i, f, c, o]`.

    The layer is `kr.layers.TreeRNN` over a
    `kr.layers.ChildSumTreeLSTMCell` (`layer.cell`), built from the
    layer's arguments, as `keras.layers.LSTM` builds its `LSTMCell`; each
    argument of the cell is also a read-only property of the layer. The
    computation is level-batched: the leaves first, all at once, then the
    inner nodes level by level, deepest first; each step of the loop
    updates every inner node of every tree at one level together, so the
    number of sequential steps is the height of the tallest tree, not the
    number of nodes. Batch size, `N`, `K` and the heights may all be
    dynamic, in a `tf.function`, `fit` or a SavedModel. Padding nodes are
    never read and their states are zero. Under XLA (`jit_compile=True`,
    which Keras' default `"auto"` picks on a GPU) and with JAX, the layer
    runs the same levels with static shapes, fed by the schedule
    `tree_levels` that `kr.trees.encode_trees` and `kr.trees.padded_batch`
    add to each batch: pass it as the fourth input (or dict key). Without
    it, the layer derives a schedule in the compiled graph, tens of times
    slower, and warns once.

    Nodes must be in topological order: every child's index smaller than
    its parent's, the real nodes first, the root the last real node, and
    form one tree: no node is the child of two nodes or listed twice by one
    (`[0, 0]`; its state would be summed in twice), and every real node but
    the root is a child. `children` must be an integer tensor and
    `node_mask` a bool or integer one (floats are rejected when traced).
    Bad `children` (an index out of range, not smaller than its parent's,
    on or to a padding node, a child of two nodes or listed twice by one,
    a real node that is
    neither the root nor a child) raise a `ValueError` on eager tensors
    and, inside a traced TensorFlow function, an `InvalidArgumentError` at
    run time. Compiled code (XLA, a jitted JAX function) cannot raise on
    values: there, a tree with bad `children` gets NaN outputs (all its
    nodes' states with `return_nodes`), and the other trees of the batch
    are computed as if it were absent. An empty batch (`batch = 0`) gives
    empty outputs; `N = 0` is a `ValueError`.

    Weights (`layer.cell.*`, also `layer.kernel`, ...), with gate blocks in
    the order `[i, f, o, u]`:

    - `kernel`: `(D, 4 * units)`, the `W`.
    - `recurrent_kernel`: `(units, 4 * units)`, the `U`.
    - `bias`: `(4 * units,)`, if `use_bias`.

    Args:
        units: Positive integer, the dimensionality of `h` and `c`.
        return_nodes: Whether to return the states of all nodes,
            `(batch, N, units)`, instead of the root's, `(batch, units)`.
            Defaults to `False`.
        return_state: Whether to also return the cell states `c` (of all
            nodes or of the root, like the outputs). Defaults to `False`.
        **kwargs: The other arguments of `kr.layers.ChildSumTreeLSTMCell`
            (`activation`, `dropout`, `seed`, the initializers,
            regularizers and constraints of its weights, ...), and standard
            layer keyword arguments, such as `name` and `dtype` (mixed
            precision policies included).

    Call arguments:
        inputs: The list `[node_inputs, children, node_mask, tree_levels]`
            (`tree_levels` may be left out), or a dict with these keys:

            - `node_inputs`: float `(batch, N, D)`;
            - `children`: int `(batch, N, K)`, child indices within the same
              tree, `-1` for an empty slot;
            - `node_mask`: bool or int `(batch, N)`, nonzero for real nodes;
            - `tree_levels`: int `(batch, L, W)`, the level schedule
              (`kr.trees.tree_levels`), read under XLA and on JAX.
        training: Python boolean; dropout is active only when `True`.

    Returns:
        The root states `(batch, units)`, or with `return_nodes` the node
        states `(batch, N, units)` (zeros at padding); with `return_state`
        the list `[h, c]` of such tensors. An empty tree gives zeros.

    Example:

    >>> trees = kr.trees.encode_trees(["(1 2 3)", "(4 (5 6) 7 8)"])
    >>> node_inputs = keras.layers.Embedding(10, 8)(trees["node_tokens"])
    >>> layer = kr.layers.ChildSumTreeLSTM(16)
    >>> layer({**trees, "node_inputs": node_inputs}).shape
    TensorShape([2, 16])
    >>> layer.recurrent_kernel.shape  # blocks [i, f, o, u]
    TensorShape([16, 64])

    Reference:
        - [Tai et al., 2015. Improved Semantic Representations From
          Tree-Structured Long Short-Term Memory Networks](
          https://arxiv.org/abs/1503.00075)
    """

    cell_class = ChildSumTreeLSTMCell

    def __init__(self, units, **kwargs):
        super().__init__(units=units, **kwargs)
