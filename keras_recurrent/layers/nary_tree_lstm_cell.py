"""The N-ary Tree-LSTM cell of Tai et al. (2015)."""

import keras
from keras import ops

from keras_recurrent._checks import check_positive_int
from keras_recurrent.layers._tree_lstm_cell import TreeLSTMCell


@keras.saving.register_keras_serializable(package="keras_recurrent")
class NaryTreeLSTMCell(TreeLSTMCell):
    """N-ary Tree-LSTM cell: one node from its `arity` ordered child slots.

    The cell of `kr.layers.NaryTreeLSTM`, to run with `kr.layers.TreeRNN`
    (whose docstring states the tree-cell contract). Slot `l` of a node is
    its `l`-th child; an empty slot contributes zero `h` and `c`. A node
    `j` with input `x_j` and child states `h_l, c_l`, `l = 1 .. K`,
    computes, as in Tai et al. (2015):

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
    child's memory by another's state. The states are `[h, c]` and the
    output is `h`; `TreeRNN` refuses `children` with other than `arity`
    slots.

    Weights, with `x` blocks in the order `[i, f, o, u]`:

    - `kernel`: `(D, 4 * units)`, the `W`; the one `W_f` serves every `f_k`.
    - `recurrent_kernel`: `(arity * units, (3 + arity) * units)`: rows are
      the child slots stacked `[h_1; ...; h_K]`, column blocks
      `[i, f_1, ..., f_K, o, u]`; block `(l, f_k)` is `U^f_kl`.
    - `bias`: `(4 * units,)`, blocks `[i, f, o, u]`, if `use_bias`.

    Args:
        units: Positive integer, the dimensionality of `h` and `c`.
        arity: Positive integer `K`, the number of ordered child slots.
            Defaults to 2.
        **kwargs: The other arguments of `kr.layers.ChildSumTreeLSTMCell`
            (`activation`, `recurrent_activation`, `use_bias`,
            `unit_forget_bias`, the initializers, regularizers and
            constraints of `kernel`, `recurrent` and `bias`, `dropout`,
            `recurrent_dropout`, `seed`), with the same meaning and
            defaults, and standard layer keyword arguments.

    Call arguments:
        inputs: `(M, D)`, the inputs of `M` nodes.
        child_states: The list `[child_h, child_c]`, each
            `(M, arity, units)`, zeros in empty child slots.
        child_mask: `(M, arity)`, 1.0 for a real child (the zero states of
            empty slots are what the cell reads).
        training: Python boolean; dropout is active only when `True`.

    Returns:
        The tuple `(h, [h, c])`, each `(M, units)`.

    Example:

    >>> cell = kr.layers.NaryTreeLSTMCell(16, arity=2)
    >>> trees = kr.trees.encode_trees(
    ...     ["(1 2 3 4)", "(5 6)"], binarize="left", num_children=2)
    >>> node_inputs = keras.layers.Embedding(10, 8)(trees["node_tokens"])
    >>> kr.layers.TreeRNN(cell)({**trees, "node_inputs": node_inputs}).shape
    TensorShape([2, 16])
    >>> cell.recurrent_kernel.shape  # [h_1; h_2] x [i, f_1, f_2, o, u]
    TensorShape([32, 80])

    Reference:
        - [Tai et al., 2015. Improved Semantic Representations From
          Tree-Structured Long Short-Term Memory Networks](
          https://arxiv.org/abs/1503.00075)
    """

    def __init__(self, units, arity=2, **kwargs):
        self.arity = check_positive_int("arity", arity)
        super().__init__(units, **kwargs)

    @property
    def _forget_blocks(self):
        # One forget block of the projection per child slot, to line up
        # with the recurrent product's [i, o, u, f_1, ..., f_K] columns.
        return self.arity

    def _recurrent_kernel_shape(self):
        return (self.arity * self.units, (3 + self.arity) * self.units)

    def _level_weights(self):
        # Column blocks reordered to [i, o, u, f_1, ..., f_K], as the
        # projections. (A split: slices' gradients cost more.)
        blocks = ops.split(self.recurrent_kernel, 3 + self.arity, axis=1)
        i, forget, o, u = blocks[0], blocks[1:-2], blocks[-2], blocks[-1]
        return ops.concatenate([i, o, u, *forget], axis=1)

    def _preactivations(self, weights, projected, child_h):
        gates = ops.split(
            projected
            + ops.matmul(
                ops.reshape(child_h, (-1, self.arity * self.units)), weights
            ),
            3 + self.arity,
            axis=-1,
        )
        z_i, z_o, z_u = gates[:3]
        return z_i, ops.stack(gates[3:], axis=1), z_u, z_o

    def get_config(self):
        return {**super().get_config(), "arity": self.arity}
