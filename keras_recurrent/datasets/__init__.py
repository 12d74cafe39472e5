"""Generated sequence tasks, as NumPy arrays and as TFDS datasets.

Importing this module registers the `"adding_problem"` and `"listops"` TFDS
builders, so `tfds.load("adding_problem/length_50", data_dir=...)` works
afterwards.
"""

from keras_recurrent.datasets.adding_problem import adding_problem
from keras_recurrent.datasets.adding_problem import adding_problem_baseline_mse
from keras_recurrent.datasets.adding_problem_builder import AddingProblem
from keras_recurrent.datasets.adding_problem_config import AddingProblemConfig
from keras_recurrent.datasets.listops import LISTOPS_OPERATORS
from keras_recurrent.datasets.listops import listops
from keras_recurrent.datasets.listops_binary_tree import listops_binary_tree
from keras_recurrent.datasets.listops_builder import ListOps
from keras_recurrent.datasets.listops_config import ListOpsConfig
from keras_recurrent.datasets.listops_vocabulary import LISTOPS_VOCABULARY

__all__ = [
    "LISTOPS_OPERATORS",
    "LISTOPS_VOCABULARY",
    "AddingProblem",
    "AddingProblemConfig",
    "ListOps",
    "ListOpsConfig",
    "adding_problem",
    "adding_problem_baseline_mse",
    "listops",
    "listops_binary_tree",
]
