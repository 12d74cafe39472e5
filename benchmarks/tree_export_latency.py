"""Batch-1 latency of the Tree-LSTMs in ONNX Runtime and LiteRT, against
their SavedModel.

Builds the serving benchmark's tree model (`benchmarks/serving.py`:
ListOps tokens -> `Embedding(20, 32)` -> a Tree-LSTM of 128 units ->
`Dense(1)`) for `ChildSumTreeLSTM` and `NaryTreeLSTM`, exports it with
`kr.export.export_saved_model` and Keras' `model.export`:

- SavedModel (TensorFlow), open sizes, called through `serving_default`;
- ONNX from TensorFlow (tf2onnx), open sizes, in onnxruntime;
- LiteRT from TensorFlow, fixed `N` (`--num-nodes`), builtin ops only, in
  `ai_edge_litert`;
- ONNX from PyTorch (a subprocess with `KERAS_BACKEND=torch`), fixed `N`
  and `tree_levels` `(L, W)`, in onnxruntime.

Each round sends one ListOps tree (binary, at most 30 tokens) to every
runtime in a fresh random order; the table gives the p50 and the paired
ratio to the SavedModel (the median over rounds of the two latencies'
ratio). The fixed-shape runtimes get the tree padded to `N` nodes (and the
schedule to `(L, W)`).

    python benchmarks/tree_export_latency.py
    python benchmarks/tree_export_latency.py --requests 200 --families nary
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from runtimes import onnx_feed  # noqa: E402

FEATURES, UNITS = 32, 128
NUM_LEVELS, LEVEL_WIDTH = 32, 2


def tree_model(family, num_nodes=None, levels=False):
    import keras

    import keras_recurrent as kr

    inputs = kr.trees.tree_inputs(2, num_nodes=num_nodes, levels=levels)
    tokens = keras.layers.Embedding(20, FEATURES)(inputs["node_tokens"])
    tensors = {**inputs, "node_inputs": tokens}
    del tensors["node_tokens"]
    if family == "nary":
        layer = kr.layers.NaryTreeLSTM(UNITS, arity=2)
    else:
        layer = kr.layers.ChildSumTreeLSTM(UNITS)
    root = layer(tensors)
    return keras.Model(inputs, keras.layers.Dense(1, name="score")(root))


def requests(count, seed):
    """`count` one-tree requests (dicts of arrays, without a schedule)."""
    import keras_recurrent as kr

    trees = kr.datasets.listops(count, max_length=30, seed=seed)["trees"]
    return [
        kr.trees.encode_trees(
            [kr.datasets.listops_binary_tree(tree)],
            vocabulary=kr.datasets.LISTOPS_VOCABULARY,
            labeled=False,
            num_children=2,
            levels=False,
        )
        for tree in trees
    ]


def fixed(request, num_nodes, levels):
    """`request` padded to `num_nodes` (and with `tree_levels` padded to
    `(NUM_LEVELS, LEVEL_WIDTH)` where `levels`)."""
    import numpy as np

    import keras_recurrent as kr

    pad = num_nodes - request["children"].shape[1]
    out = {
        "node_tokens": np.pad(request["node_tokens"], ((0, 0), (0, pad))),
        "children": np.pad(
            request["children"], ((0, 0), (0, pad), (0, 0)), constant_values=-1
        ),
        "node_mask": np.pad(request["node_mask"], ((0, 0), (0, pad))),
    }
    out = {name: array.astype("int32") for name, array in out.items()}
    if levels:
        schedule = kr.trees.tree_levels(
            out["children"], out["node_mask"], level_width=LEVEL_WIDTH
        )
        out["tree_levels"] = kr.trees.pad_tree_levels(
            schedule, (NUM_LEVELS, LEVEL_WIDTH)
        )
    return out


def torch_export(family, num_nodes, path):
    """In a `KERAS_BACKEND=torch` process: the fixed-shape ONNX file."""
    import keras

    sample = fixed(requests(1, 0)[0], num_nodes, True)
    model = tree_model(family, num_nodes=num_nodes, levels=True)
    signature = [
        {
            name: keras.InputSpec(shape=a.shape, dtype=str(a.dtype), name=name)
            for name, a in sample.items()
        }
    ]
    model.export(path, format="onnx", verbose=False, input_signature=signature)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--num-nodes", type=int, default=64)
    parser.add_argument("--families", nargs="+", default=["child_sum", "nary"])
    parser.add_argument("--torch-export", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.torch_export:
        torch_export(args.torch_export[0], args.num_nodes, args.torch_export[1])
        return

    import numpy as np
    import onnxruntime
    import tensorflow as tf
    from ai_edge_litert.interpreter import Interpreter

    import keras_recurrent as kr

    directory = tempfile.mkdtemp()
    work = requests(args.requests, 1)
    work = [r for r in work if r["children"].shape[1] <= args.num_nodes]
    rows = []
    for family in args.families:
        runners = {}
        model = tree_model(family)
        model.predict(work[0], verbose=0)
        saved = os.path.join(directory, f"{family}_saved")
        kr.export.export_saved_model(model, saved)
        serve = tf.saved_model.load(saved).signatures["serving_default"]
        runners["SavedModel (TensorFlow)"] = lambda r, s=serve: s(
            **{k: tf.constant(r[k].astype("int32")) for k in r}
        )
        onnx_path = os.path.join(directory, f"{family}_tf.onnx")
        model.export(onnx_path, format="onnx", verbose=False)
        session = onnxruntime.InferenceSession(onnx_path)
        runners["ONNX from TensorFlow"] = lambda r, s=session: s.run(
            None, onnx_feed(s, r)
        )
        litert = tree_model(family, num_nodes=args.num_nodes)
        litert.set_weights(model.get_weights())
        sample = fixed(work[0], args.num_nodes, False)
        lite_path = os.path.join(directory, f"{family}.tflite")
        litert.export(
            lite_path,
            format="litert",
            verbose=False,
            input_signature=[
                {
                    k: tf.TensorSpec(a.shape, a.dtype, name=k)
                    for k, a in sample.items()
                }
            ],
            target_spec={"supported_ops": [tf.lite.OpsSet.TFLITE_BUILTINS]},
        )
        lite = Interpreter(model_path=lite_path).get_signature_runner()
        runners["LiteRT from TensorFlow"] = lambda r, f=lite: f(
            **fixed(r, args.num_nodes, False)
        )
        torch_path = os.path.join(directory, f"{family}_torch.onnx")
        subprocess.run(
            [
                sys.executable,
                __file__,
                "--num-nodes",
                str(args.num_nodes),
                "--torch-export",
                family,
                torch_path,
            ],
            env={**os.environ, "KERAS_BACKEND": "torch"},
            check=True,
            capture_output=True,
        )
        torch_session = onnxruntime.InferenceSession(torch_path)
        runners["ONNX from PyTorch"] = lambda r, s=torch_session: s.run(
            None, onnx_feed(s, fixed(r, args.num_nodes, True))
        )
        times = {name: [] for name in runners}
        rng = np.random.default_rng(0)
        for request in work[:5]:
            for run in runners.values():
                run(request)
        for request in work:
            for name in rng.permutation(list(runners)):
                start = time.perf_counter()
                runners[name](request)
                times[name].append(time.perf_counter() - start)
        base = times["SavedModel (TensorFlow)"]
        for name, values in times.items():
            paired = statistics.median(a / b for a, b in zip(values, base))
            rows.append((family, name, statistics.median(values) * 1e3, paired))
    print(
        f"batch 1, {len(work)} ListOps requests (binary, <= 30 tokens), "
        f"units {UNITS}; fixed shapes: N={args.num_nodes}, tree_levels "
        f"({NUM_LEVELS}, {LEVEL_WIDTH}) (ONNX from PyTorch)"
    )
    print(f"{'family':10s} {'runtime':26s} {'p50 ms':>8s} {'paired':>7s}")
    for family, name, p50, paired in rows:
        print(f"{family:10s} {name:26s} {p50:8.2f} {paired:7.2f}")
    print(json.dumps({"rows": rows}))


if __name__ == "__main__":
    main()
