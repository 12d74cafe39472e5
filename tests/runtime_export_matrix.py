"""The families through Keras' own `model.export`, run by ONNX Runtime and
LiteRT, on the current Keras backend.

    KERAS_BACKEND=torch python -m tests.runtime_export_matrix FORMAT [CASE ...]

exports, for each case of `CASES`, the model of `tests/export_matrix.py`
with `model.export(path, format=FORMAT)` (`"onnx"` or `"litert"`), runs the
file in `onnxruntime` or in `ai_edge_litert`'s `Interpreter`, and compares
every output with the Keras model's `predict` on the same feeds. It prints
one JSON line: the backend, the format, and for each case either the error
or `{"max difference": ..., "finite": ..., "shapes": ...}` over every feed
it ran (`shapes`: the feed shapes, so that a test can see the open sizes).

The signatures, as each exporter allows:

- ONNX from TensorFlow: Keras' default one, every size open (batch, `T`,
  `N`, `E`); each file is run at two sizes.
- ONNX from PyTorch: Keras traces with TorchScript when a size is open and
  with the sample inputs of ones it makes; sequences get an open batch and
  a fixed `T` (the layers refuse the trace of an open one), graphs fixed
  sizes (the graph layers refuse TorchScript's trace), which Keras exports
  with `torch.export`; tests/export/test_torch_onnx_sizes.py checks the
  refusals.
- LiteRT from TensorFlow: fixed shapes, TFLite builtin ops only (no Select
  TF ops, so the plain `ai_edge_litert` runtime runs every file); the
  sequence models also with batch 1 and an open `T`, run at two lengths.

The Tree-LSTMs (`TREE_CASES`) run the cases of
`tests/export/tree_export_cases.py`: ONNX from TensorFlow with open batch
and `N`, run at three sizes; ONNX from PyTorch with fixed sizes and
`tree_levels`, run on two batches; LiteRT with fixed sizes.
"""

import json
import pathlib
import sys
import tempfile
import traceback

import keras
import numpy as np

import keras_recurrent as kr
from tests import export_matrix

FEATURES = export_matrix.FEATURES
LENGTHS = export_matrix.LENGTHS


class MaskFromLengths(keras.layers.Layer):
    """`mask[b, t] = t < lengths[b]`: the mask that Keras' export drops,
    rebuilt from an int32 `lengths` input (as `export_saved_model(...,
    lengths=True)` does inside its signature)."""

    def call(self, frames, lengths):
        steps = keras.ops.arange(keras.ops.shape(frames)[1], dtype="int32")
        return keras.ops.less(
            keras.ops.expand_dims(steps, 0), keras.ops.expand_dims(lengths, 1)
        )

    def compute_output_shape(self, frames_shape, lengths_shape):
        return tuple(frames_shape[:2])


def _lengths_case():
    """`CoupledLSTM` fed a `lengths` input: junk in the padding."""
    frames = keras.Input((None, FEATURES), name="frames")
    lengths = keras.Input((), dtype="int32", name="lengths")
    mask = MaskFromLengths(name="mask")(frames, lengths)
    hidden = kr.layers.CoupledLSTM(export_matrix.UNITS)(frames, mask=mask)
    model = keras.Model(
        {"frames": frames, "lengths": lengths},
        keras.layers.Dense(2, name="score")(hidden),
    )
    export_matrix._set_weights(model, 2)
    feeds = {"frames": export_matrix._sequences(2, pad=3.0), "lengths": LENGTHS}
    return model, feeds


def _sequence(name):
    def case():
        model, feeds, _ = export_matrix.CASES[name]()
        return model, {"frames": feeds["frames"]}

    return case


def _graph_case():
    model, graphs, _ = export_matrix._graph_case()
    return model, {name: graphs[name] for name in model._inputs_struct}


def _peephole_case():
    """`PeepholeLSTM` with a cell clip that bites and a projection: what
    the fused TFLite LSTM op would also have to carry."""
    model, feeds, _ = export_matrix._sequence_case(
        lambda: kr.layers.PeepholeLSTM(
            export_matrix.UNITS, cell_clip=0.2, projection_units=3
        ),
        seed=1,
    )()
    return model, {"frames": feeds["frames"]}


def _tree_case(family):
    """A Tree-LSTM case of `tests/export/tree_export_cases.py`: it builds,
    exports and runs its own models, with the signature each exporter
    allows (see there); returns `run(fmt, directory)`."""

    def run(fmt, directory):
        # Imported here: `tree_export_cases` imports this module.
        from tests.export import tree_export_cases as trees

        backend = keras.backend.backend()
        if fmt == "onnx" and backend == "tensorflow":
            result = trees.onnx_open_sizes(family, directory)
        elif fmt == "onnx":
            result = trees.onnx_fixed(family, directory)
        elif fmt == "litert":
            result = trees.litert_fixed(family, directory)
        else:
            raise ValueError(f"Unknown format {fmt!r}")
        return {
            "max difference": result["max_difference"],
            "finite": result["finite"],
            "shapes": result["shapes"],
        }

    return run


MODEL_CASES = {
    "PeepholeLSTM (clip, projection)": _peephole_case,
    "CoupledLSTM (lengths input)": _lengths_case,
    "LSTMVariant(FGR)": _sequence("LSTMVariant(FGR)"),
    "GatedFeedbackRNN": _sequence("GatedFeedbackRNN"),
    "GatedGraph + readouts + GGSNN": _graph_case,
}
# The trees: open batch and `N` in ONNX from TensorFlow; fixed sizes, with
# `tree_levels`, in ONNX from PyTorch; fixed sizes in LiteRT.
TREE_CASES = {
    "ChildSumTreeLSTM": _tree_case("child_sum"),
    "NaryTreeLSTM": _tree_case("nary"),
}
CASES = {**MODEL_CASES, **TREE_CASES}
SEQUENCE_CASES = tuple(name for name in MODEL_CASES if "Graph" not in name)


def _smaller(feeds):
    """The same feeds with a smaller batch, and fewer steps for sequences
    (the longest kept length is the new padded length)."""
    smaller = {name: value[:2] for name, value in feeds.items()}
    if "frames" in smaller:
        smaller["frames"] = smaller["frames"][:, :4]
    if "lengths" in smaller:
        smaller["lengths"] = np.minimum(smaller["lengths"], 4)
    return smaller


def _predict(model, feeds):
    inputs = (
        feeds if isinstance(model._inputs_struct, dict) else feeds["frames"]
    )
    outputs = model.predict(inputs, verbose=0)
    if not isinstance(outputs, dict):
        outputs = {"output_0": outputs}
    return {name: np.asarray(value) for name, value in outputs.items()}


def _spec(array, fixed, open_axes=()):
    shape = tuple(
        None if axis in open_axes or not fixed else size
        for axis, size in enumerate(array.shape)
    )
    return keras.InputSpec(shape=shape, dtype=str(array.dtype))


def _signature(model, feeds, open_axes):
    """Keras' `input_signature`: one argument, the model's input structure,
    with the given axes of every input open and the others fixed."""
    if isinstance(model._inputs_struct, dict):
        specs = {}
        for name, value in feeds.items():
            spec = _spec(value, True, open_axes)
            specs[name] = keras.InputSpec(
                shape=spec.shape, dtype=spec.dtype, name=name
            )
        return [specs]
    spec = _spec(feeds["frames"], True, open_axes)
    return [keras.InputSpec(shape=spec.shape, dtype=spec.dtype, name="frames")]


ONNX_DTYPES = {
    "tensor(float)": "float32",
    "tensor(double)": "float64",
    "tensor(int32)": "int32",
    "tensor(int64)": "int64",
    "tensor(bool)": "bool",
}


class OnnxRunner:
    def __init__(self, path):
        import onnxruntime

        self.session = onnxruntime.InferenceSession(
            str(path), providers=["CPUExecutionProvider"]
        )
        self.inputs = [node.name for node in self.session.get_inputs()]
        # The dtype each input was exported with (index inputs are int64
        # where the model's `keras.Input` is): "tensor(int64)" -> "int64".
        self.dtypes = {
            node.name: ONNX_DTYPES[node.type]
            for node in self.session.get_inputs()
        }
        self.outputs = [node.name for node in self.session.get_outputs()]

    def __call__(self, feeds):
        if len(self.inputs) == 1:
            arrays = {self.inputs[0]: feeds["frames"]}
        else:
            arrays = {name: feeds[name] for name in self.inputs}
        arrays = {
            name: np.asarray(array).astype(self.dtypes[name], copy=False)
            for name, array in arrays.items()
        }
        return dict(zip(self.outputs, self.session.run(None, arrays)))


class LiteRTRunner:
    def __init__(self, path):
        from ai_edge_litert.interpreter import Interpreter

        self.interpreter = Interpreter(model_path=str(path))
        self.runner = self.interpreter.get_signature_runner()
        self.ops = sorted(
            {op["op_name"] for op in self.interpreter._get_ops_details()}
        )

    def __call__(self, feeds):
        return dict(self.runner(**feeds))


def _match(expected, got):
    """Pairs each expected output with the runtime's: by name, else (a
    single output, or PyTorch's numbered names) in sorted-name order."""
    if sorted(expected) == sorted(got):
        return [(expected[name], got[name]) for name in sorted(expected)]
    if len(expected) != len(got):
        raise AssertionError(f"outputs {sorted(expected)} != {sorted(got)}")
    return list(
        zip(
            (expected[name] for name in sorted(expected)),
            got.values(),
            strict=True,
        )
    )


def export_and_run(name, case, fmt, directory):
    """`{"max difference", "finite", "shapes"}` of one case."""
    if name in TREE_CASES:
        return case(fmt, directory)
    model, feeds = case()
    # Keras' ONNX export refuses a model that has never been called, even a
    # functional one.
    _predict(model, feeds)
    backend = keras.backend.backend()
    is_sequence = name in SEQUENCE_CASES
    runs = []  # (path, runner class, [feeds])
    if fmt == "onnx":
        path = directory / "model.onnx"
        if backend == "tensorflow":
            model.export(str(path), format="onnx", verbose=False)
            runs.append((path, OnnxRunner, [feeds, _smaller(feeds)]))
        else:
            open_axes = (0,) if is_sequence else ()
            signature = _signature(model, feeds, open_axes)
            model.export(
                str(path),
                format="onnx",
                verbose=False,
                input_signature=signature,
            )
            smaller = {key: value[:2] for key, value in feeds.items()}
            runs.append(
                (path, OnnxRunner, [feeds, smaller] if is_sequence else [feeds])
            )
    elif fmt == "litert":
        import tensorflow as tf

        builtins = {"supported_ops": [tf.lite.OpsSet.TFLITE_BUILTINS]}
        path = directory / "fixed.tflite"
        model.export(
            str(path),
            format="litert",
            verbose=False,
            input_signature=_signature(model, feeds, ()),
            target_spec=builtins,
        )
        runs.append((path, LiteRTRunner, [feeds]))
        if is_sequence:
            # Batch 1, any number of steps.
            single = {key: value[:1] for key, value in feeds.items()}
            path = directory / "open_steps.tflite"
            model.export(
                str(path),
                format="litert",
                verbose=False,
                input_signature=_signature(model, single, (1,)),
                target_spec=builtins,
            )
            shorter = {key: value[:1] for key, value in _smaller(feeds).items()}
            runs.append((path, LiteRTRunner, [single, shorter]))
    else:
        raise ValueError(f"Unknown format {fmt!r}")

    difference, finite, shapes = 0.0, True, []
    for path, runner_class, all_feeds in runs:
        runner = runner_class(path)
        for run_feeds in all_feeds:
            expected = _predict(model, run_feeds)
            for want, got in _match(expected, runner(run_feeds)):
                got = np.asarray(got)
                assert got.shape == want.shape, (got.shape, want.shape)
                finite = finite and bool(np.all(np.isfinite(got)))
                difference = max(
                    difference,
                    float(np.max(np.abs(got.astype("float64") - want))),
                )
            shapes.append({k: list(v.shape) for k, v in run_feeds.items()})
    return {"max difference": difference, "finite": finite, "shapes": shapes}


def run(fmt, names=None):
    results = {}
    for name, case in CASES.items():
        if names and name not in names:
            continue
        with tempfile.TemporaryDirectory() as directory:
            try:
                results[name] = export_and_run(
                    name, case, fmt, pathlib.Path(directory)
                )
            except Exception as error:  # noqa: BLE001 - reported, not hidden
                lines = traceback.format_exception_only(type(error), error)
                results[name] = "".join(lines).strip()[-800:]
    return results


if __name__ == "__main__":
    fmt = sys.argv[1]
    results = run(fmt, sys.argv[2:])
    print(
        json.dumps(
            {
                "backend": keras.backend.backend(),
                "format": fmt,
                "cases": results,
            }
        )
    )
