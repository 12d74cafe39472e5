"""Checks of `examples/babi_graph.py`'s batching and reproducibility."""

import os
import subprocess
import sys

import numpy as np
import pytest

from tests.examples import EXAMPLES
from tests.examples import load_example


@pytest.fixture(scope="module")
def example():
    return load_example("babi_graph")


def test_shuffled_batches(example):
    inputs = {"node_inputs": np.arange(23, dtype="float32")[:, None]}
    targets = np.arange(23)
    weights = np.ones(23, "float32")
    batches = example.ShuffledBatches((inputs, targets, weights), 3, seed=5)
    assert len(batches) == 7  # 69 rows in batches of 10
    epoch = np.concatenate([batches[i][1] for i in range(len(batches))])
    # Three passes, each a permutation of the examples.
    for part in np.split(epoch, 3):
        assert sorted(part) == list(range(23))
    x, y, w = batches[0]
    np.testing.assert_array_equal(x["node_inputs"][:, 0], y)
    assert w.shape == (10,)
    # The order depends on the seed alone, not on the global generators.
    np.random.seed(0)
    again = example.ShuffledBatches((inputs, targets, weights), 3, seed=5)
    np.testing.assert_array_equal(again.order, batches.order)
    batches.on_epoch_end()
    assert not np.array_equal(again.order, batches.order)


_SCRIPT = """
import sys
sys.path.insert(0, {examples!r})
import numpy as np, tensorflow as tf
import babi_graph as E
tf.config.experimental.enable_op_determinism()

def trained(task):
    settings = dict(E.SETTINGS[task], updates=40)
    channels = settings.get("annotations")
    *train, types = E.load(task, (0, 0), channels, num_stories=20)
    *valid, valid_types = E.load(task, (0, 1), channels, num_stories=10)
    model = E.train(
        task, settings, E.subset(train, types == 0),
        E.subset(valid, valid_types == 0), 0,
    )
    return model.get_weights()

first = trained("shortest_path")
trained("task_19")
again = trained("shortest_path")
print("same" if all(np.array_equal(a, b) for a, b in zip(first, again))
      else "different")
"""


def test_a_task_trains_the_same_after_another(tmp_path):
    # A task's model depends on its seed alone, not on the tasks trained
    # before it in the process (it did with XLA and `fit`'s shuffling).
    script = _SCRIPT.format(examples=str(EXAMPLES))
    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env={**os.environ, "KERAS_BACKEND": "tensorflow"},
        cwd=tmp_path,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().endswith("same"), result.stdout
