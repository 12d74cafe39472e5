"""The Child-Sum Tree-LSTM cell of Tai et al. (2015)."""

import keras
from keras import ops

from keras_recurrent.layers._tree_lstm_cell import TreeLSTMCell


@keras.saving.register_keras_serializable(package="keras_recurrent")
class ChildSumTreeLSTMCell(TreeLSTMCell):
    """Child-Sum Tree-LSTM cell: one node from its children, in any number.

    The cell of `kr.layers.ChildSumTreeLSTM`, to run with
    `kr.layers.TreeRNN` (whose docstring states the tree-cell contract).
    A node `j` with input `x_j` and children `C(j)` (in any number and
    order) computes, as in Tai et al. (2015):

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
    tanh is `activation`. The states are `[h, c]` and the output is `h`.

    Weights, with gate blocks in the order `[i, f, o, u]`:

    - `kernel`: `(D, 4 * units)`, the `W`.
    - `recurrent_kernel`: `(units, 4 * units)`, the `U`.
    - `bias`: `(4 * units,)`, if `use_bias`.

    Args:
        units: Positive integer, the dimensionality of `h` and `c`.
        activation: The activation of `u` and of the output.
            Defaults to `"tanh"`.
        recurrent_activation: The gate activation. Defaults to `"sigmoid"`.
        use_bias: Whether to add `bias`. Defaults to `True`.
        unit_forget_bias: If `True`, the forget block of the bias starts at
            1 (Jozefowicz et al. 2015). Defaults to `True`.
        kernel_initializer: Initializer of `kernel`.
            Defaults to `"glorot_uniform"`.
        recurrent_initializer: Initializer of `recurrent_kernel`.
            Defaults to `"orthogonal"`.
        bias_initializer: Initializer of `bias`. Defaults to `"zeros"`.
        kernel_regularizer, recurrent_regularizer, bias_regularizer: Optional
            regularizers of the same weights.
        kernel_constraint, recurrent_constraint, bias_constraint: Optional
            constraints of the same weights.
        dropout: Float in [0, 1). Fraction of the node inputs dropped (each
            entry independently) in training. Defaults to 0.
        recurrent_dropout: Float in [0, 1). Fraction of the children's `h`
            dropped before the recurrent matmuls in training, with one mask
            per tree in `TreeRNN` (per node when the cell is called alone).
            Defaults to 0.
        seed: Optional integer, the random seed of the dropout.
        **kwargs: Standard layer keyword arguments, such as `name` and
            `dtype`.

    Call arguments:
        inputs: `(M, D)`, the inputs of `M` nodes.
        child_states: The list `[child_h, child_c]`, each `(M, K, units)`,
            zeros in empty child slots.
        child_mask: `(M, K)`, 1.0 for a real child (the zero states of
            empty slots are what the cell reads).
        training: Python boolean; dropout is active only when `True`.

    Returns:
        The tuple `(h, [h, c])`, each `(M, units)`.

    Example:

    >>> cell = kr.layers.ChildSumTreeLSTMCell(16)
    >>> trees = kr.trees.encode_trees(["(1 2 3)", "(4 (5 6) 7 8)"])
    >>> node_inputs = keras.layers.Embedding(10, 8)(trees["node_tokens"])
    >>> kr.layers.TreeRNN(cell)({**trees, "node_inputs": node_inputs}).shape
    TensorShape([2, 16])
    >>> cell.recurrent_kernel.shape  # blocks [i, f, o, u]
    TensorShape([16, 64])

    Reference:
        - [Tai et al., 2015. Improved Semantic Representations From
          Tree-Structured Long Short-Term Memory Networks](
          https://arxiv.org/abs/1503.00075)
    """

    def _recurrent_kernel_shape(self):
        return (self.units, 4 * self.units)

    def _level_weights(self):
        # The [i, o, u] columns read h̃, the forget columns each child. A
        # zero block in place of the forget columns in the first makes its
        # product line up with the projections' [i, o, u, f] blocks, so
        # that they add up whole, without slicing the projections.
        i, f, o, u = ops.split(self.recurrent_kernel, 4, axis=-1)
        return ops.concatenate([i, o, u, ops.zeros_like(f)], axis=1), f

    def _preactivations(self, weights, projected, child_h):
        gate_kernel, forget_kernel = weights
        z_i, z_o, z_u, x_f = ops.split(
            projected + ops.matmul(ops.sum(child_h, axis=1), gate_kernel),
            4,
            axis=-1,
        )
        # A 2-D matmul: the gradient of a 3-D one (`Tensordot`) inside
        # the loop failed to compile under XLA with recurrent dropout.
        child_f = ops.matmul(
            ops.reshape(child_h, (-1, self.units)), forget_kernel
        )
        z_f = ops.expand_dims(x_f, 1) + ops.reshape(child_f, ops.shape(child_h))
        return z_i, z_f, z_u, z_o
