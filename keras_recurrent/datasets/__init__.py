"""Generated sequence tasks, as NumPy arrays and as TFDS datasets.

Importing this module registers the `"adding_problem"` TFDS builder, so
`tfds.load("adding_problem/length_50", data_dir=...)` works afterwards.
"""

from keras_recurrent.datasets.adding_problem import adding_problem
from keras_recurrent.datasets.adding_problem import adding_problem_baseline_mse
from keras_recurrent.datasets.adding_problem_builder import AddingProblem
from keras_recurrent.datasets.adding_problem_config import AddingProblemConfig

__all__ = [
    "AddingProblem",
    "AddingProblemConfig",
    "adding_problem",
    "adding_problem_baseline_mse",
]
