"""What each bAbI graph task looks like to a model.

The task descriptions, and the checks that look a task and its question
types up in them.
"""

import dataclasses
import numbers
import re

from keras_recurrent._checks import check_option


@dataclasses.dataclass(frozen=True)
class BabiGraphTask:
    """Description of one generated bAbI graph task.

    Every task of `kr.datasets.babi_graph` is described by one instance, in
    `kr.datasets.BABI_GRAPH_TASKS`: the names of its edge types and question
    types, the width of the node annotations, the kind of answer, and the
    padded sizes that `kr.datasets.babi_graph_arrays` and the `babi_graph`
    TFDS builder use.

    The kinds of answer (`output`) are those of Li et al. (2016):

    - `"node_selection"`: the answer is one node (tasks 4, 15, 16).
    - `"graph_classification"`: the answer is a class of the whole graph,
      `num_classes` of them (task 18: 0 for false, 1 for true).
    - `"graph_sequence"`: the answer is a sequence of `max_answer_length`
      graph-level classes (task 19: directions, indices into
      `answer_names`).
    - `"node_sequence"`: the answer is a sequence of nodes of variable
      length, at most `max_answer_length` (the shortest-path task).

    Args:
        name: String, the task name, e.g. `"task_15"`.
        description: String, one line about the task.
        edge_type_names: Tuple of strings; edge type `i` is the relation
            `edge_type_names[i]`.
        question_type_names: Tuple of strings; question type `i` asks about
            `question_type_names[i]`.
        annotation_dim: Integer, the width of the node annotations: one bit
            per question argument.
        output: String, the kind of answer (see above).
        num_classes: Integer, the number of answer classes for graph-level
            answers, `0` for node answers.
        answer_names: Tuple of strings, the names of the answer classes.
        max_nodes: Integer, the largest number of nodes of a graph.
        max_edges: Integer, the largest number of edges of a graph.
        max_answer_length: Integer, the length of sequence answers, `1` for
            single answers.

    Example:

    >>> task = kr.datasets.BABI_GRAPH_TASKS["task_18"]
    >>> task.output, task.num_classes, task.annotation_dim
    ('graph_classification', 2, 2)

    Reference:
        - [Li et al., 2016. Gated Graph Sequence Neural Networks](
          https://arxiv.org/abs/1511.05493)
        - [Weston et al., 2016. Towards AI-Complete Question Answering: A
          Set of Prerequisite Toy Tasks](https://arxiv.org/abs/1502.05698)
    """

    name: str
    description: str
    edge_type_names: tuple
    question_type_names: tuple
    annotation_dim: int
    output: str
    num_classes: int
    answer_names: tuple
    max_nodes: int
    max_edges: int
    max_answer_length: int

    @property
    def num_edge_types(self):
        """The number of edge types, `len(edge_type_names)`."""
        return len(self.edge_type_names)

    @property
    def num_question_types(self):
        """The number of question types, `len(question_type_names)`."""
        return len(self.question_type_names)


_DIRECTIONS = ("n", "e", "s", "w")

BABI_GRAPH_TASKS = {
    task.name: task
    for task in (
        BabiGraphTask(
            name="task_4",
            description=(
                "bAbI task 4, two-argument relations: which room lies in a "
                "direction of a room."
            ),
            edge_type_names=_DIRECTIONS,
            question_type_names=_DIRECTIONS,
            annotation_dim=1,
            output="node_selection",
            num_classes=0,
            answer_names=(),
            max_nodes=3,
            max_edges=2,
            max_answer_length=1,
        ),
        BabiGraphTask(
            name="task_15",
            description=(
                "bAbI task 15, basic deduction: what an animal is afraid of, "
                "from its species."
            ),
            edge_type_names=("is", "has_fear"),
            question_type_names=("has_fear",),
            annotation_dim=1,
            output="node_selection",
            num_classes=0,
            answer_names=(),
            max_nodes=8,
            max_edges=8,
            max_answer_length=1,
        ),
        BabiGraphTask(
            name="task_16",
            description=(
                "bAbI task 16, basic induction: the colour of an animal, "
                "from the others of its species."
            ),
            edge_type_names=("is", "has_color"),
            question_type_names=("has_color",),
            annotation_dim=1,
            output="node_selection",
            num_classes=0,
            answer_names=(),
            max_nodes=13,
            max_edges=9,
            max_answer_length=1,
        ),
        BabiGraphTask(
            name="task_18",
            description=(
                "bAbI task 18, size reasoning: is one object bigger than "
                "another, by transitivity."
            ),
            edge_type_names=(">",),
            question_type_names=(">",),
            annotation_dim=2,
            output="graph_classification",
            num_classes=2,
            answer_names=("false", "true"),
            max_nodes=6,
            max_edges=9,
            max_answer_length=1,
        ),
        BabiGraphTask(
            name="task_19",
            description=(
                "bAbI task 19, path finding: the two directions that lead "
                "from one room to another."
            ),
            edge_type_names=_DIRECTIONS,
            question_type_names=("path",),
            annotation_dim=2,
            output="graph_sequence",
            num_classes=4,
            answer_names=_DIRECTIONS,
            max_nodes=5,
            max_edges=4,
            max_answer_length=2,
        ),
        BabiGraphTask(
            name="shortest_path",
            description=(
                "The shortest-path task of Li et al. (2016): the nodes of "
                "the unique shortest path between two nodes, beside a "
                "confusing second graph."
            ),
            edge_type_names=("connected-to",),
            question_type_names=("shortest-path",),
            annotation_dim=2,
            output="node_sequence",
            num_classes=0,
            answer_names=(),
            max_nodes=9,
            max_edges=18,
            max_answer_length=4,
        ),
    )
}


def check_task(task, *, allow_number=False):
    """Returns the `BabiGraphTask` named `task`, or raises ValueError.

    A task is named as in `BABI_GRAPH_TASKS` (`"task_4"`, case-insensitive).
    With `allow_number` (the reader of the paper's files, whose names are
    numbers, and the generators), also by its bAbI number: `4`, `"4"`,
    `"task 4"`, `"task4"` or `"task-4"` all name `"task_4"`, and the error
    lists these forms.
    """
    if not allow_number:
        return BABI_GRAPH_TASKS[
            check_option("task", task, sorted(BABI_GRAPH_TASKS))
        ]
    if isinstance(task, numbers.Integral) and not isinstance(task, bool):
        if f"task_{int(task)}" in BABI_GRAPH_TASKS:
            return BABI_GRAPH_TASKS[f"task_{int(task)}"]
    elif isinstance(task, str):
        match = _TASK_NUMBER.fullmatch(task.strip().lower())
        if match and f"task_{int(match[1])}" in BABI_GRAPH_TASKS:
            return BABI_GRAPH_TASKS[f"task_{int(match[1])}"]
    try:
        return BABI_GRAPH_TASKS[
            check_option("task", task, sorted(BABI_GRAPH_TASKS))
        ]
    except ValueError as error:
        task_numbers = sorted(
            int(name[5:]) for name in BABI_GRAPH_TASKS if name[5:].isdigit()
        )
        raise ValueError(
            f"{str(error).split('. Received:')[0]}, or a task's number "
            f'{task_numbers} (as an integer, or written "4", "task 4", '
            f'"task4" or "task-4"). Received: task={task!r}'
        ) from None


# `4`, `task4`, `task 4`, `task-4`, `task_4`: ASCII digits only.
_TASK_NUMBER = re.compile(r"(?:task[ _-]?)?([0-9]{1,3})")


def check_question_type(spec, question_type):
    """Validates `question_type` for the task `spec`; returns an int or None."""
    if question_type is None:
        return None
    if (
        isinstance(question_type, bool)
        or not isinstance(question_type, numbers.Integral)
        or not 0 <= question_type < spec.num_question_types
    ):
        raise ValueError(
            "Argument `question_type` must be None or an integer in "
            f"[0, {spec.num_question_types}) for {spec.name} (question types "
            f"{spec.question_type_names}). "
            f"Received: question_type={question_type!r}"
        )
    return int(question_type)
