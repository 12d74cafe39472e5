"""Trains a bAbI graph task, another task, then the first again, in one process.

Run by `test_babi_graph.py` as a script, in a fresh process (what it
checks is the state that trainings leave in the process):

    python tests/examples/babi_graph_order_check.py

It prints `same` if the second training of `shortest_path` started from the
same initial weights and read the same minibatches in the same order as the
first, and `different: <what>` otherwise. Each training must run without
XLA (`model.jit_compile is False`).
"""

import importlib
import pathlib
import sys

import numpy as np
import tensorflow as tf

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"
UPDATES = 40


def record_trainings(example):
    """Makes `example` record each model's initial weights and, in the
    order `fit` asks for them, the rows of each minibatch; returns the
    record it fills."""
    record = {}
    build, getitem = example.graph_model, example.ShuffledBatches.__getitem__

    def graph_model(*args, **kwargs):
        model = build(*args, **kwargs)
        record["initial"] = [np.array(weight) for weight in model.weights]
        return model

    def batch(self, index):
        rows = slice(
            index * example.BATCH_SIZE, (index + 1) * example.BATCH_SIZE
        )
        record["batches"].append(self.order[rows])
        return getitem(self, index)

    example.graph_model = graph_model
    example.ShuffledBatches.__getitem__ = batch
    return record


def trained(example, record, task):
    """What `record` holds after `UPDATES` updates of `task` on 20 stories."""
    record.clear()
    record["batches"] = []
    settings = dict(example.SETTINGS[task], updates=UPDATES)
    channels = settings.get("annotations")
    *train, types = example.load(task, (0, 0), channels, num_stories=20)
    *valid, valid_types = example.load(task, (0, 1), channels, num_stories=10)
    model = example.train(
        task,
        settings,
        example.subset(train, types == 0),
        example.subset(valid, valid_types == 0),
        0,
    )
    if model.jit_compile is not False:
        raise RuntimeError(f"{task} trained with XLA: {model.jit_compile!r}")
    if len(record["batches"]) < UPDATES or not record["initial"]:
        raise RuntimeError(f"{task} recorded {len(record['batches'])} batches")
    return dict(record)


def equal(first, second):
    return len(first) == len(second) and all(
        np.array_equal(a, b) for a, b in zip(first, second, strict=True)
    )


def main():
    sys.path.insert(0, str(EXAMPLES))
    example = importlib.import_module("babi_graph")
    tf.config.experimental.enable_op_determinism()
    record = record_trainings(example)
    first = trained(example, record, "shortest_path")
    trained(example, record, "task_19")
    again = trained(example, record, "shortest_path")
    different = [part for part in first if not equal(first[part], again[part])]
    print("different: " + " ".join(different) if different else "same")


if __name__ == "__main__":
    main()
