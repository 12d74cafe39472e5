"""Recurrent models made before Keras 3, brought to Keras 3.

`kr.migrate.tf1_rnn` builds a Keras 3 layer from the cells of a TF1
checkpoint (`tf.compat.v1.nn.rnn_cell`); reading the checkpoint needs
TensorFlow, on any Keras backend.
"""

from keras_recurrent.migrate.tf1_rnn import tf1_rnn

__all__ = ["tf1_rnn"]
