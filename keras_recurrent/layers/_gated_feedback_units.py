"""The unit types of `GatedFeedbackCell`: one layer's step from its terms.

Each unit gets a layer's input terms `z = h^{j-1}_t W^j + b^j` (the blocks of
its type, in Keras' cell order), the own-layer recurrent terms of its gates
`h^j_{t-1} U^j` (gru and lstm), the feedback `F^j` and the layer's previous
states, and returns the layer's new `h` and its new states.
"""

import warnings

from keras import ops

from keras_recurrent._checks import check_option
from keras_recurrent.layers._gates import gru_step
from keras_recurrent.layers._gates import lstm_step


class _Unit:
    """A unit's activations; subclasses set `blocks`, `has_cell_state` and
    `step(z, recurrent, feedback, h, c)`."""

    def __init__(self, activation, recurrent_activation):
        self.activation = activation
        self.recurrent_activation = recurrent_activation


class SimpleUnit(_Unit):
    """`h_t = act(z + F)`, as `keras.layers.SimpleRNNCell` with feedback."""

    blocks = ("h",)
    has_cell_state = False

    def step(self, z, recurrent, feedback, h, c):
        """A layer's new `h` and states `[h]`."""
        del recurrent, h, c
        h = self.activation(z + feedback)
        return h, [h]


class GRUUnit(_Unit):
    """Keras' `GRUCell(reset_after=True)`, the reset gate on `F`."""

    blocks = ("z", "r", "h")
    has_cell_state = False

    def step(self, z, recurrent, feedback, h, c):
        """A layer's new `h` and states `[h]`."""
        del c
        z_x, r_x, h_x = ops.split(z, 3, axis=-1)
        z_h, r_h = ops.split(recurrent, 2, axis=-1)
        h = gru_step(
            z_x + z_h,
            r_x + r_h,
            h_x,
            feedback,
            h,
            self.activation,
            self.recurrent_activation,
        )
        return h, [h]


class LSTMUnit(_Unit):
    """Keras' `LSTMCell`, with `F` in the candidate."""

    blocks = ("i", "f", "c", "o")
    has_cell_state = True

    def step(self, z, recurrent, feedback, h, c):
        """A layer's new `h` and states `[h, c]`."""
        del h
        i_x, f_x, c_x, o_x = ops.split(z, 4, axis=-1)
        i_h, f_h, o_h = ops.split(recurrent, 3, axis=-1)
        h, c = lstm_step(
            i_x + i_h,
            f_x + f_h,
            c_x + feedback,
            o_x + o_h,
            c,
            self.activation,
            self.recurrent_activation,
        )
        return h, [h, c]


# The unit of each `cell_type`.
UNITS = {"simple": SimpleUnit, "gru": GRUUnit, "lstm": LSTMUnit}

# Pre-activation blocks of `kernel_j` per unit type (Keras' cell orders).
CELL_TYPES = {name: unit.blocks for name, unit in UNITS.items()}


def canonical_cell_type(cell_type):
    """The canonical name of a unit type; `"tanh"` is `"simple"`, with a
    `DeprecationWarning` (the name of an activation, not of a unit)."""
    if isinstance(cell_type, str) and cell_type.lower() == "tanh":
        warnings.warn(
            "`cell_type='tanh'` is deprecated and will be removed in the "
            "next release: use `cell_type='simple'` (as "
            "`keras.layers.SimpleRNN`; the same unit, and `activation` "
            "still picks its activation).",
            DeprecationWarning,
            stacklevel=4,
        )
        return "simple"
    return check_option("cell_type", cell_type, UNITS)
