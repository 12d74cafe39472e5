"""`kr.migrate.tf1_rnn`: a Keras 3 layer from a TF1 `rnn_cell` checkpoint."""

import keras
import numpy as np

from keras_recurrent._checks import _is_real
from keras_recurrent._checks import check_bool
from keras_recurrent._checks import check_positive_float
from keras_recurrent._checks import check_string
from keras_recurrent.layers.lstm_variant import LSTMVariant
from keras_recurrent.layers.lstm_variant_cell import LSTMVariantCell
from keras_recurrent.layers.peephole_lstm import PeepholeLSTM
from keras_recurrent.layers.peephole_lstm_cell import PeepholeLSTMCell
from keras_recurrent.migrate._tf1_checkpoint import Cell
from keras_recurrent.migrate._tf1_checkpoint import cells_of
from keras_recurrent.migrate._tf1_checkpoint import read_network
from keras_recurrent.migrate._tf1_projection_clip import ProjectionClipLSTMCell


def tf1_rnn(
    checkpoint,
    scope,
    *,
    forget_bias=1.0,
    return_sequences=False,
    cell_clip=None,
    proj_clip=None,
):
    """A Keras 3 layer holding the weights of a TF1 `rnn_cell` network.

    Reads the variables under `scope` in a TF1 checkpoint, recognizes the
    `tf.compat.v1.nn.rnn_cell` cells from their names and shapes, and
    returns a built Keras layer that computes what TF1's `dynamic_rnn` (or
    `bidirectional_dynamic_rnn`) computed with them:

    - `BasicRNNCell` (`kernel`, `bias`): `keras.layers.SimpleRNN`.
    - `GRUCell` (`gates/kernel`, `gates/bias`, `candidate/kernel`,
      `candidate/bias`): `keras.layers.GRU(reset_after=False)`.
    - `BasicLSTMCell`, or `LSTMCell` without options (`kernel`, `bias`):
      `keras.layers.LSTM`.
    - `LSTMCell(use_peepholes=True)` (and `w_i_diag`, `w_f_diag`,
      `w_o_diag`), with or without `cell_clip` and `num_proj`
      (`projection/kernel`): `kr.layers.PeepholeLSTM`.
    - `LSTMCell` with `cell_clip` or `num_proj` but no peepholes:
      `kr.layers.LSTMVariant(use_peepholes=False)`.
    - `LSTMCell(num_proj=..., proj_clip=...)`: a `keras.layers.RNN` of a
      `ProjectionClipLSTMCell`, an `LSTMVariantCell` that clips its
      projection.
    - `MultiRNNCell` (`multi_rnn_cell/cell_<k>/...`): a `keras.layers.RNN`
      of `keras.layers.StackedRNNCells` of the cells above.
    - `bidirectional_dynamic_rnn` (`fw/...` and `bw/...`):
      `keras.layers.Bidirectional(forward, backward_layer=backward,
      merge_mode="concat")` of the layers above.

    The weights are converted exactly. TF1's kernels multiply `[x, h]`:
    their first `input_dim` rows become `kernel`, the others
    `recurrent_kernel`. The LSTM gate blocks go from TF1's `[i, j, f, o]`
    to Keras' `[i, f, c, o]`; `w_i_diag`, `w_f_diag`, `w_o_diag` become
    `input_gate_peephole_weights`, `forget_gate_peephole_weights`,
    `output_gate_peephole_weights`, and `projection/kernel` becomes
    `projection_kernel`. The GRU blocks go from TF1's `[r, u]` (gates) plus
    `candidate` to Keras' `[z, r, h]`, with TF1's reset before the
    candidate's matmul, Keras' `reset_after=False`.

    `forget_bias`: TF1's LSTM cells add `forget_bias` to the forget gate's
    pre-activation at every step, `f = σ(x W_f + h U_f + b_f +
    forget_bias)`, and do not save it: the checkpoint's `bias` holds only
    `b_f`. Give the value the model was built with (TF1's default, `1.0`,
    unless `forget_bias=` was passed to the cell); it is added to the forget
    block of the Keras bias, which gives the same pre-activation (to float
    rounding) without an extra argument in the Keras layer. `cell_clip` and
    `proj_clip` are not saved either, and are arguments for the same
    reason. None of the three applies to GRU or simple RNN cells.

    Masking and what the layer returns. Call it with the mask of the
    sequence lengths, `mask[b, t] = t < sequence_length[b]`, e.g.
    `keras.ops.arange(timesteps)[None, :] < lengths[:, None]`. Then, as
    TF1's `dynamic_rnn(..., sequence_length=lengths)`:

    - with `return_sequences=True`, `(batch, timesteps, output_dim)`: the
      outputs at the valid steps, and zeros past each sequence's length;
    - with `return_sequences=False`, `(batch, output_dim)`: the output at
      each sequence's last valid step, which is the `h` that TF1's final
      state holds (TF1 copies the state through the padding steps). With
      `LSTMCell(num_proj=...)` that is the projected `m`; for a
      `MultiRNNCell`, the top cell's; for the bidirectional layer, the
      forward direction's final `h` followed by the backward direction's
      (the backward output at step 0).

    `output_dim` is the top cell's units (its `num_proj` with a
    projection), twice over for the two directions. A bidirectional layer
    concatenates the forward and backward outputs, as one does with the two
    outputs of `bidirectional_dynamic_rnn`; its backward direction reads
    the valid steps of each sequence in reverse, as TF1's does.

    Reading the checkpoint needs TensorFlow (`tf.train.load_checkpoint`),
    whatever the Keras backend: the arrays then go into the Keras layer as
    NumPy, so the layer runs on JAX or PyTorch too.

    Args:
        checkpoint: The checkpoint's prefix (`"model.ckpt"`, for the files
            `model.ckpt.index` and `model.ckpt.data-*`), or a directory with
            a `checkpoint` file (its latest checkpoint is read).
        scope: The variable scope of the network: the scope `dynamic_rnn`
            ran in (default `"rnn"`), that of `bidirectional_dynamic_rnn`
            (default `"bidirectional_rnn"`), or any scope below or above
            them that holds exactly one network, e.g.
            `"rnn/multi_rnn_cell/cell_0/lstm_cell"` for one cell of a stack.
            Optimizer slots (`kernel/Adam`, ...) and variables of other
            kinds under it are left out.
        forget_bias: Real number, the `forget_bias` of the TF1 LSTM cells
            (TF1's default `1.0`). Defaults to `1.0`.
        return_sequences: Boolean, return the whole sequence of outputs
            instead of the last valid one. Defaults to `False`.
        cell_clip: Optional positive float, the `cell_clip` of the TF1
            `LSTMCell`s. Defaults to `None` (no clipping).
        proj_clip: Optional positive float, the `proj_clip` of the TF1
            `LSTMCell`s that have `num_proj`. Defaults to `None`.

    Returns:
        A built Keras layer, whose inputs are `(batch, timesteps,
        input_dim)`, holding the checkpoint's weights (see the table).

    Raises:
        ValueError: If `scope` holds none of these cells (the message lists
            the variables the checkpoint holds, and the cells found
            elsewhere in it), or more than one network, or an argument is
            invalid.
        ImportError: If TensorFlow is not installed.

    Example:

    ```python
    # TF1: outputs, state = tf.compat.v1.nn.dynamic_rnn(
    #     tf.compat.v1.nn.rnn_cell.LSTMCell(64, use_peepholes=True),
    #     x, sequence_length=lengths, dtype=tf.float32)
    layer = kr.migrate.tf1_rnn("model.ckpt", "rnn", return_sequences=True)
    mask = keras.ops.arange(x.shape[1])[None, :] < lengths[:, None]
    outputs = layer(x, mask=mask)  # (batch, timesteps, 64), as TF1's
    ```
    """
    check_string("scope", scope)
    if not _is_real(forget_bias):
        raise ValueError(
            "Argument `forget_bias` must be a real number. Received: "
            f"forget_bias={forget_bias!r}"
        )
    options = {
        "forget_bias": float(forget_bias),
        "cell_clip": check_positive_float("cell_clip", cell_clip, True),
        "proj_clip": check_positive_float("proj_clip", proj_clip, True),
    }
    return_sequences = check_bool("return_sequences", return_sequences)
    network = read_network(checkpoint, scope)
    rnn_options = {
        "return_sequences": return_sequences,
        "zero_output_for_mask": return_sequences,
    }
    if isinstance(network, tuple):
        forward = keras_layer(network[1], options, rnn_options)
        backward = keras_layer(
            network[2], options, {**rnn_options, "go_backwards": True}
        )
        layer = keras.layers.Bidirectional(
            forward, backward_layer=backward, merge_mode="concat"
        )
        directions = [
            (layer.forward_layer, network[1]),
            (layer.backward_layer, network[2]),
        ]
    else:
        layer = keras_layer(network, options, rnn_options)
        directions = [(layer, network)]
    input_dim = cells_of(network)[0].input_dim
    layer.build((None, None, input_dim))
    for rnn, side in directions:
        keras_cells = getattr(rnn.cell, "cells", [rnn.cell])
        for keras_cell, cell in zip(keras_cells, cells_of(side), strict=True):
            assign(keras_cell, keras_weights(cell, options["forget_bias"]))
    return layer


def keras_layer(network, options, rnn_options):
    """The unbuilt Keras layer of one direction (a `Cell` or a stack)."""
    if isinstance(network, Cell):
        layer_class, cell_class, arguments = keras_cell_parts(network, options)
        if layer_class is not None:
            return layer_class(**arguments, **rnn_options)
        return keras.layers.RNN(cell_class(**arguments), **rnn_options)
    cells = []
    for cell in network:
        _, cell_class, arguments = keras_cell_parts(cell, options)
        cells.append(cell_class(**arguments))
    return keras.layers.RNN(keras.layers.StackedRNNCells(cells), **rnn_options)


def keras_cell_parts(cell, options):
    """`(layer class or None, cell class, arguments)` for a TF1 cell."""
    if cell.kind == "rnn":
        return (
            keras.layers.SimpleRNN,
            keras.layers.SimpleRNNCell,
            {"units": cell.units},
        )
    if cell.kind == "gru":
        arguments = {"units": cell.units, "reset_after": False}
        return keras.layers.GRU, keras.layers.GRUCell, arguments
    arguments = {"units": cell.units, "unit_forget_bias": False}
    cell_clip = options["cell_clip"]
    proj_clip = options["proj_clip"] if cell.projection_units else None
    if not (cell.use_peepholes or cell_clip or cell.projection_units):
        return keras.layers.LSTM, keras.layers.LSTMCell, arguments
    arguments.update(
        cell_clip=cell_clip, projection_units=cell.projection_units
    )
    if proj_clip is not None:
        arguments.update(use_peepholes=cell.use_peepholes, proj_clip=proj_clip)
        return None, ProjectionClipLSTMCell, arguments
    if cell.use_peepholes:
        return PeepholeLSTM, PeepholeLSTMCell, arguments
    arguments["use_peepholes"] = False
    return LSTMVariant, LSTMVariantCell, arguments


def keras_weights(cell, forget_bias):
    """The arrays of a TF1 `Cell` in Keras' layout, by weight name."""
    arrays = cell.arrays
    rows = cell.input_dim
    if cell.kind == "rnn":
        kernel = arrays["kernel"]
        return {
            "kernel": kernel[:rows],
            "recurrent_kernel": kernel[rows:],
            "bias": arrays["bias"],
        }
    if cell.kind == "gru":
        # TF1: gates [r, u] over [x, h]; candidate over [x, r ⊙ h].
        # Keras' GRUCell: [z, r, h] blocks, z being TF1's u.
        reset, update = np.split(arrays["gates/kernel"], 2, axis=1)
        reset_bias, update_bias = np.split(arrays["gates/bias"], 2)
        candidate = arrays["candidate/kernel"]
        kernel = np.concatenate([update, reset, candidate], axis=1)
        return {
            "kernel": kernel[:rows],
            "recurrent_kernel": kernel[rows:],
            "bias": np.concatenate(
                [update_bias, reset_bias, arrays["candidate/bias"]]
            ),
        }
    # TF1's LSTM blocks [i, j, f, o] to Keras' [i, f, c, o] (j is c), with
    # the forget bias that TF1 adds at each step folded in.
    i, j, f, o = np.split(arrays["kernel"], 4, axis=1)
    kernel = np.concatenate([i, f, j, o], axis=1)
    b_i, b_j, b_f, b_o = np.split(arrays["bias"], 4)
    b_f = b_f + np.asarray(forget_bias, b_f.dtype)
    weights = {
        "kernel": kernel[:rows],
        "recurrent_kernel": kernel[rows:],
        "bias": np.concatenate([b_i, b_f, b_j, b_o]),
    }
    if cell.use_peepholes:
        weights["input_gate_peephole_weights"] = arrays["w_i_diag"]
        weights["forget_gate_peephole_weights"] = arrays["w_f_diag"]
        weights["output_gate_peephole_weights"] = arrays["w_o_diag"]
    if cell.projection_units:
        weights["projection_kernel"] = arrays["projection/kernel"]
    return weights


def assign(keras_cell, weights):
    """Assigns `weights` (`{name: array}`) to the built cell's weights, each
    of them, by the last part of its path."""
    variables = {
        variable.path.split("/")[-1]: variable
        for variable in keras_cell.weights
    }
    if sorted(variables) != sorted(weights):
        raise RuntimeError(
            f"{type(keras_cell).__name__} has weights {sorted(variables)}, "
            f"the converted TF1 cell {sorted(weights)}."
        )
    for name, value in weights.items():
        variables[name].assign(value.astype(variables[name].dtype))
