"""Recurrent cells and layers."""

from keras_recurrent.layers.coupled_lstm import CoupledLSTM
from keras_recurrent.layers.coupled_lstm_cell import CoupledLSTMCell
from keras_recurrent.layers.lstm_variant import LSTMVariant
from keras_recurrent.layers.lstm_variant_cell import VARIANTS
from keras_recurrent.layers.lstm_variant_cell import LSTMVariantCell
from keras_recurrent.layers.peephole_lstm import PeepholeLSTM
from keras_recurrent.layers.peephole_lstm_cell import PeepholeLSTMCell
from keras_recurrent.layers.residual_stack import ResidualStack
from keras_recurrent.layers.sequence_pooling import SequencePooling
from keras_recurrent.layers.truncated_rnn import TruncatedRNN

__all__ = [
    "VARIANTS",
    "CoupledLSTM",
    "CoupledLSTMCell",
    "LSTMVariant",
    "LSTMVariantCell",
    "PeepholeLSTM",
    "PeepholeLSTMCell",
    "ResidualStack",
    "SequencePooling",
    "TruncatedRNN",
]
