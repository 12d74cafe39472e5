import collections
import itertools

import numpy as np
import pytest

import keras_recurrent as kr

TASKS = tuple(kr.datasets.BABI_GRAPH_TASKS)
_OPPOSITE = {"n": "s", "s": "n", "e": "w", "w": "e"}


def _facts(example, task):
    """The facts as (source, relation name, target)."""
    names = kr.datasets.BABI_GRAPH_TASKS[task].edge_type_names
    return [
        (source, names[edge_type], target)
        for (source, target), edge_type in zip(
            example["edges"], example["edge_types"], strict=True
        )
    ]


def _moves(example, task):
    """node -> {direction name: set of nodes reached going that way}."""
    moves = collections.defaultdict(lambda: collections.defaultdict(set))
    for source, direction, target in _facts(example, task):
        moves[source][direction].add(target)
        moves[target][_OPPOSITE[direction]].add(source)
    return moves


def _solve_task_4(example):
    (middle,) = example["question_arguments"]
    # As bAbI's IsDir: a row of three rooms going north or east, never
    # stated the opposite way round.
    facts = _facts(example, "task_4")
    assert {relation for _, relation, _ in facts} in ({"n"}, {"e"})
    assert sorted(middle == s for s, _, _ in facts) == [False, True]
    assert sorted(middle == t for _, _, t in facts) == [False, True]
    direction = "nesw"[example["question_type"]]
    (reached,) = _moves(example, "task_4")[middle][direction]
    return reached


def _solve_task_15(example):
    (animal,) = example["question_arguments"]
    facts = _facts(example, "task_15")
    (species,) = [t for s, r, t in facts if s == animal and r == "is"]
    # As bAbI's Deduction: each animal of its own species.
    species_of = [t for s, r, t in facts if r == "is"]
    assert len(species_of) == len(set(species_of)) == 4
    (feared,) = [t for s, r, t in facts if s == species and r == "has_fear"]
    return feared


def _solve_task_16(example):
    (animal,) = example["question_arguments"]
    facts = _facts(example, "task_16")
    species_of = {s: t for s, r, t in facts if r == "is"}
    color_of = {s: t for s, r, t in facts if r == "has_color"}
    assert animal not in color_of
    same = [
        other
        for other, species in species_of.items()
        if species == species_of[animal] and other != animal
    ]
    colors = {color_of[other] for other in same}
    # As bAbI's Induction: each species has its own colour.
    species_colors = {(species_of[o], c) for o, c in color_of.items()}
    assert len(species_colors) == len({c for _, c in species_colors})
    assert len(species_colors) == len({s for s, _ in species_colors})
    # Induction needs a witness, and all witnesses must agree.
    assert len(colors) == 1
    return colors.pop()


def _solve_task_18(example):
    bigger = collections.defaultdict(set)  # x -> objects x is bigger than
    for source, relation, target in _facts(example, "task_18"):
        assert relation == ">"
        bigger[source].add(target)

    def is_bigger(x, y):
        seen, stack = set(), [x]
        while stack:
            node = stack.pop()
            for small in bigger[node] - seen:
                if small == y:
                    return True
                seen.add(small)
                stack.append(small)
        return False

    first, second = example["question_arguments"]
    first_bigger = is_bigger(first, second)
    # The order of the asked pair follows from the facts, never stated:
    # as in bAbI's default, by a shortest chain of exactly two facts.
    assert first_bigger != is_bigger(second, first)
    assert second not in bigger[first] and first not in bigger[second]
    big, small = (first, second) if first_bigger else (second, first)
    assert any(small in bigger[middle] for middle in bigger[big])
    return int(first_bigger)


def _solve_task_19(example):
    start, end = example["question_arguments"]
    moves = _moves(example, "task_19")
    routes = []
    for first, second in itertools.product("nesw", repeat=2):
        for middle in moves[start][first]:
            if end in moves[middle][second] and end != start:
                routes.append(["nesw".index(first), "nesw".index(second)])
    # Exactly one route of two steps.
    assert len(routes) == 1
    # As in the paper's data, facts point away from the start: a tree whose
    # every target is reached once, never the start.
    targets = [target for _, target in example["edges"]]
    assert len(set(targets)) == len(targets) and start not in targets
    return routes[0]


def _solve_shortest_path(example):
    source, target = example["question_arguments"]
    neighbours = collections.defaultdict(set)
    for a, b in example["edges"]:
        neighbours[a].add(b)
        neighbours[b].add(a)
    # Breadth-first levels, then every path of that length, by brute force.
    level, seen, distance = {source}, {source}, 0
    while target not in level:
        level = {n for node in level for n in neighbours[node]} - seen
        seen |= level
        distance += 1
    paths = [[source]]
    for _ in range(distance):
        paths = [p + [n] for p in paths for n in neighbours[p[-1]]]
    shortest = [p for p in paths if p[-1] == target]
    assert len(shortest) == 1 and distance >= 2
    return shortest[0]


_SOLVERS = {
    "task_4": _solve_task_4,
    "task_15": _solve_task_15,
    "task_16": _solve_task_16,
    "task_18": _solve_task_18,
    "task_19": _solve_task_19,
    "shortest_path": _solve_shortest_path,
}


@pytest.mark.parametrize("task", TASKS)
def test_answers_are_correct_by_construction(task):
    for example in kr.datasets.babi_graph(task, 200, seed=5):
        assert example["answer"] == _SOLVERS[task](example)


@pytest.mark.parametrize("task", TASKS)
def test_graph_encoding(task):
    spec = kr.datasets.BABI_GRAPH_TASKS[task]
    for example in kr.datasets.babi_graph(task, 100, seed=1):
        num_nodes = example["num_nodes"]
        assert 1 <= num_nodes <= spec.max_nodes
        assert 1 <= len(example["edges"]) <= spec.max_edges
        assert len(example["edge_types"]) == len(example["edges"])
        edges = np.array(example["edges"])
        assert edges.min() >= 0 and edges.max() < num_nodes
        # Every node takes part in some fact.
        assert set(edges.ravel()) == set(range(num_nodes))
        assert all(0 <= t < spec.num_edge_types for t in example["edge_types"])
        assert 0 <= example["question_type"] < spec.num_question_types

        # Bit k of the annotations marks question argument k, only it.
        annotations = np.array(example["node_annotations"])
        assert annotations.shape == (num_nodes, spec.annotation_dim)
        arguments = example["question_arguments"]
        assert len(arguments) == spec.annotation_dim
        expected = np.zeros_like(annotations)
        expected[arguments, np.arange(len(arguments))] = 1
        np.testing.assert_array_equal(annotations, expected)

        assert len(example["story"]) == len(example["edges"]) + 1
        assert example["story"][-1].startswith("eval ")


def test_answer_kinds_and_balance():
    for task in ("task_4", "task_15", "task_16"):
        answers = [e["answer"] for e in kr.datasets.babi_graph(task, 400)]
        # Random node numbering: the answer is not at a fixed index.
        assert len(set(answers)) >= 3
    answers = [e["answer"] for e in kr.datasets.babi_graph("task_18", 1000)]
    assert set(answers) == {0, 1}
    assert 400 < sum(answers) < 600
    edges = [len(e["edges"]) for e in kr.datasets.babi_graph("task_18", 500)]
    assert set(edges) == set(range(4, 10))
    paths = kr.datasets.babi_graph("task_19", 500)
    assert {len(e["answer"]) for e in paths} == {2}
    assert {d for e in paths for d in e["answer"]} == {0, 1, 2, 3}
    paths = kr.datasets.babi_graph("shortest_path", 300)
    assert {len(e["answer"]) for e in paths} >= {3, 4}


def test_story_matches_the_paper_example_form():
    (example,) = kr.datasets.babi_graph("task_18", 1, seed=0)
    first, second = example["question_arguments"]
    answer = ("false", "true")[example["answer"]]
    letters = "ABCDEF"
    assert example["story"][-1] == (
        f"eval {letters[first]} > {letters[second]}\t{answer}"
    )
    (example,) = kr.datasets.babi_graph("task_19", 1, seed=0)
    assert example["story"][-1].startswith("eval path ")
    assert example["story"][-1].endswith(
        ",".join("nesw"[d] for d in example["answer"])
    )


@pytest.mark.parametrize("question_type", [0, 2])
def test_question_type_filter(question_type):
    examples = kr.datasets.babi_graph(
        "task_4", 50, question_type=question_type, seed=2
    )
    assert {e["question_type"] for e in examples} == {question_type}
    for example in examples:
        assert example["answer"] == _solve_task_4(example)
    mixed = kr.datasets.babi_graph("task_4", 200, seed=2)
    assert {e["question_type"] for e in mixed} == {0, 1, 2, 3}


def _stories(examples):
    stories = collections.defaultdict(list)
    for example in examples:
        stories[example["story_id"]].append(example)
    return stories


@pytest.mark.parametrize("task", TASKS)
def test_questions_of_a_story_share_its_graph(task):
    examples = kr.datasets.babi_graph(task, 203, seed=3)
    ids = [example["story_id"] for example in examples]
    # Stories are numbered in order, their questions contiguous.
    assert ids[0] == 0 and all(
        b - a in (0, 1) for a, b in itertools.pairwise(ids)
    )
    stories = _stories(examples)
    for questions in stories.values():
        first = questions[0]
        for example in questions[1:]:
            for key in ("num_nodes", "edges", "edge_types"):
                assert example[key] == first[key]
            assert example["story"][:-1] == first["story"][:-1]
        asked = [tuple(example["question_arguments"]) for example in questions]
        assert len(set(asked)) == len(asked)
    sizes = collections.Counter(len(q) for q in list(stories.values())[:-1])
    if task == "task_15":
        # Every animal of the story is asked about.
        assert set(sizes) == {4}
    elif task == "task_18":
        # Every pair two facts apart is asked about.
        assert set(sizes) >= {1, 2, 3, 4, 5}
    else:
        assert set(sizes) == {1}


@pytest.mark.parametrize("task", TASKS)
def test_deterministic_by_seed(task):
    first = kr.datasets.babi_graph(task, 20, seed=(4, 1))
    again = kr.datasets.babi_graph(task, 20, seed=(4, 1))
    other = kr.datasets.babi_graph(task, 20, seed=(4, 2))
    assert first == again
    assert first != other


@pytest.mark.parametrize("task", TASKS)
def test_arrays_match_examples(task):
    spec = kr.datasets.BABI_GRAPH_TASKS[task]
    examples = kr.datasets.babi_graph(task, 30, seed=7)
    arrays = kr.datasets.babi_graph_arrays(task, 30, seed=7)
    n, e, a = spec.max_nodes, spec.max_edges, spec.annotation_dim
    assert arrays["node_inputs"].shape == (30, n, a)
    assert arrays["node_inputs"].dtype == np.float32
    assert arrays["edges"].shape == (30, e, 2)
    assert arrays["edge_types"].shape == (30, e)
    assert arrays["node_mask"].shape == (30, n)
    int_keys = (
        "edges",
        "edge_types",
        "node_mask",
        "answer",
        "answer_length",
        "question_type",
        "story_id",
    )
    for key in int_keys:
        assert arrays[key].dtype == np.int32, key
    for index, example in enumerate(examples):
        num_nodes, num_edges = example["num_nodes"], len(example["edges"])
        np.testing.assert_array_equal(
            arrays["node_inputs"][index, :num_nodes],
            example["node_annotations"],
        )
        np.testing.assert_array_equal(
            arrays["node_inputs"][index, num_nodes:], 0
        )
        np.testing.assert_array_equal(
            arrays["node_mask"][index], np.arange(n) < num_nodes
        )
        np.testing.assert_array_equal(
            arrays["edges"][index, :num_edges], example["edges"]
        )
        np.testing.assert_array_equal(arrays["edges"][index, num_edges:], -1)
        np.testing.assert_array_equal(
            arrays["edge_types"][index, :num_edges], example["edge_types"]
        )
        assert arrays["story_id"][index] == example["story_id"]
        answer = np.atleast_1d(example["answer"])
        length = arrays["answer_length"][index]
        assert length == len(answer)
        np.testing.assert_array_equal(
            np.atleast_1d(arrays["answer"][index])[:length], answer
        )
        np.testing.assert_array_equal(
            np.atleast_1d(arrays["answer"][index])[length:], -1
        )


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"task": "task_5"}, "task='task_5'"),
        ({"task": 5}, "task=5"),
        ({"task": "5"}, "task='5'"),
        ({"task": "task 5"}, "task='task 5'"),
        ({"task": True}, "task=True"),
        ({"task": 4.0}, "task=4.0"),
        ({"task": "shortest path"}, "task='shortest path'"),
        ({"num_examples": 0}, "num_examples=0"),
        ({"num_examples": 2.0}, "num_examples=2.0"),
        ({"question_type": 4}, "question_type=4"),
        ({"question_type": -1}, "question_type=-1"),
        ({"task": "task_15", "question_type": 1}, "question_type=1"),
        ({"question_type": True}, "question_type=True"),
        ({"seed": -1}, "seed=-1"),
        ({"seed": ()}, r"seed=\(\)"),
    ],
)
@pytest.mark.parametrize(
    "function", [kr.datasets.babi_graph, kr.datasets.babi_graph_arrays]
)
def test_bad_arguments_raise(function, kwargs, message):
    arguments = {"task": "task_4", "num_examples": 3, **kwargs}
    task, num_examples = arguments.pop("task"), arguments.pop("num_examples")
    with pytest.raises(ValueError, match=message):
        function(task, num_examples, **arguments)


@pytest.mark.parametrize(
    "task, name",
    [
        (4, "task_4"),
        (np.int64(4), "task_4"),
        ("4", "task_4"),
        ("task_4", "task_4"),
        ("task 4", "task_4"),
        ("task4", "task_4"),
        ("TASK-4", "task_4"),
        (" Task_4 ", "task_4"),
        (19, "task_19"),
        ("18", "task_18"),
        ("shortest_path", "shortest_path"),
        ("Shortest_Path", "shortest_path"),
    ],
)
@pytest.mark.parametrize(
    "function", [kr.datasets.babi_graph, kr.datasets.babi_graph_arrays]
)
def test_task_spellings_match_the_reader(function, task, name):
    # The generators take the spellings `read_babi_graphs` takes, and give
    # exactly the examples of the canonical name.
    expected = function(name, 3, seed=5)
    received = function(task, 3, seed=5)
    if isinstance(expected, dict):
        assert expected.keys() == received.keys()
        for key in expected:
            np.testing.assert_array_equal(received[key], expected[key])
    else:
        assert received == expected
