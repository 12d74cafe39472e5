"""`load_legacy_weights`: tf.keras 2 weights-only files into Keras 3."""

import os
import tempfile

import numpy as np

from keras_recurrent.migrate import _h5


def load_legacy_weights(model, path):
    """Loads a tf.keras 2 weights file into a Keras 3 model.

    Reads both layouts tf.keras 2 writes, with h5py only (TensorFlow is
    not needed, so this works on the JAX and PyTorch backends too):

    - the legacy HDF5 layout, `model.save_weights("model.h5")` (and the
      `model_weights` group of a full `model.save("model.h5")` file): the
      layers with weights are matched in order, as tf.keras 2's
      `load_weights` did, and each layer's weights in the order of the
      file's `weight_names` (trainable weights, then non-trainable ones);
    - the layout tf.keras 2.13 and later write for names ending in
      `.weights.h5`: variables under `layers/<layer>/.../vars`, matched by
      path (the layer's class in snake case, numbered in the model's
      order: `dense`, `dense_1`, ...).

    The model must have the architecture of the one that saved the
    weights, built (created with an `Input`, or called once). Layers of
    keras_recurrent that replace TensorFlow Addons cells hold their
    weights in TFA's order, so TFA weights load into them.

    Args:
        model: A built Keras 3 model.
        path: The weights file (`.h5` or `.weights.h5`).

    Returns:
        The `model`, with the weights loaded.

    Raises:
        ValueError: If the model is not built, or if a layer's weights
            differ from the file's in number or shape; the message names
            the layer and both shapes.

    Example:

    ```python
    # In tf.keras 2: model.save_weights("weights.h5")
    model = keras.Sequential([keras.Input((None, 8)), keras.layers.LSTM(16)])
    kr.migrate.load_legacy_weights(model, "weights.h5")
    ```
    """
    if not model.built:
        raise ValueError(
            f"load_legacy_weights: model {model.name!r} is not built. "
            "Create it with a `keras.Input` or call it once on a batch "
            "before loading weights."
        )
    with _h5.open_file(path) as h5_file:
        group = _h5.legacy_weights_group(h5_file)
        if group is not None:
            load_legacy_layout(model, _h5.legacy_layer_weights(group), path)
        elif _h5.is_saving_lib_layout(h5_file):
            check_saving_lib_layout(
                model, _h5.saving_lib_variables(h5_file), path
            )
            model.load_weights(os.fspath(path))
        else:
            raise ValueError(
                f"{os.fspath(path)!r} is neither a tf.keras 2 weights "
                "file (no `layer_names` attribute) nor a `.weights.h5` "
                "file (no `layers` or `vars` group)."
            )
    return model


def load_legacy_layout(model, file_layers, path):
    """Loads the legacy layout's layers into `model`'s, in order."""
    file_layers = [entry for entry in file_layers if entry[1]]
    model_layers = [layer for layer in model.layers if layer.weights]
    if len(file_layers) != len(model_layers):
        raise ValueError(
            f"{os.fspath(path)!r} holds weights for "
            f"{len(file_layers)} layers "
            f"({', '.join(name for name, _, _ in file_layers)}), "
            f"but model {model.name!r} has {len(model_layers)} layers "
            f"with weights ({', '.join(lr.name for lr in model_layers)})."
        )
    for layer, (name, weight_names, arrays) in zip(model_layers, file_layers):
        assign_layer_weights(layer, weight_names, arrays, source=name)


def legacy_order(layer):
    """A layer's weights in tf.keras 2's saved order."""
    return list(layer.trainable_weights) + list(layer.non_trainable_weights)


def assign_layer_weights(layer, weight_names, arrays, source=None):
    """Assigns `arrays` to `layer`'s weights, in tf.keras 2's order.

    Args:
        layer: The Keras 3 layer (or nested model).
        weight_names: The file's names of the arrays (for messages).
        arrays: The values, in the file's order.
        source: The layer's name in the file, if it differs.

    Raises:
        ValueError: naming the layer and the shapes, if the number of
            weights or a shape differs.
    """
    variables = legacy_order(layer)
    where = f"layer {layer.name!r}"
    if source is not None and source != layer.name:
        where += f" (file layer {source!r})"
    if len(variables) != len(arrays):
        raise ValueError(
            f"{where} ({type(layer).__name__}) has {len(variables)} "
            f"weights, of shapes {[tuple(v.shape) for v in variables]}, "
            f"but the file holds {len(arrays)}: "
            + ", ".join(
                f"{n} {tuple(a.shape)}" for n, a in zip(weight_names, arrays)
            )
        )
    for variable, name, array in zip(variables, weight_names, arrays):
        if tuple(variable.shape) != tuple(array.shape):
            raise ValueError(
                f"{where} ({type(layer).__name__}): weight "
                f"{variable.path!r} has shape {tuple(variable.shape)}, but "
                f"the file's {name!r} has shape {tuple(array.shape)}."
            )
    for variable, array in zip(variables, arrays):
        variable.assign(np.asarray(array, dtype=variable.dtype))


def check_saving_lib_layout(model, file_variables, path):
    """Checks that the `.weights.h5` file fits `model`, path by path.

    The model's own paths come from writing its weights in the same
    layout, with Keras 3's `save_weights`, to a temporary file.
    """
    with tempfile.TemporaryDirectory() as directory:
        expected_path = os.path.join(directory, "expected.weights.h5")
        model.save_weights(expected_path)
        with _h5.open_file(expected_path) as expected_file:
            expected = {
                key: [a.shape for a in arrays]
                for key, arrays in _h5.saving_lib_variables(
                    expected_file
                ).items()
            }
    found = {key: [a.shape for a in v] for key, v in file_variables.items()}
    missing = [key for key in expected if key not in found]
    if missing:
        raise ValueError(
            f"{os.fspath(path)!r} holds no weights for "
            + ", ".join(f"{key!r} (shapes {expected[key]})" for key in missing)
            + f" of model {model.name!r}; it holds weights for: "
            + ", ".join(f"{key!r} {found[key]}" for key in sorted(found))
        )
    for key, shapes in expected.items():
        if found[key] != shapes:
            raise ValueError(
                f"{key!r} of model {model.name!r} has weights of shapes "
                f"{shapes}, but {os.fspath(path)!r} holds {found[key]}."
            )
    extra = sorted(set(found) - set(expected))
    if extra:
        raise ValueError(
            f"{os.fspath(path)!r} holds weights that model "
            f"{model.name!r} has no place for: "
            + ", ".join(f"{key!r} {found[key]}" for key in extra)
        )
