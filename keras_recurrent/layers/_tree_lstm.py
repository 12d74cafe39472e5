"""What the Child-Sum and N-ary Tree-LSTM layers share: the level loop."""

import keras
from keras import activations
from keras import constraints
from keras import initializers
from keras import ops
from keras import regularizers

from keras_recurrent.layers._tree_checks import check_children
from keras_recurrent.layers._tree_checks import check_tree_input_shapes
from keras_recurrent.layers._tree_checks import unpack_tree_inputs
from keras_recurrent.trees.validation import check_positive_int


def check_rate(name, value):
    """Returns `value` as a float if it is in [0, 1), else raises."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(
            f"Argument `{name}` must be a float in [0, 1). "
            f"Received: {name}={value!r}"
        )
    if not 0.0 <= value < 1.0:
        raise ValueError(
            f"Argument `{name}` must be in [0, 1). Received: {name}={value!r}"
        )
    return float(value)


def check_bool(name, value):
    if not isinstance(value, bool):
        raise ValueError(
            f"Argument `{name}` must be a boolean. Received: {name}={value!r}"
        )
    return value


class TreeLSTMBase(keras.layers.Layer):
    """Level-batched Tree-LSTM; subclasses define the weights and one level.

    Subclasses implement `_recurrent_kernel_shape(units)` and
    `_update(projected, child_h, child_c)`, which maps the input projections
    `(M, 4 * units)` (blocks `[i, f, o, u]`, bias included) and the states
    of the children `(M, K, units)` (zeros in empty slots) of `M` nodes to
    their new `(h, c)`.
    """

    # `ops.nonzero` selects each level's nodes: a dynamic shape XLA cannot
    # compile, so `jit_compile="auto"` leaves XLA off for models with these
    # layers.
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
        node_inputs, children, node_mask = unpack_tree_inputs(self, inputs)
        dtype = keras.backend.standardize_dtype(node_inputs.dtype)
        if "float" not in dtype:
            raise ValueError(
                f"{type(self).__name__} expects floating-point `node_inputs` "
                "(embed integer tokens first, e.g. with "
                "`keras.layers.Embedding`). "
                f"Received: node_inputs.dtype={dtype}"
            )
        children = check_children(self, ops.cast(children, "int32"), node_mask)
        units = self.units
        real = ops.cast(node_mask, "bool")
        batch_size, num_nodes = ops.shape(children)[0], ops.shape(children)[1]
        width = ops.shape(children)[2]
        total = batch_size * num_nodes

        # The input projection of every node at once, outside the loop.
        x = ops.cast(node_inputs, self.compute_dtype)
        x = ops.where(ops.expand_dims(real, -1), x, ops.zeros_like(x))
        if training and self.dropout > 0:
            x = keras.random.dropout(x, self.dropout, seed=self.seed_generator)
        features = self.kernel.shape[0]
        projected = ops.matmul(ops.reshape(x, (total, features)), self.kernel)
        if self.use_bias:
            projected = projected + self.bias

        # Node v of tree b is row b * N + v; row `total` is an all-zero
        # state that empty child slots read.
        offsets = ops.reshape(
            ops.arange(batch_size, dtype="int32") * num_nodes, (-1, 1, 1)
        )
        rows = ops.where(
            ops.greater_equal(children, 0), children + offsets, total
        )
        rows = ops.reshape(rows, (total, width))
        heights = _node_heights(rows, ops.reshape(real, (-1,)), num_nodes)
        num_levels = ops.max(heights, initial=-1) + 1

        recurrent_mask = None
        if training and self.recurrent_dropout > 0:
            # One mask per tree, as Keras' recurrent dropout keeps one per
            # sequence.
            recurrent_mask = keras.random.dropout(
                ops.ones((batch_size, units), dtype=self.compute_dtype),
                self.recurrent_dropout,
                seed=self.seed_generator,
            )
            recurrent_mask = ops.concatenate(
                [
                    ops.repeat(recurrent_mask, num_nodes, axis=0),
                    ops.ones((1, units), dtype=self.compute_dtype),
                ]
            )

        def body(level, h, c):
            nodes = ops.nonzero(ops.equal(heights, level))[0]
            child_rows = ops.take(rows, nodes, axis=0)
            child_h = ops.take(h, child_rows, axis=0)
            child_c = ops.take(c, child_rows, axis=0)
            if recurrent_mask is not None:
                child_h = child_h * ops.take(recurrent_mask, child_rows, axis=0)
            new_h, new_c = self._update(
                ops.take(projected, nodes, axis=0), child_h, child_c
            )
            index = ops.expand_dims(nodes, -1)
            return (
                level + 1,
                ops.scatter_update(h, index, new_h),
                ops.scatter_update(c, index, new_c),
            )

        zeros = ops.zeros((total + 1, units), dtype=self.compute_dtype)
        _, h, c = ops.while_loop(
            lambda level, h, c: ops.less(level, num_levels),
            body,
            (ops.convert_to_tensor(0, dtype="int32"), zeros, zeros),
        )

        if self.return_nodes:
            outputs = [
                ops.reshape(state[:total], (batch_size, num_nodes, units))
                for state in (h, c)
            ]
        else:
            num_real = ops.sum(ops.cast(real, "int32"), axis=1)
            root = ops.where(
                ops.greater(num_real, 0),
                ops.arange(batch_size, dtype="int32") * num_nodes
                + num_real
                - 1,
                total,
            )
            outputs = [ops.take(state, root, axis=0) for state in (h, c)]
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
        for weight in ("kernel", "recurrent", "bias"):
            config[f"{weight}_initializer"] = initializers.serialize(
                getattr(self, f"{weight}_initializer")
            )
            config[f"{weight}_regularizer"] = regularizers.serialize(
                getattr(self, f"{weight}_regularizer")
            )
            config[f"{weight}_constraint"] = constraints.serialize(
                getattr(self, f"{weight}_constraint")
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

    def body(heights, changed):
        extended = ops.concatenate([heights, minus_one])
        new = ops.max(ops.take(extended, rows, axis=0), axis=1, initial=-1) + 1
        return new, ops.any(ops.not_equal(new, heights))

    heights, _ = ops.while_loop(
        lambda heights, changed: changed,
        body,
        (ops.zeros((total,), dtype="int32"), ops.convert_to_tensor(True)),
        maximum_iterations=num_nodes + 1,
    )
    return ops.where(real, heights, -1)
