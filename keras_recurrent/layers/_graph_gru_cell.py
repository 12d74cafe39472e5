"""The default node update of `GatedGraph`: a GRU cell with hooks for speed.

`GraphGRUCell` is a `keras.layers.GRUCell` (the same weights, `kernel`,
`recurrent_kernel`, `bias`, and the same configuration) whose step is
`_gates.gru_step`. A plain `call(inputs, states)` runs it as any cell.
`GatedGraph` runs any other update cell through that `call`; where a cell
has the optional hook `graph_step_function`, as this one does, it takes
the step from the hook instead, which splits one GRU step into its input
and recurrent halves and builds each once per call:

- `input_projection` folds the message kernels into the GRU's input kernel
  where one matmul by the product costs less than two (`A_e W_ih`,
  `fuses_kernels`);
- `projected_update` takes the input half and runs the recurrent half and
  the gates.

Both take their products through `gate_product`: one matmul per gate
outside XLA, one wide matmul split after under XLA.
"""

import keras
from keras import ops

from keras_recurrent.layers._concrete import in_xla_context
from keras_recurrent.layers._constrained_weights import ConstrainedWeights
from keras_recurrent.layers._gates import gru_step
from keras_recurrent.layers._graph_aggregation import stack_by_direction


class GraphGRUCell(ConstrainedWeights, keras.layers.GRUCell):
    """`keras.layers.GRUCell` whose step is `_gates.gru_step`, with the
    input and recurrent halves available apart (see the module).

    It ignores `dropout` and `recurrent_dropout`: `GatedGraph` makes it
    without them.
    """

    def call(self, inputs, states, training=False):
        nested = isinstance(states, (list, tuple))
        h = states[0] if nested else states
        per_gate = not in_xla_context()
        h = self.projected_update(per_gate)(
            self.input_projection(per_gate)(inputs), h
        )
        return h, [h] if nested else h

    def graph_step_function(
        self,
        sums,
        message_kernel,
        message_bias,
        num_directions,
        dense,
        per_gate,
    ):
        """`GatedGraph`'s hook: the function `[h] -> [h']` of one
        propagation step.

        Args:
            sums: The call's `SparseSums` or `DenseSums`.
            message_kernel: The `(T, units, units)` message kernels.
            message_bias: `(B * N, D * units)`, the message biases summed
                per node, or `None`.
            num_directions: `D`, the message sums read side by side.
            dense: Whether `sums` is a `DenseSums`.
            per_gate: Whether each gate takes a matmul of its own.
        """
        if fuses_kernels(message_kernel.shape[0], num_directions, dense):
            inputs_of = sums.per_type_sums()
            project = self.input_projection(
                per_gate,
                stack_by_direction(message_kernel, num_directions),
                message_bias,
            )
        else:
            inputs_of = sums.message_sums(message_kernel, num_directions)
            project = self.input_projection(per_gate, bias=message_bias)
        update = self.projected_update(per_gate)

        def step(states):
            [h] = states
            return [update(project(inputs_of(h)), h)]

        return step

    def input_projection(self, per_gate, kernel=None, bias=None):
        """The function from `values` to the gate inputs `x W_ih + b_ih`,
        `[update, reset, candidate]`, of the cell input
        `x = values @ kernel + bias`.

        `kernel` (optional) is folded into the input kernel once, here:
        `values @ (kernel W_ih)`. `bias` (optional) may have a row per node
        (the summed message biases); it is folded in with the kernel, else
        added to `values`.
        """
        input_kernel = self.kernel
        input_bias = None
        if self.use_bias:
            input_bias = self.bias[0] if self.reset_after else self.bias
        if kernel is not None:
            if bias is not None:
                folded = ops.matmul(bias, input_kernel)
                input_bias = (
                    folded if input_bias is None else folded + input_bias
                )
            input_kernel = ops.matmul(kernel, input_kernel)
            bias = None
        gates = gate_product(input_kernel, input_bias, per_gate)
        return lambda values: gates(add_bias(values, bias))

    def projected_update(self, per_gate):
        """The function `(gate inputs, h) -> h'`: the rest of the step,
        given `input_projection`'s output."""
        kernel, units = self.recurrent_kernel, self.units
        if self.reset_after:
            bias = self.bias[1] if self.use_bias else None
            recurrent = gate_product(kernel, bias, per_gate)
        else:
            recurrent = gate_product(
                kernel[:, : 2 * units], None, per_gate, parts=2
            )
            candidate_kernel = kernel[:, 2 * units :]

        def update(projections, h):
            input_update, input_reset, input_candidate = projections
            if self.reset_after:
                update, reset, candidate = recurrent(h)
            else:
                update, reset = recurrent(h)

                def candidate(reset_gate):
                    return ops.matmul(reset_gate * h, candidate_kernel)

            return gru_step(
                input_update + update,
                input_reset + reset,
                input_candidate,
                candidate,
                h,
                self.activation,
                self.recurrent_activation,
            )

        return update


def fuses_kernels(num_types, num_directions, dense):
    """Whether each GRU step multiplies the per-type sums of the states by
    the product `A_e W_ih` instead of by `A_e`, then by `W_ih`.

    Aggregation is linear, so `(Σ_u h_u A_e) W_ih = (Σ_u h_u)(A_e W_ih)`:
    with the kernels multiplied once per call, each step needs one matmul
    into the GRU's input projection instead of two. Taken when that one is
    the smaller: `3 T` against `T + 3 D` columns of `units²` per node on
    the sparse path (`T * D + 3 D` on the dense one, whose stacked kernel
    has `D` column blocks), which is one edge type, or one or two types
    with `concatenate_directions`.
    """
    transform = num_types * (num_directions if dense else 1)
    return 3 * num_types < transform + 3 * num_directions


def add_bias(values, bias):
    return values if bias is None else values + bias


def gate_product(kernel, bias, per_gate, parts=3):
    """The function `values -> values @ kernel + bias`, split into the
    `parts` gates of `kernel`'s columns (`[update, reset, candidate]`).

    With `per_gate`, the kernel and bias are split once, here, and each
    gate takes a matmul of its own; else one matmul is split after. Outside
    XLA (TensorFlow graphs, PyTorch) the first was 2-6% faster per train
    step: a split's gradient is a concatenation, one per step. XLA fuses
    the split away, and there the one wide matmul was up to 20% faster
    (docs/design/gated_graph.md).
    """
    if not per_gate:

        def product(values):
            return ops.split(
                add_bias(ops.matmul(values, kernel), bias), parts, -1
            )

        return product
    kernels = ops.split(kernel, parts, axis=-1)
    biases = [None] * parts if bias is None else ops.split(bias, parts, -1)

    def product(values):
        return [
            add_bias(ops.matmul(values, gate_kernel), gate_bias)
            for gate_kernel, gate_bias in zip(kernels, biases)
        ]

    return product
