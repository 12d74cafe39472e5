"""Serving latency of exported models, against a Keras LSTM SavedModel.

Exports one model of each family with `kr.export.export_saved_model` (the
sequence models with a `lengths` input), and a `keras.layers.LSTM` model of
the same size with the same signature. A second process, in which
`keras_recurrent` cannot be imported (as on a serving machine), loads the
SavedModels with `tf.saved_model.load` and calls their `serving_default`
signature with requests of batch 1 and 32: each round calls every model
once, in a fresh random order, so that a noisy machine slows them alike. It
prints the p50 and p99 latency of each, each p50 over the Keras LSTM's,
and the paired ratio: the median over rounds of the model's latency over
the Keras LSTM's in the same round.

    python benchmarks/serving.py
    python benchmarks/serving.py --requests 50 --batches 1
    python benchmarks/serving.py --models PeepholeLSTM CoupledLSTM
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

TIMESTEPS, FEATURES, UNITS = 50, 32, 128


def _sequence_model(layer):
    import keras

    inputs = keras.Input((None, FEATURES), name="frames")
    outputs = keras.layers.Dense(1, name="score")(layer(inputs))
    return keras.Model(inputs, outputs)


def _tree_model():
    import keras

    import keras_recurrent as kr

    inputs = kr.trees.tree_inputs(2, levels=False)  # Served without it.
    tokens = keras.layers.Embedding(20, FEATURES)(inputs["node_tokens"])
    root = kr.layers.NaryTreeLSTM(UNITS, arity=2)(
        [tokens, inputs["children"], inputs["node_mask"]]
    )
    return keras.Model(inputs, keras.layers.Dense(1, name="score")(root))


def _graph_model():
    import keras

    import keras_recurrent as kr

    inputs = kr.graphs.graph_inputs(FEATURES)
    parts = [inputs[name] for name in kr.graphs.GRAPH_TENSOR_NAMES]
    states = kr.layers.GatedGraph(UNITS, 2, propagation_steps=5)(parts)
    summary = kr.layers.GraphReadout(UNITS)(
        [states, inputs["node_inputs"], inputs["node_mask"]]
    )
    return keras.Model(inputs, keras.layers.Dense(1, name="score")(summary))


def _requests(name, batch, rng):
    """One request of `batch` examples, as a dict of NumPy arrays."""

    import keras_recurrent as kr

    if name == "ChildSumTreeLSTM" or name == "NaryTreeLSTM":
        trees = [
            kr.datasets.listops_binary_tree(tree)
            for tree in kr.datasets.listops(
                batch, max_length=30, seed=int(rng.integers(1 << 30))
            )["trees"]
        ]
        return kr.trees.encode_trees(
            trees,
            vocabulary=kr.datasets.LISTOPS_VOCABULARY,
            labeled=False,
            num_children=2,
            levels=False,  # The exported model takes the three tensors.
        )
    if name == "GatedGraph":
        graphs = []
        for _ in range(batch):
            num_nodes = int(rng.integers(10, 20))
            edges = rng.integers(0, num_nodes, size=(3 * num_nodes, 2))
            types = rng.integers(0, 2, size=len(edges))
            graphs.append(
                kr.graphs.encode_graph(
                    [(s, t, e) for (s, t), e in zip(edges, types)],
                    node_inputs=rng.normal(size=(num_nodes, FEATURES)),
                )
            )
        return kr.graphs.encode_graphs(graphs, num_edge_types=2)
    lengths = rng.integers(TIMESTEPS // 2, TIMESTEPS + 1, size=batch)
    frames = rng.normal(size=(batch, TIMESTEPS, FEATURES)).astype("float32")
    return {"frames": frames, "lengths": lengths.astype("int32")}


REFERENCE = "keras.layers.LSTM"
MODELS = (
    "PeepholeLSTM",
    "CoupledLSTM",
    "GatedFeedbackRNN",
    "NaryTreeLSTM",
    "GatedGraph",
)


def _make_model(name):
    import keras

    import keras_recurrent as kr

    if name == REFERENCE:
        return _sequence_model(keras.layers.LSTM(UNITS))
    if name == "GatedFeedbackRNN":
        return _sequence_model(
            kr.layers.GatedFeedbackRNN([UNITS, UNITS], cell_type="lstm")
        )
    if name == "NaryTreeLSTM":
        return _tree_model()
    if name == "GatedGraph":
        return _graph_model()
    if name == "CoupledLSTM":
        return _sequence_model(
            kr.layers.CoupledLSTM(UNITS, use_peepholes=False)
        )
    return _sequence_model(getattr(kr.layers, name)(UNITS))


def export_models(directory, batches, seed, names=MODELS):
    """Exports the Keras LSTM and the models `names`, writes their
    requests, and returns the names in order, the Keras LSTM first."""
    import keras
    import numpy as np

    import keras_recurrent as kr

    keras.utils.set_random_seed(seed)
    models = {name: _make_model(name) for name in (REFERENCE, *names)}
    rng = np.random.default_rng(seed)
    for name, model in models.items():
        path = os.path.join(directory, name)
        sequence = "frames" in [tensor.name for tensor in model.inputs]
        kr.export.export_saved_model(model, path, lengths=sequence)
        for batch in batches:
            np.savez(
                os.path.join(directory, f"{name}-{batch}.npz"),
                **_requests(name, batch, rng),
            )
    return list(models)


def serve(directory, names, batches, requests):
    """Latencies (ms) of each model and batch, in this process."""
    sys.modules["keras_recurrent"] = None  # as on a serving machine
    import time

    import numpy as np
    import tensorflow as tf

    signatures, inputs = {}, {}
    for name in names:
        loaded = tf.saved_model.load(os.path.join(directory, name))
        signatures[name] = loaded.signatures["serving_default"]
        for batch in batches:
            with np.load(os.path.join(directory, f"{name}-{batch}.npz")) as f:
                inputs[name, batch] = {
                    key: tf.constant(f[key]) for key in f.files
                }
    times = {key: [] for key in inputs}
    for key in inputs:  # Warm up: the first calls trace and allocate.
        for _ in range(3):
            signatures[key[0]](**inputs[key])
    # Each round times every model and batch once, in a fresh random order,
    # so that neither the machine's load nor the cache left by the previous
    # call favours a model.
    keys, rng = list(inputs), np.random.default_rng(0)
    for _ in range(requests):
        for index in rng.permutation(len(keys)):
            key = keys[index]
            start = time.perf_counter()
            outputs = signatures[key[0]](**inputs[key])
            np.asarray(outputs["score"])
            times[key].append(1000 * (time.perf_counter() - start))
    latencies = {}
    for name, batch in times:
        own = np.asarray(times[name, batch])
        reference = np.asarray(times[REFERENCE, batch])
        latencies[f"{name}|{batch}"] = [
            float(np.percentile(own, 50)),
            float(np.percentile(own, 99)),
            float(np.median(own / reference)),
        ]
    return latencies


def report(names, batches, latencies):
    print(
        "| model | batch | p50 (ms) | p99 (ms) | p50 / Keras LSTM "
        "| paired ratio |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for batch in batches:
        reference = latencies[f"{REFERENCE}|{batch}"][0]
        for name in names:
            p50, p99, paired = latencies[f"{name}|{batch}"]
            print(
                f"| {name} | {batch} | {p50:.2f} | {p99:.2f} | "
                f"{p50 / reference:.2f} | {paired:.2f} |"
            )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 32])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--models",
        nargs="+",
        choices=MODELS,
        default=list(MODELS),
        help="the models to time beside the Keras LSTM (default: all)",
    )
    parser.add_argument("--serve", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        directory, names = args.serve, json.loads(os.environ["SERVE_NAMES"])
        latencies = serve(directory, names, args.batches, args.requests)
        print(json.dumps(latencies))
        return
    with tempfile.TemporaryDirectory() as directory:
        names = export_models(directory, args.batches, args.seed, args.models)
        command = [
            sys.executable,
            os.path.abspath(__file__),
            "--serve",
            directory,
            "--requests",
            str(args.requests),
            "--batches",
            *map(str, args.batches),
        ]
        result = subprocess.run(
            command,
            capture_output=True,
            text=True,
            env={**os.environ, "SERVE_NAMES": json.dumps(names)},
            timeout=3600,
        )
        if result.returncode:
            raise RuntimeError(result.stderr[-3000:])
        latencies = json.loads(result.stdout.strip().splitlines()[-1])
    print(
        f"{TIMESTEPS} steps x {FEATURES} features, {UNITS} units; "
        f"{args.requests} rounds, each model and batch once per round in "
        "random order, after 3 to warm up; served without keras_recurrent"
    )
    report(names, args.batches, latencies)


if __name__ == "__main__":
    main()
