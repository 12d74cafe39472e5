"""Generated sequence, tree and graph tasks, as NumPy arrays and TFDS datasets.

Importing this module registers the `"adding_problem"`, `"listops"` and
`"babi_graph"` TFDS builders, so e.g. `tfds.load("babi_graph/task_15",
data_dir=...)` works afterwards.
"""

from keras_recurrent.datasets.adding_problem import adding_problem
from keras_recurrent.datasets.adding_problem import adding_problem_baseline_mse
from keras_recurrent.datasets.adding_problem_builder import AddingProblem
from keras_recurrent.datasets.adding_problem_config import AddingProblemConfig
from keras_recurrent.datasets.babi_graph import babi_graph
from keras_recurrent.datasets.babi_graph_arrays import babi_graph_arrays
from keras_recurrent.datasets.babi_graph_builder import BabiGraph
from keras_recurrent.datasets.babi_graph_config import BabiGraphConfig
from keras_recurrent.datasets.babi_graph_task import BABI_GRAPH_TASKS
from keras_recurrent.datasets.babi_graph_task import BabiGraphTask
from keras_recurrent.datasets.listops import LISTOPS_OPERATORS
from keras_recurrent.datasets.listops import listops
from keras_recurrent.datasets.listops_binary_tree import listops_binary_tree
from keras_recurrent.datasets.listops_builder import ListOps
from keras_recurrent.datasets.listops_config import ListOpsConfig
from keras_recurrent.datasets.listops_vocabulary import LISTOPS_VOCABULARY

__all__ = [
    "BABI_GRAPH_TASKS",
    "LISTOPS_OPERATORS",
    "LISTOPS_VOCABULARY",
    "AddingProblem",
    "AddingProblemConfig",
    "BabiGraph",
    "BabiGraphConfig",
    "BabiGraphTask",
    "ListOps",
    "ListOpsConfig",
    "adding_problem",
    "adding_problem_baseline_mse",
    "babi_graph",
    "babi_graph_arrays",
    "listops",
    "listops_binary_tree",
]
