import functools

import numpy as np
import pytest
import tensorflow_datasets as tfds

import keras_recurrent as kr
from tests.datasets.builder_helpers import SPLITS
from tests.datasets.builder_helpers import build
from tests.datasets.builder_helpers import build_twice
from tests.datasets.builder_helpers import read_arrays
from tests.datasets.builder_helpers import small_config_maker
from tests.datasets.builder_helpers import split_sizes

_KEYS = (
    "node_inputs",
    "edges",
    "edge_types",
    "node_mask",
    "question_type",
    "answer",
    "answer_length",
    "story_id",
)

_small_config = small_config_maker(
    kr.datasets.BabiGraphConfig, "task_19_small", task="task_19"
)
_read_all = functools.partial(read_arrays, keys=_KEYS)
_build = functools.partial(build, "babi_graph")


def test_registered_with_tfds():
    assert tfds.builder_cls("babi_graph") is kr.datasets.BabiGraph
    configs = kr.datasets.BabiGraph.builder_configs
    assert set(configs) == set(kr.datasets.BABI_GRAPH_TASKS)
    assert configs["task_18"].task == "task_18"
    assert configs["task_18"].spec.max_edges == 9
    assert configs["task_18"].question_type is None
    assert str(kr.datasets.BabiGraph.VERSION) == "1.2.0"


def test_build_matches_generator_and_is_deterministic(tmp_path):
    config = _small_config(seed=3)
    first, second = build_twice("babi_graph", config, tmp_path)
    info = first.info
    assert split_sizes(info) == {"train": 30, "validation": 6, "test": 5}
    assert info.features["node_inputs"].shape == (5, 2)
    assert info.features["answer"].shape == (2,)
    for index, split in enumerate(SPLITS):
        stored = _read_all(first, split)
        again = _read_all(second, split)
        expected = kr.datasets.babi_graph_arrays(
            "task_19", config.split_sizes[split], seed=(3, index)
        )
        for key in _KEYS:
            np.testing.assert_array_equal(stored[key], again[key])
            np.testing.assert_array_equal(stored[key], expected[key])


def test_supervised_question_type_config(tmp_path):
    config = kr.datasets.BabiGraphConfig(
        name="task_4_west",
        task="task_4",
        question_type=3,
        num_train_examples=12,
        num_validation_examples=2,
        num_test_examples=2,
    )
    builder = _build(config, tmp_path)
    dataset = builder.as_dataset(split="train", as_supervised=True)
    inputs, answer = next(iter(tfds.as_numpy(dataset.batch(12))))
    node_inputs, edges, edge_types, node_mask = inputs
    assert node_inputs.shape == (12, 3, 1) and edges.shape == (12, 2, 2)
    assert edge_types.shape == (12, 2) and node_mask.shape == (12, 3)
    assert answer.shape == (12,)
    stored = _read_all(builder, "train")
    np.testing.assert_array_equal(stored["question_type"], 3)


def test_tfds_load_registered_config(tmp_path):
    dataset, info = tfds.load(
        "babi_graph/task_15",
        split="test",
        data_dir=tmp_path,
        with_info=True,
    )
    assert info.splits["train"].num_examples == 1000
    assert info.splits["validation"].num_examples == 100
    assert info.splits["test"].num_examples == 1000
    batch = next(iter(tfds.as_numpy(dataset.batch(1000))))
    expected = kr.datasets.babi_graph_arrays("task_15", 1000, seed=(0, 2))
    for key in _KEYS:
        np.testing.assert_array_equal(batch[key], expected[key])


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"task": "task_3"}, "task='task_3'"),
        ({"question_type": 1}, "question_type=1"),
        ({"num_train_examples": 0}, "num_train_examples=0"),
        ({"num_test_examples": 2.0}, "num_test_examples=2.0"),
        ({"seed": -1}, "seed=-1"),
    ],
)
def test_bad_config_raises(kwargs, message):
    with pytest.raises(ValueError, match=message):
        _small_config(**kwargs)


def test_config_name_is_the_default_task():
    with pytest.raises(ValueError, match="task='my_config'"):
        kr.datasets.BabiGraphConfig(name="my_config")
    assert kr.datasets.BabiGraphConfig(name="task_16").task == "task_16"
