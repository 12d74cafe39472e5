"""Shared pytest setup.

Runs at import time in every test process (each pytest-xdist worker imports
it), before any test initializes the TensorFlow runtime.
"""

import keras_recurrent.testing

# Two logical CPUs, so that `tf.distribute.MirroredStrategy` has two replicas
# on machines without accelerators. Only possible before the runtime starts.
keras_recurrent.testing.configure_cpu_replicas(2)
