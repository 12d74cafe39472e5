"""Open sizes in Keras' ONNX export on PyTorch (issue 44).

    KERAS_BACKEND=torch python -m tests.export.torch_onnx_sizes_cases

`model.export(path, format="onnx")` on PyTorch traces the model with
TorchScript (`torch.jit.trace`) where an input size is open, on sample
inputs of ones with every open size 1. The sequence layers' time loops run
in Python, so the trace unrolls them over one step: before the layers
refused it, the file failed at any other `T` in ONNX Runtime (a `Split`
node) or, where Keras' own LSTM kernel runs (`LSTMVariant("NP")`, a
wrapped `keras.layers.LSTM`), answered wrongly without an error. The graph
layers failed on an op TorchScript's exporter lacks (`take_along_dim`).

Each case here exports one small model and prints, as one JSON line, for
each case either `{"refused": <the ValueError's message>}`, or `{"max
difference": ..., "shapes": [...]}` over every feed it ran in ONNX Runtime
(and, for the other PyTorch paths, in PyTorch), or `{"error": ...}`.
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
from tests.runtime_export_matrix import OnnxRunner
from tests.runtime_export_matrix import _graph_case
from tests.runtime_export_matrix import _match
from tests.runtime_export_matrix import _signature

FEATURES = export_matrix.FEATURES
UNITS = export_matrix.UNITS


def _frames(batch, steps, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(batch, steps, FEATURES)).astype("float32")


def _sequence_model(make_layer, steps=None, seed=3):
    frames = keras.Input((steps, FEATURES), name="frames")
    model = keras.Model(frames, make_layer()(frames))
    export_matrix._set_weights(model, seed)
    model.predict(_frames(2, steps or 5), verbose=0)
    return model


SEQUENCE_LAYERS = {
    "PeepholeLSTM": lambda: kr.layers.PeepholeLSTM(UNITS),
    # Keras' own LSTM kernel (its CPU loop on PyTorch): silently wrong.
    'LSTMVariant("NP")': lambda: kr.layers.LSTMVariant(UNITS, variant="NP"),
    "ResidualStack(keras.layers.LSTM)": lambda: kr.layers.ResidualStack(
        [keras.layers.LSTM(FEATURES, return_sequences=True)]
    ),
    # `go_backwards`, whose trace by Keras' loop (an open batch) wrote an
    # ONNX `ReduceMax` that ONNX Runtime refused to load.
    "Bidirectional(GatedFeedbackRNN)": lambda: keras.layers.Bidirectional(
        kr.layers.GatedFeedbackRNN([UNITS, UNITS])
    ),
}


def _refused(export):
    try:
        export()
    except ValueError as error:
        return {"refused": str(error)}
    return {"refused": False}


def _served(path, model, feeds_list):
    runner = OnnxRunner(path)
    difference, shapes = 0.0, []
    for frames in feeds_list:
        [got] = runner({"frames": frames}).values()
        expected = model.predict(frames, verbose=0)
        difference = max(difference, float(np.max(np.abs(got - expected))))
        shapes.append(list(frames.shape))
    return {"max difference": difference, "shapes": shapes}


def open_steps(make_layer, directory):
    """Keras' default signature, `(None, None, features)`: refused."""
    model = _sequence_model(make_layer)
    path = directory / "open_steps.onnx"
    return _refused(
        lambda: model.export(str(path), format="onnx", verbose=False)
    )


def fixed_steps_open_batch(make_layer, directory):
    """`T` fixed in the signature, batch open (TorchScript's trace): served
    at two batch sizes."""
    model = _sequence_model(make_layer)
    path = directory / "fixed_steps.onnx"
    signature = [keras.InputSpec(shape=(None, 6, FEATURES), name="frames")]
    model.export(
        str(path), format="onnx", verbose=False, input_signature=signature
    )
    return _served(path, model, [_frames(3, 6, 1), _frames(1, 6, 2)])


def one_step_model(directory):
    """A model built for one step (`keras.Input((1, features))`), batch
    open: its traced `T` of 1 is its own, not an open one."""
    model = _sequence_model(lambda: kr.layers.PeepholeLSTM(UNITS), steps=1)
    path = directory / "one_step.onnx"
    model.export(str(path), format="onnx", verbose=False)
    return _served(path, model, [_frames(3, 1, 1), _frames(1, 1, 2)])


def other_torch_paths(directory):
    """One step and two: eager training, `torch.compile` and `torch.export`
    run the layers (no refusal) and agree with `predict`."""
    import torch

    model = _sequence_model(lambda: kr.layers.PeepholeLSTM(UNITS))
    model.compile(optimizer="sgd", loss="mse")
    model.fit(_frames(2, 1), np.zeros((2, UNITS)), verbose=0)
    difference, shapes = 0.0, []
    compiled = torch.compile(model, backend="eager")
    for steps in (1, 2):
        frames = _frames(2, steps, steps)
        expected = model.predict(frames, verbose=0)
        program = torch.export.export(model, (torch.from_numpy(frames),))
        for run in (compiled, program.module()):
            got = run(torch.from_numpy(frames)).detach().cpu().numpy()
            difference = max(difference, float(np.max(np.abs(got - expected))))
        shapes.append(list(frames.shape))
    return {"max difference": difference, "shapes": shapes}


def graph_open_sizes(directory):
    """GG-NN, readouts and GGSNN with open batch, `N` and `E`: refused."""
    model, feeds = _graph_case()
    model.predict(feeds, verbose=0)
    path = directory / "graph_open.onnx"
    signature = _signature(model, feeds, (0, 1))
    return _refused(
        lambda: model.export(
            str(path), format="onnx", verbose=False, input_signature=signature
        )
    )


def readouts_open_sizes(directory):
    """`GraphReadout` and `NodeSelection` over given node states: no loop
    and no graph checks, so TorchScript's trace keeps batch and `N` open."""
    states = keras.Input((None, UNITS), name="states")
    nodes = keras.Input((None, FEATURES), name="nodes")
    mask = keras.Input((None,), dtype="bool", name="mask")
    inputs = [states, nodes, mask]
    model = keras.Model(
        {"states": states, "nodes": nodes, "mask": mask},
        {
            "graph": kr.layers.GraphReadout(3, name="graph")(inputs),
            "node": kr.layers.NodeSelection(name="node")(inputs),
        },
    )
    export_matrix._set_weights(model, 5)
    rng = np.random.default_rng(5)

    def feeds(batch, num_nodes):
        sizes = rng.integers(1, num_nodes + 1, size=(batch, 1))
        return {
            "states": rng.normal(size=(batch, num_nodes, UNITS)),
            "nodes": rng.normal(size=(batch, num_nodes, FEATURES)),
            "mask": np.arange(num_nodes)[None] < sizes,
        }

    first = feeds(3, 6)
    model.predict(first, verbose=0)
    path = directory / "readouts.onnx"
    model.export(str(path), format="onnx", verbose=False)
    runner = OnnxRunner(path)
    difference, shapes = 0.0, []
    for served in (first, feeds(2, 9)):
        expected = model.predict(served, verbose=0)
        got = runner(served)
        for want, have in _match(expected, got):
            difference = max(difference, float(np.max(np.abs(have - want))))
        shapes.append(list(served["states"].shape))
    return {"max difference": difference, "shapes": shapes}


def cases():
    found = {}
    for name, make in SEQUENCE_LAYERS.items():
        found[f"{name} open T"] = lambda d, m=make: open_steps(m, d)
        found[f"{name} fixed T"] = lambda d, m=make: fixed_steps_open_batch(
            m, d
        )
    found["PeepholeLSTM built for one step"] = one_step_model
    found["PeepholeLSTM eager, torch.compile, torch.export"] = other_torch_paths
    found["GatedGraph open sizes"] = graph_open_sizes
    found["GraphReadout, NodeSelection open sizes"] = readouts_open_sizes
    return found


def main(names=()):
    report = {"backend": keras.backend.backend(), "cases": {}}
    for name, case in cases().items():
        if names and name not in names:
            continue
        with tempfile.TemporaryDirectory() as directory:
            try:
                result = case(pathlib.Path(directory))
            except Exception as error:  # noqa: BLE001 - reported, not raised
                lines = traceback.format_exception_only(type(error), error)
                result = {"error": "".join(lines).strip()[-1500:]}
        report["cases"][name] = result
    print(json.dumps(report))


if __name__ == "__main__":
    main(sys.argv[1:])
