"""The LSTM cell of TF1's `LSTMCell(num_proj=..., proj_clip=...)`."""

import keras
from keras import ops

from keras_recurrent._checks import check_positive_float
from keras_recurrent.layers.lstm_variant_cell import LSTMVariantCell


@keras.saving.register_keras_serializable(package="keras_recurrent")
class ProjectionClipLSTMCell(LSTMVariantCell):
    """`kr.layers.LSTMVariantCell` whose projection is clipped.

    TF1's `LSTMCell` clips the projected output, `m = clip(h P, -proj_clip,
    proj_clip)`, and feeds the clipped `m` back as the recurrent state.
    `kr.migrate.tf1_rnn` returns this cell (in a `keras.layers.RNN`) for a
    checkpoint of such a cell; it is `LSTMVariantCell` with one more
    argument, so its weights, states and other arguments are that cell's.

    Args:
        units: Positive integer, dimensionality of the cell state.
        proj_clip: Positive float, the bound of the projected output.
        **kwargs: The arguments of `kr.layers.LSTMVariantCell`;
            `projection_units` is required.
    """

    def __init__(self, units, proj_clip, **kwargs):
        super().__init__(units, **kwargs)
        self.proj_clip = check_positive_float("proj_clip", proj_clip)
        if not self.projection_units:
            raise ValueError(
                "ProjectionClipLSTMCell clips a projection: `projection_units`"
                " must be a positive integer. Received: projection_units="
                f"{self.projection_units!r}"
            )

    def step(self, inputs, states, loop_state):
        h, new_states = super().step(inputs, states, loop_state)
        h = ops.clip(h, -self.proj_clip, self.proj_clip)
        return h, [h, *new_states[1:]]

    def get_config(self):
        return {**super().get_config(), "proj_clip": self.proj_clip}
