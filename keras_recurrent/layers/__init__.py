"""Recurrent cells and layers.

Every class is registered for `.keras` saving under the package name
`keras_recurrent`: `import keras_recurrent` before `keras.saving.load_model`,
or Keras fails with "Could not locate class 'PeepholeLSTM'" (after a dump of
the model's config).
"""

from keras_recurrent.layers.child_sum_tree_lstm import ChildSumTreeLSTM
from keras_recurrent.layers.child_sum_tree_lstm_cell import ChildSumTreeLSTMCell
from keras_recurrent.layers.coupled_lstm import CoupledLSTM
from keras_recurrent.layers.coupled_lstm_cell import CoupledLSTMCell
from keras_recurrent.layers.esn import ESN
from keras_recurrent.layers.esn_cell import ESNCell
from keras_recurrent.layers.gated_feedback_cell import GatedFeedbackCell
from keras_recurrent.layers.gated_feedback_rnn import GatedFeedbackRNN
from keras_recurrent.layers.gated_graph import GatedGraph
from keras_recurrent.layers.ggsnn import GGSNN
from keras_recurrent.layers.graph_readout import GraphReadout
from keras_recurrent.layers.layer_norm_lstm import LayerNormLSTM
from keras_recurrent.layers.layer_norm_lstm_cell import LayerNormLSTMCell
from keras_recurrent.layers.layer_norm_simple_rnn import LayerNormSimpleRNN
from keras_recurrent.layers.layer_norm_simple_rnn_cell import (
    LayerNormSimpleRNNCell,
)
from keras_recurrent.layers.lstm_variant import LSTMVariant
from keras_recurrent.layers.lstm_variant_cell import VARIANTS
from keras_recurrent.layers.lstm_variant_cell import LSTMVariantCell
from keras_recurrent.layers.nary_tree_lstm import NaryTreeLSTM
from keras_recurrent.layers.nary_tree_lstm_cell import NaryTreeLSTMCell
from keras_recurrent.layers.nas import NAS
from keras_recurrent.layers.nas_cell import NASCell
from keras_recurrent.layers.node_selection import NodeSelection
from keras_recurrent.layers.peephole_lstm import PeepholeLSTM
from keras_recurrent.layers.peephole_lstm_cell import PeepholeLSTMCell
from keras_recurrent.layers.residual_stack import ResidualStack
from keras_recurrent.layers.sequence_pooling import SequencePooling
from keras_recurrent.layers.tree_rnn import TreeRNN
from keras_recurrent.layers.truncated_rnn import TruncatedRNN

__all__ = [
    "ChildSumTreeLSTM",
    "ChildSumTreeLSTMCell",
    "CoupledLSTM",
    "CoupledLSTMCell",
    "ESN",
    "ESNCell",
    "GGSNN",
    "GatedFeedbackCell",
    "GatedFeedbackRNN",
    "GatedGraph",
    "GraphReadout",
    "LSTMVariant",
    "LSTMVariantCell",
    "LayerNormLSTM",
    "LayerNormLSTMCell",
    "LayerNormSimpleRNN",
    "LayerNormSimpleRNNCell",
    "NAS",
    "NASCell",
    "NaryTreeLSTM",
    "NaryTreeLSTMCell",
    "NodeSelection",
    "PeepholeLSTM",
    "PeepholeLSTMCell",
    "ResidualStack",
    "SequencePooling",
    "TreeRNN",
    "TruncatedRNN",
    "VARIANTS",
]
