"""`read_babi_graphs` on fold 1 of the GG-NN paper's data and on bad files."""

import hashlib
from pathlib import Path

import keras
import numpy as np
import pytest

import keras_recurrent as kr

FOLD = (
    Path(__file__).resolve().parents[3].parent
    / "shared"
    / "data"
    / "babi-ggnn-fold1"
)
needs_fold = pytest.mark.skipif(
    not FOLD.exists(),
    reason=f"fold 1 of the GG-NN bAbI data is not at {FOLD} (../shared)",
)
TASKS = ("task_4", "task_15", "task_16", "task_18", "task_19")


def _file(split, task):
    return FOLD / split / f"{task.split('_')[1]}_graphs.txt"


def _question_lines(path):
    return [
        line.split()
        for line in path.read_text().splitlines()
        if line[:1] == "?"
    ]


def _closure(edges, num_nodes):
    """Transitive closure of real edges, with NumPy matrix powers."""
    reach = np.zeros((num_nodes, num_nodes), bool)
    for source, target in edges:
        if source >= 0:
            reach[source, target] = True
    for _ in range(num_nodes):
        reach = reach | ((reach.astype(int) @ reach.astype(int)) > 0)
    return reach


@needs_fold
@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("split", ["train", "test"])
def test_one_example_per_question(split, task):
    arrays = kr.datasets.read_babi_graphs(_file(split, task), task)
    questions = _question_lines(_file(split, task))
    generated = kr.datasets.babi_graph_arrays(task, 4)
    assert sorted(arrays) == sorted(generated)
    for name, value in arrays.items():
        assert value.dtype == generated[name].dtype, name
        assert value.shape[0] == len(questions), name
        assert value.shape[2:] == generated[name].shape[2:], name
    assert arrays["story_id"].max() == 999
    assert np.all(np.diff(arrays["story_id"]) >= 0)
    spec = kr.datasets.BABI_GRAPH_TASKS[task]
    # Question types and arguments, as the file has them (ids from 1).
    assert arrays["question_type"].tolist() == [
        int(q[1]) - 1 for q in questions
    ]
    for bit in range(spec.annotation_dim):
        marked = np.argmax(arrays["node_inputs"][:, :, bit], axis=1)
        assert marked.tolist() == [int(q[2 + bit]) - 1 for q in questions]
    assert arrays["node_inputs"].sum() == len(questions) * spec.annotation_dim
    # Every edge connects real nodes and has a type of the task.
    real = arrays["edges"][..., 0] >= 0
    rows = np.nonzero(real)[0]
    assert np.all(arrays["node_mask"][rows, arrays["edges"][..., 0][real]])
    assert np.all(arrays["node_mask"][rows, arrays["edges"][..., 1][real]])
    assert arrays["edge_types"][real].max() < spec.num_edge_types


@needs_fold
def test_the_first_story_of_task_4():
    # 1 1 2 / 2 1 3 / ? 1 2 1
    arrays = kr.datasets.read_babi_graphs(_file("train", "task_4"), "task_4")
    assert arrays["edges"][0].tolist() == [[0, 1], [1, 2]]
    assert arrays["edge_types"][0].tolist() == [0, 0]
    assert arrays["node_inputs"][0, :, 0].tolist() == [0, 1, 0, 0]
    assert arrays["node_mask"][0].tolist() == [1, 1, 1, 0]
    assert arrays["question_type"][0] == 0
    assert arrays["answer"][0] == 0
    # Task 4's rooms are numbered up to 4 (the generator's up to 3).
    assert arrays["node_inputs"].shape[1] == 4


@needs_fold
@pytest.mark.parametrize("task", ["task_4", "task_15", "task_16"])
def test_node_answers_are_real_nodes_named_by_the_file(task):
    arrays = kr.datasets.read_babi_graphs(_file("test", task), task)
    questions = _question_lines(_file("test", task))
    assert arrays["answer"].tolist() == [int(q[3]) - 1 for q in questions]
    rows = np.arange(len(questions))
    assert np.all(arrays["node_mask"][rows, arrays["answer"]] == 1)


@needs_fold
@pytest.mark.parametrize("split", ["train", "test"])
def test_task_18_answers_come_from_the_graph(split):
    arrays = kr.datasets.read_babi_graphs(_file(split, "task_18"), "task_18")
    questions = _question_lines(_file(split, "task_18"))
    for row, question in enumerate(questions):
        first, second = int(question[2]) - 1, int(question[3]) - 1
        reach = _closure(arrays["edges"][row], arrays["node_mask"].shape[1])
        assert reach[first, second] != reach[second, first]
        assert arrays["answer"][row] == int(reach[first, second])
    # In fold 1, the class id 2 means true.
    class_ids = np.array([int(q[4]) for q in questions])
    assert np.array_equal(arrays["answer"], (class_ids == 2).astype(int))
    assert 0.45 < arrays["answer"].mean() < 0.55


@needs_fold
def test_task_18_class_ids_may_mean_either_answer(tmp_path):
    # Another fold may swap the ids: the answers stay the same.
    text = _file("train", "task_18").read_text().splitlines()
    swapped = [
        " ".join(line.split()[:4] + [str(3 - int(line.split()[4]))])
        if line[:1] == "?"
        else line
        for line in text
    ]
    path = tmp_path / "18_graphs.txt"
    path.write_text("\n".join(swapped) + "\n")
    original = kr.datasets.read_babi_graphs(
        _file("train", "task_18"), "task_18"
    )
    np.testing.assert_array_equal(
        kr.datasets.read_babi_graphs(path, "task_18")["answer"],
        original["answer"],
    )


def test_task_18_contradicting_class_ids_are_an_error(tmp_path):
    path = tmp_path / "18_graphs.txt"
    # 1 > 2 > 3: "1 bigger than 3" is true, "3 bigger than 1" false, but
    # both say class 1.
    path.write_text("1 1 2\n2 1 3\n? 1 1 3 1\n\n1 1 2\n2 1 3\n? 1 3 1 1\n")
    with pytest.raises(ValueError, match="line 7: class id 1 means false"):
        kr.datasets.read_babi_graphs(path, "task_18")


def test_task_18_unordered_objects_are_an_error(tmp_path):
    path = tmp_path / "18_graphs.txt"
    path.write_text("1 1 2\n3 1 4\n? 1 1 4 1\n")
    with pytest.raises(ValueError, match="line 3: no chain of edges orders"):
        kr.datasets.read_babi_graphs(path, "task_18")


@needs_fold
def test_task_19_answers_are_the_ggsnn_targets():
    arrays = kr.datasets.read_babi_graphs(_file("train", "task_19"), "task_19")
    questions = _question_lines(_file("train", "task_19"))
    assert arrays["answer"].shape == (1000, 2)
    assert arrays["answer_length"].tolist() == [2] * 1000
    assert arrays["answer"].tolist() == [
        [int(q[4]) - 1, int(q[5]) - 1] for q in questions
    ]
    # Each direction of the answer is the type of an edge on the path from
    # the first argument to the second, with one numbering of its own.
    direction_of_type = {}
    for row, question in enumerate(questions):
        start, goal = int(question[2]) - 1, int(question[3]) - 1
        edges = arrays["edges"][row]
        types = arrays["edge_types"][row]
        path = [
            (first_type, second_type)
            for (s1, t1), first_type in zip(edges, types)
            for (s2, t2), second_type in zip(edges, types)
            if s1 == start and t1 == s2 and t2 == goal
        ]
        assert len(path) == 1, row
        for edge_type, direction in zip(path[0], arrays["answer"][row]):
            assert (
                direction_of_type.setdefault(edge_type, direction) == direction
            )
    assert sorted(direction_of_type.values()) == [0, 1, 2, 3]
    # A GGS-NN with two graph-level steps trains on them as they are.
    inputs = {name: arrays[name][:16] for name in kr.graphs.GRAPH_TENSOR_NAMES}
    spec = kr.datasets.BABI_GRAPH_TASKS["task_19"]
    model_inputs = kr.graphs.graph_inputs(
        spec.annotation_dim,
        num_nodes=inputs["node_mask"].shape[1],
        num_edges=spec.max_edges,
    )
    outputs = kr.layers.GGSNN(
        4,
        spec.num_edge_types,
        output_steps=2,
        task="graph_classification",
        num_classes=spec.num_classes,
        propagation_steps=2,
    )(model_inputs)
    model = keras.Model(model_inputs, outputs)
    model.compile(
        "adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    )
    assert model.predict(inputs, verbose=0).shape == (16, 2, 4)
    assert np.isfinite(model.evaluate(inputs, arrays["answer"][:16], verbose=0))


@pytest.mark.parametrize(
    "text, message",
    [
        ("1 1 2\n1 2\n? 1 1 2\n", "line 2: expected 3 fields"),
        ("1 1 2\n1 x 2\n? 1 1 2\n", "line 2: every field must be an integer"),
        ("1 1 2\n0 1 2\n? 1 1 2\n", "line 2: ids start at 1"),
        ("1 1 2\n1 3 2\n? 1 1 2\n", "line 2: task_15 has 2 edge types"),
        ("1 1 2\n? 1 1\n", "line 2: expected 3 fields"),
        ("1 1 2\n? 2 1 2\n", "line 2: task_15 has 1 question types"),
        ("1 1 2\n\n2 1 3\n? 1 2 3\n", "line 1: the story that ends here"),
    ],
)
def test_a_malformed_file_is_named(tmp_path, text, message):
    path = tmp_path / "15_graphs.txt"
    path.write_text(text)
    with pytest.raises(ValueError, match=message) as info:
        kr.datasets.read_babi_graphs(path, "task_15")
    assert str(path) in str(info.value)


def test_bad_arguments(tmp_path):
    path = tmp_path / "19_graphs.txt"
    path.write_text("1 1 2\n2 1 3\n? 1 1 3 1 5\n")
    with pytest.raises(ValueError, match="class ids 1 to 4"):
        kr.datasets.read_babi_graphs(path, "task_19")
    path.write_text("1 1 2\n2 1 3\n? 1 1 3 1 4\n")
    with pytest.raises(ValueError, match="tasks of the paper's data"):
        kr.datasets.read_babi_graphs(path, "shortest_path")
    with pytest.raises(ValueError, match="Received: task='task_99'"):
        kr.datasets.read_babi_graphs(path, "task_99")
    with pytest.raises(ValueError, match="Received: num_nodes=2"):
        kr.datasets.read_babi_graphs(path, "task_19", num_nodes=2)
    arrays = kr.datasets.read_babi_graphs(path, "task_19", num_nodes=7)
    assert arrays["node_mask"].tolist() == [[1, 1, 1, 0, 0, 0, 0]]
    assert arrays["answer"].tolist() == [[0, 3]]


# Hardening (issue 26): ids, encodings, arguments, the published files.

_STORY = "1 1 2\n2 1 3\n? 1 2 3\n"  # task 15: one question, answer 3.


@pytest.mark.parametrize(
    "field, message",
    [
        ("1_0", "plain digits 0-9, not '1_0'"),
        ("+3", "plain digits 0-9, not '\\+3'"),
        ("\u0663", "plain digits 0-9, not '\u0663'"),  # ARABIC-INDIC THREE
        ("3.0", "plain digits 0-9, not '3.0'"),
        ("1e3", "plain digits 0-9, not '1e3'"),
        ("1000000000", "the id '1000000000' is too large"),
        ("9" * 5000, "is too large"),
        ("1001", "node id 1001 is above 1000"),
        ("999999999", "node id 999999999 is above 1000"),
    ],
)
def test_an_id_is_plain_digits_and_bounded(tmp_path, field, message):
    path = tmp_path / "15_graphs.txt"
    path.write_text(f"1 1 2\n2 1 {field}\n? 1 2 3\n", encoding="utf-8")
    with pytest.raises(ValueError, match=message) as info:
        kr.datasets.read_babi_graphs(path, "task_15")
    assert f"{path}, line 2:" in str(info.value)
    assert len(str(info.value)) < 1000


def test_num_nodes_raises_the_largest_node_id(tmp_path):
    path = tmp_path / "15_graphs.txt"
    path.write_text("1 1 2\n2 1 1500\n? 1 2 1500\n")
    with pytest.raises(ValueError, match="MAX_BABI_NODE_ID"):
        kr.datasets.read_babi_graphs(path, "task_15")
    assert kr.datasets.MAX_BABI_NODE_ID == 1000
    arrays = kr.datasets.read_babi_graphs(path, "task_15", num_nodes=1500)
    assert arrays["node_mask"].shape == (1, 1500)
    assert arrays["node_mask"].sum() == 1500
    assert arrays["answer"].tolist() == [1499]
    assert arrays["edges"][0, :2].tolist() == [[0, 1], [1, 1499]]


@pytest.mark.parametrize(
    "task", [15, np.int64(15), "15", "task 15", "Task15", "task-15", "TASK_15"]
)
def test_task_spellings(tmp_path, task):
    path = tmp_path / "15_graphs.txt"
    path.write_text(_STORY)
    arrays = kr.datasets.read_babi_graphs(path, task)
    assert arrays["answer"].tolist() == [2]
    assert arrays["edges"][0, :2].tolist() == [[0, 1], [1, 2]]


@pytest.mark.parametrize("task", [7, "7", "task 15x", "\u0661\u0665", True])
def test_other_tasks_list_the_accepted_values(tmp_path, task):
    path = tmp_path / "15_graphs.txt"
    path.write_text(_STORY)
    with pytest.raises(ValueError) as info:
        kr.datasets.read_babi_graphs(path, task)
    message = str(info.value)
    assert message.startswith("Argument `task` must be one of")
    assert "'task_15'" in message and "[4, 15, 16, 18, 19]" in message
    assert f"Received: task={task!r}" in message


def test_a_directory_of_the_papers_layout_reads_the_tasks_file(tmp_path):
    (tmp_path / "15_graphs.txt").write_text(_STORY)
    arrays = kr.datasets.read_babi_graphs(tmp_path, 15)
    assert arrays["answer"].tolist() == [2]
    with pytest.raises(ValueError, match="Argument `path` is a directory") as e:
        kr.datasets.read_babi_graphs(tmp_path, "task_16")
    assert "'16_graphs.txt'" in str(e.value)


@pytest.mark.parametrize(
    "data",
    [
        b"\xef\xbb\xbf" + _STORY.encode(),  # UTF-8 byte order mark
        _STORY.replace("\n", "\r\n").encode(),  # CRLF
        _STORY.replace(" ", "\t").encode(),  # tabs
        _STORY.replace("\n", "  \n").encode(),  # whitespace at the end
        _STORY.rstrip("\n").encode(),  # no final newline
    ],
)
def test_valid_files_of_other_editors_read(tmp_path, data):
    path = tmp_path / "15_graphs.txt"
    path.write_bytes(data + b"\n\n" + _STORY.encode())
    arrays = kr.datasets.read_babi_graphs(path, "task_15")
    assert arrays["answer"].tolist() == [2, 2]
    assert arrays["story_id"].tolist() == [0, 1]


def test_a_latin1_byte_names_the_line(tmp_path):
    path = tmp_path / "15_graphs.txt"
    path.write_bytes(b"1 1 2\n2 1 3 \xe9\n? 1 2 3\n")
    with pytest.raises(ValueError, match="line 2: byte 0xe9 at offset 6"):
        kr.datasets.read_babi_graphs(path, "task_15")


@needs_fold
def test_the_published_files_read_as_before():
    # Fingerprints of what the reader returned before the hardening of
    # issue 26, so that the new line reading and id checks change nothing
    # on the paper's files.
    expected = {
        ("train", "task_4"): "eeef7febf5005f1a",
        ("train", "task_15"): "67a890ba48e5bdd2",
        ("train", "task_16"): "51ca0c35b938f226",
        ("train", "task_18"): "1f87bf29c602e7f7",
        ("train", "task_19"): "6b472bbb2cfaf41a",
        ("test", "task_4"): "1589600490452683",
        ("test", "task_15"): "c351afc54e93a72a",
        ("test", "task_16"): "365b8709c0022ee7",
        ("test", "task_18"): "cf9dffa33e98f765",
        ("test", "task_19"): "9b547b30420a0a69",
    }
    for (split, task), fingerprint in expected.items():
        arrays = kr.datasets.read_babi_graphs(_file(split, task), task)
        digest = hashlib.sha256()
        for name in sorted(arrays):
            value = np.ascontiguousarray(arrays[name])
            digest.update(name.encode())
            digest.update(str((value.dtype, value.shape)).encode())
            digest.update(value.tobytes())
        assert digest.hexdigest()[:16] == fingerprint, (split, task)
