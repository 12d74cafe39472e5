"""The Tree-LSTMs through Keras' own `model.export`, to ONNX and LiteRT.

Each case builds a small model (`kr.trees.tree_inputs`, a Tree-LSTM over
float node inputs), exports it with `model.export(path, format=...)` and
runs the artifact in its runtime (onnxruntime, `ai_edge_litert`), to be
compared with `model.predict`:

- `onnx` on TensorFlow: open batch and `N` (tf2onnx); served batches of
  two other shapes than the one the model was called on.
- `litert` on TensorFlow: shapes fixed at export, LiteRT builtin ops only
  (no Select TF ops, which `ai_edge_litert` cannot run).
- `onnx` on PyTorch: shapes fixed at export, `tree_levels` included (Keras
  exports fixed shapes with `torch.export`).

The runtime matrix (tests/runtime_export_matrix.py) runs the ONNX and
LiteRT cases of every backend. Run as a module with `KERAS_BACKEND=torch`,
this prints a JSON report of the PyTorch-only cases (`torch.export`, and
the refusal of open sizes) as its last line
(tests/export/test_tree_onnx_litert.py runs it).
"""

import json
import sys
import tempfile
from pathlib import Path

import keras
import numpy as np

import keras_recurrent as kr
from tests.runtime_export_matrix import ONNX_DTYPES

FAMILIES = ("child_sum", "nary")
FEATURES = 4
UNITS = 8

# Served batches: the first is the one the model is built on. Binary
# trees, for both families.
TREES = (
    ["(1 (2 (3 4)))", "((1 2) ((5 6) 8))", "(3 4)", "5"],
    ["(1 (2 (3 ((4 5) 6))))", "(9 9)", "(((2 3) (4 5)) ((6 7) 8))"],
    ["(1 (2 (3 4)))"],
)


def _feed(session, inputs):
    """`inputs` in the dtypes the ONNX session lists (`children` is int64
    where the model's `keras.Input` is; ONNX Runtime does not convert)."""
    return {
        item.name: np.asarray(inputs[item.name]).astype(ONNX_DTYPES[item.type])
        for item in session.get_inputs()
    }


def batch(family, trees, seed, num_nodes=None, levels=False):
    """The model inputs of `trees`: float `node_inputs`, int32 `children`,
    `node_mask` and, with `levels`, `tree_levels`."""
    encoded = kr.trees.encode_trees(trees, num_children=2, labeled=False)
    children = encoded["children"].astype("int32")
    node_mask = encoded["node_mask"].astype("int32")
    if num_nodes is not None:
        pad = num_nodes - children.shape[1]
        children = np.pad(
            children, ((0, 0), (0, pad), (0, 0)), constant_values=-1
        )
        node_mask = np.pad(node_mask, ((0, 0), (0, pad)))
    rng = np.random.default_rng(seed)
    inputs = {
        "node_inputs": rng.standard_normal(
            children.shape[:2] + (FEATURES,)
        ).astype("float32"),
        "children": children,
        "node_mask": node_mask,
    }
    if levels:
        inputs["tree_levels"] = kr.trees.tree_levels(children, node_mask)
    return inputs


def model(family, num_nodes=None, levels=False):
    """A Tree-LSTM model on `kr.trees.tree_inputs`, fixed weights."""
    keras.utils.set_random_seed(1)
    inputs = kr.trees.tree_inputs(
        2, num_nodes=num_nodes, node_features=FEATURES, levels=levels
    )
    if family == "nary":
        layer = kr.layers.NaryTreeLSTM(UNITS, arity=2)
    else:
        layer = kr.layers.ChildSumTreeLSTM(UNITS)
    return keras.Model(inputs, layer(inputs))


def signature(inputs):
    """A fixed-shape `input_signature` of `inputs` (a dict of arrays)."""
    return [
        {
            name: keras.InputSpec(
                shape=array.shape, dtype=str(array.dtype), name=name
            )
            for name, array in inputs.items()
        }
    ]


def _compare(runs):
    """`{"max_difference", "finite", "shapes"}` over `runs`, a list of
    `(inputs, served, expected)`: the largest absolute difference, whether
    every served value is finite, and each run's input shapes."""
    return {
        "max_difference": max(
            float(np.max(np.abs(np.asarray(got, "float64") - expected)))
            for _, got, expected in runs
        ),
        "finite": all(bool(np.all(np.isfinite(got))) for _, got, _ in runs),
        "shapes": [
            {name: list(np.shape(value)) for name, value in inputs.items()}
            for inputs, _, _ in runs
        ],
    }


def onnx_open_sizes(family, directory):
    """TensorFlow: ONNX with open batch and `N`; the largest difference
    from `predict` over batches of other shapes, and the input shapes."""
    import onnxruntime

    tree_model = model(family)
    tree_model.predict(batch(family, TREES[0], 0), verbose=0)
    path = str(Path(directory) / f"{family}.onnx")
    tree_model.export(path, format="onnx", verbose=False)
    session = onnxruntime.InferenceSession(path)
    runs = []
    for seed, trees in enumerate(TREES):
        inputs = batch(family, trees, seed)
        expected = tree_model.predict(inputs, verbose=0)
        feed = _feed(session, inputs)
        runs.append((inputs, session.run(None, feed)[0], expected))
    shapes = {item.name: item.shape for item in session.get_inputs()}
    return {**_compare(runs), "inputs": shapes}


def fixed_export(family, directory, format, levels):
    """The model of fixed shapes (the first batch's), exported; returns
    `(model, inputs, path)`."""
    inputs = batch(family, TREES[0], 0, levels=levels)
    num_nodes = inputs["children"].shape[1]
    tree_model = model(family, num_nodes=num_nodes, levels=levels)
    suffix = {"onnx": "onnx", "litert": "tflite"}[format]
    path = str(Path(directory) / f"{family}_fixed.{suffix}")
    options = {}
    if format == "litert":
        import tensorflow as tf

        # LiteRT builtins only: `ai_edge_litert` has no Select TF ops.
        options["target_spec"] = {
            "supported_ops": [tf.lite.OpsSet.TFLITE_BUILTINS]
        }
    tree_model.export(
        path,
        format=format,
        verbose=False,
        input_signature=signature(inputs),
        **options,
    )
    return tree_model, inputs, path


def litert_fixed(family, directory):
    """TensorFlow: LiteRT of fixed shapes, builtin ops only."""
    from ai_edge_litert.interpreter import Interpreter

    tree_model, inputs, path = fixed_export(family, directory, "litert", False)
    runner = Interpreter(model_path=path).get_signature_runner()
    (got,) = runner(**inputs).values()
    expected = tree_model.predict(inputs, verbose=0)
    return _compare([(inputs, got, expected)])


def onnx_fixed(family, directory):
    """PyTorch: ONNX of fixed shapes (with `tree_levels`)."""
    import onnxruntime

    tree_model, inputs, path = fixed_export(family, directory, "onnx", True)
    session = onnxruntime.InferenceSession(path)
    feed = _feed(session, inputs)
    got = session.run(None, feed)[0]
    expected = tree_model.predict(inputs, verbose=0)
    # The same trees in another order, other inputs: the same shapes.
    num_nodes = inputs["children"].shape[1]
    other = batch(family, TREES[0][::-1], 5, num_nodes=num_nodes)
    other["tree_levels"] = kr.trees.pad_tree_levels(
        kr.trees.tree_levels(other["children"], other["node_mask"]),
        inputs["tree_levels"].shape[1:],
    )
    feed = _feed(session, other)
    got_other = session.run(None, feed)[0]
    expected_other = tree_model.predict(other, verbose=0)
    return _compare(
        [(inputs, got, expected), (other, got_other, expected_other)]
    )


def torch_export(family):
    """PyTorch: `torch.export` of the model (fixed shapes); the largest
    difference of the exported program from the model."""
    import torch

    inputs = batch(family, TREES[0], 0, levels=True)
    tree_model = model(
        family, num_nodes=inputs["children"].shape[1], levels=True
    )
    names = list(inputs)

    class Flat(torch.nn.Module):
        def __init__(self, wrapped):
            super().__init__()
            self.wrapped = wrapped

        def forward(self, *tensors):
            return self.wrapped(dict(zip(names, tensors)))

    args = tuple(torch.from_numpy(inputs[name]) for name in names)
    program = torch.export.export(Flat(tree_model), args)
    got = program.module()(*args).detach().cpu().numpy()
    expected = tree_model.predict(inputs, verbose=0)
    return {"max_difference": float(np.max(np.abs(got - expected)))}


def torch_open_sizes_refused(family, directory):
    """PyTorch: the default ONNX export (open sizes, TorchScript's trace)
    must refuse the tree layer rather than bake the traced sizes in."""
    tree_model = model(family, levels=True)
    tree_model.predict(batch(family, TREES[0], 0, levels=True), verbose=0)
    try:
        tree_model.export(
            str(Path(directory) / f"{family}_open.onnx"),
            format="onnx",
            verbose=False,
        )
    except ValueError as error:
        return {"refused": "input_signature" in str(error)}
    return {"refused": False}


def cases():
    """`{name: function(directory)}` of the PyTorch-only cases (the ONNX
    and LiteRT ones run in tests/runtime_export_matrix.py)."""
    found = {}
    if keras.backend.backend() == "torch":
        for family in FAMILIES:
            found[f"{family} torch.export"] = lambda d, f=family: torch_export(
                f
            )
            found[f"{family} onnx, open sizes"] = lambda d, f=family: (
                torch_open_sizes_refused(f, d)
            )
    return found


def main(directory):
    report = {"backend": keras.backend.backend(), "cases": {}}
    for name, case in cases().items():
        try:
            report["cases"][name] = case(directory)
        except Exception as error:  # noqa: BLE001 - reported, not raised
            report["cases"][name] = {
                "error": f"{type(error).__name__}: {str(error)[-1500:]}"
            }
    print(json.dumps(report))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp())
