"""The weights of `GatedFeedbackCell`: names, shapes, order and initial values.

See the class docstring for what each weight is.
"""

import collections

from keras_recurrent.layers._initializers import gate_bias
from keras_recurrent.layers._initializers import reseeded


def add_weights(cell):
    """Adds the weights of a `GatedFeedbackCell` to `cell`, in their order.

    `cell.input_widths` must be set. Returns them by role: lists (one entry
    per layer that has one) `"kernels"`, `"recurrent_kernels"`,
    `"feedback_kernels"`, `"biases"`, `"gate_kernels"`, and
    `"gate_recurrent_kernel"` (`None` unless `feedback="gated"`).
    """
    num_layers, widths = cell.num_layers, cell.layer_units
    num_blocks = len(cell.gate_blocks)
    total = sum(widths)
    # How many weights each initializer has started so far: each gets its
    # own seed offset, so that layers of equal widths do not start out equal.
    uses = collections.Counter()

    def weight(name, shape, kind):
        uses[kind] += 1
        return cell.add_weight(
            shape=shape,
            name=name,
            initializer=reseeded(
                getattr(cell, f"{kind}_initializer"), uses[kind] - 1
            ),
            regularizer=getattr(cell, f"{kind}_regularizer"),
            constraint=getattr(cell, f"{kind}_constraint"),
        )

    weights = {
        "kernels": [],
        "recurrent_kernels": [],
        "feedback_kernels": [],
        "biases": [],
        "gate_kernels": [],
        "gate_recurrent_kernel": None,
    }
    for j, (m, n) in enumerate(zip(cell.input_widths, widths)):
        weights["kernels"].append(
            weight(f"kernel_{j}", (m, num_blocks * n), "kernel")
        )
        if num_blocks > 1:
            weights["recurrent_kernels"].append(
                weight(
                    f"recurrent_kernel_{j}",
                    (n, (num_blocks - 1) * n),
                    "recurrent",
                )
            )
        rows = n if cell.feedback == "none" else total
        weights["feedback_kernels"].append(
            weight(f"feedback_kernel_{j}", (rows, n), "recurrent")
        )
        if cell.use_bias:
            weights["biases"].append(
                cell.add_weight(
                    shape=(num_blocks * n,),
                    name=f"bias_{j}",
                    initializer=_bias_initializer(cell, n, j),
                    regularizer=cell.bias_regularizer,
                    constraint=cell.bias_constraint,
                )
            )
        if cell.feedback == "gated":
            weights["gate_kernels"].append(
                weight(f"gate_kernel_{j}", (m, num_layers), "kernel")
            )
    if cell.feedback == "gated":
        weights["gate_recurrent_kernel"] = weight(
            "gate_recurrent_kernel", (total, num_layers**2), "recurrent"
        )
    return weights


def _bias_initializer(cell, units, layer):
    """Layer `layer`'s bias: `bias_initializer`, with the forget block at 1
    for lstm with `unit_forget_bias`."""

    def initializer(shape, dtype=None):
        del shape
        return gate_bias(
            cell.bias_initializer,
            cell.gate_blocks,
            units,
            cell.unit_forget_bias,
            dtype,
            seed_offset=layer * len(cell.gate_blocks),
        )

    return initializer
