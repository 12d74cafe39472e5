"""Checks of the `(batch, timesteps, features)` inputs of the sequence layers.

Everything here is static (rank, dtype, the sizes known when tracing), so it
runs eagerly, when `predict`/`fit` trace a model, and under XLA alike, and
raises a plain `ValueError` naming the argument and the value received.
"""

import keras
from keras import ops

from keras_recurrent._checks import check_float_dtype
from keras_recurrent._checks import check_known_last_axis


def check_sequence_shape(
    layer, shape, *, name="inputs", known_features=False, context=None
):
    """Returns `shape` as a tuple, or raises unless it is of rank 3.

    The one rank check of the sequence layers: `build`,
    `compute_output_shape` and `call` (through `check_sequences`) all use it.

    Args:
        layer: The layer checking its input (its class names the error).
        shape: The shape to check.
        name: The argument's name in the error.
        known_features: Whether the last size must be known too (for
            `build`, which sizes weights by it).
        context: When the last size must be known, e.g.
            `"for mode='attention'"`, where that depends on an argument.
    """
    shape = tuple(shape)
    if len(shape) != 3:
        raise ValueError(
            f"{type(layer).__name__} expects `{name}` of rank 3 "
            f"(batch, timesteps, features). Received: {name}.shape={shape}"
        )
    if known_features:
        check_known_last_axis(name, shape, context)
    return shape


def check_built_width(layer, shape, features, *, name="inputs", note=""):
    """Raises unless the last size of `shape`, where known, is `features`,
    the width `layer` was built for (`None`: any width); `note` ends the
    message."""
    if features is not None and shape[-1] is not None and shape[-1] != features:
        raise ValueError(
            f"{type(layer).__name__} was built for `{name}` with {features} "
            f"features (last axis). Received: {name}.shape={shape}{note}"
        )


def check_sequences(layer, sequences, features=None, *, name="inputs"):
    """Raises unless `sequences` is a float `(batch, timesteps, features)`.

    Args:
        layer: The layer checking its input (its class names the error).
        sequences: The tensor to check.
        features: The last-axis size the layer was built for; `None` when
            unknown (not built, or the layer takes any width).
        name: The argument's name in the error.
    """
    layer_name = type(layer).__name__
    shape = check_sequence_shape(layer, sequences.shape, name=name)
    check_float_dtype(layer, sequences, name)
    check_built_width(layer, shape, features, name=name)
    if shape[1] == 0:
        raise ValueError(
            f"{layer_name} needs at least one timestep. "
            f"Received: {name}.shape={shape}"
        )


def check_mask(layer, mask, sequences):
    """Returns `mask` as a boolean `(batch, timesteps)` tensor, or `None`.

    Raises unless `mask` is `None`, boolean or integer (nonzero marks a real
    step: integer masks are what `tf.distribute` feeds safely), and agrees
    with the known sizes of `sequences`. A float mask is refused rather
    than cast: `0.5` would count as a real step in one code path and as
    padding in another.
    """
    if isinstance(mask, (list, tuple)):
        mask = mask[0] if mask else None
    if mask is None:
        return None
    layer_name = type(layer).__name__
    if not hasattr(mask, "shape") or not hasattr(mask, "dtype"):
        mask = ops.convert_to_tensor(mask)
    shape = tuple(mask.shape)
    if len(shape) != 2:
        raise ValueError(
            f"{layer_name} expects a `mask` of rank 2 (batch, timesteps). "
            f"Received: mask.shape={shape}"
        )
    dtype = keras.backend.standardize_dtype(mask.dtype)
    if dtype != "bool" and "int" not in dtype:
        raise ValueError(
            f"{layer_name} expects a boolean or integer `mask` (True or "
            "nonzero at real steps), such as `keras.layers.Masking` or "
            "`Embedding(mask_zero=True)` make; a float mask is ambiguous, so "
            "cast it with `ops.cast(mask, 'bool')`. "
            f"Received: mask.dtype={dtype}"
        )
    expected = tuple(sequences.shape)[:2]
    for axis, (got, want) in enumerate(zip(shape, expected)):
        if got is not None and want is not None and got != want:
            raise ValueError(
                f"{layer_name} expects a `mask` of shape (batch, timesteps) "
                f"= {expected} (axis {axis} differs). Received: "
                f"mask.shape={shape} for inputs.shape={tuple(sequences.shape)}"
            )
    if dtype != "bool":
        mask = ops.not_equal(mask, 0)
    return mask


def check_stateful_batch(layer, sequences):
    """Raises unless a stateful `layer` gets the batch size of its states.

    Keras checks only a batch size known when tracing; a last partial batch
    in `predict` or `fit` has none, and then failed with "Incompatible
    shapes" (or, for a batch of 1, silently broadcast against the states).
    Where the size is unknown, a traced TensorFlow assertion says the same.
    """
    expected = tuple(keras.tree.flatten(layer.states)[0].shape)[0]
    message = (
        f"{type(layer).__name__} '{layer.name}' is stateful with batch size "
        f"{expected}: every batch must have exactly {expected} sequences "
        f"(in `fit`, `evaluate` or `predict`, a number of samples that is a "
        f"multiple of {expected}, so that there is no partial last batch). "
    )
    received = sequences.shape[0]
    if received is not None:
        if received != expected:
            raise ValueError(
                f"{message}Received: a batch of {received} sequences, "
                f"inputs.shape={tuple(sequences.shape)}"
            )
        return sequences
    if keras.backend.backend() != "tensorflow":
        return sequences
    from keras_recurrent.layers._tf_checks import assert_batch_size

    return assert_batch_size(sequences, expected, message)


def check_step_shape(cell, shape, *, known_features=False):
    """Returns `shape` as a tuple, or raises unless it is one step's
    `(batch, features)`; with `known_features` (for `build`), the last size
    must be known too."""
    shape = tuple(shape)
    if len(shape) != 2:
        raise ValueError(
            f"{type(cell).__name__} expects one step's `inputs` of rank 2 "
            f"(batch, features). Received: inputs.shape={shape}"
        )
    if known_features:
        check_known_last_axis("inputs", shape)
    return shape


def check_step_inputs(cell, inputs, features):
    """Raises unless one step's `inputs` are `(batch, features)`.

    A cell run by a plain `keras.layers.RNN` sees no sequence checks, so a
    width other than the one it was built for would otherwise fail in a
    matmul, with the matrix sizes only.
    """
    shape = check_step_shape(cell, inputs.shape)
    check_built_width(cell, shape, features, note=" (one step)")
