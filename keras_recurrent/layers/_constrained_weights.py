"""Weights that satisfy their constraint from the start."""

from keras import ops


class ConstrainedWeights:
    """Mixin: `add_weight` applies the weight's constraint to its initial
    value.

    Keras applies a constraint only after an optimizer update. Under
    `mixed_float16` the `keras.optimizers.LossScaleOptimizer` that
    `compile` adds skips every step whose scaled gradients overflow
    (starting at a loss scale of `2**15`), and a skipped step applies no
    constraint: a short `fit` could leave the initial weights, e.g. an
    orthogonal recurrent kernel 12 times over `LSTMStability(0.6)`'s bound.
    Constrained from creation on, a weight keeps its bound through skipped
    steps (which change nothing) and applied ones (which constrain).
    """

    def add_weight(self, *args, **kwargs):
        variable = super().add_weight(*args, **kwargs)
        constraint = getattr(variable, "constraint", None)
        if constraint is not None:
            variable.assign(ops.cast(constraint(variable), variable.dtype))
        return variable
