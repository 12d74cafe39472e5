"""Reads the bAbI graph files of the GG-NN paper (`*_graphs.txt`)."""

import os

import numpy as np

from keras_recurrent.datasets._text import brief
from keras_recurrent.datasets._text import check_file
from keras_recurrent.datasets._text import line_error
from keras_recurrent.datasets._text import read_lines
from keras_recurrent.datasets.babi_graph.tasks import check_task
from keras_recurrent.graphs.encoding import encode_graphs

# The tasks of the paper's data and the fields of their question lines
# after `? q`: the arguments, then the answer.
_QUESTION_ARGUMENTS = {
    "task_4": 1,
    "task_15": 1,
    "task_16": 1,
    "task_18": 2,
    "task_19": 2,
}

MAX_BABI_NODE_ID = 1000
"""The largest node id `read_babi_graphs` takes unless `num_nodes` is more.

A story's graph has as many nodes as its largest id, so one stray id of
`1000000000` would ask for a billion nodes per example; the paper's ids are
at most 13. Pass `num_nodes` to read graphs with larger ids.
"""


def read_babi_graphs(path, task, *, num_nodes=None, num_edges=None):
    """Reads a bAbI graph file of Li et al. (2016) as padded graph tensors.

    The paper's data (`yujiali/ggnn`, `babi/data`) hold one story per
    paragraph; in a story, a line `s e t` is an edge of type `e` from node
    `s` to node `t`, and a line `? q ...` a question of type `q`. Ids are
    1-based. Every question is one example: the story's graph plus that
    question, as in `kr.datasets.babi_graph_arrays`, whose arrays this
    returns. Ids become 0-based indices (node `s` is row `s - 1`, edge type
    `e` is `e - 1`); the question's arguments are marked in the node
    annotations (bit `k` for argument `k`); a story's graph has as many
    nodes as its largest id (ids the story leaves out are isolated nodes).

    The answers, by task:

    - tasks 4, 15 and 16, `? q a ans`: the node `ans - 1`;
    - task 18, `? q a b ans`: `1` if `a` is bigger than `b` (a chain of
      edges leads from `a` to `b`), else `0`, as in `babi_graph_arrays`.
      The paper's class ids (1 and 2) mean true in one fold and false in
      another, so the answer is derived from the graph, and the file must
      use its class ids consistently;
    - task 19, `? q a b d1 d2`: the sequence `[d1 - 1, d2 - 1]`, the targets
      of a GGS-NN with two graph-level output steps. The paper numbers
      these directions apart from the edge types.

    The file is UTF-8 text (a byte order mark is skipped) with `\\n` or
    `\\r\\n` line endings; fields are separated by any whitespace. Every
    id is written in plain ASCII digits (`12`, not `+12`, `1_2` or `1e3`)
    and is at least 1; a node id is at most `MAX_BABI_NODE_ID` (1,000), or
    `num_nodes` where that is more.

    Args:
        path: String or path-like, e.g. `"train/18_graphs.txt"`; or a
            directory of the paper's layout (`"train/"`), which reads the
            task's file in it, e.g. `train/18_graphs.txt` for `task_18`.
        task: The task: `"task_4"`, `"task_15"`, `"task_16"`, `"task_18"`
            or `"task_19"` (case-insensitive), or its bAbI number, as an
            integer (`18`) or a string (`"18"`, `"task 18"`, `"task18"`,
            `"task-18"`).
        num_nodes: Optional integer, the padded number of nodes. Defaults to
            the task's `max_nodes` (`kr.datasets.BABI_GRAPH_TASKS`), or the
            largest node id of the file where that is more. It also raises
            the largest node id taken above `MAX_BABI_NODE_ID`.
        num_edges: Optional integer, the padded number of edges. Defaults to
            the task's `max_edges`, or the most edges of a story of the file
            where that is more.

    Returns:
        A dict of NumPy arrays, as `kr.datasets.babi_graph_arrays` returns:
        `"node_inputs"` float32 `(B, N, A)`, `"edges"` int32 `(B, E, 2)`,
        `"edge_types"` int32 `(B, E)`, `"node_mask"` int32 `(B, N)`,
        `"question_type"` int32 `(B,)` (`q - 1`), `"answer"` int32 `(B,)`
        or `(B, 2)` for task 19, `"answer_length"` int32 `(B,)` and
        `"story_id"` int32 `(B,)`, the story of each question (from 0, in
        file order).

    Raises:
        ValueError: On a bad `task`, a directory without the task's file,
            or if the file is malformed (the message names the file and the
            line): not UTF-8 text (see `kr.datasets.read_listops_tsv`), a
            line that is neither an edge nor a question of the task's form,
            an id that is not plain digits, below 1, or a node id above the
            largest taken, an edge type or
            question type the task does not have, a story without a
            question, a task 18 question whose objects no chain of edges
            orders, or class ids that contradict each other.

    Example:

    >>> arrays = kr.datasets.read_babi_graphs(  # doctest: +SKIP
    ...     "babi_data/processed_1/train/19_graphs.txt", "task_19")
    >>> arrays["answer"].shape  # doctest: +SKIP
    (1000, 2)

    Reference:
        - [Li et al., 2016. Gated Graph Sequence Neural Networks](
          https://arxiv.org/abs/1511.05493)
    """
    spec = check_task(task, allow_number=True)
    task = spec.name
    if task not in _QUESTION_ARGUMENTS:
        raise ValueError(
            "Argument `task` must be one of the tasks of the paper's data, "
            f"{sorted(_QUESTION_ARGUMENTS)}. Received: task={task!r}"
        )
    path = _task_file(path, task)
    largest_id = MAX_BABI_NODE_ID
    if isinstance(num_nodes, int) and not isinstance(num_nodes, bool):
        largest_id = max(largest_id, num_nodes)
    examples = _read_examples(path, spec, largest_id)
    if not examples:
        raise ValueError(f"{path} holds no question.")
    if task == "task_18":
        _check_class_ids(path, examples)
    largest = max(example["num_nodes"] for example in examples)
    most_edges = max(len(example["edges"]) for example in examples)
    num_nodes = _padded("num_nodes", num_nodes, spec.max_nodes, largest)
    num_edges = _padded("num_edges", num_edges, spec.max_edges, most_edges)
    return _arrays(examples, spec, num_nodes, num_edges)


def _padded(name, value, default, needed):
    if value is None:
        return max(default, needed)
    if isinstance(value, bool) or not isinstance(value, int) or value < needed:
        raise ValueError(
            f"Argument `{name}` must be an integer of at least {needed}, "
            f"what the file needs. Received: {name}={value!r}"
        )
    return value


def _task_file(path, task):
    """`path`, or the task's file in it if it is a directory."""
    try:
        path = os.fspath(path)
    except TypeError:
        return check_file("path", path)
    if os.path.isdir(path):
        name = f"{task.split('_')[1]}_graphs.txt"
        if not os.path.isfile(os.path.join(path, name)):
            raise ValueError(
                f"Argument `path` is a directory without the file of "
                f"task={task!r}, {name!r}; pass the file itself, or a "
                "directory of the paper's layout (`train/` or `test/`, "
                f"holding `{name}`). Received: path={path!r}"
            )
        path = os.path.join(path, name)
    return path


def _stories(path):
    """Yields each story as a list of `(line number, fields)`."""
    story = []
    for number, line in read_lines(path):
        fields = line.split()
        if fields:
            story.append((number, fields))
        elif story:
            yield story
            story = []
    if story:
        yield story


def _read_examples(path, spec, largest_id):
    """One dict per question, with the raw 1-based ids of the file."""
    examples = []
    for story_id, story in enumerate(_stories(path)):
        edges, questions = [], []
        for number, fields in story:
            try:
                if fields[0] == "?":
                    question = _question(fields, spec)
                    nodes = list(question[1])
                    if spec.output == "node_selection":
                        nodes.append(question[2])
                    questions.append((number, question))
                else:
                    edges.append(_edge(fields, spec))
                    nodes = edges[-1][::2]
                _check_node_ids(nodes, largest_id)
            except ValueError as error:
                raise line_error(
                    path, number, error, " ".join(fields)
                ) from None
        if not questions:
            raise ValueError(
                f"{path}, line {story[-1][0]}: the story that ends here asks "
                "no question."
            )
        for number, (question_type, arguments, answer) in questions:
            ids = [node for edge in edges for node in edge[::2]] + arguments
            if spec.output == "node_selection":
                ids.append(answer)
            examples.append(
                {
                    "edges": edges,
                    "num_nodes": max(ids),
                    "question_type": question_type,
                    "arguments": arguments,
                    "answer": answer,
                    "story_id": story_id,
                    "line": number,
                }
            )
    return examples


def _ids(fields, count):
    if len(fields) != count:
        raise ValueError(f"expected {count} fields, found {len(fields)}")
    for field in fields:
        # Not `int(field)` alone, which also reads `1_0`, `+1` and
        # non-ASCII digits such as `\u0661`.
        if not (field.isascii() and field.isdigit()):
            raise ValueError(
                "every field must be an integer id in plain digits 0-9, "
                f"not {brief(field, 40)}"
            )
        if len(field) > 9:
            raise ValueError(
                f"the id {brief(field, 40)} is too large (more than 9 "
                "digits; node ids are at most `MAX_BABI_NODE_ID` unless "
                "`num_nodes` is more)"
            )
    values = [int(field) for field in fields]
    if min(values) < 1:
        raise ValueError("ids start at 1")
    return values


def _check_node_ids(nodes, largest_id):
    if max(nodes) > largest_id:
        raise ValueError(
            f"node id {max(nodes)} is above {largest_id}, the largest the "
            "reader takes (`MAX_BABI_NODE_ID`, or `num_nodes` if more): "
            "each story's graph has as many nodes as its largest id. Pass "
            "`num_nodes` to read larger graphs"
        )


def _edge(fields, spec):
    source, edge_type, target = _ids(fields, 3)
    if edge_type > spec.num_edge_types:
        raise ValueError(
            f"{spec.name} has {spec.num_edge_types} edge types; this edge "
            f"has type {edge_type}"
        )
    return (source, edge_type, target)


def _question(fields, spec):
    num_arguments = _QUESTION_ARGUMENTS[spec.name]
    answer_length = spec.max_answer_length
    values = _ids(fields[1:], 1 + num_arguments + answer_length)
    question_type, arguments = values[0], values[1 : 1 + num_arguments]
    answer = values[1 + num_arguments :]
    if question_type > spec.num_question_types:
        raise ValueError(
            f"{spec.name} has {spec.num_question_types} question types; "
            f"this question has type {question_type}"
        )
    classes = spec.num_classes
    if spec.output != "node_selection" and max(answer) > classes:
        raise ValueError(
            f"{spec.name} answers with class ids 1 to {classes}; this "
            f"question answers {answer}"
        )
    return question_type, arguments, answer if answer_length > 1 else answer[0]


def _bigger(edges, first, second):
    """Whether a chain of edges leads from `first` to `second`."""
    successors = {}
    for source, _, target in edges:
        successors.setdefault(source, []).append(target)
    seen, frontier = {first}, [first]
    while frontier:
        node = frontier.pop()
        for successor in successors.get(node, ()):
            if successor == second:
                return True
            if successor not in seen:
                seen.add(successor)
                frontier.append(successor)
    return False


def _check_class_ids(path, examples):
    """Replaces each task 18 class id by the answer the graph gives (1 if
    the first object is bigger), checking that the file uses each class id
    for one answer only."""
    meaning = {}
    for example in examples:
        first, second = example["arguments"]
        bigger = _bigger(example["edges"], first, second)
        if not bigger and not _bigger(example["edges"], second, first):
            raise ValueError(
                f"{path}, line {example['line']}: no chain of edges orders "
                f"the objects {first} and {second}, so the question has no "
                "answer."
            )
        class_id, answer = example["answer"], int(bigger)
        if meaning.setdefault(class_id, answer) != answer:
            raise ValueError(
                f"{path}, line {example['line']}: class id {class_id} means "
                f"{'true' if answer else 'false'} here but "
                f"{'true' if meaning[class_id] else 'false'} before, so the "
                "file contradicts itself."
            )
        example["answer"] = answer
    if len(set(meaning.values())) != len(meaning):
        raise ValueError(
            f"{path}: class ids {sorted(meaning)} do not each mean one answer."
        )


def _arrays(examples, spec, num_nodes, num_edges):
    graphs = []
    for example in examples:
        annotations = np.zeros(
            (example["num_nodes"], spec.annotation_dim), "float32"
        )
        for bit, node in enumerate(example["arguments"]):
            annotations[node - 1, bit] = 1.0
        graphs.append(
            {
                "edges": [(s - 1, t - 1) for s, _, t in example["edges"]],
                "edge_types": [e - 1 for _, e, _ in example["edges"]],
                "node_inputs": annotations,
            }
        )
    arrays = encode_graphs(
        graphs,
        num_nodes=num_nodes,
        num_edges=num_edges,
        num_edge_types=spec.num_edge_types,
    )
    if spec.output == "graph_sequence":
        answer = np.array([example["answer"] for example in examples]) - 1
    elif spec.output == "graph_classification":
        answer = np.array([example["answer"] for example in examples])
    else:
        answer = np.array([example["answer"] - 1 for example in examples])
    length = spec.max_answer_length
    return {
        **arrays,
        "question_type": np.array(
            [example["question_type"] - 1 for example in examples], "int32"
        ),
        "answer": answer.astype("int32"),
        "answer_length": np.full(len(examples), length, "int32"),
        "story_id": np.array(
            [example["story_id"] for example in examples], "int32"
        ),
    }
