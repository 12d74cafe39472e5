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
from keras_recurrent.layers._initializers import gate_bias
from keras_recurrent.layers._initializers import serialize_weight_options
from keras_recurrent.layers._tree_checks import bad_trees
from keras_recurrent.layers._tree_checks import check_children
from keras_recurrent.layers._tree_checks import check_children_eagerly
from keras_recurrent.layers._tree_checks import check_tree_dtypes
from keras_recurrent.layers._tree_checks import check_tree_input_shapes
from keras_recurrent.layers._tree_checks import flat_child_rows
from keras_recurrent.layers._tree_checks import in_xla_context
from keras_recurrent.layers._tree_checks import reduce_parents
from keras_recurrent.layers._tree_checks import unpack_tree_inputs


class TreeLSTMBase(keras.layers.Layer):
    """Level-batched Tree-LSTM; subclasses define the weights and one level.

    Subclasses implement `_recurrent_kernel_shape(units)`, optionally
    `_level_weights()` (what `_update` reads of the weights, prepared once
    per call, outside the loop; the `recurrent_kernel` by default) and
    `_update(weights, projected, child_h, child_c)`, which maps the input
    projections (from `_input_weights`, bias included: blocks `[i, o, u,
    f]`, with `f` once per child slot for N-ary) and the states of the
    children `(M, K, units)` (zeros in empty slots) of `M` nodes to their
    new `(h, c)`.

    After the checks of `children`, `call` works on the real nodes alone
    (padding is often most of a batch). It sorts the real nodes of the
    whole batch by level once (the leaves first, then the inner nodes,
    deepest first), so that each level
    is a contiguous block of rows; the states live in two arrays
    `(real nodes + 1, units)` in that order (the last row is the zero state
    of empty slots). The leaves are computed at once, before the loop;
    each step of the loop reads the children of one level of inner nodes
    with one gather per array and writes their block of rows.

    Under XLA and with JAX, `call` runs `_call_static` instead: the same
    levels with static shapes (dynamic blocks cannot compile).
    """

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
        """What `_update` reads of the recurrent weights, prepared once per
        call, outside the loop."""
        return self.recurrent_kernel

    def _input_weights(self):
        """`kernel` and `bias` (or `None`) with their gate blocks reordered
        from `[i, f, o, u]` to `[i, o, u, f]`, as `_update` reads the
        projections: the `[i, o, u]` blocks, which the leaves need and the
        inner nodes add to their recurrent terms in one op, come first.
        With an `arity` (N-ary), the forget block comes once per child
        slot, `[i, o, u, f, ..., f]`, to line up with the recurrent
        product's `[i, o, u, f_1, ..., f_K]` columns, so that `_update` adds
        them whole, without slicing. Read once per call (a variable read
        inside the level loop would run, and be kept for the gradient, at
        each step)."""
        forget_blocks = self._arity or 1

        def reorder(weight):
            # A split, not slices: TensorFlow's slice gradient is slow
            # (docs/design/tree_lstm.md).
            i, f, o, u = ops.split(weight, 4, axis=-1)
            return ops.concatenate([i, o, u] + [f] * forget_blocks, axis=-1)

        return (
            reorder(self.kernel),
            None if self.bias is None else reorder(self.bias),
        )

    @staticmethod
    def _project(x, kernel, bias):
        """The input projection of node inputs `x`."""
        projected = ops.matmul(x, kernel)
        if bias is not None:
            projected = projected + bias
        return projected

    def _bias_initializer(self, shape, dtype=None):
        del shape
        return gate_bias(
            self.bias_initializer,
            ("i", "f", "o", "u"),
            self.units,
            self.unit_forget_bias,
            dtype,
        )

    def call(self, inputs, training=False):
        # `convert_to_tensor` also moves tensors to the backend's device
        # (with PyTorch, `fit` may pass integer inputs on the CPU).
        node_inputs, children, node_mask = (
            ops.convert_to_tensor(tensor)
            for tensor in unpack_tree_inputs(self, inputs)
        )
        check_tree_dtypes(self, node_inputs, children, node_mask)
        check_tree_input_shapes(
            self,
            [node_inputs.shape, children.shape, node_mask.shape],
            arity=self._arity,
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
        children = ops.cast(children, "int32")
        if in_xla_context():
            outputs = self._call_static(
                node_inputs, children, node_mask, training
            )
        else:
            outputs = self._call_dynamic(
                node_inputs, children, node_mask, training
            )
        return outputs if self.return_state else outputs[0]

    def _call_dynamic(self, node_inputs, children, node_mask, training):
        """The level loop over the real nodes alone (dynamic shapes)."""
        units = self.units
        real = ops.reshape(ops.cast(node_mask, "bool"), (-1,))
        batch_size, num_nodes = ops.shape(children)[0], ops.shape(children)[1]
        total = batch_size * num_nodes

        # Node v of tree b is row b * N + v of the flat batch. Past the
        # checks, the work is done on the real nodes alone (padding is most
        # of a batch of trees of mixed sizes), numbered in row order:
        # `index_of[row]` is the number of the real node at `row`, and
        # `num_real` for padding and for the extra row `total` that
        # `flat_child_rows` gives empty slots; `node_children` `(num_real,
        # K)` holds each real node's children, `num_real` in empty slots.
        real_int = ops.cast(real, "int32")
        num_real = ops.sum(real_int)
        real_rows = ops.cast(ops.nonzero(real)[0], "int32")
        index_of = ops.concatenate(
            [
                ops.where(real, ops.cumsum(real_int) - 1, num_real),
                ops.expand_dims(num_real, 0),
            ]
        )
        node_children = ops.take(
            index_of,
            ops.take(flat_child_rows(children, total), real_rows, axis=0),
        )
        parent = check_children(
            self,
            children,
            node_mask,
            reduce_parents(node_children, ops.segment_min),
            reduce_parents(node_children, ops.segment_max),
            index_of[:total],
        )
        # The real nodes are sorted by level (`_node_levels`): the leaves
        # (level 0) first, then the inner nodes, deepest first. Level `l`
        # is the contiguous block `bounds[l]:bounds[l + 1]` of this order;
        # the states `h` and `c` live in two arrays in the same order, plus
        # a last all-zero row that empty slots read.
        levels = _node_levels(node_children, parent)
        # Not `ops.max(..., initial=-1)`: with PyTorch it puts `initial` on
        # the CPU, next to CUDA tensors.
        num_levels = (
            ops.max(ops.concatenate([levels, ops.full((1,), -1, "int32")])) + 1
        )
        num_leaves = ops.sum(ops.cast(ops.equal(levels, 0), "int32"))
        by_level = ops.cast(ops.argsort(levels), "int32")
        # `slot[node]`: where a real node sits in that order (the inverse
        # permutation, as a segment sum: TensorFlow's `scatter` took several
        # times longer), and the zero row `num_real` for `num_real`.
        slot = ops.concatenate(
            [
                ops.segment_sum(
                    ops.arange(num_real, dtype="int32"),
                    by_level,
                    num_segments=num_real,
                ),
                ops.expand_dims(num_real, 0),
            ]
        )
        bounds = ops.cast(
            ops.searchsorted(
                ops.take(levels, by_level),
                ops.arange(num_levels + 1, dtype="int32"),
            ),
            "int32",
        )
        inner_slots = ops.take(
            slot, ops.take(node_children, by_level[num_leaves:], axis=0)
        )
        # The rows of the flat batch in level order.
        order = ops.take(real_rows, by_level)

        flat_inputs = ops.reshape(
            ops.cast(node_inputs, self.compute_dtype),
            (total, self.kernel.shape[0]),
        )
        # The leaves' and the inner nodes' inputs, in two gathers, so that
        # neither pass slices them apart.
        leaf_x, inner_x = (
            ops.take(flat_inputs, part, axis=0)
            for part in (order[:num_leaves], order[num_leaves:])
        )
        if training and self.dropout > 0:
            leaf_x, inner_x = (
                keras.random.dropout(x, self.dropout, seed=self.seed_generator)
                for x in (leaf_x, inner_x)
            )

        # The leaves have no children: with zero child states the cell
        # reduces to c = i * u, h = o * tanh(c), computed for all of them
        # at once, before the loop (most nodes are leaves). They need no
        # forget gate, so they are projected on the [i, o, u] columns only.
        kernel, bias = self._input_weights()

        def input_gates(weight):  # The [i, o, u] blocks.
            blocks = ops.split(weight, weight.shape[-1] // units, axis=-1)
            return ops.concatenate(blocks[:3], axis=-1)

        x_i, x_o, x_u = ops.split(
            self._project(
                leaf_x,
                input_gates(kernel),
                None if bias is None else input_gates(bias),
            ),
            3,
            axis=-1,
        )
        leaf_c = self.recurrent_activation(x_i) * self.activation(x_u)
        leaf_h = self.recurrent_activation(x_o) * self.activation(leaf_c)

        # The loop updates the inner nodes, one level per step. With
        # TensorFlow, every tensor the loop reads rows of gets a dense
        # gradient per step, so it reads only the inner nodes' rows, and
        # their inputs rather than their projections when those are
        # narrower (projecting them in the loop).
        project_in_loop = kernel.shape[0] < kernel.shape[1]
        if not project_in_loop:
            inner_x = self._project(inner_x, kernel, bias)
        recurrent_mask = None
        if training and self.recurrent_dropout > 0:
            # One mask per tree, as Keras' recurrent dropout keeps one per
            # sequence; a node's children are in its tree, so each node
            # applies the mask of its own tree to its children's `h`.
            recurrent_mask = ops.take(
                keras.random.dropout(
                    ops.ones((batch_size, units), dtype=self.compute_dtype),
                    self.recurrent_dropout,
                    seed=self.seed_generator,
                ),
                ops.floor_divide(order[num_leaves:], num_nodes),
                axis=0,
            )
        weights = self._level_weights()

        def body(level, h, c):
            start, stop = bounds[level], bounds[level + 1]
            block = ops.arange(start - num_leaves, stop - num_leaves)
            # A slice, not `take` (which adds five ops to wrap negative
            # indices): `inner_slots` has no gradient.
            slots = inner_slots[start - num_leaves : stop - num_leaves]
            child_h = ops.take(h, slots, axis=0)
            if recurrent_mask is not None:
                child_h = child_h * ops.expand_dims(
                    ops.take(recurrent_mask, block, axis=0), 1
                )
            projected = ops.take(inner_x, block, axis=0)
            if project_in_loop:
                projected = self._project(projected, kernel, bias)
            new_h, new_c = self._update(
                weights, projected, child_h, ops.take(c, slots, axis=0)
            )
            # The level's nodes are the rows `start:stop`: a scatter into
            # them (`slice_update` has no TensorFlow gradient; the layouts
            # measured slower are in docs/design/tree_lstm.md).
            rows = ops.expand_dims(block + num_leaves, -1)
            return (
                level + 1,
                ops.scatter_update(h, rows, new_h),
                ops.scatter_update(c, rows, new_c),
            )

        inner_zeros = ops.zeros(
            (num_real - num_leaves + 1, units), dtype=self.compute_dtype
        )
        _, h, c = ops.while_loop(
            lambda level, h, c: ops.less(level, num_levels),
            body,
            (
                ops.convert_to_tensor(1, dtype="int32"),
                ops.concatenate([leaf_h, inner_zeros]),
                ops.concatenate([leaf_c, inner_zeros]),
            ),
        )

        if self.return_nodes:
            row_slots = ops.take(slot, index_of[:total])
            outputs = [
                ops.reshape(
                    ops.take(state, row_slots, axis=0),
                    (batch_size, num_nodes, units),
                )
                for state in (h, c)
            ]
        else:
            tree_sizes = ops.sum(
                ops.reshape(ops.cast(real, "int32"), (batch_size, num_nodes)),
                axis=1,
            )
            # The last real row of each tree (`total`, the zero row, for an
            # empty tree).
            root_rows = ops.where(
                ops.greater(tree_sizes, 0),
                ops.arange(batch_size, dtype="int32") * num_nodes
                + tree_sizes
                - 1,
                total,
            )
            roots = ops.take(slot, ops.take(index_of, root_rows))
            outputs = [ops.take(state, roots, axis=0) for state in (h, c)]
        return outputs

    def _call_static(self, node_inputs, children, node_mask, training):
        """The level loop with static shapes, for XLA and JAX.

        The states live in two arrays `(B * N + 1, units)` (row `b * N + v`
        is node `v` of tree `b`; the last row is the zero state of empty
        slots). All rows are computed as leaves at once; then each step of
        the loop updates one level of inner nodes through a window of a
        static size, `B * max(N // 2, 1)` rows (a tree has at most `N // 2`
        inner nodes at one depth), read from the rows sorted by level;
        unused window rows read and write the zero row. Trees with bad
        `children` take no part and get NaN outputs (no assertion can run
        in compiled code).
        """
        units = self.units
        batch_size, num_nodes = ops.shape(children)[0], ops.shape(children)[1]
        total = batch_size * num_nodes
        real = ops.cast(node_mask, "bool")
        check_children_eagerly(self, children, node_mask)
        bad = bad_trees(children, real)
        schedule = _static_schedule(children, real, bad)
        flat_real = ops.reshape(schedule["real"], (-1, 1))

        # Phase 1: every row as a leaf (padding rows as zeros).
        flat_inputs = ops.where(
            flat_real,
            ops.reshape(
                ops.cast(node_inputs, self.compute_dtype),
                (total, self.kernel.shape[0]),
            ),
            0.0,
        )
        if training and self.dropout > 0:
            flat_inputs = keras.random.dropout(
                flat_inputs, self.dropout, seed=self.seed_generator
            )
        projected = self._project(flat_inputs, *self._input_weights())
        x_i, x_o, x_u = ops.split(projected[:, : 3 * units], 3, axis=-1)
        leaf_c = self.recurrent_activation(x_i) * self.activation(x_u)
        leaf_h = self.recurrent_activation(x_o) * self.activation(leaf_c)
        zero = ops.zeros((1, units), dtype=self.compute_dtype)
        h, c = (
            ops.concatenate([ops.where(flat_real, state, 0.0), zero])
            for state in (leaf_h, leaf_c)
        )
        projected = ops.concatenate([projected, ops.zeros_like(projected[:1])])
        recurrent_mask = None
        if training and self.recurrent_dropout > 0:
            # One mask per tree, as in the dynamic path.
            recurrent_mask = ops.take(
                keras.random.dropout(
                    ops.ones((batch_size + 1, units), self.compute_dtype),
                    self.recurrent_dropout,
                    seed=self.seed_generator,
                ),
                ops.arange(total + 1, dtype="int32") // num_nodes,
                axis=0,
            )

        # Phase 2: the inner nodes, one level per step.
        h, c = self._static_levels(
            schedule, projected, recurrent_mask, h, c, num_nodes
        )

        # Phase 3: the outputs; NaN for the trees with bad `children`.
        if self.return_nodes:
            outputs = [
                ops.where(
                    ops.reshape(bad, (-1, 1, 1)),
                    float("nan"),
                    ops.reshape(state[:total], (batch_size, num_nodes, units)),
                )
                for state in (h, c)
            ]
        else:
            sizes = ops.sum(ops.cast(real, "int32"), axis=1)
            roots = ops.where(
                ops.greater(sizes, 0),
                ops.arange(batch_size, dtype="int32") * num_nodes + sizes - 1,
                total,
            )
            outputs = [
                ops.where(
                    ops.expand_dims(bad, -1),
                    float("nan"),
                    ops.take(state, roots, axis=0),
                )
                for state in (h, c)
            ]
        return outputs

    def _static_levels(self, schedule, projected, recurrent_mask, h, c, n):
        """The loop of `_call_static` over the levels of inner nodes."""
        total = ops.shape(h)[0] - 1
        window = ops.shape(schedule["order"])[0] - total
        weights = self._level_weights()
        child_rows = schedule["child_rows"]

        def level_step(level, h, c):
            valid = ops.less(
                ops.arange(window, dtype="int32"), schedule["counts"][level]
            )
            rows = ops.where(
                valid,
                ops.slice(
                    schedule["order"], [schedule["starts"][level]], [window]
                ),
                total,
            )
            slots = ops.take(child_rows, rows, axis=0)
            child_h = ops.take(h, slots, axis=0)
            if recurrent_mask is not None:
                child_h = child_h * ops.expand_dims(
                    ops.take(recurrent_mask, rows, axis=0), 1
                )
            new_h, new_c = self._update(
                weights,
                ops.take(projected, rows, axis=0),
                child_h,
                ops.take(c, slots, axis=0),
            )
            # Unused window rows write zeros into the zero row.
            rows = ops.expand_dims(rows, -1)
            valid = ops.expand_dims(valid, -1)
            return (
                ops.scatter_update(h, rows, ops.where(valid, new_h, 0.0)),
                ops.scatter_update(c, rows, ops.where(valid, new_c, 0.0)),
            )

        num_levels = schedule["num_levels"]
        if keras.backend.backend() == "jax":
            # A loop with static bounds (JAX differentiates no
            # `while_loop`); the levels past the last one are skipped.
            def jax_body(level, states):
                return ops.cond(
                    ops.less(level, num_levels),
                    lambda: level_step(level, *states),
                    lambda: states,
                )

            return ops.fori_loop(1, n + 1, jax_body, (h, c))
        _, h, c = ops.while_loop(
            lambda level, h, c: ops.less(level, num_levels),
            lambda level, h, c: (level + 1, *level_step(level, h, c)),
            (ops.convert_to_tensor(1, dtype="int32"), h, c),
            # A bound XLA needs for the gradient (a tree has at most N
            # levels).
            maximum_iterations=n,
        )
        return h, c

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


def _node_levels(children, parent):
    """The level of every node: 0 for leaves, then deepest nodes first.

    `children` `(n, K)` are the nodes' children, `n` for an empty slot;
    `parent` `(n,)` is the parent of each node (a negative number for
    roots): every node has at most one parent. An inner node at depth `d`
    (its distance from the root) gets level `1 + D - d`, where `D` is the
    largest depth of an inner node, so its inner children (depth `d + 1`)
    come one level earlier and its leaves at level 0. The depths come from
    pointer jumping: `log2(depth)` steps, not one per level.
    """
    num = ops.shape(children)[0]
    indices = ops.arange(num, dtype="int32")
    # Roots are their own parents.
    parent = ops.where(ops.less(parent, 0), indices, parent)

    def body(depth, ancestor, changed):
        # `depth` is the distance to `ancestor`; jump to its ancestor.
        jumped = ops.take(ancestor, ancestor)
        return (
            depth + ops.take(depth, ancestor),
            jumped,
            ops.any(ops.not_equal(jumped, ancestor)),
        )

    depth, _, _ = ops.while_loop(
        lambda depth, ancestor, changed: changed,
        body,
        (
            ops.cast(ops.not_equal(parent, indices), "int32"),
            parent,
            ops.convert_to_tensor(True),
        ),
        # Enough for any forest; bounds the loop on a cycle, which the
        # checks reject only where they run (eagerly, or TensorFlow).
        maximum_iterations=num + 1,
    )
    inner = ops.any(ops.less(children, num), axis=1)
    deepest = ops.max(
        ops.concatenate(
            [ops.where(inner, depth, -1), ops.full((1,), -1, "int32")]
        )
    )
    return ops.where(inner, 1 + deepest - depth, 0)


def _static_schedule(children, real, bad):
    """The level schedule of `_call_static`, with static shapes.

    Returns a dict: `real` `(B, N)`, the real nodes of the good trees;
    `child_rows` `(B * N + 1, K)`, each row's children as rows (the zero
    row `B * N` in empty slots, for padding and for the extra row);
    `order`, the inner rows sorted by level followed by the other rows and
    a window's worth of `B * N`; `counts` and `starts` `(N + 1,)`, the size
    and start in `order` of each level; `num_levels`.
    """
    batch_size, num_nodes = ops.shape(children)[0], ops.shape(children)[1]
    total = batch_size * num_nodes
    real = ops.logical_and(real, ops.logical_not(ops.expand_dims(bad, -1)))
    flat_real = ops.reshape(real, (-1,))
    child_rows = ops.where(
        ops.expand_dims(flat_real, -1), flat_child_rows(children, total), total
    )
    levels = _node_levels(
        child_rows, reduce_parents(child_rows, ops.segment_max)
    )
    inner = ops.logical_and(flat_real, ops.greater(levels, 0))
    levels = ops.where(inner, levels, 0)
    counts = ops.segment_sum(
        ops.cast(inner, "int32"), levels, num_segments=num_nodes + 1
    )
    half = num_nodes // 2
    # A Python number where the shapes are static (JAX), else a tensor.
    window = batch_size * (
        max(half, 1) if isinstance(half, int) else ops.maximum(half, 1)
    )
    order = ops.cast(
        ops.argsort(ops.where(inner, levels, num_nodes + 1)), "int32"
    )
    return {
        "real": real,
        "child_rows": ops.concatenate(
            [child_rows, ops.full_like(child_rows[:1], total)]
        ),
        "order": ops.concatenate(
            [order, ops.full((window,), total, dtype="int32")]
        ),
        "counts": counts,
        "starts": ops.cumsum(counts) - counts,
        "num_levels": ops.max(
            ops.concatenate([levels, ops.zeros((1,), "int32")])
        )
        + 1,
    }
