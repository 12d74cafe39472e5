"""The SavedModel of `export_saved_model` on the JAX backend.

The model runs as one `jax2tf`-converted function (StableHLO in an
`XlaCallModule` op) inside a `tf.function` whose TensorFlow ops check the
inputs and make the lengths mask, as on the TensorFlow backend: checks on
traced JAX values cannot raise at serving time.
"""

import itertools

import keras
import tensorflow as tf

from keras_recurrent.export._endpoints import serving_functions

# Open axes shared between the package's tree and graph tensors (the names
# `kr.trees.tree_inputs` and `kr.graphs.graph_inputs` give their inputs):
# jax2tf must see one dimension variable for `N` (and one for `E`), else it
# cannot prove the tensors agree and the layers' shape checks fail.
SHARED_AXES = {
    "node_inputs": {1: "nodes"},
    "node_tokens": {1: "nodes"},
    "children": {1: "nodes"},
    "node_mask": {1: "nodes"},
    "edges": {1: "edges"},
    "edge_types": {1: "edges"},
    # The level schedule: its axes (levels, width) are its own.
    "tree_levels": {},
}
_BATCH = "batch"


def polymorphic_shapes(specs, shapes=None):
    """One jax2tf shape string per signature input (`lengths` excluded).

    Args:
        specs: The signature's `tf.TensorSpec`s of the model inputs.
        shapes: Optional list of strings given by the user, one per spec,
            used as they are.

    Returns:
        A list of strings such as `"(batch, nodes, 8)"`: static sizes as
        numbers, axis 0 `batch`, the node and edge axes of the tree and graph
        tensors `nodes` and `edges`, every other open axis a variable of its
        own.
    """
    if shapes is not None:
        if not isinstance(shapes, (list, tuple)) or len(shapes) != len(specs):
            raise ValueError(
                "Argument `polymorphic_shapes` must be a list of one jax2tf "
                f"shape string per model input ({len(specs)}: "
                f"{[spec.name for spec in specs]}). "
                f"Received: polymorphic_shapes={shapes!r}"
            )
        return list(shapes)
    fresh = (f"d{i}" for i in itertools.count())
    result = []
    for spec in specs:
        shared = SHARED_AXES.get(spec.name, {})
        dims = []
        for axis, size in enumerate(spec.shape.as_list()):
            if size is not None:
                dims.append(str(size))
            elif axis == 0:
                dims.append(_BATCH)
            else:
                dims.append(shared.get(axis) or next(fresh))
        result.append(f"({', '.join(dims)})" if dims else "()")
    return result


def _mask_shape(input_shape):
    """`(batch, T)` of the mask of an input of shape string `input_shape`."""
    dims = [dim.strip() for dim in input_shape.strip("()").split(",")]
    return f"({dims[0]}, {dims[1]})"


def _with_filler(value, count, filler):
    """`value` with `count` examples of `filler` appended on axis 0."""
    shape = tf.concat([[count], tf.shape(value)[1:]], axis=0)
    filler = tf.fill(shape, tf.cast(filler, value.dtype))
    return tf.concat([value, filler], axis=0)


def write_saved_model(
    model,
    filepath,
    specs,
    prepare,
    model_call,
    *,
    endpoint_name,
    polymorphic_shapes,
    mask_index,
    wide,
):
    """Writes the SavedModel of `model` (on the JAX backend) to `filepath`.

    `specs`, `prepare` and `model_call` are those of
    `saved_model._serving_parts`; the signatures are the TensorFlow
    backend's: `endpoint_name` and `"serving_default"`, same inputs, same
    outputs. `wide` is `(name, specs, narrowed)`: the second signature,
    which takes `specs` and runs the first on `narrowed(args)`; the
    `endpoint_name` function takes both (see
    `_endpoints.serving_functions`).
    """
    from jax.experimental import jax2tf

    variables = list(model.variables)
    module = tf.Module()
    module.model_variables = [
        tf.Variable(
            keras.ops.convert_to_numpy(variable.value),
            trainable=variable.trainable,
            name=variable.name,
        )
        for variable in variables
    ]
    with_mask = mask_index is not None

    def stateless_call(values, *args):
        inputs = list(args[:-1]) if with_mask else list(args)
        mask = args[-1] if with_mask else None
        mapping = list(zip(variables, values, strict=True))
        with keras.StatelessScope(state_mapping=mapping):
            return model_call(inputs, mask)

    shapes = [None, *polymorphic_shapes]
    if with_mask:
        shapes.append(_mask_shape(polymorphic_shapes[mask_index]))
    converted = jax2tf.convert(
        stateless_call, polymorphic_shapes=shapes, with_gradient=False
    )

    names = [spec.name for spec in specs]

    def serve(*args):
        inputs, mask = prepare(args)
        values = [*inputs, mask] if with_mask else inputs
        # jax2tf's dimension variables are at least 1: a batch of 0 runs as
        # one example of filler (no children, no edges, a masked sequence),
        # whose outputs are dropped.
        batch = tf.shape(values[0])[0]
        missing = tf.maximum(1 - batch, 0)
        values = [
            _with_filler(
                value,
                missing,
                -1 if index < len(inputs) and names[index] == "children" else 0,
            )
            for index, value in enumerate(values)
        ]
        outputs = converted(list(module.model_variables), *values)
        return {key: output[:batch] for key, output in outputs.items()}

    wide_name, wide_specs, narrowed = wide
    try:
        serve_fn, wide_fn = serving_functions(
            serve, specs, wide_specs, narrowed
        )
    except Exception as error:
        raise ValueError(
            "Could not convert the model with jax2tf for the signature "
            f"inputs {[spec.name for spec in specs]} with the shapes "
            f"{polymorphic_shapes}. If two open axes must have the same "
            "size, give them the same name in `polymorphic_shapes`. "
            f"Received error: {error}"
        ) from error
    # Named as on the TensorFlow backend (`ExportArchive` sets the
    # endpoints as attributes of the saved object).
    setattr(module, endpoint_name, serve_fn)
    setattr(module, wide_name, wide_fn)
    concrete = serve_fn.get_concrete_function(*specs)
    signatures = {
        endpoint_name: concrete,
        wide_name: wide_fn.get_concrete_function(),
    }
    signatures.setdefault("serving_default", concrete)
    tf.saved_model.save(module, str(filepath), signatures=signatures)
