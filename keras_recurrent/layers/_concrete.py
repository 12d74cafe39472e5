"""Whether a layer's input tensors hold values it can check eagerly."""

import keras
import numpy as np
from keras import ops

# Re-exported: the layers' checks import it from here.
from keras_recurrent._compat import in_xla_context  # noqa: F401


def on_meta_device(*tensors):
    """Whether PyTorch tensors are on the `"meta"` device (shape inference).

    Keras' PyTorch backend infers output shapes by calling a layer on such
    tensors (e.g. when `fit` builds a functional model); they hold no data,
    so the layers answer with zeros of the right shape.
    """
    return keras.backend.backend() == "torch" and any(
        getattr(t, "device", None) is not None and t.device.type == "meta"
        for t in tensors
    )


def concrete_numpy(*tensors):
    """NumPy values of `tensors` when they are concrete, else `None`."""
    backend = keras.backend.backend()
    if backend == "tensorflow":
        import tensorflow as tf

        if not tf.executing_eagerly():
            return None
    elif backend == "jax":
        import jax

        if any(isinstance(tensor, jax.core.Tracer) for tensor in tensors):
            return None
    elif on_meta_device(*tensors) or torch_exporting():
        return None
    return [ops.convert_to_numpy(tensor) for tensor in tensors]


def index_input_dtype():
    """The dtype of the index `keras.Input`s of `kr.trees.tree_inputs` and
    `kr.graphs.graph_inputs`: int64, so that Keras passes an index at or
    above 2**31 to the layers, which check it before they narrow it (an
    int32 input would turn `2**32 + 1` into node 1 first). int32 on JAX
    with 64-bit types off, which truncates int64 data itself (and warns at
    every conversion to an int64 input)."""
    if keras.backend.backend() == "jax":
        import jax

        if not jax.config.jax_enable_x64:
            return "int32"
    return "int64"


def narrowed_by_conversion(*arrays):
    """Whether Keras' conversion of these layer inputs can change an index.

    With JAX (64-bit types disabled, its default), `Layer.__call__` turns a
    NumPy int64, uint32 or uint64 array into a 32-bit tensor before `call`
    runs, and an index at or above 2**31 wraps into another (`2**32 + 1`
    becomes 1). Such arrays are checked on the host first. The other
    backends keep the dtype, and the layers check before they cast.
    """
    if keras.backend.backend() != "jax":
        return False
    import jax

    if jax.config.jax_enable_x64:
        return False
    return any(
        isinstance(array, np.ndarray)
        and array.dtype.kind in "iu"
        and array.dtype.itemsize * 8 - (array.dtype.kind == "i") > 31
        for array in arrays
    )


def torch_exporting():
    """Whether PyTorch is exporting: `torch.export` (which ONNX export
    runs first), whose tensors are fakes with shapes and no values to
    check, or the TorchScript trace (ONNX export's fallback, e.g. with open
    sizes), whose sample values (Keras makes ones) are not the served
    inputs' and whose Python control flow on them would be baked in."""
    import torch

    return torch.compiler.is_exporting() or torch.jit.is_tracing()


def torchscript_tracing():
    """Whether PyTorch's TorchScript trace (`torch.jit.trace`) runs: never
    on the other backends."""
    if keras.backend.backend() != "torch":
        return False
    import torch

    return torch.jit.is_tracing()


def refuse_torchscript_trace(layer, baked, remedy):
    """Raises a `ValueError` naming `layer` under TorchScript's trace.

    `model.export(..., format="onnx")` on PyTorch traces the model with
    `torch.jit.trace` (with sample inputs of ones) where an input size is
    open, or where `torch.export` failed. The trace runs Python once, so a
    loop over a size, or control flow on the sample values, is baked into
    the file as traced. The layers whose computation depends so on a size
    call this where the trace would be wrong; `baked` says what the trace
    would bake in, `remedy` what to export instead. Nothing happens on
    other backends, nor under eager PyTorch, `torch.compile` or
    `torch.export` (whose loops run over sizes fixed in the graph).
    """
    if torchscript_tracing():
        raise ValueError(
            f"{type(layer).__name__} {layer.name!r}: TorchScript's trace "
            "(which `model.export(..., format='onnx')` runs on PyTorch where "
            "an input size is open, or where `torch.export` failed) would "
            f"bake {baked} into the model. {remedy}"
        )
