"""What the Child-Sum and N-ary Tree-LSTM layers share: the level loop."""

import keras
from keras import activations
from keras import constraints
from keras import initializers
from keras import ops
from keras import regularizers

from keras_recurrent._checks import check_bool
from keras_recurrent._checks import check_known_last_axis
from keras_recurrent._checks import check_layer_seed
from keras_recurrent._checks import check_positive_int
from keras_recurrent._checks import check_rate
from keras_recurrent._rules import unpack_inputs
from keras_recurrent.layers._concrete import in_xla_context
from keras_recurrent.layers._concrete import on_meta_device
from keras_recurrent.layers._initializers import gate_bias
from keras_recurrent.layers._initializers import serialize_weight_options
from keras_recurrent.layers._known_rank import KnownRankInputs
from keras_recurrent.layers._tree_checks import bad_trees
from keras_recurrent.layers._tree_checks import check_children
from keras_recurrent.layers._tree_checks import check_host_children
from keras_recurrent.layers._tree_checks import check_tree_dtypes
from keras_recurrent.layers._tree_checks import check_tree_input_shapes
from keras_recurrent.layers._tree_checks import children_as_int32
from keras_recurrent.layers._tree_levels import flat_child_rows
from keras_recurrent.layers._tree_levels import level_order
from keras_recurrent.layers._tree_levels import real_node_index
from keras_recurrent.layers._tree_levels import reduce_parents
from keras_recurrent.layers._tree_levels import static_schedule
from keras_recurrent.layers._tree_schedule import bad_schedules
from keras_recurrent.layers._tree_schedule import check_schedule_eagerly
from keras_recurrent.layers._tree_schedule import check_schedule_shape
from keras_recurrent.layers._tree_schedule import schedule_rows
from keras_recurrent.layers._tree_schedule import split_schedule
from keras_recurrent.trees.validation import TREE_TENSOR_NAMES


class TreeLSTMBase(KnownRankInputs, keras.layers.Layer):
    """Level-batched Tree-LSTM; subclasses define the weights and one level.

    The base owns the arguments, the checks, `kernel` `(features, 4 *
    units)` and `bias` `(4 * units,)` (gate blocks `[i, f, o, u]`), the
    leaves and the level loop. A subclass fills in the hooks, each declared
    below with its contract:

    - `_recurrent_kernel_shape(units)`: the shape of `recurrent_kernel`.
    - `_update(weights, projected, child_h, child_c)`: one level, the new
      `(h, c)` of `M` inner nodes from their input projections and their
      children's states.
    - Optionally `_level_weights()`, what `_update` reads of the weights,
      prepared once per call, outside the loop (the `recurrent_kernel` by
      default), and `_arity`, the fixed number of children (`None`: any).

    Leaves do not go through `_update`: the base computes them all at once
    as `c = σ(x_i) ⊙ tanh(x_u)`, `h = σ(x_o) ⊙ tanh(c)`, what a Tree-LSTM
    update gives with no children. `docs/guides/adding_a_cell.md` subclasses
    the base step by step.

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

    input_tensor_names = TREE_TENSOR_NAMES

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
        self.seed = check_layer_seed(seed)
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
        input_shape, levels_shape = split_schedule(input_shape)
        shapes = unpack_inputs(self, input_shape, TREE_TENSOR_NAMES)
        check_tree_input_shapes(self, shapes, arity=self._arity)
        if levels_shape is not None:
            check_schedule_shape(self, levels_shape, shapes[1])
        features = check_known_last_axis("node_inputs", shapes[0])[-1]
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

    def _recurrent_kernel_shape(self, units):
        """The shape of `recurrent_kernel`, which `build` creates.

        Args:
            units: The layer's `units`.

        Returns:
            A tuple of ints: `(units, 4 * units)` for the Child-Sum
            Tree-LSTM, `(arity * units, (3 + arity) * units)` for the
            N-ary one.
        """
        raise NotImplementedError(
            f"{type(self).__name__} must define `_recurrent_kernel_shape`."
        )

    def _update(self, weights, projected, child_h, child_c):
        """One level of the loop: the new states of `M` inner nodes.

        Called once per level, inside the loop (under `ops.while_loop`,
        `fori_loop` or XLA), so it must use `keras.ops` alone and no Python
        control flow on tensor values. `M` and `K` may be unknown.

        Args:
            weights: What `_level_weights()` returned, read once per call
                (the `recurrent_kernel` by default).
            projected: `(M, (3 + F) * units)`, the nodes' input projections
                `x W + b` with the gate blocks reordered to `[i, o, u, f]`
                (`_input_weights`); `F = 1`, or the `_arity` with the
                forget block repeated once per child slot, `[i, o, u, f_1,
                ..., f_K]`.
            child_h: `(M, K, units)`, the `h` of each node's `K` child
                slots (`K` = the width of `children`), zero in empty slots,
                with recurrent dropout applied.
            child_c: `(M, K, units)`, the `c` of the same slots, zero in
                empty slots.

        Returns:
            The tuple `(h, c)` of the nodes' new states, each `(M, units)`,
            in the compute dtype.
        """
        raise NotImplementedError(
            f"{type(self).__name__} must define `_update`."
        )

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

    def check_host_inputs(self, inputs):
        check_host_children(self, split_schedule(inputs)[0])

    def call(self, inputs, training=False):
        inputs, levels = split_schedule(inputs)
        # `convert_to_tensor` also moves tensors to the backend's device
        # (with PyTorch, `fit` may pass integer inputs on the CPU).
        node_inputs, children, node_mask = (
            ops.convert_to_tensor(tensor)
            for tensor in unpack_inputs(self, inputs, TREE_TENSOR_NAMES)
        )
        check_tree_dtypes(self, node_inputs, children, node_mask)
        check_tree_input_shapes(
            self,
            [node_inputs.shape, children.shape, node_mask.shape],
            arity=self._arity,
        )
        if levels is not None:
            levels = ops.convert_to_tensor(levels)
            check_schedule_shape(self, levels.shape, children.shape)
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
        children, checked = children_as_int32(self, children, node_mask)
        if in_xla_context():
            outputs = self._call_static(
                node_inputs, children, node_mask, training, levels
            )
        else:
            # TensorFlow without XLA and PyTorch run dynamic shapes: there,
            # the level order derived in the graph over the real nodes
            # alone (no padding rows, no empty window rows) is faster than
            # the host's schedule, which is left unread
            # (docs/design/tree_lstm.md).
            outputs = self._call_dynamic(
                node_inputs, children, node_mask, training, checked
            )
        return outputs if self.return_state else outputs[0]

    def _call_dynamic(
        self, node_inputs, children, node_mask, training, checked=False
    ):
        """The level loop over the real nodes alone (dynamic shapes)."""
        batch_size, num_nodes = ops.shape(children)[0], ops.shape(children)[1]
        total = batch_size * num_nodes
        index = real_node_index(children, node_mask)
        node_children = index["node_children"]
        parent = check_children(
            self,
            children,
            node_mask,
            reduce_parents(node_children, ops.segment_min),
            reduce_parents(node_children, ops.segment_max),
            index["index_of"][:total],
            checked,
        )
        order = level_order(node_children, parent, index["num_real"])
        # The rows of the flat batch in level order.
        rows = ops.take(index["real_rows"], order["by_level"])
        num_leaves = order["num_leaves"]
        leaf_x, inner_x = self._level_sorted_inputs(
            node_inputs, total, rows, num_leaves, training
        )
        kernel, bias = self._input_weights()
        leaf_h, leaf_c = self._leaf_states(leaf_x, kernel, bias)
        recurrent_mask = None
        if training and self.recurrent_dropout > 0:
            recurrent_mask = self._tree_dropout_mask(
                batch_size, ops.floor_divide(rows[num_leaves:], num_nodes)
            )
        h, c = self._dynamic_levels(
            order, inner_x, (kernel, bias), recurrent_mask, leaf_h, leaf_c
        )
        return self._dynamic_outputs(
            (h, c), index, order["slot"], batch_size, num_nodes
        )

    def _level_sorted_inputs(
        self, node_inputs, total, rows, num_leaves, training
    ):
        """The leaves' and the inner nodes' inputs in level order, with
        input dropout."""
        flat_inputs = ops.reshape(
            ops.cast(node_inputs, self.compute_dtype),
            (total, self.kernel.shape[0]),
        )
        # The leaves' and the inner nodes' inputs, in two gathers, so that
        # neither pass slices them apart.
        leaf_x, inner_x = (
            ops.take(flat_inputs, part, axis=0)
            for part in (rows[:num_leaves], rows[num_leaves:])
        )
        if training and self.dropout > 0:
            leaf_x, inner_x = (
                keras.random.dropout(x, self.dropout, seed=self.seed_generator)
                for x in (leaf_x, inner_x)
            )
        return leaf_x, inner_x

    def _leaf_states(self, leaf_x, kernel, bias):
        """The states `(h, c)` of the leaves, computed at once."""
        # The leaves have no children: with zero child states the cell
        # reduces to c = i * u, h = o * tanh(c), computed for all of them
        # at once, before the loop (most nodes are leaves). They need no
        # forget gate, so they are projected on the [i, o, u] columns only.
        units = self.units

        def input_gates(weight):  # The [i, o, u] blocks.
            blocks = ops.split(weight, weight.shape[-1] // units, axis=-1)
            return ops.concatenate(blocks[:3], axis=-1)

        return self._leaf_states_of_projections(
            self._project(
                leaf_x,
                input_gates(kernel),
                None if bias is None else input_gates(bias),
            )
        )

    @staticmethod
    def _projects_in_loop(kernel):
        """Whether the level loops read the inputs and project their rows
        themselves: when the inputs are narrower than their projections,
        so that the rows read per step (and their gradients) are smaller.
        """
        return kernel.shape[0] < kernel.shape[1]

    def _leaf_states_of_projections(self, projected):
        """The states `(h, c)` of leaves from their projections, whose
        first blocks are `[i, o, u]`."""
        units = self.units
        x_i, x_o, x_u = ops.split(projected[:, : 3 * units], 3, axis=-1)
        leaf_c = self.recurrent_activation(x_i) * self.activation(x_u)
        leaf_h = self.recurrent_activation(x_o) * self.activation(leaf_c)
        return leaf_h, leaf_c

    def _tree_dropout_mask(self, num_trees, tree_of_row):
        """The recurrent dropout mask of each row: one mask per tree."""
        # One mask per tree, as Keras' recurrent dropout keeps one per
        # sequence; a node's children are in its tree, so each node
        # applies the mask of its own tree to its children's `h`.
        return ops.take(
            keras.random.dropout(
                ops.ones((num_trees, self.units), dtype=self.compute_dtype),
                self.recurrent_dropout,
                seed=self.seed_generator,
            ),
            tree_of_row,
            axis=0,
        )

    def _dynamic_levels(
        self, order, inner_x, input_weights, recurrent_mask, leaf_h, leaf_c
    ):
        """The level loop of `_call_dynamic`, fed by its level order: each
        level is a contiguous block of the level-sorted real nodes."""
        kernel, bias = input_weights
        num_leaves, bounds = order["num_leaves"], order["bounds"]
        inner_slots = order["inner_slots"]
        # The loop updates the inner nodes, one level per step. With
        # TensorFlow, every tensor the loop reads rows of gets a dense
        # gradient per step, so it reads only the inner nodes' rows.
        project_in_loop = self._projects_in_loop(kernel)
        if not project_in_loop:
            inner_x = self._project(inner_x, kernel, bias)

        def level_rows(level, h, c):
            del h, c
            start, stop = bounds[level], bounds[level + 1]
            block = ops.arange(start - num_leaves, stop - num_leaves)
            # A slice, not `take` (which adds five ops to wrap negative
            # indices): `inner_slots` has no gradient.
            slots = inner_slots[start - num_leaves : stop - num_leaves]
            # The level's nodes are the rows `start:stop`.
            return block, slots, block + num_leaves, None

        inner_zeros = ops.zeros(
            (order["num_real"] - num_leaves + 1, self.units),
            dtype=self.compute_dtype,
        )
        return self._level_loop(
            level_rows,
            (1, order["num_levels"], None),
            inner_x,
            (kernel, bias) if project_in_loop else None,
            recurrent_mask,
            ops.concatenate([leaf_h, inner_zeros]),
            ops.concatenate([leaf_c, inner_zeros]),
        )

    def _level_loop(
        self,
        level_rows,
        bounds,
        x,
        input_weights,
        recurrent_mask,
        h,
        c,
        add_into_zeros=False,
    ):
        """The level loop of every path: one step per level.

        `level_rows(level, h, c)` gives the level's `(rows, slots, out,
        valid)`: the rows of `x` (its projections, or its inputs when
        `input_weights` are given, to project in the loop) and of
        `recurrent_mask` of the level's nodes, their children's rows
        `(M, K)` in `h` and `c`, the rows their new states go to, and
        `None` or `(M,)` bool, whether each is a node (the others write
        zeros). `bounds` is `(first, stop, most)`: the levels
        `first <= level < stop`; `most`, where `stop` is a tensor, bounds
        the number of steps for XLA's gradient and JAX (`None` where no
        bound is needed); a Python `stop` is a loop of static length.

        With `add_into_zeros`, the rows a step writes must hold zeros (each
        row is written once): the new states are added into them with
        `h + scatter(...)`, which XLA turns into one in-place scatter-add,
        also in the gradient. A `scatter_update` there makes the gradient
        of every compiled step touch all `B * N` rows (a dense cotangent
        per step; `docs/design/tree_lstm.md`).
        """
        weights = self._level_weights()
        first, stop, most = bounds

        def step(level, h, c):
            rows, slots, out, valid = level_rows(level, h, c)
            child_h = ops.take(h, slots, axis=0)
            if recurrent_mask is not None:
                child_h = child_h * ops.expand_dims(
                    ops.take(recurrent_mask, rows, axis=0), 1
                )
            projected = ops.take(x, rows, axis=0)
            if input_weights is not None:
                projected = self._project(projected, *input_weights)
            new_h, new_c = self._update(
                weights, projected, child_h, ops.take(c, slots, axis=0)
            )
            if valid is not None:
                # Padding entries write zeros into the zero row.
                valid = ops.expand_dims(valid, -1)
                new_h = ops.where(valid, new_h, 0.0)
                new_c = ops.where(valid, new_c, 0.0)
            # A scatter (`slice_update` has no TensorFlow gradient; the
            # layouts measured slower are in docs/design/tree_lstm.md).
            out = ops.expand_dims(out, -1)
            if add_into_zeros:
                return (
                    h + ops.scatter(out, new_h, ops.shape(h)),
                    c + ops.scatter(out, new_c, ops.shape(c)),
                )
            return (
                ops.scatter_update(h, out, new_h),
                ops.scatter_update(c, out, new_c),
            )

        backend = keras.backend.backend()
        if isinstance(stop, int):
            # A host schedule: as many steps as it has levels, a static
            # number (JAX differentiates a `fori_loop` of static bounds).
            if backend != "tensorflow":
                return ops.fori_loop(
                    first,
                    stop,
                    lambda level, states: step(level, *states),
                    (h, c),
                )
            most = stop - first
        elif backend == "jax" and most is not None:
            # A loop with static bounds (JAX differentiates no
            # `while_loop`); the levels past the last one are skipped.
            def jax_body(level, states):
                return ops.cond(
                    ops.less(level, stop),
                    lambda: step(level, *states),
                    lambda: states,
                )

            return ops.fori_loop(first, most + first, jax_body, (h, c))
        _, h, c = ops.while_loop(
            lambda level, h, c: ops.less(level, stop),
            lambda level, h, c: (level + 1, *step(level, h, c)),
            (ops.convert_to_tensor(first, dtype="int32"), h, c),
            maximum_iterations=most,
        )
        return h, c

    def _dynamic_outputs(self, states, index, slot, batch_size, num_nodes):
        """The outputs of `_call_dynamic`: every node's or each root's
        `[h, c]`, gathered from the level-ordered `states`."""
        units = self.units
        total = batch_size * num_nodes
        index_of = index["index_of"]
        if self.return_nodes:
            row_slots = ops.take(slot, index_of[:total])
            return [
                ops.reshape(
                    ops.take(state, row_slots, axis=0),
                    (batch_size, num_nodes, units),
                )
                for state in states
            ]
        tree_sizes = ops.sum(
            ops.reshape(
                ops.cast(index["real"], "int32"), (batch_size, num_nodes)
            ),
            axis=1,
        )
        # The last real row of each tree (`total`, the zero row, for an
        # empty tree).
        root_rows = ops.where(
            ops.greater(tree_sizes, 0),
            ops.arange(batch_size, dtype="int32") * num_nodes + tree_sizes - 1,
            total,
        )
        roots = ops.take(slot, ops.take(index_of, root_rows))
        return [ops.take(state, roots, axis=0) for state in states]

    def _call_static(
        self,
        node_inputs,
        children,
        node_mask,
        training,
        levels=None,
    ):
        """The level loop with static shapes, for XLA and JAX, fed by the
        host schedule `levels` or by one derived in the graph.

        The states live in two arrays `(B * N + 1, units)` (row `b * N + v`
        is node `v` of tree `b`; the last row is the zero state of empty
        slots). All rows are computed as leaves at once; then each step of
        the loop updates the nodes of one level through a window of a
        static size: with `levels` `(B, L, W)`, the `B * W` rows of step
        `l`, `L` steps; without, `B * ceil(N / 2)` rows (a tree has at
        most `N // 2` inner nodes at one depth) read from the rows sorted
        by level in the graph. Unused window rows read and write the zero
        row. Trees with bad `children`, or whose `levels` disagree with
        them, take no part and get NaN outputs (no assertion can run in
        compiled code).
        """
        units = self.units
        batch_size, num_nodes = ops.shape(children)[0], ops.shape(children)[1]
        total = batch_size * num_nodes
        real = ops.cast(node_mask, "bool")
        bad = bad_trees(children, real)
        if levels is None:
            schedule = static_schedule(children, real, bad)
        else:
            levels = ops.cast(levels, "int32")
            check_schedule_eagerly(self, levels, children, node_mask)
            bad = ops.logical_or(bad, bad_schedules(levels, children, real))
            schedule = self._host_schedule(levels, children, real, bad)
        # Phase 1: every row's projection, and the leaves' states (zeros
        # in the rows that the loop writes, and in padding rows).
        flat_real = ops.reshape(schedule["real"], (-1, 1))
        is_parent = ops.any(
            ops.less(schedule["child_rows"][:total], total), axis=1
        )
        x, input_weights, h, c = self._static_leaves(
            node_inputs,
            flat_real,
            ops.logical_and(flat_real, ops.logical_not(is_parent[:, None])),
            training,
        )
        recurrent_mask = None
        if training and self.recurrent_dropout > 0:
            # One mask per tree, as in the dynamic path.
            recurrent_mask = self._tree_dropout_mask(
                batch_size + 1,
                ops.arange(total + 1, dtype="int32") // num_nodes,
            )
        # Phase 2: the inner nodes, one level per step.
        h, c = self._static_levels(
            schedule, x, input_weights, recurrent_mask, h, c, num_nodes
        )
        # Phase 3: the outputs; NaN for the trees with bad `children`.
        return self._static_outputs((h, c), real, bad, units)

    @staticmethod
    def _host_schedule(levels, children, real, bad):
        """`_call_static`'s schedule from a host schedule `levels`: the
        real nodes of the good trees, each row's children as rows, and the
        rows of each step (`schedule_rows`), the bad trees' rows out."""
        batch_size, num_nodes = ops.shape(children)[0], ops.shape(children)[1]
        total = batch_size * num_nodes
        real = ops.logical_and(real, ops.logical_not(ops.expand_dims(bad, -1)))
        flat_real = ops.reshape(real, (-1,))
        child_rows = ops.where(
            ops.expand_dims(flat_real, -1),
            flat_child_rows(children, total),
            total,
        )
        rows = schedule_rows(levels, num_nodes)
        good_row = ops.concatenate([flat_real, ops.zeros((1,), "bool")])
        return {
            "real": real,
            "child_rows": ops.concatenate(
                [child_rows, ops.full_like(child_rows[:1], total)]
            ),
            "rows": ops.where(ops.take(good_row, rows), rows, total),
        }

    def _static_leaves(self, node_inputs, flat_real, flat_leaf, training):
        """What the loop reads its nodes' projections from, and the
        leaves' states `(h, c)` (zeros for the other rows), each with the
        zero row appended.

        Returns `(x, input_weights, h, c)`: `x` holds every row's inputs
        and `input_weights` the weights that the loop projects its rows
        with, where the inputs are narrower than their projections (as on
        the dynamic path); else `x` holds every row's projection and
        `input_weights` is `None`. The leaves' states come from the `[i,
        o, u]` columns alone."""
        flat_inputs = ops.where(
            flat_real,
            ops.reshape(
                ops.cast(node_inputs, self.compute_dtype),
                (ops.shape(flat_real)[0], self.kernel.shape[0]),
            ),
            0.0,
        )
        if training and self.dropout > 0:
            flat_inputs = keras.random.dropout(
                flat_inputs, self.dropout, seed=self.seed_generator
            )
        kernel, bias = self._input_weights()
        if self._projects_in_loop(kernel):
            leaf_h, leaf_c = self._leaf_states(flat_inputs, kernel, bias)
            x, input_weights = flat_inputs, (kernel, bias)
        else:
            x = self._project(flat_inputs, kernel, bias)
            leaf_h, leaf_c = self._leaf_states_of_projections(x)
            input_weights = None
        h, c = (
            ops.concatenate(
                [
                    ops.where(flat_leaf, state, 0.0),
                    ops.zeros((1, self.units), dtype=self.compute_dtype),
                ]
            )
            for state in (leaf_h, leaf_c)
        )
        x = ops.concatenate([x, ops.zeros_like(x[:1])])
        return x, input_weights, h, c

    def _static_outputs(self, states, real, bad, units):
        """The outputs of `_call_static`: every node's or each root's
        `[h, c]`, NaN for the trees in `bad`."""
        batch_size, num_nodes = ops.shape(real)[0], ops.shape(real)[1]
        total = batch_size * num_nodes
        if self.return_nodes:
            return [
                ops.where(
                    ops.reshape(bad, (-1, 1, 1)),
                    float("nan"),
                    ops.reshape(state[:total], (batch_size, num_nodes, units)),
                )
                for state in states
            ]
        sizes = ops.sum(ops.cast(real, "int32"), axis=1)
        roots = ops.where(
            ops.greater(sizes, 0),
            ops.arange(batch_size, dtype="int32") * num_nodes + sizes - 1,
            total,
        )
        return [
            ops.where(
                ops.expand_dims(bad, -1),
                float("nan"),
                ops.take(state, roots, axis=0),
            )
            for state in states
        ]

    def _static_levels(
        self, schedule, x, input_weights, recurrent_mask, h, c, n
    ):
        """The level loop of `_call_static`, fed by a host schedule (the
        rows of each step) or by the level order derived in the graph."""
        total = ops.shape(h)[0] - 1
        child_rows = schedule["child_rows"]
        if "rows" in schedule:
            step_rows = schedule["rows"]

            def level_rows(level, h, c):
                del h, c
                rows = step_rows[level]
                return (
                    rows,
                    ops.take(child_rows, rows, axis=0),
                    rows,
                    ops.less(rows, total),
                )

            num_steps = step_rows.shape[0]
            if num_steps is None:
                # A `tf.function` traced for any shape, compiled by XLA
                # for each.
                num_steps = ops.shape(step_rows)[0]
            bounds = (0, num_steps, num_steps)
        else:
            window = ops.shape(schedule["order"])[0] - total

            def level_rows(level, h, c):
                del h, c
                valid = ops.less(
                    ops.arange(window, dtype="int32"),
                    schedule["counts"][level],
                )
                rows = ops.where(
                    valid,
                    ops.slice(
                        schedule["order"], [schedule["starts"][level]], [window]
                    ),
                    total,
                )
                return rows, ops.take(child_rows, rows, axis=0), rows, valid

            # A bound XLA needs for the gradient, and JAX's static loop
            # (a tree has at most N levels).
            bounds = (1, schedule["num_levels"], n)
        return self._level_loop(
            level_rows,
            bounds,
            x,
            input_weights,
            recurrent_mask,
            h,
            c,
            add_into_zeros=True,
        )

    def compute_output_shape(self, input_shape):
        input_shape, _ = split_schedule(input_shape)
        shapes = unpack_inputs(self, input_shape, TREE_TENSOR_NAMES)
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
