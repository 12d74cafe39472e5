"""Refuses inputs of unknown rank before Keras' `Layer.__call__` reads them.

A `tf.function` traced with `tf.TensorSpec(None)` gives tensors whose rank is
unknown. Keras' `Layer.__call__` reads their shapes to build the layer and
fails with "as_list() is not defined on an unknown TensorShape", before any
of our checks run; every layer of the package therefore checks first.
"""

import inspect

import keras


class KnownRankInputs:
    """Mixin, listed before `keras.layers.Layer`: raises a `ValueError`
    naming the layer and the argument when a tensor of unknown rank is
    passed, in place of the error from deep inside Keras.

    A layer whose `inputs` is a list of named tensors lists their names in
    `input_tensor_names`, so that the message says `inputs[1] (edges)`.

    It is also the package's one `__call__` override: a layer that must see
    its index arrays before Keras converts them (int64 NumPy indices that
    Keras or JAX would narrow to int32, wrapping values at 2**31) defines
    `check_host_inputs(inputs)`, which runs here, on the arrays as given.
    """

    input_tensor_names = ()

    def __call__(self, *args, **kwargs):
        # Only TensorFlow has tensors of unknown rank; on PyTorch a cell's
        # `__call__` runs at every step, so the others skip the walk.
        if keras.backend.backend() == "tensorflow":
            check_known_ranks(self, args, kwargs)
        if args or "inputs" in kwargs:
            self.check_host_inputs(args[0] if args else kwargs["inputs"])
        return super().__call__(*args, **kwargs)

    def check_host_inputs(self, inputs):
        """Checks `inputs` as the caller passed them, before Keras converts
        them; does nothing unless a layer defines it."""
        del inputs


def check_known_ranks(layer, args, kwargs):
    """Raises if any tensor in `args` or `kwargs` has an unknown rank.

    Only TensorFlow has such tensors (`tf.TensorShape(None)`, whose `rank` is
    `None`); for every tensor of known rank this is one `getattr`.
    """
    for value in keras.tree.flatten((args, kwargs)):
        if getattr(getattr(value, "shape", None), "rank", 0) is None:
            name = _argument_name(layer, args, kwargs, value)
            raise ValueError(
                f"{type(layer).__name__} needs inputs of known rank, but "
                f"`{name}` has an unknown shape. Give its `tf.TensorSpec` a "
                "shape, with `None` for the sizes that vary, e.g. "
                "`tf.TensorSpec((None, None, 8))`. "
                f"Received: {name}.shape={value.shape}"
            )


def _argument_name(layer, args, kwargs, value):
    """Where `value` sits in the `call` arguments: `inputs`, `mask`,
    `inputs[1]`, `inputs['edges']`, ..."""
    try:
        arguments = inspect.signature(layer.call).bind(*args, **kwargs)
    except TypeError:
        return "inputs"
    for name, argument in arguments.arguments.items():
        for path, item in keras.tree.flatten_with_path(argument):
            if item is value:
                where = name + "".join(f"[{key!r}]" for key in path)
                names = layer.input_tensor_names
                if (
                    name == "inputs"
                    and len(path) == 1
                    and path[0] in range(len(names))
                ):
                    where += f" ({names[path[0]]})"
                return where
    return "inputs"
