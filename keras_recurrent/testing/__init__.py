"""Test harness shared by the model families of this package.

Public so that tests (here and downstream) can reuse it; not needed to build
or serve models.
"""

from keras_recurrent.testing.compilation import CompilationCount
from keras_recurrent.testing.compilation import count_jax_compilations
from keras_recurrent.testing.distribute import assert_mirrored_equivalence
from keras_recurrent.testing.distribute import configure_cpu_replicas
from keras_recurrent.testing.distribute import mirrored_strategy
from keras_recurrent.testing.export import assert_export_roundtrip

__all__ = [
    "CompilationCount",
    "assert_export_roundtrip",
    "assert_mirrored_equivalence",
    "configure_cpu_replicas",
    "count_jax_compilations",
    "mirrored_strategy",
]
