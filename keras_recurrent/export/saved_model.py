"""SavedModel export with explicit serving signatures."""

import inspect
import re
import warnings

import keras
import tensorflow as tf

from keras_recurrent._checks import check_bool
from keras_recurrent._checks import check_string
from keras_recurrent._checks import invalid
from keras_recurrent._rules import at_least_one
from keras_recurrent.export import _jax_export
from keras_recurrent.export._endpoints import serving_functions
from keras_recurrent.export._tensorflow_process import (
    export_in_tensorflow_process,
)

LENGTHS_NAME = "lengths"
# The suffix of the second signature, which takes 64-bit inputs.
WIDE_SUFFIX = "_wide"
# Model input dtypes and the dtype the wide signature takes for them.
_WIDE_DTYPES = {
    tf.int8: tf.int64,
    tf.int16: tf.int64,
    tf.int32: tf.int64,
    tf.uint8: tf.int64,
    tf.uint16: tf.int64,
    tf.float16: tf.float64,
    tf.bfloat16: tf.float64,
    tf.float32: tf.float64,
}
# The index inputs that the input helpers make int64.
_INDEX_NAMES = ("children", "edges", "edge_types")
_AUTO_TENSOR_NAME = re.compile(r"^keras_tensor(_\d+)?$")
# Keras warns whenever a mask is passed to a functional model, which does not
# itself "support masking": the mask does reach the layers inside, only the
# model's outputs carry none.
_MASK_WARNING = ".*was passed an input with a mask attached to it.*"


def export_saved_model(
    model,
    filepath,
    *,
    lengths=False,
    input_signature=None,
    endpoint_name="serve",
    polymorphic_shapes=None,
):
    """Exports a Keras model as a TensorFlow SavedModel for serving.

    Wraps `keras.export.ExportArchive` with an explicit, named serving
    signature, so that the artifact can be served (TF Serving, `tf.saved_model
    .load`) without `keras_recurrent` installed: the package's layers are
    traced into plain TensorFlow ops.

    Signature inputs, in order:

    - one `tf.TensorSpec` per model input, named after the `keras.Input` (the
      name of its `InputLayer`, or `input_{i}` when Keras made the name up),
      with the input's dtype and shape and a batch dimension of `None`;
    - with `lengths=True`, one more input `"lengths"`: `int32`, shape
      `(batch,)`, the number of valid time steps of each sequence.

    Signature outputs are a dict of tensors named after `model.output_names`
    (the output layers of a functional model), or `output_0`, `output_1`, ...
    when the model does not name its outputs.

    A second signature, `endpoint_name + "_wide"` (`"serve_wide"`), takes the
    same inputs in 64-bit dtypes (NumPy's defaults, and those of
    `tf.io.parse_example`): int64 where the model takes a narrower integer
    (`lengths` too), float64 where it takes float32, float16 or bfloat16. It
    checks each value at run time and casts it to the model's dtype: an
    index outside the int32 range (`2**32 + 1`) fails with an
    `InvalidArgumentError` naming the input and the values, never read as
    another node (1), and so does a finite float beyond the float32 range,
    which would become an infinity. Then it runs as the first signature,
    with the same outputs. Use it for int64 or float64 tensors, which the
    first signature refuses (with a `TypeError` naming the input when an
    argument is a NumPy array, else with TensorFlow's `input #i
    (zero-based) was expected to be a int32 tensor`), and for NumPy int64
    arrays: TensorFlow converts a NumPy argument to the signature's dtype
    on the client, before any served op runs, so the first signature would
    read an int64 index `2**32 + 1` as 1 without an error.

    The loaded object's function of the same name (`tf.saved_model.load(
    path).serve(...)`, the input names as keywords or in order) takes both:
    it holds the model-dtype function of the first signature and the
    64-bit one of the second, and runs the one that the arguments' dtypes
    match, so int64 and float64 tensors (and NumPy arrays) are checked and
    served. Inputs of both kinds at once (int64 indices with float32
    values) match neither, and TensorFlow's `ValueError` ("Could not find
    matching concrete function") lists both with each input's name and
    dtype. The signatures (`loaded.signatures`, TF Serving) have one dtype
    per input, as described above.

    Why `lengths`: Keras 3 export does not carry masks
    (keras-team/keras#21133). The signature only holds tensors, so a model
    that relies on a mask passed with `model(x, mask=mask)` would be served
    without it and run over the padding. With `lengths=True` the served
    function rebuilds the mask `mask[b, t] = t < lengths[b]` for the model's
    sequence input, and:

    - if the model derives its mask from the values of that input (the input
      feeds a `keras.layers.Masking` layer, or an `Embedding` with
      `mask_zero=True`), it writes the pad value (`mask_value`, or 0) into the
      padded steps, so that the model's own mask equals the lengths mask
      whatever the client sent there. As with `Masking` itself, a valid step
      whose features all equal `mask_value` stays masked;
    - otherwise it calls `model(inputs, mask=...)`, so that the
      mask-consuming layers fed by the input (RNNs, or layers that propagate
      a mask to them) see it.

    The sequence input is the one feeding `Masking` or `Embedding(mask_zero=
    True)` if there is one, else the only input of rank 3 or more.

    The served function checks `lengths` at run time and fails with an
    `InvalidArgumentError` naming `lengths` and the values received when a
    length is below 0 or above the padded length `T`, when `lengths` does
    not hold one length per sequence, or when `T = 0`. A batch of 0
    sequences gives outputs with a batch of 0 (from every backend). Tree and
    graph tensors (named as `kr.trees.tree_inputs` and
    `kr.graphs.graph_inputs` name them) are not sequences: their
    `node_mask` marks the real nodes, and `lengths=True` is a `ValueError`
    for a model without another sequence input.

    A served tree model (a `"children"` input) fails with an
    `InvalidArgumentError` on trees of 0 nodes, as the layers do when they
    are built. A model with `stateful=True` layers is refused with a
    `ValueError`: served, it would keep its state from one request to the
    next. Export a copy built with `stateful=False` and the same weights.

    Every backend gives the same SavedModel: same signature names, inputs
    and outputs, and outputs within float32 rounding (1e-5) of the
    TensorFlow-made one; it loads in plain TensorFlow on every backend.

    - TensorFlow: `keras.export.ExportArchive` traces the model.
    - JAX: the model is converted with `jax2tf` into one `XlaCallModule` op
      (StableHLO, lowered for the platform JAX runs on) inside a
      `tf.function` whose TensorFlow ops run the checks and make the mask
      described above. Open axes become jax2tf dimension variables: axis 0
      is `batch`, the node and edge axes of the tensors named as
      `kr.trees.tree_inputs` and `kr.graphs.graph_inputs` name them share
      `nodes` and `edges`, every other open axis gets a variable of its
      own. Pass `polymorphic_shapes` when other inputs must agree on a
      size.
    - PyTorch: Keras cannot trace a model there (keras-team/keras `track`
      is not supported on the torch backend), so the model is saved to a
      temporary `.keras` file, rebuilt from its config and weights in a
      Python subprocess on the TensorFlow backend and exported there. The
      model must therefore be serializable (functional and `Sequential`
      models are; a subclassed model needs `get_config`). The subprocess
      takes a few seconds to start TensorFlow.

    Args:
        model: A built `keras.Model`. Functional and `Sequential` models
            describe their inputs; subclassed models need `input_signature`.
        filepath: `str` or `pathlib.Path`, the SavedModel directory to write.
        lengths: Whether to add the `"lengths"` input described above.
            Defaults to `False`.
        input_signature: Optional list of `tf.TensorSpec` (or
            `keras.InputSpec`, or `KerasTensor`), one per model input, that
            replaces the specs read from `model.inputs`. Required for models
            without `inputs`, such as subclassed models; with `lengths=True`
            these must accept `mask=` in `call`. Specs without a name are
            named `input_{i}`.
        endpoint_name: Name of the signature. The first endpoint is also
            exported as `"serving_default"`. Defaults to `"serve"`.
        polymorphic_shapes: Optional list of jax2tf shape strings, one per
            model input (not `lengths`), such as `["(batch, n, 8)",
            "(batch, n, 2)"]`; open axes with the same name must have the
            same size. Used on the JAX backend only; defaults to the naming
            described above.

    Returns:
        The list of `tf.TensorSpec` of the first signature's inputs, in
        order (`"lengths"` last).

    Example:

    >>> inputs = keras.Input((None, 3), name="frames")
    >>> x = keras.layers.Masking(0.0)(inputs)
    >>> x = kr.layers.PeepholeLSTM(8)(x)
    >>> model = keras.Model(inputs, keras.layers.Dense(1, name="score")(x))
    >>> specs = kr.export.export_saved_model(model, path, lengths=True)
    >>> [spec.name for spec in specs]
    ['frames', 'lengths']
    >>> serve = tf.saved_model.load(path).signatures["serve"]
    >>> serve(frames=x_padded, lengths=[5, 2])["score"].shape
    TensorShape([2, 1])
    """
    if not isinstance(model, keras.Model):
        raise ValueError(
            "Argument `model` must be a `keras.Model`. "
            f"Received: model={model!r} of type {type(model).__name__}"
        )
    lengths = check_bool("lengths", lengths)
    check_string("endpoint_name", endpoint_name)
    _check_stateless(model)
    model_inputs = _model_inputs(model)
    specs = _model_specs(model, model_inputs, input_signature, lengths)
    prepare, model_call, mask_index = _serving_parts(
        model, model_inputs, specs, lengths
    )
    model_specs = specs
    if lengths:
        specs = specs + [tf.TensorSpec((None,), tf.int32, name=LENGTHS_NAME)]
    wide_specs = [_wide_spec(spec) for spec in specs]
    wide_name = endpoint_name + WIDE_SUFFIX

    def narrowed(args):
        return [
            _narrow(value, spec)
            for value, spec in zip(args, specs, strict=True)
        ]

    backend = keras.backend.backend()
    if backend == "torch":
        export_in_tensorflow_process(
            model,
            filepath,
            lengths=lengths,
            input_signature=None if input_signature is None else model_specs,
            endpoint_name=endpoint_name,
        )
    elif backend == "jax":
        _jax_export.write_saved_model(
            model,
            filepath,
            specs,
            prepare,
            model_call,
            endpoint_name=endpoint_name,
            polymorphic_shapes=_jax_export.polymorphic_shapes(
                model_specs, polymorphic_shapes
            ),
            mask_index=mask_index,
            wide=(wide_name, wide_specs, narrowed),
        )
    else:
        serve, serve_wide = serving_functions(
            lambda *args: model_call(*prepare(args)),
            specs,
            wide_specs,
            narrowed,
        )
        archive = keras.export.ExportArchive()
        archive.track(model)
        archive.add_endpoint(endpoint_name, serve)
        archive.add_endpoint(wide_name, serve_wide)
        archive.write_out(str(filepath), verbose=False)
    return specs


def _check_stateless(model):
    """Refuses a model with stateful layers: served, it would carry its
    state from one request to the next (two equal requests, two answers)."""
    stateful = [
        layer.name
        for layer in model._flatten_layers(include_self=False)
        if getattr(layer, "stateful", False)
    ]
    if stateful:
        raise ValueError(
            "Argument `model` has stateful layers "
            f"({', '.join(stateful)}): served, they would keep their state "
            "from one request to the next, so two identical requests would "
            "get different answers. Export a copy of the model built with "
            "`stateful=False` and the same weights "
            "(`copy.set_weights(model.get_weights())`), and send each "
            "sequence whole. Received: model with stateful=True layers"
        )


def _model_specs(model, model_inputs, input_signature, lengths):
    """The signature's specs of the model inputs (`lengths` excluded)."""
    if input_signature is None:
        if model_inputs is None:
            raise ValueError(
                f"Model {model.name!r} does not define its inputs (it is not "
                "a functional or Sequential model built on `keras.Input`), "
                "so pass `input_signature`. Received: input_signature=None"
            )
        specs = [
            _served_spec(
                (None, *tensor.shape[1:]),
                tensor.dtype,
                _input_name(model, tensor, index),
            )
            for index, tensor in enumerate(model_inputs)
        ]
    else:
        specs = _normalize_signature(input_signature, model_inputs)
    names = [spec.name for spec in specs]
    if len(set(names)) != len(names):
        raise ValueError(
            "The signature's input names must be unique. Received input "
            f"names {names}; name the `keras.Input`s or the specs of "
            "`input_signature` differently."
        )
    if lengths and LENGTHS_NAME in names:
        raise ValueError(
            f"With `lengths=True` the signature gets an input named "
            f"{LENGTHS_NAME!r}, which a model input already uses. "
            f"Received input names: {names}"
        )
    return specs


def _served_spec(shape, dtype, name):
    """The first signature's spec of a model input. The int64 index inputs
    of `kr.trees.tree_inputs` and `kr.graphs.graph_inputs` (int64 so that
    Keras does not narrow `2**32 + 1` into node 1 before the layers check
    it) are served as int32, as before: int64 data goes to the wide
    signature, which checks the range."""
    if name in _INDEX_NAMES and tf.as_dtype(dtype) == tf.int64:
        dtype = tf.int32
    return tf.TensorSpec(shape, dtype, name=name)


def _wide_spec(spec):
    """`spec` with the 64-bit dtype the wide signature takes for it."""
    dtype = _WIDE_DTYPES.get(spec.dtype, spec.dtype)
    return tf.TensorSpec(spec.shape, dtype, name=spec.name)


def _narrow(value, spec):
    """`value` (a wide signature input) cast to `spec.dtype` after a
    run-time check that the cast keeps it: an integer within the range of
    `spec.dtype` (else int64 `2**32 + 1` would become index 1), a float
    within its finite range (else it would become an infinity)."""
    if value.dtype == spec.dtype:
        return value
    name = spec.name
    narrow = spec.dtype
    if narrow.is_integer:
        low = tf.constant(narrow.min, value.dtype)
        high = tf.constant(narrow.max, value.dtype)
        fits = tf.logical_and(value >= low, value <= high)
        rule = (
            f"in the {narrow.name} range [{narrow.min}, {narrow.max}] of the "
            "model input (a wider index would be read as another one)"
        )
    else:
        largest = tf.constant(float(narrow.max), value.dtype)
        fits = tf.logical_or(
            tf.abs(value) <= largest, tf.logical_not(tf.math.is_finite(value))
        )
        rule = (
            f"in the finite {narrow.name} range of the model input "
            f"(|x| <= {narrow.max:.4g}; a larger one would become an "
            "infinity)"
        )
    check = tf.debugging.Assert(
        tf.reduce_all(fits),
        [
            f"`{name}` must hold values {rule}. Received: out of range in "
            f"`{name}`:",
            tf.boolean_mask(value, tf.logical_not(fits)),
            f"{name} =",
            value,
        ],
        summarize=16,
    )
    with tf.control_dependencies([check]):
        return tf.cast(value, narrow)


def _model_inputs(model):
    """The model's input `KerasTensor`s, or `None` if it does not have any."""
    try:
        inputs = model.inputs
    except (AttributeError, ValueError):
        return None
    if not inputs:
        return None
    return list(inputs)


def _input_name(model, tensor, index):
    """Name of the `InputLayer` of `tensor`, else a readable default."""
    for layer in model.layers:
        if isinstance(layer, keras.layers.InputLayer) and (
            layer.output is tensor
        ):
            return layer.name
    if tensor.name and not _AUTO_TENSOR_NAME.match(tensor.name):
        return tensor.name
    return f"input_{index}"


def _normalize_signature(input_signature, model_inputs):
    if not isinstance(input_signature, (list, tuple)):
        input_signature = [input_signature]
    if model_inputs is not None and len(input_signature) != len(model_inputs):
        raise ValueError(
            f"Argument `input_signature` must have one spec per model input "
            f"({len(model_inputs)}). Received: "
            f"input_signature={input_signature!r}"
        )
    specs = []
    for index, spec in enumerate(input_signature):
        shape = getattr(spec, "shape", None)
        dtype = getattr(spec, "dtype", None)
        if shape is None or dtype is None:
            raise invalid(
                "input_signature",
                input_signature,
                "a list of `tf.TensorSpec`, `keras.InputSpec` or "
                "`KerasTensor` with a shape and a dtype",
            )
        name = getattr(spec, "name", None)
        if not name or _AUTO_TENSOR_NAME.match(name):
            name = f"input_{index}"
        specs.append(tf.TensorSpec(shape, dtype, name=name))
    return specs


def _pad_value_of_input(model, tensor):
    """The pad value if `tensor` feeds a layer deriving a mask from values."""
    pad_values = []
    for layer in model.layers:
        if isinstance(layer, keras.layers.Masking):
            pad_value = layer.mask_value
        elif isinstance(layer, keras.layers.Embedding) and layer.mask_zero:
            pad_value = 0
        else:
            continue
        try:
            layer_input = layer.input
        except (AttributeError, ValueError):
            continue
        if layer_input is tensor:
            pad_values.append(pad_value)
    return pad_values[0] if pad_values else None


def _sequence_input(model, model_inputs, specs):
    """`(index, pad_value)` of the input that `lengths` applies to."""
    if model_inputs is not None:
        value_masked = [
            (index, pad_value)
            for index, tensor in enumerate(model_inputs)
            if (pad_value := _pad_value_of_input(model, tensor)) is not None
        ]
        if len(value_masked) == 1:
            return value_masked[0]
        if len(value_masked) > 1:
            raise ValueError(
                "With `lengths=True` the model must have one sequence input, "
                "but several inputs feed a `Masking` or `Embedding(mask_zero="
                f"True)` layer. Received inputs: {[s.name for s in specs]}"
            )
    # The tree and graph tensors (named by `kr.trees.tree_inputs` and
    # `kr.graphs.graph_inputs`) have a node axis, not a time axis: their
    # layers take no mask, `node_mask` says which nodes are real.
    sequences = [
        index
        for index, spec in enumerate(specs)
        if spec.shape.rank is not None
        and spec.shape.rank >= 3
        and spec.name not in _jax_export.SHARED_AXES
    ]
    if len(sequences) != 1:
        node_tensors = [
            s.name for s in specs if s.name in _jax_export.SHARED_AXES
        ]
        reason = (
            f" Tree and graph tensors ({node_tensors}) are no sequences: "
            "their `node_mask` marks the real nodes, so export tree and "
            "graph models without `lengths`."
            if node_tensors
            else ""
        )
        raise ValueError(
            "With `lengths=True` the model must have exactly one sequence "
            "input of rank >= 3 (batch, timesteps, ...), or one feeding a "
            "`Masking` or `Embedding(mask_zero=True)` layer."
            + reason
            + " Received input shapes: "
            f"{ {s.name: tuple(s.shape) for s in specs} }"
        )
    return sequences[0], None


def _serving_parts(model, model_inputs, specs, lengths):
    """The served function in two parts, and where the lengths mask goes.

    Returns `(prepare, model_call, mask_index)`:

    - `prepare(args)` takes the signature's tensors (`lengths` last) and
      returns `(inputs, mask)`: TensorFlow ops only (run-time checks, the
      mask from `lengths`, pad values written into the padding), so that on
      JAX they run in TensorFlow around the converted model (checks on
      traced JAX values would fail) and nowhere change the numbers;
    - `model_call(inputs, mask)` runs the model on the backend's tensors and
      returns the dict of outputs; `mask` is `None` or the `(batch, T)`
      boolean mask of input `mask_index`;
    - `mask_index` is `None` when no mask is passed to the model.
    """

    def model_call(inputs, mask=None):
        inputs = _pack_inputs(model, list(inputs))
        if mask is None:
            outputs = model(inputs, training=False)
        else:
            masks = [None] * len(specs)
            masks[mask_index] = mask
            masks = _pack_inputs(model, masks)
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", _MASK_WARNING, UserWarning)
                outputs = model(inputs, mask=masks, training=False)
        return _output_dict(model, outputs)

    if not lengths:
        # A sequence model served without `lengths` still needs a timestep:
        # 0 would fail deep inside the RNN loop with an error that names
        # nothing. (Tree and graph layers name an empty node axis
        # themselves.)
        sequence_spec = _single_sequence_spec(specs)
        mask_index = None

        def prepare(args):
            inputs = _check_nodes(list(args), specs)
            if sequence_spec is not None:
                check = _assert_timesteps(inputs[0], sequence_spec.name)
                with tf.control_dependencies([check]):
                    inputs[0] = tf.identity(inputs[0])
            return inputs, None

        return prepare, model_call, mask_index

    index, pad_value = _sequence_input(model, model_inputs, specs)
    call_parameters = inspect.signature(model.call).parameters
    if pad_value is None and "mask" not in call_parameters:
        raise ValueError(
            "With `lengths=True` a model without a `Masking` or "
            "`Embedding(mask_zero=True)` layer on its sequence input must "
            f"accept `mask` in `call`. Received: model {model.name!r} "
            f"with call{inspect.signature(model.call)}"
        )
    mask_index = index if pad_value is None else None

    def prepare(args):
        inputs, sequence_lengths = (
            _check_nodes(list(args[:-1]), specs),
            args[-1],
        )
        sequences = inputs[index]
        with tf.control_dependencies(
            _check_lengths(sequence_lengths, sequences, specs[index].name)
        ):
            sequence_lengths = tf.identity(sequence_lengths)
        mask = tf.sequence_mask(sequence_lengths, tf.shape(sequences)[1])
        if pad_value is None:
            return inputs, mask
        broadcast_mask = mask
        for _ in range(sequences.shape.rank - 2):
            broadcast_mask = broadcast_mask[..., None]
        inputs[index] = tf.where(
            broadcast_mask,
            sequences,
            tf.cast(pad_value, sequences.dtype),
        )
        return inputs, None

    return prepare, model_call, mask_index


def _check_nodes(inputs, specs):
    """`inputs`, after a run-time check that the trees have a node.

    The tree layers refuse `N = 0` when they are built (the shape is
    static); a model served with an open `N` would answer zeros for it.
    """
    for index, spec in enumerate(specs):
        if spec.name == "children" and spec.shape.rank == 3:
            check = tf.debugging.assert_positive(
                tf.shape(inputs[index])[1],
                message=(
                    f"{at_least_one('node', 'children', 1)} Received: "
                    "children.shape[1]"
                ),
            )
            with tf.control_dependencies([check]):
                inputs[index] = tf.identity(inputs[index])
    return inputs


def _single_sequence_spec(specs):
    """The spec of a model's only input if it is a float sequence of rank
    >= 3 with a free time axis, else `None`."""
    if len(specs) != 1:
        return None
    spec = specs[0]
    if (
        spec.dtype.is_floating
        and spec.shape.rank is not None
        and spec.shape.rank >= 3
        and spec.shape[1] is None
    ):
        return spec
    return None


def _assert_timesteps(sequences, name):
    """A run-time assertion that `sequences` (named `name`) has a step."""
    return tf.debugging.assert_positive(
        tf.shape(sequences)[1],
        message=(
            f"{at_least_one('timestep', name, 1)} Received: {name}.shape[1]"
        ),
    )


def _check_lengths(sequence_lengths, sequences, name):
    """Run-time assertions on the served `lengths` of `sequences`.

    `tf.sequence_mask` would take any value: a negative length acts as 0 and
    one past the padded length as the padded length. The assertions name
    `lengths` and print the values received.
    """
    shape = tf.shape(sequences)
    batch, timesteps = shape[0], shape[1]
    return [
        tf.debugging.assert_equal(
            tf.shape(sequence_lengths)[0],
            batch,
            message=(
                "`lengths` must hold one length per sequence (batch, ). "
                "Received: lengths.shape[0] and the batch size"
            ),
        ),
        _assert_timesteps(sequences, name),
        tf.debugging.assert_non_negative(
            sequence_lengths,
            message="`lengths` must be >= 0. Received: lengths",
            summarize=16,
        ),
        tf.debugging.assert_less_equal(
            sequence_lengths,
            timesteps,
            message=(
                "`lengths` must be at most the padded length (timesteps). "
                "Received: lengths and timesteps"
            ),
            summarize=16,
        ),
    ]


def _pack_inputs(model, flat):
    """Arranges one value per model input as the model takes its inputs.

    `flat` follows the order of `model.inputs`; functional models built on a
    dict or nested list of inputs get that structure back (`model.input`).
    """
    if len(flat) == 1:
        return flat[0]
    try:
        structure = model.input
    except (AttributeError, ValueError):
        return list(flat)
    if len(keras.tree.flatten(structure)) != len(flat):
        return list(flat)
    return keras.tree.pack_sequence_as(structure, list(flat))


def _output_dict(model, outputs):
    """Maps model outputs to the signature's output names.

    `outputs` is what `model(...)` or `model.predict(...)` returns: a tensor,
    a list or tuple, or a dict. Names are the dict keys, else
    `model.output_names` when it names every output, else `output_{i}`.
    """
    if isinstance(outputs, dict):
        return {str(key): value for key, value in outputs.items()}
    flat = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
    names = list(getattr(model, "output_names", None) or [])
    if len(names) != len(flat) or len(set(names)) != len(names):
        names = [f"output_{i}" for i in range(len(flat))]
    return dict(zip(names, flat, strict=True))
