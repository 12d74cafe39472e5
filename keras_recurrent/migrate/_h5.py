"""Reading the HDF5 files tf.keras 2 writes, with h5py only.

Three layouts:

- a full model (`model.save("m.h5")`): a `model_config` JSON attribute and
  a `model_weights` group;
- legacy weights only (`model.save_weights("w.h5")`): the `model_weights`
  layout at the root;
- tf.keras 2.13+'s `.weights.h5` (`model.save_weights("w.weights.h5")`):
  groups `layers/<snake_case class>[_n]/.../vars/<i>`, the layout Keras 3
  writes too.

In the legacy layout the group attribute `layer_names` lists the layers in
the model's order and each layer's group lists its weights in the
attribute `weight_names`, in the layer's weight order (trainable weights,
then non-trainable ones; a nested model's weights are those of its layers,
in order). `weight_names` are paths in the group, e.g.
`bidirectional/forward_lstm/lstm_cell/kernel:0`.
"""

import json
import os

import h5py
import numpy as np


def open_file(path):
    """Opens `path` for reading, with a clear error if it is not HDF5."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"No such file: {path!r}")
    if not h5py.is_hdf5(path):
        raise ValueError(
            f"{path!r} is not an HDF5 file. kr.migrate reads the `.h5` "
            "files tf.keras 2 writes (`model.save('model.h5')`, "
            "`model.save_weights('model.h5')` or "
            "`model.save_weights('model.weights.h5')`); a `.keras` file "
            "loads with `keras.saving.load_model`."
        )
    return h5py.File(path, mode="r")


def text(value):
    """An HDF5 string attribute as `str`."""
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def model_config(h5_file, path):
    """The decoded `model_config` attribute of a full-model file."""
    config = h5_file.attrs.get("model_config")
    if config is None:
        raise ValueError(
            f"{path!r} holds no model config (no `model_config` "
            "attribute): it is a weights-only file. Build the model in "
            "Keras 3 and load the weights with "
            "`kr.migrate.load_legacy_weights(model, path)`."
        )
    return json.loads(text(config))


def legacy_weights_group(h5_file):
    """The group of the legacy layout: `model_weights` or the root."""
    if "model_weights" in h5_file:
        return h5_file["model_weights"]
    if "layer_names" in h5_file.attrs:
        return h5_file
    return None


def legacy_layer_weights(group):
    """Each layer's weights in a legacy-layout group, in the model's order.

    Args:
        group: A group with a `layer_names` attribute.

    Returns:
        A list of `(layer_name, weight_names, arrays)`, one per layer,
        layers without weights included (with empty lists).
    """
    layers = []
    for layer_name in group.attrs["layer_names"]:
        layer_name = text(layer_name)
        layer_group = group[layer_name]
        names = [text(n) for n in layer_group.attrs.get("weight_names", [])]
        arrays = [np.asarray(layer_group[n]) for n in names]
        layers.append((layer_name, names, arrays))
    return layers


def is_saving_lib_layout(h5_file):
    """Whether the file has the `.weights.h5` layout (`layers/.../vars`)."""
    return "layer_names" not in h5_file.attrs and (
        "vars" in h5_file or "layers" in h5_file
    )


def saving_lib_variables(h5_file):
    """The `.weights.h5` layout's variables, by the path of their object.

    Returns:
        A dict mapping each path that holds variables (e.g.
        `layers/bidirectional/forward_layer/cell`; `""` for the root) to
        the list of its arrays, in their saved order (`vars/0`, `vars/1`,
        ...).
    """
    found = {}

    def visit(name, obj):
        if isinstance(obj, h5py.Group) and name.split("/")[-1] == "vars":
            if len(obj):
                keys = sorted(obj, key=int)
                found[name[: -len("vars")].rstrip("/")] = [
                    np.asarray(obj[k]) for k in keys
                ]

    h5_file.visititems(visit)
    return found
