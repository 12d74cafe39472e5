"""Static checks of the sequence layers' inputs (rank, dtype, the sizes known
when tracing): they run eagerly, when tracing and under XLA alike."""

import keras
from keras import ops

from keras_recurrent._checks import check_float_dtype
from keras_recurrent._checks import check_known_last_axis
from keras_recurrent._checks import check_tensor_dtype
from keras_recurrent._checks import float_or_cast
from keras_recurrent._checks import named_errors
from keras_recurrent._rules import check_at_least_one
from keras_recurrent._rules import check_built_width
from keras_recurrent._rules import check_ranks
from keras_recurrent._rules import check_sizes
from keras_recurrent.layers._concrete import in_xla_context
from keras_recurrent.layers._concrete import refuse_torchscript_trace
from keras_recurrent.layers._concrete import torchscript_tracing
from keras_recurrent.layers._tf_checks import after_assertions


def check_rank(layer, shape, layout, name, known=False, context=None):
    """`shape` as a tuple of the rank of `layout`, whose last size must be
    `known` (for `build`; `context` says when)."""
    shape = tuple(shape)
    with named_errors(layer):
        check_ranks({name: shape}, {name: layout})
    if known:
        check_known_last_axis(name, shape, context)
    return shape


def check_sequence_shape(
    layer, shape, *, name="inputs", known_features=False, context=None
):
    """`shape` as a tuple, of rank 3 (the one rank check of the sequence
    layers' `build`, `compute_output_shape` and `call`)."""
    layout = "(batch, timesteps, features)"
    return check_rank(layer, shape, layout, name, known_features, context)


def check_sequences(
    layer, sequences, features=None, *, name="inputs", cast_integers=False
):
    """Returns `sequences` unless they are no float `(batch, timesteps,
    features)` with at least one step and, unless `None`, `features`
    features; with `cast_integers`, integer or boolean `sequences` are
    returned cast to the layer's compute dtype, as `keras.layers.LSTM`
    takes them (`float_or_cast`)."""
    shape = check_sequence_shape(layer, sequences.shape, name=name)
    if cast_integers:
        sequences = float_or_cast(layer, sequences, name)
    else:
        check_float_dtype(layer, sequences, name)
    with named_errors(layer):
        check_built_width(shape, features, name)
        check_at_least_one("timestep", name, shape)
    return sequences


def refuse_traced_open_steps(layer, sequences, built_steps):
    """Raises under TorchScript's trace of an open number of steps.

    The layers' time loops run in Python on PyTorch: TorchScript's trace
    (ONNX export on PyTorch where a size is open) unrolls them over the
    traced `T`, which Keras sets to 1 where the `input_signature` leaves
    it open, and the file then fails or, where Keras' own loop runs (its
    LSTM kernel, a wrapped `keras.layers.LSTM`), answers wrongly at any
    other `T`. A traced `T` of 1 counts as open unless the layer was built
    for one step (`built_steps`, the `T` of its `build` shape).
    """
    if not torchscript_tracing() or built_steps == 1:
        return
    if int(sequences.shape[1]) != 1:
        return
    features = sequences.shape[-1]
    refuse_torchscript_trace(
        layer,
        "its loop over the traced number of steps (1, as Keras traces an "
        "open `T`)",
        "The file would fail, or answer wrongly, for any other number of "
        "steps. For ONNX export on PyTorch, fix the number of steps in the "
        "`input_signature`, e.g. `model.export(path, format='onnx', "
        f"input_signature=[keras.InputSpec(shape=(None, 50, {features}))])`"
        " (the batch size may stay open); ONNX export from TensorFlow keeps "
        "`T` open. Received: inputs.shape="
        f"{tuple(int(size) for size in sequences.shape)}",
    )


def check_mask(layer, mask, sequences):
    """`mask` as a bool `(batch, timesteps)` tensor, or `None`; a float
    mask is refused, not cast (`0.5` would be a real step in one code path
    and padding in another)."""
    if isinstance(mask, (list, tuple)):
        mask = mask[0] if mask else None
    if mask is None:
        return None
    if not hasattr(mask, "shape") or not hasattr(mask, "dtype"):
        mask = ops.convert_to_tensor(mask)
    layout = "(batch, timesteps)"
    shape = check_rank(layer, mask.shape, layout, "mask")
    why = (
        " (True or nonzero at real steps, as `keras.layers.Masking` or "
        "`Embedding(mask_zero=True)` make it; a float mask is ambiguous, so "
        "cast it with `ops.cast(mask, 'bool')`)"
    )
    with named_errors(layer):
        dtype = check_tensor_dtype("mask", mask, "boolean or integer", why)
    shapes = {"inputs": tuple(sequences.shape), "mask": shape}
    groups = [(0, "batch size", shapes), (1, "number of timesteps", shapes)]
    with named_errors(layer):
        check_sizes("sequence", shapes, groups)
    return mask if dtype == "bool" else ops.not_equal(mask, 0)


def check_stateful_batch(layer, sequences):
    """Raises unless a stateful `layer` gets the batch size of its states,
    also where it is unknown when tracing (a last partial batch), which
    Keras does not check (a batch of 1 would broadcast against them)."""
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
    import tensorflow as tf

    if in_xla_context():
        # Set statically: another batch size fails to compile.
        return tf.ensure_shape(sequences, (expected, *sequences.shape[1:]))
    size = tf.shape(sequences)[0]
    data = [message + "Received: a batch of", size, "sequences"]
    return after_assertions([sequences], [(tf.equal(size, expected), data)])[0]


def check_step_shape(cell, shape, *, known_features=False):
    """`shape` as a tuple, one step's `(batch, features)`."""
    layout = "(batch, features)"
    return check_rank(cell, shape, layout, "inputs", known_features)


def check_step_inputs(cell, inputs, features):
    """Raises unless one step's `inputs` are `(batch, features)`: a cell
    run by a plain `keras.layers.RNN` gets no sequence checks."""
    shape = check_step_shape(cell, inputs.shape)
    with named_errors(cell):
        check_built_width(shape, features, note=" (one step)")
