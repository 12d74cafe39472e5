"""The `tf.function`s of the SavedModel's endpoints, on every backend."""

import inspect
import keyword

import tensorflow as tf


def serving_functions(serve, specs, wide_specs, narrowed):
    """The two endpoints, `tf.function`s traced for the SavedModel.

    `serve(*args)` runs the model on the signature's tensors (`specs`),
    `narrowed(args)` checks and casts `wide_specs` tensors to `specs`. The
    model is traced once, for `specs`. Returns `(serve, serve_wide)`:

    - `serve` has two concrete functions, `specs` first (the SavedModel
      signature, and `"serving_default"`: what TF Serving sees), then
      `wide_specs`, which narrows and runs the first. Loaded in Python,
      `loaded.serve(...)` picks the one that matches the dtypes of its
      arguments, so int64 and float64 tensors are range-checked and
      served; a mix that matches neither fails with TensorFlow's "Could
      not find matching concrete function", which lists both options with
      the inputs' names;
    - `serve_wide` has the `wide_specs` one only (the `"serve_wide"`
      signature).

    Both take the inputs by position or by name.
    """
    base = tf.function(serve, input_signature=specs, autograph=False)
    model_fn = base.get_concrete_function()
    dtypes = [spec.dtype for spec in specs]

    def dispatch(*args):
        if [arg.dtype for arg in args] == dtypes:
            return model_fn(*args)
        return model_fn(*narrowed(args))

    names = [spec.name for spec in specs]
    if all(
        name.isidentifier() and not keyword.iskeyword(name) for name in names
    ):
        dispatch.__signature__ = inspect.Signature(
            [
                inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD)
                for name in names
            ]
        )
    serve_fn = tf.function(dispatch, autograph=False)
    serve_fn.get_concrete_function(*specs)
    serve_fn.get_concrete_function(*wide_specs)
    wide_fn = tf.function(dispatch, input_signature=wide_specs, autograph=False)
    wide_fn.get_concrete_function()
    return serve_fn, wide_fn
