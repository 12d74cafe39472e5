"""Checks that a layer wrapping a cell exposes the cell's arguments.

As `keras.layers.LSTM` does: every argument of the cell is an explicit
keyword parameter of the layer's `__init__` (or of the base `__init__` it
forwards its keyword arguments to), with the cell's default, and a
read-only property of the layer that returns the cell's value.
"""

import inspect

import pytest

# Cell config keys that belong to the base Layer, not to the cell.
_LAYER_KEYS = {"name", "trainable", "dtype"}


def _parameter(klass, name):
    """The first `__init__` parameter `name` along the MRO of `klass`."""
    for base in klass.__mro__:
        if "__init__" in vars(base):
            parameter = inspect.signature(base.__init__).parameters.get(name)
            if parameter is not None:
                return parameter
    raise AssertionError(f"{klass.__name__} does not take `{name}`")


def _cell_default(cell_class, name):
    return _parameter(cell_class, name).default


def check_cell_arguments_exposed(layer_class, required, overrides):
    """Checks `layer_class` against its cell's arguments.

    Args:
        layer_class: The layer class, e.g. `kr.layers.PeepholeLSTM`.
        required: Dict of the arguments needed to build it, e.g. `units`.
        overrides: Dict with a value other than the default for every other
            cell argument; each must reach the cell.
    """
    layer = layer_class(**required)
    cell_arguments = set(layer.cell.get_config()) - _LAYER_KEYS
    assert cell_arguments, layer.cell.get_config()
    assert set(overrides) == cell_arguments - set(required), (
        "overrides must cover every cell argument: missing "
        f"{sorted(cell_arguments - set(required) - set(overrides))}, extra "
        f"{sorted(set(overrides) - cell_arguments)}"
    )
    for name in sorted(cell_arguments):
        parameter = _parameter(layer_class, name)
        assert parameter.kind in (
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
            inspect.Parameter.KEYWORD_ONLY,
        ), name
        if name not in required:
            assert parameter.default == _cell_default(type(layer.cell), name), (
                name
            )
        attribute = inspect.getattr_static(layer_class, name, None)
        assert isinstance(attribute, property), f"`{name}` is no property"
        assert attribute.fset is None, f"`{name}` is not read-only"
        assert getattr(layer, name) is getattr(layer.cell, name), name
        with pytest.raises(AttributeError):
            setattr(layer, name, "changed")

    changed = layer_class(**required, **overrides)
    default_config = layer.cell.get_config()
    changed_config = changed.cell.get_config()
    for name in overrides:
        assert changed_config[name] != default_config[name], name
        assert getattr(changed, name) is getattr(changed.cell, name), name
    assert changed.get_config() == {
        **changed.get_config(),
        **{key: changed_config[key] for key in cell_arguments},
    }


# Non-default values of the arguments the LSTM-variant cells share.
LSTM_CELL_OVERRIDES = {
    "activation": "relu",
    "recurrent_activation": "hard_sigmoid",
    "use_bias": False,
    "kernel_initializer": "ones",
    "recurrent_initializer": "zeros",
    "bias_initializer": "ones",
    "peephole_initializer": "zeros",
    "projection_initializer": "ones",
    "unit_forget_bias": False,
    "kernel_regularizer": "l2",
    "recurrent_regularizer": "l1",
    "bias_regularizer": "l2",
    "peephole_regularizer": "l1",
    "projection_regularizer": "l2",
    "kernel_constraint": "non_neg",
    "recurrent_constraint": "unit_norm",
    "bias_constraint": "max_norm",
    "peephole_constraint": "non_neg",
    "projection_constraint": "unit_norm",
    "dropout": 0.1,
    "recurrent_dropout": 0.2,
    "cell_clip": 2.0,
    "projection_units": 3,
    "seed": 5,
}
