"""Weight constraints that keep recurrent models stable."""

from keras_recurrent.constraints.constrain_weights import constrain_weights
from keras_recurrent.constraints.lstm_stability import LSTMStability
from keras_recurrent.constraints.spectral_norm import SpectralNorm

__all__ = ["LSTMStability", "SpectralNorm", "constrain_weights"]
