"""The bAbI graph tasks of Li et al. (2016), generated.

As example dicts (`babi_graph`) and as padded graph tensors
(`babi_graph_arrays`).
"""

import numpy as np

from keras_recurrent._checks import check_positive_int
from keras_recurrent.datasets._checks import check_seed
from keras_recurrent.datasets.babi_graph._stories import generate_story
from keras_recurrent.datasets.babi_graph.tasks import check_question_type
from keras_recurrent.datasets.babi_graph.tasks import check_task
from keras_recurrent.graphs.encoding import encode_graphs


def babi_graph(task, num_examples, *, question_type=None, seed=0):
    """Generates one of the bAbI graph tasks of Li et al. (2016).

    The symbolic bAbI tasks (Weston et al. 2016) that Li et al. (2016) solve
    with gated graph neural networks, written as a Python generator after
    the original Lua one and in the paper's graph encoding: the entities of
    a story are the nodes, each fact `x relation y` is an edge `x -> y`
    whose type is the relation, the question's arguments are bits of the
    node annotations (bit `k` marks argument `k`), and the answer is a node,
    a class of the graph, or a sequence of either. Nodes are numbered at
    random and facts shuffled, so neither position gives the answer away.
    One example is one question; as in bAbI, the stories of tasks 15 and 18
    ask several questions, which follow each other and share a
    `"story_id"` (the paper's "50 training examples" are 50 stories).

    Tasks (see `kr.datasets.BABI_GRAPH_TASKS` for their sizes):

    - `"task_4"`, two-argument relations, as bAbI's `IsDir`: three rooms
      in a row going north or east, two facts such as `A e B` (going east
      from A leads to B; as in bAbI, facts are only ever stated with `n`
      or `e`); the question `eval B w` (what is west of the middle room?)
      has one of four question types `n, e, s, w`; the answer is a node.
    - `"task_15"`, basic deduction, as bAbI's `Deduction`: four species,
      each afraid of another (`has_fear`), and four animals, each of its
      own species (`is`); `eval H has_fear` asks what animal H is afraid
      of; the answer is a species. Each story asks about its four animals.
    - `"task_16"`, basic induction, as bAbI's `Induction`: five animals
      with a species (`is`), all but the asked one with their colour
      (`has_color`); each species has its own colour, and another animal
      of the asked one's species is always there to induce it from.
    - `"task_18"`, size reasoning, as bAbI's `Size` task with its default
      two inference steps: six objects and 4 to 9 facts `x > y` (the
      paper's encoding, which writes every size fact, "is bigger than" or
      "fits inside", as `>`); `eval G > A` asks about two objects whose
      shortest chain of facts has exactly two steps; the answer is the
      class 1 (true) or 0 (false), each with probability 1/2. Each story
      asks about every such pair (1 to 7 questions, mostly 1 to 4).
    - `"task_19"`, path finding: five rooms on a grid, joined by four
      direction facts into a tree; `eval path G A` asks for the two
      directions leading from G to A (always two steps apart); the answer
      is a sequence of two classes, indices into `("n", "e", "s", "w")`. As
      in the paper's data, every fact is stated away from the start room.
    - `"shortest_path"`, the paper's shortest-path task, generated as its
      code does: a connected graph of five nodes (a ring of five edges,
      each rewired at random with probability 1/2, as in a Watts-Strogatz
      graph) holding the query, and a second, "confusing" such graph of
      four nodes; a `connected-to` fact each way per edge. The query joins
      two nodes of the first graph whose shortest path is unique and has at
      least three nodes; the answer is the sequence of nodes on the path,
      both ends included.

    As in the paper, task 4 is learned with one model per question type
    (direction): pass `question_type` to generate only one.

    Args:
        task: String, one of `"task_4"`, `"task_15"`, `"task_16"`,
            `"task_18"`, `"task_19"` and `"shortest_path"`
            (case-insensitive); or a bAbI task's number, as an integer
            (`4`) or a string (`"4"`, `"task 4"`, `"task4"`, `"task-4"`),
            as `kr.datasets.read_babi_graphs` takes it.
        num_examples: Positive integer, the number of examples (questions).
        question_type: Optional integer, the index of the only question type
            to ask (into the task's `question_type_names`). Defaults to
            `None`: question types drawn uniformly.
        seed: Non-negative integer, or a tuple of them, passed to
            `numpy.random.default_rng`. The same arguments always give the
            same stories. Defaults to `0`.

    Returns:
        A list of `num_examples` dicts, each with the keys `"num_nodes"`
        (int), `"edges"` (list of `[source, target]`), `"edge_types"` (list
        of int), `"node_annotations"` (list of `num_nodes` lists of
        `annotation_dim` ints), `"question_type"` (int),
        `"question_arguments"` (list of nodes), `"answer"` (int, or list of
        int for the sequence tasks), `"story_id"` (int, counting stories
        from 0) and `"story"` (the symbolic bAbI lines, nodes named `A`,
        `B`, ... by index).

    Example:

    >>> example = kr.datasets.babi_graph("task_15", 1, seed=3)[0]
    >>> len(example["edges"]), example["num_nodes"]
    (8, 8)
    >>> example["story"][-1].startswith("eval ")
    True

    Reference:
        - [Li et al., 2016. Gated Graph Sequence Neural Networks](
          https://arxiv.org/abs/1511.05493)
        - [Weston et al., 2016. Towards AI-Complete Question Answering: A
          Set of Prerequisite Toy Tasks](https://arxiv.org/abs/1502.05698)
    """
    spec = check_task(task, allow_number=True)
    num_examples = check_positive_int("num_examples", num_examples)
    question_type = check_question_type(spec, question_type)
    rng = np.random.default_rng(check_seed(seed))
    examples, story_id = [], 0
    while len(examples) < num_examples:
        examples += generate_story(rng, spec, question_type, story_id)
        story_id += 1
    return examples[:num_examples]


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
            `"task_18"`, `"task_19"` and `"shortest_path"`
            (case-insensitive), or a bAbI task's number (`4`, `"4"`,
            `"task 4"`, ...), as `kr.datasets.babi_graph` takes it.
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
    spec = check_task(task, allow_number=True)
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
