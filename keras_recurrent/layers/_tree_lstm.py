"""What the Child-Sum and N-ary Tree-LSTM layers share: the level loop."""

import keras
from keras import activations
from keras import constraints
from keras import initializers
from keras import ops
from keras import regularizers

from keras_recurrent._checks import check_bool
from keras_recurrent._checks import check_positive_int
from keras_recurrent._checks import check_rate
from keras_recurrent.layers._concrete import on_meta_device
from keras_recurrent.layers._tree_checks import check_children
from keras_recurrent.layers._tree_checks import check_tree_input_shapes
from keras_recurrent.layers._tree_checks import unpack_tree_inputs
from keras_recurrent.layers._weight_options import serialize_weight_options


class TreeLSTMBase(keras.layers.Layer):
    """Level-batched Tree-LSTM; subclasses define the weights and one level.

    Subclasses implement `_recurrent_kernel_shape(units)`, optionally
    `_level_weights()` (what `_update` reads of the weights, prepared once
    per call, outside the loop; the `recurrent_kernel` by default) and
    `_update(weights, projected, child_h, child_c)`, which maps the input
    projections `(M, 4 * units)` (blocks `[i, f, o, u]`, bias included) and
    the states of the children `(M, K, units)` (zeros in empty slots) of
    `M` nodes to their new `(h, c)`.

    `call` sorts the real nodes of the whole batch by height once, so that
    each level is a contiguous block of rows; the states live in two arrays
    `(real nodes + 1, units)` in that order (the last row is the zero state
    of empty slots), and a level reads its children with one gather per
    array and writes its block of rows.
    """

    # A level is a block of rows whose size depends on the data: a dynamic
    # shape XLA cannot compile, so `jit_compile="auto"` leaves XLA off for
    # models with these layers.
    supports_jit = False

    def __init__(
        self,
        units,
        *,
        return_nodes=False,
        return_state=False,
        activation="tanh",
        recurrent_activation="sigmoid",
        use_bias=True,
        unit_forget_bias=True,
        kernel_initializer="glorot_uniform",
        recurrent_initializer="orthogonal",
        bias_initializer="zeros",
        kernel_regularizer=None,
        recurrent_regularizer=None,
        bias_regularizer=None,
        kernel_constraint=None,
        recurrent_constraint=None,
        bias_constraint=None,
        dropout=0.0,
        recurrent_dropout=0.0,
        seed=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.units = check_positive_int("units", units)
        self.return_nodes = check_bool("return_nodes", return_nodes)
        self.return_state = check_bool("return_state", return_state)
        self.use_bias = check_bool("use_bias", use_bias)
        self.unit_forget_bias = check_bool("unit_forget_bias", unit_forget_bias)
        self.dropout = check_rate("dropout", dropout)
        self.recurrent_dropout = check_rate(
            "recurrent_dropout", recurrent_dropout
        )
        if seed is not None and (
            isinstance(seed, bool) or not isinstance(seed, int)
        ):
            raise ValueError(
                f"Argument `seed` must be an integer or None. Received: "
                f"seed={seed!r}"
            )
        self.seed = seed
        self.seed_generator = keras.random.SeedGenerator(seed=seed)
        self.activation = activations.get(activation)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.recurrent_initializer = initializers.get(recurrent_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.recurrent_regularizer = regularizers.get(recurrent_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.recurrent_constraint = constraints.get(recurrent_constraint)
        self.bias_constraint = constraints.get(bias_constraint)

    @property
    def _arity(self):
        return None

    def build(self, input_shape):
        shapes = unpack_tree_inputs(self, input_shape)
        check_tree_input_shapes(self, shapes, arity=self._arity)
        features = shapes[0][-1]
        if features is None:
            raise ValueError(
                "The last dimension of `node_inputs` must be defined. "
                f"Received: node_inputs.shape={tuple(shapes[0])}"
            )
        units = self.units
        self.kernel = self.add_weight(
            shape=(features, 4 * units),
            name="kernel",
            initializer=self.kernel_initializer,
            regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint,
        )
        self.recurrent_kernel = self.add_weight(
            shape=self._recurrent_kernel_shape(units),
            name="recurrent_kernel",
            initializer=self.recurrent_initializer,
            regularizer=self.recurrent_regularizer,
            constraint=self.recurrent_constraint,
        )
        if self.use_bias:
            self.bias = self.add_weight(
                shape=(4 * units,),
                name="bias",
                initializer=self._bias_initializer,
                regularizer=self.bias_regularizer,
                constraint=self.bias_constraint,
            )
        else:
            self.bias = None

    def _level_weights(self):
        """What `_update` reads of the weights, prepared once per call."""
        return self.recurrent_kernel

    def _bias_initializer(self, shape, dtype=None):
        del shape
        units = self.units
        blocks = [
            self.bias_initializer((units,), dtype=dtype) for _ in range(4)
        ]
        if self.unit_forget_bias:
            blocks[1] = initializers.get("ones")((units,), dtype=dtype)
        return ops.concatenate(blocks)

    def call(self, inputs, training=False):
        # `convert_to_tensor` also moves tensors to the backend's device
        # (with PyTorch, `fit` may pass integer inputs on the CPU).
        node_inputs, children, node_mask = (
            ops.convert_to_tensor(tensor)
            for tensor in unpack_tree_inputs(self, inputs)
        )
        dtype = keras.backend.standardize_dtype(node_inputs.dtype)
        if "float" not in dtype:
            raise ValueError(
                f"{type(self).__name__} expects floating-point `node_inputs` "
                "(embed integer tokens first, e.g. with "
                "`keras.layers.Embedding`). "
                f"Received: node_inputs.dtype={dtype}"
            )
        if on_meta_device(node_inputs, children, node_mask):
            # Shape inference: the level loop needs values, a `"meta"`
            # tensor has none.
            shape = self.compute_output_shape(
                [node_inputs.shape, children.shape, node_mask.shape]
            )
            zeros = ops.zeros(
                shape[0] if self.return_state else shape,
                dtype=self.compute_dtype,
            )
            return [zeros, zeros] if self.return_state else zeros
        children = check_children(self, ops.cast(children, "int32"), node_mask)
        units = self.units
        real = ops.reshape(ops.cast(node_mask, "bool"), (-1,))
        batch_size, num_nodes = ops.shape(children)[0], ops.shape(children)[1]
        width = ops.shape(children)[2]
        total = batch_size * num_nodes

        # Node v of tree b is row b * N + v of the flat node arrays. The
        # real nodes are then sorted by height: level `l` is the contiguous
        # block `bounds[l]:bounds[l + 1]` of this order, and the states `h`
        # and `c` of the real nodes live in two arrays in the same order,
        # plus a last all-zero row that empty child slots read.
        offsets = ops.reshape(
            ops.arange(batch_size, dtype="int32") * num_nodes, (-1, 1, 1)
        )
        rows = ops.reshape(
            ops.where(ops.greater_equal(children, 0), children + offsets, -1),
            (total, width),
        )
        num_real = ops.sum(ops.cast(real, "int32"))
        minus_one = ops.full((1,), -1, dtype="int32")
        # First the real rows alone (in any order), then by height.
        real_rows, real_children, real_position = _compact(
            ops.where(real, 0, 1), rows, num_real
        )
        heights = _node_heights(
            ops.where(ops.less(real_children, 0), num_real, real_children),
            ops.ones((num_real,), dtype="bool"),
            num_real,
        )
        # Not `ops.max(..., initial=-1)`: with PyTorch it puts `initial` on
        # the CPU, next to CUDA tensors.
        num_levels = ops.max(ops.concatenate([heights, minus_one])) + 1
        by_height, child_positions, height_position = _compact(
            heights, real_children, num_real
        )
        order = ops.take(real_rows, by_height)
        bounds = ops.cast(
            ops.searchsorted(
                ops.take(heights, by_height),
                ops.arange(num_levels + 1, dtype="int32"),
            ),
            "int32",
        )
        child_positions = ops.where(
            ops.less(child_positions, 0), num_real, child_positions
        )

        # The input projection of every real node at once, before the loop.
        x = ops.take(
            ops.reshape(
                ops.cast(node_inputs, self.compute_dtype),
                (total, self.kernel.shape[0]),
            ),
            order,
            axis=0,
        )
        if training and self.dropout > 0:
            x = keras.random.dropout(x, self.dropout, seed=self.seed_generator)
        projected = ops.matmul(x, self.kernel)
        if self.use_bias:
            projected = projected + self.bias

        recurrent_mask = None
        if training and self.recurrent_dropout > 0:
            # One mask per tree, as Keras' recurrent dropout keeps one per
            # sequence; a node's children are in its tree, so each node
            # applies the mask of its own tree to its children's `h`.
            recurrent_mask = keras.random.dropout(
                ops.ones((batch_size, units), dtype=self.compute_dtype),
                self.recurrent_dropout,
                seed=self.seed_generator,
            )
            recurrent_mask = ops.take(
                recurrent_mask, ops.floor_divide(order, num_nodes), axis=0
            )
        weights = self._level_weights()

        def body(level, h, c):
            start, stop = bounds[level], bounds[level + 1]
            slots = child_positions[start:stop]
            child_h = ops.take(h, slots, axis=0)
            if recurrent_mask is not None:
                child_h = child_h * ops.expand_dims(
                    recurrent_mask[start:stop], 1
                )
            new_h, new_c = self._update(
                weights, projected[start:stop], child_h, ops.take(c, slots, 0)
            )
            # The level's nodes are the rows `start:stop`: a scatter into
            # them (`slice_update` has no TensorFlow gradient, and
            # concatenating the three parts measured slower).
            rows = ops.expand_dims(ops.arange(start, stop, dtype="int32"), -1)
            return (
                level + 1,
                ops.scatter_update(h, rows, new_h),
                ops.scatter_update(c, rows, new_c),
            )

        # Separate `h` and `c` arrays measured faster than one `[h, c]`.
        zeros = ops.zeros((num_real + 1, units), dtype=self.compute_dtype)
        _, h, c = ops.while_loop(
            lambda level, h, c: ops.less(level, num_levels),
            body,
            (ops.convert_to_tensor(0, dtype="int32"), zeros, zeros),
        )

        # Where each flat row sits in `order` (padding rows: the zero row).
        position = ops.take(
            ops.concatenate([height_position, ops.reshape(num_real, (1,))]),
            ops.minimum(real_position, num_real),
        )
        if self.return_nodes:
            outputs = [
                ops.reshape(
                    ops.take(state, position, axis=0),
                    (batch_size, num_nodes, units),
                )
                for state in (h, c)
            ]
        else:
            tree_sizes = ops.sum(
                ops.reshape(ops.cast(real, "int32"), (batch_size, num_nodes)),
                axis=1,
            )
            roots = ops.where(
                ops.greater(tree_sizes, 0),
                ops.take(
                    position,
                    ops.maximum(
                        ops.arange(batch_size, dtype="int32") * num_nodes
                        + tree_sizes
                        - 1,
                        0,
                    ),
                ),
                num_real,
            )
            outputs = [ops.take(state, roots, axis=0) for state in (h, c)]
        return outputs if self.return_state else outputs[0]

    def compute_output_shape(self, input_shape):
        shapes = unpack_tree_inputs(self, input_shape)
        batch_size, num_nodes = shapes[1][0], shapes[1][1]
        if self.return_nodes:
            shape = (batch_size, num_nodes, self.units)
        else:
            shape = (batch_size, self.units)
        return [shape, shape] if self.return_state else shape

    def get_config(self):
        config = {
            "units": self.units,
            "return_nodes": self.return_nodes,
            "return_state": self.return_state,
            "activation": activations.serialize(self.activation),
            "recurrent_activation": activations.serialize(
                self.recurrent_activation
            ),
            "use_bias": self.use_bias,
            "unit_forget_bias": self.unit_forget_bias,
            "dropout": self.dropout,
            "recurrent_dropout": self.recurrent_dropout,
            "seed": self.seed,
        }
        config.update(
            serialize_weight_options(self, ("kernel", "recurrent", "bias"))
        )
        base_config = super().get_config()
        return {**base_config, **config}


def _node_heights(rows, real, num_nodes):
    """The height of every node (a leaf is 0), `-1` for padding nodes.

    `rows` `(total, K)` are the children's rows, `total` for an empty slot.
    Iterates `height = 1 + max(children's heights)` from zero to its fixed
    point, which takes the tree height plus one steps (at most `N`).
    """
    total = ops.shape(rows)[0]
    minus_one = ops.full((1,), -1, dtype="int32")
    # One more empty slot, so that the max below has a column even when
    # `K` is 0, without `ops.max(..., initial=-1)` (which, with PyTorch,
    # puts `initial` on the CPU next to CUDA tensors).
    rows = ops.concatenate(
        [rows, ops.full((total, 1), total, dtype="int32")], axis=1
    )

    def body(heights, changed):
        extended = ops.concatenate([heights, minus_one])
        new = ops.max(ops.take(extended, rows, axis=0), axis=1) + 1
        return new, ops.any(ops.not_equal(new, heights))

    heights, _ = ops.while_loop(
        lambda heights, changed: changed,
        body,
        (ops.zeros((total,), dtype="int32"), ops.convert_to_tensor(True)),
        maximum_iterations=num_nodes + 1,
    )
    return ops.where(real, heights, -1)


def _compact(keys, children, count):
    """Sorts rows by `keys` and keeps the first `count` of them.

    Returns the kept rows `order` `(count,)`, their `children` rows
    renumbered to positions in `order` (negative values stay `-1`; all
    children must be among the kept rows), and the position in the sorted
    order of every row (`>= count` for the rows left out).
    """
    order = ops.cast(ops.argsort(keys), "int32")
    position = ops.cast(ops.argsort(order), "int32")
    order = order[:count]
    kept = ops.take(children, order, axis=0)
    renumbered = ops.take(position, ops.maximum(kept, 0))
    return order, ops.where(ops.less(kept, 0), -1, renumbered), position
