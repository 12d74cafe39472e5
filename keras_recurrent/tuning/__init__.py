"""keras-tuner HyperModels for the recurrent layers."""

from keras_recurrent.tuning.distributed import KeepRunningTrialsOnReload
from keras_recurrent.tuning.gated_feedback_hyper_model import (
    GatedFeedbackHyperModel,
)
from keras_recurrent.tuning.graph_hyper_model import GraphHyperModel
from keras_recurrent.tuning.sequence_hyper_model import SequenceHyperModel
from keras_recurrent.tuning.tree_hyper_model import TreeHyperModel

__all__ = [
    "GatedFeedbackHyperModel",
    "GraphHyperModel",
    "KeepRunningTrialsOnReload",
    "SequenceHyperModel",
    "TreeHyperModel",
]
