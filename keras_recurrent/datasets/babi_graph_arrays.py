"""The bAbI graph tasks as padded graph tensors."""

import numpy as np

from keras_recurrent.datasets._babi_graph_checks import check_task
from keras_recurrent.datasets.babi_graph import babi_graph
from keras_recurrent.graphs.encoding import encode_graphs


def babi_graph_arrays(task, num_examples, *, question_type=None, seed=0):
    """Generates a bAbI graph task as padded graph tensors (NumPy arrays).

    Calls `kr.datasets.babi_graph` with the same arguments, so the stories
    are the same, and encodes them with `kr.graphs.encode_graphs`, padded to
    the task's `max_nodes` and `max_edges` (see
    `kr.datasets.BABI_GRAPH_TASKS`), in the graph tensor format of
    `kr.layers.GatedGraph`: padding edges are `[-1, -1]` rows with type 0,
    padding nodes have zero annotations and a zero mask. These are exactly
    the arrays the `babi_graph` TFDS builder stores.

    Args:
        task: String, one of `"task_4"`, `"task_15"`, `"task_16"`,
            `"task_18"`, `"task_19"` and `"shortest_path"`.
        num_examples: Positive integer, the number of examples (questions).
        question_type: Optional integer, the only question type to ask.
            Defaults to `None` (question types drawn uniformly).
        seed: Non-negative integer, or a tuple of them. Defaults to `0`.

    Returns:
        A dict of NumPy arrays, for `B = num_examples`, `N = max_nodes`,
        `E = max_edges`, `A = annotation_dim` and `L = max_answer_length`:

        - `"node_inputs"`: float32 `(B, N, A)`, the node annotations.
        - `"edges"`: int32 `(B, E, 2)`, `(source, target)` rows, `-1` rows
          for padding.
        - `"edge_types"`: int32 `(B, E)`.
        - `"node_mask"`: int32 `(B, N)`, 1 for real nodes.
        - `"question_type"`: int32 `(B,)`.
        - `"answer"`: int32 `(B,)` for single answers (a node index or a
          class), `(B, L)` for sequences, padded with `-1`.
        - `"answer_length"`: int32 `(B,)`, the length of the answer (1 for
          single answers).
        - `"story_id"`: int32 `(B,)`, the story of each question (several
          questions share a story in tasks 15 and 18).

    Example:

    >>> arrays = kr.datasets.babi_graph_arrays("task_19", 8)
    >>> arrays["node_inputs"].shape, arrays["answer"].shape
    ((8, 5, 2), (8, 2))

    Reference:
        - [Li et al., 2016. Gated Graph Sequence Neural Networks](
          https://arxiv.org/abs/1511.05493)
    """
    spec = check_task(task)
    examples = babi_graph(
        task, num_examples, question_type=question_type, seed=seed
    )
    graphs = encode_graphs(
        [
            {
                "edges": example["edges"],
                "edge_types": example["edge_types"],
                "node_inputs": example["node_annotations"],
            }
            for example in examples
        ],
        num_nodes=spec.max_nodes,
        num_edges=spec.max_edges,
        num_edge_types=spec.num_edge_types,
    )
    is_sequence = spec.output in ("graph_sequence", "node_sequence")
    if is_sequence:
        answer = np.full(
            (len(examples), spec.max_answer_length), -1, dtype=np.int32
        )
        for index, example in enumerate(examples):
            answer[index, : len(example["answer"])] = example["answer"]
        answer_length = np.array(
            [len(example["answer"]) for example in examples], dtype=np.int32
        )
    else:
        answer = np.array(
            [example["answer"] for example in examples], dtype=np.int32
        )
        answer_length = np.ones(len(examples), dtype=np.int32)
    return {
        **graphs,
        "question_type": np.array(
            [example["question_type"] for example in examples], dtype=np.int32
        ),
        "answer": answer,
        "answer_length": answer_length,
        "story_id": np.array(
            [example["story_id"] for example in examples], dtype=np.int32
        ),
    }
