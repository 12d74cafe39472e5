"""Whether a layer's input tensors hold values it can check eagerly."""

import keras
from keras import ops


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
    elif on_meta_device(*tensors):
        return None
    return [ops.convert_to_numpy(tensor) for tensor in tensors]
