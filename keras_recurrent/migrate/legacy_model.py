"""`load_legacy_model`: tf.keras 2 `.h5` models as Keras 3 models."""

import copy
import os

import keras

from keras_recurrent.migrate import _h5
from keras_recurrent.migrate.legacy_weights import assign_layer_weights
from keras_recurrent.migrate.legacy_weights import legacy_order

# TensorFlow Addons' (and tf.keras.experimental's) classes, by the name
# their config carries, and the keras_recurrent layer that replaces each.
# Each replacement takes TFA's config keys and holds TFA's weights in
# TFA's order.
LEGACY_CLASSES = {
    "Addons>LayerNormLSTMCell": "LayerNormLSTMCell",
    "Addons>LayerNormSimpleRNNCell": "LayerNormSimpleRNNCell",
    "Addons>ESNCell": "ESNCell",
    "Addons>NASCell": "NASCell",
    "Addons>PeepholeLSTMCell": "PeepholeLSTMCell",
    "Addons>ESN": "ESN",
    # tf.keras.experimental.PeepholeLSTMCell (TF 2.0 to 2.15).
    "PeepholeLSTMCell": "PeepholeLSTMCell",
}

# keras_recurrent's sequence layer of each mapped cell: `RNN(cell)` in
# the file becomes that layer (see `cell_layer_of_rnn`).
CELL_LAYERS = {
    "LayerNormLSTMCell": "LayerNormLSTM",
    "LayerNormSimpleRNNCell": "LayerNormSimpleRNN",
    "ESNCell": "ESN",
    "NASCell": "NAS",
    "PeepholeLSTMCell": "PeepholeLSTM",
}

MODEL_CLASSES = ("Sequential", "Functional", "Model")

# Config keys of tf.keras 2's LSTM and GRU cells that only chose how the
# maths ran (`implementation`: fused or split kernels), dropped from the
# configs of the mapped classes.
PERFORMANCE_KEYS = ("implementation",)

# Config keys tf.keras 2 wrote that Keras 3's layers reject, with the only
# value Keras 3 can honour (keras-team/keras#20750: `time_major`).
REMOVED_KEYS = {"time_major": False}


def load_legacy_model(path, custom_objects=None):
    """Loads a tf.keras 2 `.h5` model as a Keras 3 model.

    Keras 3 cannot load a tf.keras 2 model that holds a recurrent layer
    (`Unrecognized keyword arguments passed to LSTM: {'time_major':
    False}`, keras-team/keras#20750), nor TensorFlow Addons' cells, which
    have no Keras 3 release. This function reads the file with h5py (no
    TensorFlow needed: it works on the JAX and PyTorch backends), rewrites
    the model's config for Keras 3, maps the Addons classes to
    keras_recurrent's, builds the model and sets every weight from the
    file. The result computes the same outputs as the original and saves
    as `.keras`.

    What maps to what:

    - `LSTM`, `GRU` (`reset_after` both ways), `SimpleRNN`, `RNN` over a
      cell or a list of cells (`StackedRNNCells`), `Bidirectional`,
      `Masking` and the other built-in layers: the same classes of
      `keras.layers`;
    - `Sequential` and `Functional` models, nested ones too:
      `keras.Sequential` and `keras.Model`;
    - TensorFlow Addons' `LayerNormLSTMCell`, `LayerNormSimpleRNNCell`,
      `ESNCell`, `NASCell`, `PeepholeLSTMCell` and `ESN`, and
      `tf.keras.experimental.PeepholeLSTMCell`: the classes of the same
      name in `kr.layers`; an `RNN` over one of these cells becomes the
      cell's layer (`kr.layers.LayerNormLSTM`, `LayerNormSimpleRNN`,
      `ESN`, `NAS`, `PeepholeLSTM`), with the same options and weights.

    The optimizer state and the training config are not loaded: compile
    the model again to train it.

    Args:
        path: The `.h5` file, written by tf.keras 2's `model.save`.
        custom_objects: Optional dict mapping the class names in the
            file's config (as written there, e.g. `"MyLayer"` or
            `"Custom>MyLayer"`) to Keras 3 classes, for layers that
            neither Keras 3 nor keras_recurrent provides. Such a class
            gets the file's config unchanged and its weights in the file's
            order.

    Returns:
        The Keras 3 model (`keras.Sequential` or a functional
        `keras.Model`), uncompiled.

    Raises:
        ValueError: If the file holds no model (a weights-only file: use
            `kr.migrate.load_legacy_weights`), if it holds a layer class
            that is not known (the message names it and says how to pass
            `custom_objects`), or if a layer's weights do not fit.

    Example:

    ```python
    model = kr.migrate.load_legacy_model("tf_keras_model.h5")
    model.save("model.keras")  # from then on, a Keras 3 file
    ```

    From the command line, `python -m keras_recurrent.migrate OLD.h5
    NEW.keras` does the same and prints what it mapped.
    """
    model, _ = convert(path, custom_objects)
    return model


def convert(path, custom_objects=None):
    """`load_legacy_model`, also returning what was mapped.

    Returns:
        `(model, rows)`, with one row per top-level layer of the file:
        `(name, file class, Keras 3 class, number of weights)`.
    """
    custom_objects = dict(custom_objects or {})
    with _h5.open_file(path) as h5_file:
        config = _h5.model_config(h5_file, os.fspath(path))
        group = _h5.legacy_weights_group(h5_file)
        file_layers = _h5.legacy_layer_weights(group) if group else []
    classes = {}
    descriptions = {}
    config = translate(config, custom_objects, classes, descriptions)
    with keras.saving.custom_object_scope(classes):
        model = build_model(config)
    rows = []
    for name, weight_names, arrays in file_layers:
        if arrays:
            assign_layer_weights(model.get_layer(name), weight_names, arrays)
    for layer in model.layers:
        legacy = descriptions.get(layer.name)
        if legacy is None:
            continue
        ours = type(layer).__module__.startswith("keras_recurrent")
        if isinstance(layer, keras.Model):
            new = "keras." + type(layer).__name__
        else:
            new = ("kr.layers." if ours else "keras.layers.") + describe(layer)
        rows.append((layer.name, legacy, new, len(legacy_order(layer))))
    return model, rows


def build_model(config):
    """The Keras 3 model of a translated model config."""
    if config["class_name"] == "Sequential":
        return keras.Sequential.from_config(config["config"])
    return keras.Model.from_config(config["config"])


def describe(layer):
    """A layer's class, with its cell or wrapped layer: `RNN(LSTMCell)`."""
    name = type(layer).__name__
    if type(layer) is keras.layers.RNN:
        return f"{name}({describe(layer.cell)})"
    if isinstance(layer, keras.layers.StackedRNNCells):
        return f"{name}([{', '.join(describe(c) for c in layer.cells)}])"
    if isinstance(layer, keras.layers.Bidirectional):
        return f"{name}({describe(layer.forward_layer)})"
    if isinstance(layer, keras.layers.Wrapper):
        return f"{name}({describe(layer.layer)})"
    return name


def unknown_class(class_name, where):
    return ValueError(
        f"load_legacy_model: {where} is of class {class_name!r}, which "
        "neither Keras 3 nor keras_recurrent provides. Pass the Keras 3 "
        "class that replaces it: "
        f"`kr.migrate.load_legacy_model(path, custom_objects="
        f"{{{class_name!r}: MyLayer}})`. MyLayer gets the file's config "
        "(`MyLayer.from_config`) and the file's weights in their order."
    )


def resolve(entry, custom_objects, classes, where):
    """The Keras 3 class name to write for a layer entry of the file.

    Records in `classes` the classes Keras must find by that name.
    """
    class_name = entry["class_name"]
    registered = entry.get("registered_name") or class_name
    for key in (registered, class_name):
        if key in custom_objects:
            classes[key] = custom_objects[key]
            return key, key
    if registered in LEGACY_CLASSES or (
        class_name in LEGACY_CLASSES and registered == class_name
    ):
        from keras_recurrent import layers

        target = LEGACY_CLASSES[registered]
        cls = getattr(layers, target, None)
        if cls is None:
            raise ValueError(
                f"load_legacy_model: {where} is TensorFlow Addons' "
                f"{registered!r}, whose keras_recurrent replacement "
                f"`kr.layers.{target}` is not in this version of "
                "keras_recurrent. Pass a replacement in `custom_objects="
                f"{{{registered!r}: MyLayer}}`."
            )
        key = f"keras_recurrent>{target}"
        classes[key] = cls
        return key, registered
    if class_name in MODEL_CLASSES:
        return class_name, class_name
    if entry.get("module", "keras.layers") in (None, "keras.layers") and (
        hasattr(keras.layers, class_name)
    ):
        return class_name, class_name
    if keras.saving.get_registered_object(registered) is not None:
        return registered, registered
    raise unknown_class(registered, where)


def translate(config, custom_objects, classes, descriptions):
    """A Keras 3 model config from a tf.keras 2 one (a new dict).

    Args:
        config: The file's model config.
        custom_objects: The user's classes, by the file's class names.
        classes: A dict that receives the classes Keras must find by the
            names written in the new config.
        descriptions: A dict that receives each top-level layer's class in
            the file, with its cell or wrapped layer (`RNN(LSTMCell)`).
    """
    config = copy.deepcopy(config)
    if config.get("class_name") not in MODEL_CLASSES:
        raise ValueError(
            "load_legacy_model: the file's model is of class "
            f"{config.get('class_name')!r}; expected a Sequential or "
            "Functional model. Subclassed models are saved without "
            "their architecture: rebuild the model in Keras 3 and use "
            "kr.migrate.load_legacy_weights."
        )
    translate_model(config, custom_objects, classes, descriptions)
    return config


def translate_model(config, custom_objects, classes, descriptions=None):
    model_config = config["config"]
    layers = model_config["layers"]
    if (
        config["class_name"] == "Sequential"
        and layers
        and layers[0]["class_name"] != "InputLayer"
        and "batch_input_shape" in layers[0]["config"]
    ):
        # tf.keras 2 wrote `input_shape=` as the first layer's
        # `batch_input_shape`; Keras 3 wants an InputLayer.
        shape = layers[0]["config"]["batch_input_shape"]
        layers.insert(
            0, {"class_name": "InputLayer", "config": {"batch_shape": shape}}
        )
    sequential, functional = set(), set()
    for entry in model_config["layers"]:
        description = translate_layer(entry, custom_objects, classes)
        name = entry["config"].get("name", entry.get("name"))
        if descriptions is not None:
            descriptions[name] = description
        if entry["class_name"] == "Sequential" and starts_with_input(entry):
            sequential.add(name)
        elif entry["class_name"] in ("Functional", "Model"):
            functional.add(name)
    if config["class_name"] != "Sequential":
        shift_nested_model_nodes(model_config, sequential, functional)
        for key in ("input_layers", "output_layers"):
            # tf.keras 2 wrote one input as a list of one; Keras 3 reads
            # that as a model called on a list.
            references = model_config.get(key)
            if len(references) == 1 and isinstance(references[0], list):
                model_config[key] = references[0]


def starts_with_input(entry):
    """Whether a nested Sequential's config starts with its input."""
    layers = entry["config"]["layers"]
    return bool(layers) and (
        layers[0]["class_name"] == "InputLayer"
        or "batch_input_shape" in layers[0]["config"]
    )


def shift_nested_model_nodes(model_config, sequential, functional):
    """Renumbers the calls of nested models from 0.

    tf.keras 2 counted a nested model's own construction as its node 0, so
    the outer model's first call of it is node 1. Keras 3 models have no
    such node (Keras 3 itself subtracts 1 for a nested Functional model
    among the outer model's outputs, not elsewhere).
    """

    def shift(reference, names):
        if reference[0] in names and reference[1] > 0:
            reference[1] -= 1

    for entry in model_config["layers"]:
        for node in entry.get("inbound_nodes", []):
            if isinstance(node, list):
                for reference in node:
                    shift(reference, sequential | functional)
    for key in ("output_layers", "input_layers"):
        references = model_config.get(key, [])
        if references and isinstance(references[0], str):
            references = [references]
        for reference in references:
            shift(reference, sequential)


def translate_layer(entry, custom_objects, classes, parent=None):
    """Rewrites one layer entry (and the layers inside it) in place.

    Returns:
        The entry's class in the file, with its cell or wrapped layer:
        `RNN(LSTMCell)`.
    """
    layer_config = entry["config"]
    name = layer_config.get("name", entry.get("name"))
    where = f"layer {name!r}" if name else f"the cell of {parent}"
    new_class, legacy_class = resolve(entry, custom_objects, classes, where)
    if new_class in MODEL_CLASSES:
        translate_model(entry, custom_objects, classes)
        return legacy_class
    mapped = new_class != entry["class_name"] or new_class in custom_objects
    entry["class_name"] = new_class
    if new_class.startswith("keras_recurrent>"):
        for key in PERFORMANCE_KEYS:
            layer_config.pop(key, None)
    if mapped or "module" in entry and entry["module"] != "keras.layers":
        entry.pop("module", None)
        entry.pop("registered_name", None)
    for key, supported in REMOVED_KEYS.items():
        if key in layer_config:
            value = layer_config.pop(key)
            if value != supported:
                raise ValueError(
                    f"load_legacy_model: {where} has {key}={value!r}, "
                    f"which Keras 3 does not support (only {supported!r})."
                )
    if new_class != "InputLayer":
        layer_config.pop("batch_input_shape", None)
        if layer_config.get("input_length", 0) is None:
            layer_config.pop("input_length")
    elif "batch_input_shape" in layer_config:
        layer_config["batch_shape"] = layer_config.pop("batch_input_shape")
        if layer_config.pop("ragged", False):
            raise ValueError(
                f"load_legacy_model: {where} takes ragged tensors, which "
                "Keras 3 does not support."
            )
    description = legacy_class
    inner = []
    for key in ("cell", "layer", "backward_layer"):
        if isinstance(layer_config.get(key), dict):
            inner.append(
                translate_layer(
                    layer_config[key], custom_objects, classes, where
                )
            )
    if isinstance(layer_config.get("cells"), list):
        inner.append(
            "["
            + ", ".join(
                translate_layer(c, custom_objects, classes, where)
                for c in layer_config["cells"]
            )
            + "]"
        )
    if inner:
        description += "(" + inner[0] + ")"
    if new_class == "RNN" and isinstance(layer_config.get("cell"), dict):
        cell_layer_of_rnn(entry, classes)
    return description


def cell_layer_of_rnn(entry, classes):
    """Rewrites `RNN(<Addons cell>)` as keras_recurrent's layer of the cell.

    keras_recurrent's sequence layers run their cells where
    `keras.layers.RNN` cannot: on JAX, Keras' masked loop assumes that a
    cell's output has the shape of its first state, which NASCell's does
    not (its output is the projected `m`, its first state `c`). The layer
    takes the cell's arguments and the RNN's options, and holds the cell's
    weights in the same order.
    """
    from keras_recurrent import layers

    cell = entry["config"]["cell"]
    name = cell["class_name"].partition("keras_recurrent>")[2]
    layer_name = CELL_LAYERS.get(name)
    if layer_name is None or not hasattr(layers, layer_name):
        return
    config = {
        key: value
        for key, value in cell["config"].items()
        if key not in ("name", "trainable", "dtype")
    }
    config.update(
        {key: value for key, value in entry["config"].items() if key != "cell"}
    )
    key = f"keras_recurrent>{layer_name}"
    classes[key] = getattr(layers, layer_name)
    entry["class_name"] = key
    entry["config"] = config
    entry.pop("module", None)
    entry.pop("registered_name", None)
