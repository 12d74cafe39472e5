"""Batch-1 latency of one model per family in three runtimes: the
SavedModel (`kr.export.export_saved_model`, called through
`tf.saved_model.load`), ONNX Runtime (`model.export(format="onnx")` on
TensorFlow, open sizes) and LiteRT (`model.export(format="litert")`, shapes
fixed at export, TFLite builtin ops only, `ai_edge_litert`'s
`Interpreter`, default XNNPACK delegate).

The models are those of `benchmarks/serving.py` (`T = 50`, 32 features,
128 units; a GG-NN of 128 units, 5 steps, with `GraphReadout`, on graphs of
10 to 19 nodes). Each round calls every runtime once, in a fresh random
order, on the same request; the script prints the median latency per
runtime (ms) and the largest difference of each runtime's output to the
SavedModel's.

    python benchmarks/runtimes.py
    python benchmarks/runtimes.py --rounds 300 --models PeepholeLSTM
    python benchmarks/runtimes.py --threads 1
"""

import argparse
import json
import os
import pathlib
import sys
import tempfile
import time

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

MODELS = ("PeepholeLSTM", "CoupledLSTM", "GatedFeedbackRNN", "GatedGraph")


# The NumPy dtype of each ONNX input type: ONNX Runtime converts nothing,
# and the index inputs of the tree and graph models are int64.
ONNX_DTYPES = {
    "tensor(float)": "float32",
    "tensor(int32)": "int32",
    "tensor(int64)": "int64",
    "tensor(bool)": "bool",
}


def onnx_feed(session, arrays):
    """`arrays` (a dict by input name) in the dtypes `session` lists."""
    import numpy as np

    return {
        node.name: np.asarray(arrays[node.name]).astype(ONNX_DTYPES[node.type])
        for node in session.get_inputs()
    }


def _sequence_model(name):
    """The model of serving.py with a `Masking` layer: `model.export` drops
    masks, so the mask comes from the padded values themselves."""
    import keras
    import serving

    inputs = keras.Input((None, serving.FEATURES), name="frames")
    masked = keras.layers.Masking(0.0)(inputs)
    layer = serving._make_model(name).layers[1]  # The recurrent layer.
    outputs = keras.layers.Dense(1, name="score")(layer(masked))
    return keras.Model(inputs, outputs)


def _request(name, rng):
    import numpy as np
    import serving

    request = serving._requests(name, 1, rng)
    if name == "GatedGraph":
        return request
    frames = request["frames"]
    frames[0, int(request["lengths"][0]) :] = 0.0
    return {"frames": np.ascontiguousarray(frames)}


def _signature(request, fixed):
    import tensorflow as tf

    def spec(name, array):
        shape = array.shape if fixed else (None,) * array.ndim
        if not fixed and name in ("frames", "node_inputs"):
            shape = shape[:-1] + array.shape[-1:]
        if not fixed and name == "edges":
            shape = shape[:-1] + (2,)
        return tf.TensorSpec(shape, array.dtype, name=name)

    if list(request) == ["frames"]:
        return [spec("frames", request["frames"])]
    return [{name: spec(name, array) for name, array in request.items()}]


def build(name, directory, rng, threads):
    """Exports `name` three ways; returns `{runtime: call(request)}` and
    the request."""
    import keras
    import numpy as np
    import onnxruntime
    import serving
    import tensorflow as tf
    from ai_edge_litert.interpreter import Interpreter

    import keras_recurrent as kr

    keras.utils.set_random_seed(0)
    model = (
        serving._graph_model()
        if name == "GatedGraph"
        else _sequence_model(name)
    )
    request = _request(name, rng)
    is_graph = name == "GatedGraph"
    feeds = request if is_graph else request["frames"]
    model.predict(feeds, verbose=0)  # ONNX export needs a called model.

    saved = directory / f"{name}_saved_model"
    kr.export.export_saved_model(model, str(saved))
    serve = tf.saved_model.load(str(saved)).signatures["serving_default"]
    tensors = {key: tf.constant(value) for key, value in request.items()}

    onnx_path = directory / f"{name}.onnx"
    model.export(str(onnx_path), format="onnx", verbose=False)
    options = onnxruntime.SessionOptions()
    if threads:
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
    session = onnxruntime.InferenceSession(
        str(onnx_path), options, providers=["CPUExecutionProvider"]
    )
    onnx_names = [node.name for node in session.get_inputs()]
    onnx_feeds = onnx_feed(
        session, request if is_graph else {onnx_names[0]: request["frames"]}
    )

    litert_path = directory / f"{name}.tflite"
    model.export(
        str(litert_path),
        format="litert",
        verbose=False,
        input_signature=_signature(request, fixed=True),
        target_spec={"supported_ops": [tf.lite.OpsSet.TFLITE_BUILTINS]},
    )
    interpreter = Interpreter(
        model_path=str(litert_path), num_threads=threads or None
    )
    runner = interpreter.get_signature_runner()

    def first(outputs):
        return np.asarray(next(iter(outputs.values())))

    return {
        "SavedModel": lambda: first(serve(**tensors)),
        "ONNX Runtime": lambda: np.asarray(session.run(None, onnx_feeds)[0]),
        "LiteRT": lambda: first(runner(**request)),
    }


def main(argv=None):
    import numpy as np

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--models", nargs="+", default=list(MODELS))
    parser.add_argument(
        "--threads",
        type=int,
        default=0,
        help="ONNX Runtime and LiteRT threads (0: their defaults)",
    )
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    results = {}
    with tempfile.TemporaryDirectory() as directory:
        for name in args.models:
            calls = build(name, pathlib.Path(directory), rng, args.threads)
            reference = calls["SavedModel"]()
            difference = {
                runtime: float(np.max(np.abs(call() - reference)))
                for runtime, call in calls.items()
            }
            for call in calls.values():  # Warm-up.
                for _ in range(5):
                    call()
            times = {runtime: [] for runtime in calls}
            order = list(calls)
            for _ in range(args.rounds):
                rng.shuffle(order)
                for runtime in order:
                    start = time.perf_counter()
                    calls[runtime]()
                    times[runtime].append(time.perf_counter() - start)
            results[name] = {
                runtime: {
                    "median ms": round(1e3 * float(np.median(values)), 3),
                    "max difference to SavedModel": difference[runtime],
                }
                for runtime, values in times.items()
            }
            print(name, json.dumps(results[name]), flush=True)
    print(json.dumps(results))


if __name__ == "__main__":
    main()
