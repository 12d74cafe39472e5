"""What a layer built from one cell shares, whatever its loop: the cell's
arguments, properties and config, written once for the sequence layers
(`CellRNN`) and the tree layers (`TreeLSTMLayer`)."""

import inspect

import keras

# Cell config keys that belong to the base Layer, not to the cell's math.
_LAYER_KEYS = ("name", "trainable", "dtype")


def cell_parameters(cell_class):
    """The arguments of `cell_class`, as `inspect.Parameter`s, in order.

    Those of its `__init__`, then those of each `__init__` up its bases
    that the one before forwards `**kwargs` to, until `keras.layers.Layer`
    (whose arguments, such as `name` and `dtype`, are the layer's own);
    less `cell_class._fixed_arguments`, which the cell class sets itself
    and refuses.
    """
    parameters = {}
    for klass in cell_class.__mro__:
        if klass is keras.layers.Layer:
            break
        if "__init__" not in vars(klass):
            continue
        forwards = False
        signature = inspect.signature(klass.__init__)
        for parameter in list(signature.parameters.values())[1:]:
            if parameter.kind is inspect.Parameter.VAR_KEYWORD:
                forwards = True
            elif parameter.kind is not inspect.Parameter.VAR_POSITIONAL:
                parameters.setdefault(parameter.name, parameter)
        if not forwards:
            break
    for name in getattr(cell_class, "_fixed_arguments", ()):
        parameters.pop(name, None)
    return list(parameters.values())


def _cell_property(name):
    return property(
        lambda self: getattr(self.cell, name),
        doc=f"The cell's `{name}` (read-only).",
    )


class CellLayer:
    """Mixin, listed before the loop layer (`keras.layers.RNN`, `TreeRNN`):
    a layer that builds its cell, `cell_class`, from its own keyword
    arguments, as `keras.layers.LSTM` builds its `LSTMCell`.

    A subclass sets `cell_class` and nothing else about the cell: each
    argument of the cell (`cell_parameters`) and each name in
    `cell_properties` becomes a read-only property of the layer that reads
    the cell (`layer.units`), and the config is the cell's, flattened into
    the layer's, so `from_config` is `cls(**config)`. An argument added to
    the cell thus reaches the layer without touching it.
    """

    cell_class = None
    # Attributes of the cell, besides its arguments, that the layer shows.
    cell_properties = ()
    # Keyword arguments that the layer hands to its cell without naming them
    # in its signature (as `keras.layers.LSTM` does with `implementation`).
    _cell_kwargs = ()
    # Made from `cell_class` for each subclass that sets it.
    _cell_parameters = ()
    _cell_argument_names = ()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "cell_class" not in vars(cls) or cls.cell_class is None:
            return
        cls._cell_parameters = cell_parameters(cls.cell_class)
        cls._cell_argument_names = tuple(p.name for p in cls._cell_parameters)
        for name in (*cls._cell_argument_names, *cls.cell_properties):
            if name not in vars(cls):
                setattr(cls, name, _cell_property(name))

    def _make_cell(self, arguments, kwargs):
        """The cell, from the layer's bound `arguments`; the cell class's
        fixed arguments are taken out of `kwargs`, so that the cell refuses
        them with its own `ValueError`."""
        cell_args = {
            name: arguments[name]
            for name in self._cell_argument_names
            if name in arguments
        }
        for name in getattr(self.cell_class, "_fixed_arguments", ()):
            if name in kwargs:
                cell_args[name] = kwargs.pop(name)
        for name in self._cell_kwargs:
            if name in kwargs:
                cell_args[name] = kwargs.pop(name)
        return self.cell_class(
            **cell_args,
            dtype=kwargs.get("dtype"),
            trainable=kwargs.get("trainable", True),
            name="cell",
        )

    def get_config(self):
        config = {
            key: value
            for key, value in self.cell.get_config().items()
            if key not in _LAYER_KEYS
        }
        base_config = super().get_config()
        del base_config["cell"]
        return {**base_config, **config}

    @classmethod
    def from_config(cls, config):
        return cls(**config)
