"""Input pipelines for training recurrent models."""

from keras_recurrent.data.reset_states_callback import ResetStatesCallback
from keras_recurrent.data.tbptt_batches import tbptt_batches

__all__ = ["ResetStatesCallback", "tbptt_batches"]
