"""Generated sequence, tree and graph tasks, as NumPy arrays and TFDS datasets.

Importing this module registers the `"adding_problem"`, `"listops"`,
`"babi_graph"` and `"program_eval"` TFDS builders, so e.g.
`tfds.load("babi_graph/task_15", data_dir=...)` works afterwards. Without
TensorFlow Datasets installed, the generators still work, and the builder
and config classes raise an `ImportError` when used.
"""

import importlib

from keras_recurrent._lazy import lazy_getattr
from keras_recurrent.datasets.adding_problem import adding_problem
from keras_recurrent.datasets.adding_problem import adding_problem_baseline_mse
from keras_recurrent.datasets.babi_graph.generator import babi_graph
from keras_recurrent.datasets.babi_graph.generator import babi_graph_arrays
from keras_recurrent.datasets.babi_graph.reader import MAX_BABI_NODE_ID
from keras_recurrent.datasets.babi_graph.reader import read_babi_graphs
from keras_recurrent.datasets.babi_graph.tasks import BABI_GRAPH_TASKS
from keras_recurrent.datasets.babi_graph.tasks import BabiGraphTask
from keras_recurrent.datasets.listops import LISTOPS_OPERATORS
from keras_recurrent.datasets.listops import LISTOPS_VOCABULARY
from keras_recurrent.datasets.listops import iter_listops_tsv
from keras_recurrent.datasets.listops import listops
from keras_recurrent.datasets.listops import listops_binary_tree
from keras_recurrent.datasets.listops import listops_tsv_dataset
from keras_recurrent.datasets.listops import read_listops_tsv
from keras_recurrent.datasets.program_eval import PROGRAM_EVAL_OPERATIONS
from keras_recurrent.datasets.program_eval import PROGRAM_EVAL_SPLITS
from keras_recurrent.datasets.program_eval import PROGRAM_EVAL_VOCABULARY
from keras_recurrent.datasets.program_eval import program_eval
from keras_recurrent.datasets.program_eval import program_eval_arrays
from keras_recurrent.datasets.program_eval import program_split

# The TFDS builders and their configs. With TensorFlow Datasets installed
# they are imported now, which registers the builders with TFDS; without
# it, on first use, which raises the ImportError that says what is missing.
_TFDS_CLASSES = {
    "AddingProblem": ".adding_problem_builder",
    "AddingProblemConfig": ".adding_problem_builder",
    "BabiGraph": ".babi_graph.builder",
    "BabiGraphConfig": ".babi_graph.builder",
    "ListOps": ".listops_builder",
    "ListOpsConfig": ".listops_builder",
    "ProgramEval": ".program_eval_builder",
    "ProgramEvalConfig": ".program_eval_builder",
}
try:
    import tensorflow_datasets  # noqa: F401
except ImportError:
    pass
else:
    for _name, _module in _TFDS_CLASSES.items():
        globals()[_name] = getattr(
            importlib.import_module(_module, __name__), _name
        )
__getattr__ = lazy_getattr(__name__, _TFDS_CLASSES)

__all__ = [
    "BABI_GRAPH_TASKS",
    "LISTOPS_OPERATORS",
    "LISTOPS_VOCABULARY",
    "MAX_BABI_NODE_ID",
    "PROGRAM_EVAL_OPERATIONS",
    "PROGRAM_EVAL_SPLITS",
    "PROGRAM_EVAL_VOCABULARY",
    "AddingProblem",
    "AddingProblemConfig",
    "BabiGraph",
    "BabiGraphConfig",
    "BabiGraphTask",
    "ListOps",
    "ListOpsConfig",
    "ProgramEval",
    "ProgramEvalConfig",
    "adding_problem",
    "adding_problem_baseline_mse",
    "babi_graph",
    "babi_graph_arrays",
    "iter_listops_tsv",
    "listops",
    "listops_binary_tree",
    "listops_tsv_dataset",
    "program_eval",
    "program_eval_arrays",
    "program_split",
    "read_babi_graphs",
    "read_listops_tsv",
]
