"""The tree and graph checks under `torch.export` (run by tests/test_rules.py
with `KERAS_BACKEND=torch`; prints a JSON report as its last line).

While PyTorch exports, the inputs are fake tensors (no values to check
eagerly) and an open size is a `SymInt`, which cannot be a set member: the
checks must compare sizes with `!=` and leave values to the traced flags.
Each case is exported with static shapes and with `Dim.AUTO` sizes, and
reports the largest difference from the Keras model, or the error.
"""

import json

import keras
import numpy as np
import torch

import keras_recurrent as kr
from keras_recurrent.layers._tree_checks import check_tree_dtypes
from keras_recurrent.layers._tree_checks import check_tree_input_shapes
from keras_recurrent.layers._tree_checks import children_as_int32


class TreeChecks(keras.layers.Layer):
    """The checks `ChildSumTreeLSTM` runs on its inputs before its loop
    (whose ops `torch.export` cannot trace yet), then the int32 children."""

    def call(self, inputs):
        node_inputs, children, node_mask = inputs
        check_tree_dtypes(self, node_inputs, children, node_mask)
        shapes = [node_inputs.shape, children.shape, node_mask.shape]
        check_tree_input_shapes(self, shapes)
        return children_as_int32(self, children, node_mask)[0]


def tree_case():
    trees = kr.trees.encode_trees(["(1 2 (3 3 4))", "(1 1 2)"])
    children = trees["children"].astype("int32")
    node_mask = trees["node_mask"].astype("int32")
    node_inputs = np.ones(children.shape[:2] + (4,), "float32")
    return TreeChecks(), [node_inputs, children, node_mask]


def graph_case():
    graphs = kr.graphs.encode_graphs(
        [{"edges": [(0, 1), (1, 2)]}, {"edges": [(0, 1)]}]
    )
    rng = np.random.default_rng(0)
    node_inputs = rng.random(graphs["node_mask"].shape + (4,), "float32")
    layer = kr.layers.GatedGraph(4, num_edge_types=1, propagation_steps=2)
    names = ("edges", "edge_types", "node_mask")
    return layer, [node_inputs, *(graphs[n].astype("int32") for n in names)]


def exported_difference(layer, arrays, dynamic):
    inputs = [
        keras.Input(array.shape[1:], dtype=str(array.dtype)) for array in arrays
    ]
    model = keras.Model(inputs, layer(inputs))
    args = ([torch.from_numpy(array) for array in arrays],)
    shapes = (([{0: torch.export.Dim.AUTO}] * len(arrays),),)
    program = torch.export.export(
        model, args, dynamic_shapes=shapes if dynamic else None
    )
    expected = keras.ops.convert_to_numpy(model(*args))
    got = program.module()(*args).detach().cpu().numpy()
    return float(np.max(np.abs(got.astype("float64") - expected)))


def main():
    report = {"backend": keras.backend.backend(), "cases": {}}
    for name, case in (("tree checks", tree_case), ("graph", graph_case)):
        for dynamic in (False, True):
            key = f"{name}, {'Dim.AUTO' if dynamic else 'static'} sizes"
            try:
                report["cases"][key] = exported_difference(*case(), dynamic)
            except Exception as error:  # noqa: BLE001 - reported, not raised
                report["cases"][key] = f"{type(error).__name__}: {error}"
    print(json.dumps(report))


if __name__ == "__main__":
    main()
