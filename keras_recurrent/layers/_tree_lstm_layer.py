"""What `ChildSumTreeLSTM` and `NaryTreeLSTM` share: a `TreeRNN` that
builds its cell from its own arguments."""

from keras_recurrent.layers._cell_layer import CellLayer
from keras_recurrent.layers.tree_rnn import TreeRNN


class TreeLSTMLayer(CellLayer, TreeRNN):
    """A `TreeRNN` over the cell `cell_class`, built in `__init__` from the
    layer's keyword arguments, as `keras.layers.LSTM` builds its
    `LSTMCell`.

    The cell's arguments (its signature, read once per subclass) and its
    weights are read-only properties of the layer; the config is the
    cell's, flattened into the layer's, so `from_config` is
    `cls(**config)`. Files saved before the weights moved into the cell
    (`layer/vars`, now `layer/cell/vars`) still load.
    """

    cell_properties = ("kernel", "recurrent_kernel", "bias")

    def __init__(self, *, return_nodes=False, return_state=False, **kwargs):
        arguments = {
            name: kwargs.pop(name)
            for name in self._cell_argument_names
            if name in kwargs
        }
        cell = self._make_cell(arguments, kwargs)
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
