"""Story generators of the bAbI graph tasks (private to `generator.py`).

Each generator draws one story over abstract entities `0 .. k-1` and returns
its facts `(subject, relation, object)`, its questions `(arguments,
question_type, answer)` (the answer is an entity, a class, or a list of
either), and the entities that are nodes (`None`: those of the facts).
`_finalize` then gives the entities random node indices, shuffles the facts,
and writes one example per question.

Directions follow the symbolic bAbI form used by Li et al. (2016): the fact
`x d y` (edge `x -> y` of type `d`) says that going `d` from `x` leads to
`y`, i.e. `y` is `d` of `x`.
"""

import collections
import string

import numpy as np

_NORTH, _EAST, _SOUTH, _WEST = range(4)
_STEPS = {_NORTH: (0, 1), _EAST: (1, 0), _SOUTH: (0, -1), _WEST: (-1, 0)}


def _opposite(direction):
    return (direction + 2) % 4


def _task_4(rng, question_type):
    # As bAbI's `IsDir` (facebookarchive/bAbI-tasks, `babi/tasks/IsDir.lua`):
    # three rooms in a row going north or east, stated as the two facts
    # `0 d 1` and `1 d 2` (room 1 is `d` of room 0), never the opposite way
    # round; the question asks what lies in direction `question_type` of
    # the middle room, along the row or against it.
    if question_type is None:
        question_type = int(rng.integers(4))
    direction = min(question_type, _opposite(question_type))  # N or E.
    facts = [(0, direction, 1), (1, direction, 2)]
    answer = 2 if question_type == direction else 0
    return facts, [([1], question_type, answer)], None


_IS, _HAS_FEAR, _HAS_COLOR = 0, 1, 1


def _task_15(rng, question_type):
    # As bAbI's `Deduction`: species 0..3, each afraid of another species;
    # animals 4..7, each of its own species (a permutation). Q: what is
    # animal `a` afraid of? A: the fear of its species. As in bAbI, a story
    # asks about each of its four animals.
    num_species = 4
    fears = [
        int(rng.choice([other for other in range(num_species) if other != s]))
        for s in range(num_species)
    ]
    animals = range(num_species, 2 * num_species)
    species = dict(zip(animals, (int(s) for s in rng.permutation(num_species))))
    facts = [(animal, _IS, species[animal]) for animal in animals]
    facts += [(s, _HAS_FEAR, fears[s]) for s in range(num_species)]
    questions = [
        ([int(asked)], 0, fears[species[int(asked)]])
        for asked in num_species + rng.permutation(num_species)
    ]
    return facts, questions, None


def _task_16(rng, question_type):
    # As bAbI's `Induction`: animals 0..4, species 5..8, colours 9..12.
    # Every species has its own colour (a permutation); all animals but the
    # asked one have their colour stated, and the asked one's species is
    # drawn again until another animal shares it, to induce the answer from.
    num_animals, num_species, num_colors = 5, 4, 4
    species = rng.integers(num_species, size=num_animals)
    asked = int(rng.integers(num_animals))
    while np.sum(species == species[asked]) < 2:
        species[asked] = rng.integers(num_species)
    colors = rng.permutation(num_colors)
    first_species, first_color = num_animals, num_animals + num_species
    facts = [
        (animal, _IS, first_species + int(species[animal]))
        for animal in range(num_animals)
    ]
    facts += [
        (animal, _HAS_COLOR, first_color + int(colors[species[animal]]))
        for animal in range(num_animals)
        if animal != asked
    ]
    answer = first_color + int(colors[species[asked]])
    return facts, [([asked], 0, answer)], None


def _two_step_pairs(num_entities, arcs):
    """Pairs `(a, b)` whose shortest path of `arcs` has exactly two arcs."""
    after = [[b for x, b in arcs if x == a] for a in range(num_entities)]
    pairs = []
    for a in range(num_entities):
        first = set(after[a])
        second = {c for b in first for c in after[b]} - first - {a}
        pairs.extend((a, c) for c in sorted(second))
    return pairs


def _task_18(rng, question_type):
    # As bAbI's `Size` task (facebookarchive/bAbI-tasks, `babi/tasks/
    # Size.lua`, default `steps=2`): six objects of distinct sizes; first
    # two facts `x > y > z` on three objects in size order, then 2 to 7
    # more facts `big > small` on random pairs, each kept only if some pair
    # is still two steps apart (100 tries). The paper's encoding states
    # every size fact, "bigger than" or "fits inside", as `>`. The
    # questions compare objects whose shortest chain of facts has exactly
    # two steps; a story asks about every such pair, as bAbI does, in a
    # random direction (as in the paper's data, where half the answers are
    # false). "eval x > y" is true iff x is bigger.
    num_objects = 6
    by_size = rng.permutation(num_objects)  # Biggest first.
    first = np.sort(rng.choice(num_objects, 3, replace=False))
    arcs = [
        (int(by_size[first[0]]), int(by_size[first[1]])),
        (int(by_size[first[1]]), int(by_size[first[2]])),
    ]
    for _ in range(int(rng.integers(2, 8))):
        for _ in range(100):
            i, j = np.sort(rng.choice(num_objects, 2, replace=False))
            arc = (int(by_size[i]), int(by_size[j]))
            if arc in arcs:
                continue
            if _two_step_pairs(num_objects, arcs + [arc]):
                arcs.append(arc)
                break
    facts = [(big, 0, small) for big, small in arcs]
    facts = [facts[int(i)] for i in rng.permutation(len(facts))]
    candidates = _two_step_pairs(num_objects, arcs)
    questions = []
    for index in rng.permutation(len(candidates)):
        big, small = candidates[int(index)]
        answer = int(rng.integers(2))
        arguments = [big, small] if answer == 1 else [small, big]
        questions.append((arguments, 0, answer))
    return facts, questions, None


def _task_19(rng, question_type):
    # Five rooms on a grid: a path start -> middle -> end of two steps, and
    # two more rooms next to rooms of the path. As in the paper's data, the
    # four facts are stated away from the start (`x d y` with x nearer the
    # start), so the answer is the types of the two path edges; finding
    # which edges lead to the end is the task.
    first = int(rng.integers(4))
    second = int(rng.choice([d for d in range(4) if d != _opposite(first)]))
    positions = [(0, 0)]
    arcs = [(0, first, 1), (1, second, 2)]
    for direction in (first, second):
        (x, y), (dx, dy) = positions[-1], _STEPS[direction]
        positions.append((x + dx, y + dy))
    for room in (3, 4):
        while True:
            parent = int(rng.integers(3))
            direction = int(rng.integers(4))
            (x, y), (dx, dy) = positions[parent], _STEPS[direction]
            if (x + dx, y + dy) not in positions:
                break
        positions.append((x + dx, y + dy))
        arcs.append((parent, direction, room))
    return arcs, [([0, 2], 0, [first, second])], None


def _shortest_paths_from(num_nodes, neighbours, source):
    """BFS distances, numbers of shortest paths, and one parent per node."""
    distance = [-1] * num_nodes
    count = [0] * num_nodes
    parent = [-1] * num_nodes
    distance[source], count[source] = 0, 1
    queue = collections.deque([source])
    while queue:
        node = queue.popleft()
        for other in neighbours[node]:
            if distance[other] == -1:
                distance[other] = distance[node] + 1
                parent[other] = node
                queue.append(other)
            if distance[other] == distance[node] + 1:
                count[other] += count[node]
    return distance, count, parent


def _ring_rewired(rng, num_nodes, rewire_probability):
    """A ring whose edges are rewired at random, as networkx builds a
    Watts-Strogatz graph with 2 neighbours per node (each edge `(u, u + 1)`
    is replaced, with probability `rewire_probability`, by `(u, w)` for a
    random `w` not yet joined to `u`)."""
    edges = {frozenset((u, (u + 1) % num_nodes)) for u in range(num_nodes)}
    for u in range(num_nodes):
        if rng.random() >= rewire_probability:
            continue
        joined = {w for edge in edges if u in edge for w in edge}
        free = [w for w in range(num_nodes) if w not in joined]
        if free:
            edges.discard(frozenset((u, (u + 1) % num_nodes)))
            edges.add(frozenset((u, int(rng.choice(free)))))
    return sorted(tuple(sorted(edge)) for edge in edges)


def _is_connected(num_nodes, neighbours):
    seen, stack = {0}, [0]
    while stack:
        for other in neighbours[stack.pop()]:
            if other not in seen:
                seen.add(other)
                stack.append(other)
    return len(seen) == num_nodes


def _connected_ring_rewired(rng, num_nodes):
    """A connected `_ring_rewired` graph and its neighbour lists."""
    while True:
        edges = _ring_rewired(rng, num_nodes, 0.5)
        neighbours = collections.defaultdict(list)
        for a, b in edges:
            neighbours[a].append(b)
            neighbours[b].append(a)
        if _is_connected(num_nodes, neighbours):
            return edges, neighbours


def _shortest_path(rng, question_type):
    # The generator of Li et al. (2016), "noisy" version: a connected
    # Watts-Strogatz graph of five nodes (a ring of five edges, each rewired
    # with probability 1/2), the query, and a second, "confusing" such graph
    # of four nodes beside it; a fact each way per edge. The query is a
    # random pair of the first graph whose shortest path is unique and has
    # at least three nodes; other queries are redrawn with a new graph.
    num_nodes, num_confusing = 5, 4
    while True:
        edges, neighbours = _connected_ring_rewired(rng, num_nodes)
        source, target = (int(node) for node in rng.integers(num_nodes, size=2))
        if source == target:
            continue
        distance, count, parent = _shortest_paths_from(
            num_nodes, neighbours, source
        )
        if count[target] == 1 and distance[target] >= 2:
            break
    path = [target]
    while path[-1] != source:
        path.append(parent[path[-1]])
    confusing, _ = _connected_ring_rewired(rng, num_confusing)
    edges += [(a + num_nodes, b + num_nodes) for a, b in confusing]
    facts = []
    for a, b in edges:
        facts += [(a, 0, b), (b, 0, a)]
    entities = range(num_nodes + num_confusing)
    return facts, [([source, target], 0, path[::-1])], entities


_GENERATORS = {
    "task_4": _task_4,
    "task_15": _task_15,
    "task_16": _task_16,
    "task_18": _task_18,
    "task_19": _task_19,
    "shortest_path": _shortest_path,
}

_NODE_ANSWERS = ("node_selection", "node_sequence")


def _node_name(node):
    if node < len(string.ascii_uppercase):
        return string.ascii_uppercase[node]
    return f"N{node}"


def _question_line(task, arguments, question_type, answer):
    """The question line of the symbolic bAbI form, e.g. "eval G > A"."""
    if task.output == "node_selection":
        said = _node_name(answer)
    elif task.output == "node_sequence":
        said = ",".join(_node_name(node) for node in answer)
    elif task.output == "graph_sequence":
        said = ",".join(task.answer_names[index] for index in answer)
    else:
        said = task.answer_names[answer]
    names = [_node_name(argument) for argument in arguments]
    asked = task.question_type_names[question_type]
    if len(names) == 1:
        words = [names[0], asked]
    elif task.output == "graph_classification":
        words = [names[0], asked, names[1]]
    else:
        words = [asked, *names]
    return f"eval {' '.join(words)}\t{said}"


def _finalize(rng, task, facts, questions, entities, story_id):
    """Numbers the nodes at random, shuffles the facts, writes the examples.

    All the questions of a story share its graph (same numbering, same
    fact order) and differ in their annotations and answers.
    """
    if entities is None:
        entities = sorted({e for fact in facts for e in (fact[0], fact[2])})
    entities = list(entities)
    numbering = rng.permutation(len(entities))
    node_of = {
        entity: int(node)
        for entity, node in zip(entities, numbering, strict=True)
    }
    order = rng.permutation(len(facts))
    facts = [facts[index] for index in order]
    edges = [[node_of[source], node_of[target]] for source, _, target in facts]
    edge_types = [int(relation) for _, relation, _ in facts]
    lines = [
        f"{_node_name(s)} {task.edge_type_names[r]} {_node_name(t)}"
        for (s, t), r in zip(edges, edge_types, strict=True)
    ]
    examples = []
    for arguments, question_type, answer in questions:
        arguments = [node_of[argument] for argument in arguments]
        if task.output in _NODE_ANSWERS:
            answer = (
                [node_of[entity] for entity in answer]
                if isinstance(answer, list)
                else node_of[answer]
            )
        annotations = [[0] * task.annotation_dim for _ in entities]
        for position, argument in enumerate(arguments):
            annotations[argument][position] = 1
        question = _question_line(task, arguments, question_type, answer)
        examples.append(
            {
                "num_nodes": len(entities),
                "edges": [list(edge) for edge in edges],
                "edge_types": list(edge_types),
                "node_annotations": annotations,
                "question_type": int(question_type),
                "question_arguments": arguments,
                "answer": answer,
                "story_id": story_id,
                "story": [*lines, question],
            }
        )
    return examples


def generate_story(rng, task, question_type, story_id):
    """The examples (one per question) of one story of `task`."""
    facts, questions, entities = _GENERATORS[task.name](rng, question_type)
    return _finalize(rng, task, facts, questions, entities, story_id)
