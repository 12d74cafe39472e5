"""One worker of the multi-worker tests: trains one model of each family.

Run as `python -m tests.distribute._worker OUT_DIR [options]` with `TF_CONFIG`
set (see `keras_recurrent.testing.distribute.start_local_workers`). Writes the
trained weights of each family to `OUT_DIR/{family}-worker{index}.npz` and,
with `--reference` on worker 0, those of one process trained on the same
global batches to `OUT_DIR/{family}-single.npz`.
"""

import argparse
import json
import os
import time

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import keras_recurrent as kr  # noqa: E402
import keras_recurrent.distribute  # noqa: E402, F401

GLOBAL_BATCH, SAMPLES, TIMESTEPS, FEATURES = 8, 16, 5, 3


def sequence_data(seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(SAMPLES, TIMESTEPS, FEATURES)).astype("float32")
    return x, np.linspace(-1, 1, SAMPLES, dtype="float32")[:, None]


def peephole_model():
    inputs = keras.Input((TIMESTEPS, FEATURES))
    states = kr.layers.PeepholeLSTM(4)(inputs)
    return keras.Model(inputs, keras.layers.Dense(1)(states))


def gf_rnn_model():
    inputs = keras.Input((TIMESTEPS, FEATURES))
    states = kr.layers.GatedFeedbackRNN([4, 3], cell_type="lstm")(inputs)
    return keras.Model(inputs, keras.layers.Dense(1)(states))


def tree_data(seed):
    del seed
    texts = ["(1 2 3)", "(4 (5 6) 7)", "(1 (2 (3 4)))", "(5 6 (7 1 2))"]
    trees = kr.trees.encode_trees(
        [texts[i % 4] for i in range(SAMPLES)], num_nodes=7, num_children=3
    )
    return trees, np.linspace(-1, 1, SAMPLES, dtype="float32")[:, None]


def tree_model():
    inputs = kr.trees.tree_inputs(3, num_nodes=7)
    embedded = keras.layers.Embedding(8, FEATURES)(inputs["node_tokens"])
    tree_tensors = {**inputs, "node_inputs": embedded}
    del tree_tensors["node_tokens"]
    root = kr.layers.ChildSumTreeLSTM(4)(tree_tensors)
    return keras.Model(inputs, keras.layers.Dense(1)(root))


def graph_data(seed):
    del seed
    graphs = kr.graphs.encode_graphs(
        [
            {
                "edges": [(v, (v + 1 + i) % 4, v % 2) for v in range(4)],
                "node_inputs": np.eye(4, FEATURES)[(np.arange(4) + i) % 4],
            }
            for i in range(SAMPLES)
        ],
        num_nodes=5,
    )
    return graphs, np.linspace(-1, 1, SAMPLES, dtype="float32")[:, None]


def graph_model():
    inputs = kr.graphs.graph_inputs(FEATURES, num_nodes=5)
    states = kr.layers.GatedGraph(4, 2, propagation_steps=2)(inputs)
    graph = kr.layers.GraphReadout(3)(
        [states, inputs["node_inputs"], inputs["node_mask"]]
    )
    return keras.Model(inputs, keras.layers.Dense(1)(graph))


FAMILIES = {
    "peephole_lstm": (sequence_data, peephole_model),
    "gf_rnn": (sequence_data, gf_rnn_model),
    "child_sum_tree_lstm": (tree_data, tree_model),
    "gated_graph": (graph_data, graph_model),
}


def build_and_compile(make_model, x):
    keras.utils.set_random_seed(0)
    model = make_model()
    model(keras.tree.map_structure(lambda a: a[:1], x))
    model.compile(
        optimizer=keras.optimizers.SGD(0.1), loss="mse", jit_compile=False
    )
    return model


def dataset(x, y):
    # Fixed order: the global batch k is samples [k * 8, (k + 1) * 8) on
    # every run, split between the workers by tf.distribute.
    return tf.data.Dataset.from_tensor_slices((x, y)).batch(GLOBAL_BATCH)


class EpochLog(keras.callbacks.Callback):
    """Appends `{"run", "epoch"}` lines to a file; may pause after epochs."""

    def __init__(self, path, pause):
        super().__init__()
        self.path, self.pause = path, pause

    def on_epoch_begin(self, epoch, logs=None):
        with open(self.path, "a") as log:
            log.write(json.dumps({"run": os.getpid(), "epoch": epoch}) + "\n")

    def on_epoch_end(self, epoch, logs=None):
        time.sleep(self.pause)


def train_family(name, strategy, args):
    make_data, make_model = FAMILIES[name]
    x, y = make_data(0)
    index = strategy.cluster_resolver.task_id
    with strategy.scope():
        model = build_and_compile(make_model, x)
    callbacks = [
        EpochLog(os.path.join(args.out, f"{name}-epochs{index}.jsonl"), 0)
    ]
    if args.backup:
        callbacks[0].pause = args.pause
        callbacks.append(
            kr.callbacks.multi_worker_backup_and_restore(
                os.path.join(args.backup, name), strategy
            )
        )
    model.fit(dataset(x, y), epochs=args.epochs, verbose=0, callbacks=callbacks)
    save(model, os.path.join(args.out, f"{name}-worker{index}.npz"))
    if args.reference and index == 0:
        single = build_and_compile(make_model, x)
        single.fit(dataset(x, y), epochs=args.epochs, verbose=0)
        save(single, os.path.join(args.out, f"{name}-single.npz"))


def save(model, path):
    np.savez(path, *[np.asarray(w) for w in model.get_weights()])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--families", default=",".join(FAMILIES))
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--backup", default=None)
    parser.add_argument("--pause", type=float, default=0.0)
    parser.add_argument("--reference", action="store_true")
    args = parser.parse_args()
    strategy = kr.distribute.MultiWorkerMirroredStrategy()
    for name in args.families.split(","):
        train_family(name, strategy, args)


if __name__ == "__main__":
    main()
