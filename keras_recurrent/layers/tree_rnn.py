"""`TreeRNN`: any tree cell over a batch of padded trees, level by level."""

import warnings
import weakref

import keras
from keras import ops

from keras_recurrent._checks import check_bool
from keras_recurrent._checks import check_known_last_axis
from keras_recurrent._rules import unpack_inputs
from keras_recurrent.layers._concrete import in_xla_context
from keras_recurrent.layers._concrete import on_meta_device
from keras_recurrent.layers._concrete import refuse_torchscript_trace
from keras_recurrent.layers._concrete import torch_exporting
from keras_recurrent.layers._known_rank import KnownRankInputs
from keras_recurrent.layers._tree_checks import bad_trees
from keras_recurrent.layers._tree_checks import check_children
from keras_recurrent.layers._tree_checks import check_host_children
from keras_recurrent.layers._tree_checks import check_tree_dtypes
from keras_recurrent.layers._tree_checks import check_tree_input_shapes
from keras_recurrent.layers._tree_checks import children_as_int32
from keras_recurrent.layers._tree_levels import dynamic_schedule
from keras_recurrent.layers._tree_levels import node_parents
from keras_recurrent.layers._tree_levels import real_node_index
from keras_recurrent.layers._tree_levels import static_schedule
from keras_recurrent.layers._tree_schedule import bad_schedules
from keras_recurrent.layers._tree_schedule import check_schedule_eagerly
from keras_recurrent.layers._tree_schedule import check_schedule_shape
from keras_recurrent.layers._tree_schedule import host_schedule
from keras_recurrent.layers._tree_schedule import split_schedule
from keras_recurrent.trees.validation import TREE_TENSOR_NAMES

# The layers that have warned of a call without `tree_levels` (once each).
_WARNED = weakref.WeakSet()

# What deriving the schedule in the compiled graph costs: a Keras train
# step of `ChildSumTreeLSTM(64)` on ListOps batches of 64 trees (up to 100
# tokens, `encode_trees`' per-tree schedule), on a CPU, without
# `tree_levels` over with it (656 against 37 ms under XLA, 2551 against
# 54 ms on JAX; TensorFlow without XLA took 21 ms).
UNSCHEDULED_COST = "about 18x slower under TensorFlow's XLA and 47x on JAX"


@keras.saving.register_keras_serializable(package="keras_recurrent")
class TreeRNN(KnownRankInputs, keras.layers.Layer):
    """Runs a tree cell over a batch of padded trees, level by level.

    The tree analogue of `keras.layers.RNN`: the cell computes one node
    from its input and its children's states; the layer runs it over every
    node of every tree, children before parents. Each step of its loop
    updates every node of every tree at the same level at once, so a batch
    takes as many sequential steps as its tallest tree has levels, not as
    it has nodes. The leaves, most nodes of a tree, are computed all at
    once before the loop.

    The tree-cell contract. A tree cell is a `keras.layers.Layer` with:

    - `state_size`: an int, or a list of ints for several states (`[h, c]`
      for the Tree-LSTMs); `output_size`: an int.
    - `call(inputs, child_states, child_mask, training=False)`, which
      returns `(output, new_states)` for the `M` nodes of one step:
        - `inputs` is `(M, D)`, the nodes' inputs;
        - `child_states` is always a list, one `(M, K, s)` tensor per state
          (`K` child slots), with zeros in empty slots;
        - `child_mask` is `(M, K)`, in the compute dtype: 1.0 for a real
          child, 0.0 for an empty slot;
        - `output` is `(M, output_size)` and `new_states` a list of
          `(M, s)`.

      A leaf is a node whose `child_mask` row is all zeros (its
      `child_states` are zeros). `call` runs inside the loop (a
      `while_loop`, `fori_loop` or XLA), so it uses `keras.ops` alone and
      no Python control flow on tensor values; `M` may be unknown.
    - `build(input_shape)`, with `input_shape` `(None, D)`, and
      `get_config()` for saving.
    - Optionally `arity`, a fixed number of child slots: `children` must
      then have `K = arity`.

    A cell with this much works everywhere: eagerly, in a `tf.function`,
    under XLA, on JAX and on PyTorch, in `fit`, `predict` and export.
    Optional methods make it faster; the loop uses them where they exist:

    - `leaf_step(inputs, training=False)` returns `(output, new_states)`
      of leaves (`M` rows of `inputs`), without child states to read
      (otherwise: `call` with zero children).
    - `prepare_loop(inputs, tree_ids, num_trees, training=False)`, called
      once per call before the loop, returns `(loop_inputs, loop_state)`:
      `loop_inputs` is a tensor or a structure of tensors with one row per
      row of `inputs` (e.g. their input projections, made for all nodes in
      one matmul, or per-tree dropout masks: `tree_ids` `(R,)` gives each
      row's tree in `[0, num_trees)`), which the loop gathers for each
      step's nodes; `loop_state` is what every step reads unchanged (e.g.
      the weights arranged once). With it, the cell also has
      `step(loop_inputs, child_states, child_mask, loop_state)`, which
      returns `(output, new_states)` like `call`.

    Trees come as `kr.trees.encode_trees` encodes them: nodes in
    topological order (every child's index smaller than its parent's, the
    real nodes first, the root the last real node), each real node but the
    root the child of exactly one node. Bad `children` raise a
    `ValueError` eagerly, an `InvalidArgumentError` in a traced TensorFlow
    function and, in compiled code (XLA, a jitted JAX function), which
    cannot raise on values, give that tree NaN outputs while the other
    trees of the batch are computed as if it were absent.

    The schedule. One loop runs every path; what feeds it is a schedule,
    the rows that each step updates. The optional fourth input
    `tree_levels` `(batch, L, W)` is a schedule made on the host
    (`kr.trees.tree_levels`; `kr.trees.encode_trees`,
    `kr.trees.padded_batch` and `kr.trees.tree_inputs` add it by default).
    Under XLA (`jit_compile=True`, which Keras' `"auto"` picks on a GPU)
    and on JAX, where shapes must be static, the loop reads it: `L` steps
    of `batch * W` rows. Without it, the layer derives a schedule in the
    compiled graph, with windows of `batch * ceil(N / 2)` rows and up to
    `N` steps: a ListOps train step took 18x as long under XLA and 47x on
    JAX (it warns once, with the cost). With
    dynamic shapes (TensorFlow without XLA, PyTorch), the layer derives the
    level order of the real nodes alone in the graph, which is faster
    there than any host schedule, and leaves `tree_levels` unread. An
    export on PyTorch (`torch.export`, and ONNX through it) records loops
    of a static length only, so it reads `tree_levels` as XLA does, and
    needs it (with every size fixed; `kr.trees.pad_tree_levels`).

    Args:
        cell: A tree cell, as above.
        return_nodes: Whether to return the output of every node,
            `(batch, N, output_size)` (zeros at padding), instead of the
            root's, `(batch, output_size)`. Defaults to `False`.
        return_state: Whether to return the states as well: the list
            `[output, *states[1:]]`, of the root or of every node like the
            output (a tree cell's first state is its output, as `h` for the
            Tree-LSTMs, so `[h, c]`). Defaults to `False`.
        **kwargs: Standard layer keyword arguments, such as `name` and
            `dtype`.

    Call arguments:
        inputs: The list `[node_inputs, children, node_mask]` or
            `[node_inputs, children, node_mask, tree_levels]`, or a dict
            with these keys:

            - `node_inputs`: float `(batch, N, D)`;
            - `children`: int `(batch, N, K)`, child indices within the
              same tree, `-1` for an empty slot;
            - `node_mask`: bool or int `(batch, N)`, nonzero for real nodes;
            - `tree_levels` (optional): int `(batch, L, W)`, the schedule.
        training: Python boolean, passed to the cell.

    Returns:
        The root outputs `(batch, output_size)`, or with `return_nodes`
        every node's `(batch, N, output_size)`, zeros at padding; with
        `return_state`, a list (above). An empty tree gives zeros.

    Example:

    A Child-Sum tree RNN in a few lines: `h = tanh(x W + Σ_k h_k U)`.

    ```python
    class TreeRNNCell(keras.layers.Layer):
        def __init__(self, units, **kwargs):
            super().__init__(**kwargs)
            self.units = units
            self.state_size = units
            self.output_size = units

        def build(self, input_shape):
            self.kernel = self.add_weight(shape=(input_shape[-1], self.units))
            self.recurrent_kernel = self.add_weight(
                shape=(self.units, self.units)
            )

        def call(self, inputs, child_states, child_mask, training=False):
            child_sum = ops.sum(child_states[0], axis=1)
            h = ops.tanh(
                ops.matmul(inputs, self.kernel)
                + ops.matmul(child_sum, self.recurrent_kernel)
            )
            return h, [h]

        def get_config(self):
            return {**super().get_config(), "units": self.units}

    trees = kr.trees.encode_trees(["(1 2 3)", "(4 (5 6) 7 8)"])
    node_inputs = keras.layers.Embedding(10, 8)(trees["node_tokens"])
    layer = kr.layers.TreeRNN(TreeRNNCell(16))
    roots = layer({**trees, "node_inputs": node_inputs})  # (2, 16)
    ```

    `kr.layers.ChildSumTreeLSTM` and `kr.layers.NaryTreeLSTM` are this
    layer over `kr.layers.ChildSumTreeLSTMCell` and
    `kr.layers.NaryTreeLSTMCell`.

    Reference:
        - [Tai et al., 2015. Improved Semantic Representations From
          Tree-Structured Long Short-Term Memory Networks](
          https://arxiv.org/abs/1503.00075)
        - [Looks et al., 2017. Deep Learning with Dynamic Computation
          Graphs](https://arxiv.org/abs/1702.02181) (level batching)
    """

    input_tensor_names = TREE_TENSOR_NAMES

    def __init__(self, cell, return_nodes=False, return_state=False, **kwargs):
        super().__init__(**kwargs)
        missing = [
            name
            for name in ("state_size", "output_size", "call")
            if not hasattr(cell, name)
        ]
        if missing or not isinstance(cell, keras.layers.Layer):
            raise ValueError(
                "TreeRNN takes a tree cell: a `keras.layers.Layer` with "
                "`state_size`, `output_size` and `call(inputs, "
                "child_states, child_mask, training=False)`"
                + (f"; this one has no {missing}" if missing else "")
                + f". Received: cell={cell!r}"
            )
        self.cell = cell
        self.return_nodes = check_bool("return_nodes", return_nodes)
        self.return_state = check_bool("return_state", return_state)

    @property
    def _state_sizes(self):
        size = self.cell.state_size
        return list(size) if isinstance(size, (list, tuple)) else [size]

    @property
    def _arity(self):
        return getattr(self.cell, "arity", None)

    def build(self, input_shape):
        input_shape, levels_shape = split_schedule(input_shape)
        shapes = unpack_inputs(self, input_shape, TREE_TENSOR_NAMES)
        check_tree_input_shapes(self, shapes, arity=self._arity)
        if levels_shape is not None:
            check_schedule_shape(self, levels_shape, shapes[1])
        features = check_known_last_axis("node_inputs", shapes[0])[-1]
        if not self.cell.built:
            self.cell.build((None, features))

    def check_host_inputs(self, inputs):
        check_host_children(self, split_schedule(inputs)[0])

    def compute_output_shape(self, input_shape):
        input_shape, _ = split_schedule(input_shape)
        shapes = unpack_inputs(self, input_shape, TREE_TENSOR_NAMES)
        lead = (shapes[1][0],)
        if self.return_nodes:
            lead += (shapes[1][1],)
        output = lead + (self.cell.output_size,)
        if not self.return_state:
            return output
        return [output] + [lead + (size,) for size in self._state_sizes[1:]]

    def call(self, inputs, training=False):
        inputs, levels = split_schedule(inputs)
        # `convert_to_tensor` also moves tensors to the backend's device
        # (with PyTorch, `fit` may pass integer inputs on the CPU).
        node_inputs, children, node_mask = (
            ops.convert_to_tensor(tensor)
            for tensor in unpack_inputs(self, inputs, TREE_TENSOR_NAMES)
        )
        check_tree_dtypes(self, node_inputs, children, node_mask)
        shapes = [node_inputs.shape, children.shape, node_mask.shape]
        check_tree_input_shapes(self, shapes, arity=self._arity)
        if levels is not None:
            levels = ops.convert_to_tensor(levels)
            check_schedule_shape(self, levels.shape, children.shape)
        if on_meta_device(node_inputs, children, node_mask):
            # Shape inference: the level loop needs values, a `"meta"`
            # tensor has none.
            shape = self.compute_output_shape(shapes)
            return keras.tree.map_shape_structure(
                lambda s: ops.zeros(s, dtype=self.compute_dtype), shape
            )
        children, checked = children_as_int32(self, children, node_mask)
        exporting = keras.backend.backend() == "torch" and torch_exporting()
        if exporting:
            refuse_torchscript_trace(
                self,
                "the traced sizes",
                "Export with an `input_signature` whose sizes are all known "
                "(batch, `N`, and `tree_levels`' `(L, W)`): Keras then "
                "exports with `torch.export`, which the tree layers support.",
            )
        if exporting and levels is None:
            raise ValueError(
                f"{type(self).__name__} {self.name!r}: PyTorch exports "
                "(`torch.export`, ONNX) only loops of a static length, so "
                "exporting a tree layer on PyTorch needs the schedule: pass "
                "`tree_levels` as the layer's fourth input (or dict key "
                "`'tree_levels'`), as `kr.trees.tree_inputs(K)` makes it, "
                "and fix its shape `(batch, L, W)` in the export's "
                "`input_signature` (e.g. with `kr.trees.pad_tree_levels`)."
            )
        if in_xla_context() or exporting:
            # Static shapes: also what PyTorch exports, a loop of `L`
            # steps without control flow on tensor values.
            schedule = self._static_schedule(children, node_mask, levels)
        else:
            # Dynamic shapes: the level order of the real nodes alone (no
            # padding rows, no empty window rows) is faster there than the
            # host's schedule, which is left unread
            # (docs/design/tree_lstm.md).
            schedule = self._dynamic_schedule(children, node_mask, checked)
        num_slots = ops.shape(children)[2]
        return self._run(schedule, node_inputs, num_slots, training)

    def _dynamic_schedule(self, children, node_mask, checked):
        """The level order of the real nodes, derived in the graph, after
        the checks of `children` (assertions in traced TensorFlow)."""
        total = ops.shape(children)[0] * ops.shape(children)[1]
        index = real_node_index(children, node_mask)
        node_children = index["node_children"]
        parent = check_children(
            self,
            children,
            node_mask,
            *node_parents(node_children),
            index["index_of"][:total],
            checked,
        )
        return dynamic_schedule(index, parent, ops.cast(node_mask, "bool"))

    def _static_schedule(self, children, node_mask, levels):
        """The host's schedule `levels`, or one derived in the graph, with
        static shapes; trees with bad `children` or `levels` in `bad`."""
        real = ops.cast(node_mask, "bool")
        bad = bad_trees(children, real)
        if levels is None:
            self._warn_unscheduled()
            return static_schedule(children, real, bad)
        levels = ops.cast(levels, "int32")
        check_schedule_eagerly(self, levels, children, node_mask)
        bad = ops.logical_or(bad, bad_schedules(levels, children, real))
        return host_schedule(levels, children, real, bad)

    def _warn_unscheduled(self):
        if self in _WARNED:
            return
        _WARNED.add(self)
        warnings.warn(
            f"{type(self).__name__} {self.name!r} runs without "
            "`tree_levels` under XLA (`jit_compile=True`, Keras' default on "
            "a GPU) or on JAX, so it derives its level schedule in the "
            f"compiled graph: a train step is {UNSCHEDULED_COST} than with "
            "the schedule. Pass the `tree_levels` that "
            "`kr.trees.encode_trees` and `kr.trees.padded_batch` add to "
            "each batch as the layer's fourth input (or its dict key "
            "`'tree_levels'`); `kr.trees.tree_inputs(K)` makes that input.",
            stacklevel=2,
        )

    def _run(self, schedule, node_inputs, num_slots, training):
        """The level loop: the leaves at once, then one step per entry of
        the schedule, then the outputs (module `_tree_levels` describes a
        schedule)."""
        cell = self.cell
        batch_size = ops.shape(node_inputs)[0]
        num_nodes = ops.shape(node_inputs)[1]
        total = batch_size * num_nodes
        flat_inputs = ops.reshape(
            ops.cast(node_inputs, cell.compute_dtype),
            (total, node_inputs.shape[-1]),
        )
        if schedule["input_mask"] is not None:
            # NaN at padding must reach neither outputs nor gradients.
            flat_inputs = ops.where(schedule["input_mask"], flat_inputs, 0.0)

        # The leaves, all at once.
        leaf_inputs = flat_inputs
        if schedule["leaf_rows"] is not None:
            leaf_inputs = ops.take(flat_inputs, schedule["leaf_rows"], axis=0)
        output, states = self._leaves(leaf_inputs, num_slots, training)
        # One array serves both where the output is the first state.
        shared = output is states[0]
        num_states = schedule["num_states"]

        def initial(array):
            if schedule["leaf_mask"] is not None:
                array = ops.where(schedule["leaf_mask"], array, 0.0)
            # The rows the loop writes, and the zero row.
            rest = num_states + 1 - ops.shape(array)[0]
            zeros = ops.zeros((rest, array.shape[-1]), dtype=array.dtype)
            return ops.concatenate([array, zeros])

        arrays = tuple(
            initial(a) for a in (states if shared else [output, *states])
        )

        # The inputs of the nodes the loop updates, as the cell reads them.
        if schedule["inner_rows"] is None:
            loop_x = ops.concatenate(
                [flat_inputs, ops.zeros_like(flat_inputs[:1])]
            )
            tree_ids = ops.arange(total + 1, dtype="int32") // num_nodes
            num_trees = batch_size + 1
        else:
            loop_x = ops.take(flat_inputs, schedule["inner_rows"], axis=0)
            tree_ids = ops.floor_divide(schedule["inner_rows"], num_nodes)
            num_trees = batch_size
        if hasattr(cell, "prepare_loop"):
            loop_x, loop_state = cell.prepare_loop(
                loop_x, tree_ids, num_trees, training=training
            )
            cell_step = cell.step
        else:
            loop_state = None

            def cell_step(inputs, child_states, child_mask, loop_state):
                return cell(inputs, child_states, child_mask, training=training)

        arrays = self._level_loop(
            schedule, loop_x, loop_state, cell_step, arrays, shared
        )
        return self._outputs(schedule, arrays, shared, batch_size, num_nodes)

    def _leaves(self, inputs, num_slots, training):
        """`(output, states)` of leaves, from `leaf_step` or `call`."""
        cell = self.cell
        if hasattr(cell, "leaf_step"):
            output, states = cell.leaf_step(inputs, training=training)
        else:
            count = ops.shape(inputs)[0]
            dtype = cell.compute_dtype
            output, states = cell(
                inputs,
                [
                    ops.zeros((count, num_slots, size), dtype=dtype)
                    for size in self._state_sizes
                ],
                ops.zeros((count, num_slots), dtype=dtype),
                training=training,
            )
        return output, list(states)

    def _level_loop(
        self, schedule, loop_x, loop_state, cell_step, arrays, shared
    ):
        """One step per level: gather the children's states of the step's
        nodes, run the cell, write the nodes' new states.

        With `add_into_zeros`, the rows a step writes hold zeros (each row
        is written once): the new states are added into them with
        `h + scatter(...)`, which XLA turns into one in-place scatter-add,
        also in the gradient. A `scatter_update` there makes the gradient
        of every compiled step touch all `B * N` rows (a dense cotangent
        per step; `docs/design/tree_lstm.md`).
        """
        level_rows = schedule["level_rows"]
        first, stop, most = schedule["bounds"]
        num_states = schedule["num_states"]
        # PyTorch's `ops.scatter` is a Python loop over the rows.
        add_into_zeros = (
            schedule["add_into_zeros"] and keras.backend.backend() != "torch"
        )
        mask_dtype = arrays[0].dtype

        def step(level, arrays):
            x_rows, slots, out, valid = level_rows(level)
            state_arrays = arrays if shared else arrays[1:]
            output, new_states = cell_step(
                keras.tree.map_structure(
                    lambda tensor: ops.take(tensor, x_rows, axis=0), loop_x
                ),
                [ops.take(array, slots, axis=0) for array in state_arrays],
                ops.cast(ops.less(slots, num_states), mask_dtype),
                loop_state,
            )
            if shared and output is not new_states[0]:
                raise ValueError(
                    f"{type(self).__name__}: the cell's leaves give their "
                    "first state as their output, its steps another tensor; "
                    "a tree cell must do the same for both. Received: "
                    f"cell={self.cell!r}"
                )
            new = list(new_states) if shared else [output, *new_states]
            if valid is not None:
                # Padding entries write zeros into the zero row.
                valid = ops.expand_dims(valid, -1)
                new = [ops.where(valid, value, 0.0) for value in new]
            # A scatter (`slice_update` has no TensorFlow gradient; the
            # layouts measured slower are in docs/design/tree_lstm.md).
            out = ops.expand_dims(out, -1)
            if add_into_zeros:
                return tuple(
                    array + ops.scatter(out, value, ops.shape(array))
                    for array, value in zip(arrays, new)
                )
            return tuple(
                ops.scatter_update(array, out, value)
                for array, value in zip(arrays, new)
            )

        backend = keras.backend.backend()
        if schedule["dense"] and backend != "tensorflow":
            # Every step of a host schedule, a static number: JAX
            # differentiates a `fori_loop` of static bounds, and PyTorch's
            # exports record no loop of a tensor's length (the padding
            # steps past `stop` write nothing). On JAX a `cond` that skipped
            # them would cost more than they do: its residuals are stacked
            # for every step.
            return ops.fori_loop(first, first + most, step, arrays)
        if backend == "jax" and most is not None:
            # A loop with static bounds (JAX differentiates no
            # `while_loop`); the levels past the last one are skipped.
            def jax_body(level, arrays):
                return ops.cond(
                    ops.less(level, stop),
                    lambda: step(level, arrays),
                    lambda: arrays,
                )

            return ops.fori_loop(first, most + first, jax_body, arrays)
        _, arrays = ops.while_loop(
            lambda level, arrays: ops.less(level, stop),
            lambda level, arrays: (level + 1, step(level, arrays)),
            (ops.convert_to_tensor(first, dtype="int32"), arrays),
            maximum_iterations=most,
        )
        return arrays

    def _outputs(self, schedule, arrays, shared, batch_size, num_nodes):
        """Each root's or every node's rows of the output array (and of the
        other states' with `return_state`); NaN for the trees in `bad`."""
        wanted = list(arrays) if self.return_state else [arrays[0]]
        if self.return_state and not shared:
            wanted = [arrays[0], *arrays[2:]]
        bad = schedule["bad"]
        if self.return_nodes:
            rows = schedule["node_states"]()
            outputs = [
                ops.reshape(
                    array[: batch_size * num_nodes]
                    if rows is None
                    else ops.take(array, rows, axis=0),
                    (batch_size, num_nodes, array.shape[-1]),
                )
                for array in wanted
            ]
            bad = None if bad is None else ops.reshape(bad, (-1, 1, 1))
        else:
            roots = schedule["roots"]()
            outputs = [ops.take(array, roots, axis=0) for array in wanted]
            bad = None if bad is None else ops.expand_dims(bad, -1)
        if bad is not None:
            outputs = [ops.where(bad, float("nan"), value) for value in outputs]
        return outputs if self.return_state else outputs[0]

    def get_config(self):
        config = {
            "cell": keras.saving.serialize_keras_object(self.cell),
            "return_nodes": self.return_nodes,
            "return_state": self.return_state,
        }
        return {**super().get_config(), **config}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        cell = keras.saving.deserialize_keras_object(
            config.pop("cell"), custom_objects=custom_objects
        )
        return cls(cell, **config)
