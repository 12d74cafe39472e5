"""What `ChildSumTreeLSTM` and `NaryTreeLSTM` share: a `TreeRNN` that
builds its cell from its own arguments."""

import inspect

import keras

from keras_recurrent.layers.tree_rnn import TreeRNN

# Cell config keys that belong to the base Layer, not to the cell's math.
_LAYER_KEYS = ("name", "trainable", "dtype")


class TreeLSTMLayer(TreeRNN):
    """A `TreeRNN` over the cell `cell_class`, built in `__init__` from the
    layer's keyword arguments, as `keras.layers.LSTM` builds its
    `LSTMCell`.

    The cell's arguments (its signature, read once per subclass) and its
    weights are read-only properties of the layer; the config is the
    cell's, flattened into the layer's, so `from_config` is
    `cls(**config)`. Files saved before the weights moved into the cell
    (`layer/vars`, now `layer/cell/vars`) still load.
    """

    cell_class = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        names = _arguments(cls.cell_class)
        cls._cell_arguments = names
        for name in (*names, "kernel", "recurrent_kernel", "bias"):
            setattr(cls, name, _cell_property(name))

    def __init__(self, *, return_nodes=False, return_state=False, **kwargs):
        cell_args = {
            name: kwargs.pop(name)
            for name in self._cell_arguments
            if name in kwargs
        }
        cell = self.cell_class(
            **cell_args,
            dtype=kwargs.get("dtype"),
            trainable=kwargs.get("trainable", True),
            name="cell",
        )
        super().__init__(
            cell, return_nodes=return_nodes, return_state=return_state, **kwargs
        )

    def load_own_variables(self, store):
        own = self._trainable_variables + self._non_trainable_variables
        if not own and len(store.keys()):
            # A file saved before the weights moved into the cell: they
            # sit in the layer's entry, in the cell's order.
            self.cell.load_own_variables(store)
            self.cell._weights_loaded_by_layer = True
            return
        super().load_own_variables(store)

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


def _arguments(cell_class):
    """The names of the keyword arguments of `cell_class` and its bases
    below `keras.layers.Layer`."""
    names = []
    for klass in cell_class.__mro__:
        if klass is keras.layers.Layer:
            break
        if "__init__" not in vars(klass):
            continue
        for name, parameter in inspect.signature(
            klass.__init__
        ).parameters.items():
            if name != "self" and parameter.kind in (
                parameter.POSITIONAL_OR_KEYWORD,
                parameter.KEYWORD_ONLY,
            ):
                names.append(name)
    return tuple(dict.fromkeys(names))


def _cell_property(name):
    return property(
        lambda self: getattr(self.cell, name),
        doc=f"The cell's `{name}` (read-only).",
    )
