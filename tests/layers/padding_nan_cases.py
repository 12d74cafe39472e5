"""NaN and inf in the padding nodes of trees and graphs, on one backend.

    KERAS_BACKEND=jax python -m tests.layers.padding_nan_cases [jit]

prints one JSON line: the backend, and for each case what `predict` and
one `fit` step gave with NaN (and with inf) in every float input of the
padding nodes (`node_mask` 0), against the same with zeros there:
`"equal"` when the outputs, the loss and every weight after the step came
out finite and bit-identical, else a short description. With `jit`, the
models are compiled with `jit_compile=True` (XLA on TensorFlow).
`tests/layers/test_nan_masks.py` runs it once per backend. It needs only
Keras, NumPy and the package.
"""

import json
import os
import sys
import traceback

import keras
import numpy as np

import keras_recurrent as kr
from tests.layers.nan_mask_cases import compare_to_zero_run

FEATURES, UNITS = 3, 4
TREES = ["(1 2 3)", "(4 (5 6) 7 (8 9))", "(1 (2 (3 4)))", "5"]


def _tree_data(arity):
    trees = kr.trees.encode_trees(
        TREES, binarize="left" if arity == 2 else None, num_children=arity
    )
    # Two padding nodes more than the largest tree, so every tree has some.
    children = np.pad(
        trees["children"],
        [(0, 0), (0, 2), (0, 0)],
        "constant",
        constant_values=-1,
    )
    node_mask = np.pad(trees["node_mask"], [(0, 0), (0, 2)])
    rng = np.random.default_rng(0)
    node_inputs = rng.normal(size=(*node_mask.shape, FEATURES))
    return {
        "node_inputs": node_inputs.astype("float32"),
        "children": children,
        "node_mask": node_mask,
        "tree_levels": kr.trees.tree_levels(children, node_mask),
    }


def _graph_data():
    rng = np.random.default_rng(1)
    graphs = []
    for num_nodes in (3, 4, 5):
        edges = [
            (
                int(rng.integers(num_nodes)),
                int(rng.integers(num_nodes)),
                int(rng.integers(2)),
            )
            for _ in range(num_nodes + 1)
        ]
        graphs.append(
            {
                "edges": edges,
                "node_inputs": rng.normal(size=(num_nodes, FEATURES)),
            }
        )
    arrays = kr.graphs.encode_graphs(
        graphs, num_nodes=7, num_edges=8, num_edge_types=2
    )
    arrays["node_inputs"] = arrays["node_inputs"].astype("float32")
    return arrays


def _inputs(arrays):
    return {
        name: keras.Input(array.shape[1:], dtype=str(array.dtype), name=name)
        for name, array in arrays.items()
    }


def _tree_case(layer_class, arity, levels, return_nodes=False, empty=False):
    def build():
        arrays = _tree_data(arity)
        if empty:
            # The last tree has no real node at all: NaN in every slot.
            arrays["node_mask"][-1] = 0
            arrays["children"][-1] = -1
            arrays["tree_levels"] = kr.trees.tree_levels(
                arrays["children"], arrays["node_mask"]
            )
        if not levels:
            del arrays["tree_levels"]
        inputs = _inputs(arrays)
        options = (
            {"arity": arity} if layer_class is kr.layers.NaryTreeLSTM else {}
        )
        outputs = layer_class(UNITS, return_nodes=return_nodes, **options)(
            list(inputs.values())
        )
        if return_nodes:
            outputs = keras.layers.Flatten()(outputs)
        outputs = keras.layers.Dense(1, name="head")(outputs)
        target = np.linspace(-1, 1, len(TREES)).reshape(-1, 1)
        return arrays, keras.Model(inputs, outputs), "mse", target

    return build


def _gated_graph_case(aggregation, empty=False):
    def build():
        arrays = _graph_data()
        if empty:
            # The last graph has no real node and no edge.
            arrays["node_mask"][-1] = 0
            arrays["edges"][-1] = -1
            arrays["edge_types"][-1] = 0
        inputs = _inputs(arrays)
        states = kr.layers.GatedGraph(
            UNITS, 2, propagation_steps=2, aggregation=aggregation
        )(inputs)
        outputs = keras.layers.Dense(1, name="head")(
            keras.layers.Flatten()(states)
        )
        target = np.array([[0.5], [-0.5], [1.0]])
        return arrays, keras.Model(inputs, outputs), "mse", target

    return build


def _ggsnn_case(task):
    def build():
        arrays = _graph_data()
        inputs = _inputs(arrays)
        options = {"num_classes": 3} if task != "node_selection" else {}
        outputs = kr.layers.GGSNN(
            UNITS,
            2,
            output_steps=2,
            propagation_steps=2,
            task=task,
            **options,
        )(inputs)
        target = np.array([[0, 1], [2, 3], [4, 0]])
        if task != "node_selection":
            target = target % 3
        loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        return arrays, keras.Model(inputs, outputs), loss, target

    return build


def _readout_case(layer_class):
    def build():
        arrays = _graph_data()
        rng = np.random.default_rng(2)
        arrays = {
            "node_states": rng.normal(
                size=(*arrays["node_mask"].shape, UNITS)
            ).astype("float32"),
            "node_inputs": arrays["node_inputs"],
            "node_mask": arrays["node_mask"],
        }
        inputs = _inputs(arrays)
        # The states straight from an input: through a `Dense`, NaN there
        # would make the `Dense`'s kernel gradient NaN (x * 0 at padding
        # rows), which no later layer can undo. A `GatedGraph` gives zeros
        # at padding.
        states = inputs["node_states"]
        outputs = layer_class(3)(
            [states, inputs["node_inputs"], inputs["node_mask"]]
        )
        if layer_class is kr.layers.GraphReadout:
            target = np.array([[0.5], [-0.5], [1.0]])
            outputs = keras.layers.Dense(1, name="head")(outputs)
            return arrays, keras.Model(inputs, outputs), "mse", target
        loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        return arrays, keras.Model(inputs, outputs), loss, np.array([2, 0, 4])

    return build


CASES = {
    "ChildSumTreeLSTM": _tree_case(kr.layers.ChildSumTreeLSTM, 3, False),
    "ChildSumTreeLSTM-levels-nodes": _tree_case(
        kr.layers.ChildSumTreeLSTM, 3, True, return_nodes=True
    ),
    "NaryTreeLSTM": _tree_case(kr.layers.NaryTreeLSTM, 2, False),
    "NaryTreeLSTM-levels-nodes": _tree_case(
        kr.layers.NaryTreeLSTM, 2, True, return_nodes=True
    ),
    "GatedGraph-sparse": _gated_graph_case("sparse"),
    "GatedGraph-dense": _gated_graph_case("dense"),
    "ChildSumTreeLSTM-empty-tree": _tree_case(
        kr.layers.ChildSumTreeLSTM, 3, True, empty=True
    ),
    "NaryTreeLSTM-empty-tree-nodes": _tree_case(
        kr.layers.NaryTreeLSTM, 2, False, return_nodes=True, empty=True
    ),
    "GatedGraph-dense-empty-graph": _gated_graph_case("dense", empty=True),
    "GatedGraph-sparse-empty-graph": _gated_graph_case("sparse", empty=True),
    "GGSNN-node_selection": _ggsnn_case("node_selection"),
    "GGSNN-graph_classification": _ggsnn_case("graph_classification"),
    "GraphReadout": _readout_case(kr.layers.GraphReadout),
    "NodeSelection": _readout_case(kr.layers.NodeSelection),
}


def _with(arrays, value):
    """`arrays` with `value` in every float input of the padding nodes."""
    padding = np.asarray(arrays["node_mask"]) == 0
    result = dict(arrays)
    for name in ("node_inputs", "node_states"):
        if name in arrays:
            array = np.array(arrays[name])
            array[padding] = value
            result[name] = array
    return result


def compare(build, values, jit_compile=False):
    """`predict` and one `fit` step with each of `values` in the padding
    nodes against the same with zeros there, from the same weights: for
    each value, `"equal"` or what differed."""
    keras.utils.set_random_seed(1)
    arrays, model, loss, target = build()
    model.compile(
        optimizer=keras.optimizers.SGD(0.1), loss=loss, jit_compile=jit_compile
    )
    initial = model.get_weights()
    batch_size = len(target)

    def run(value):
        model.set_weights(initial)
        data = _with(arrays, value)
        outputs = model.predict(data, batch_size=batch_size, verbose=0)
        history = model.fit(
            data,
            target,
            batch_size=batch_size,
            epochs=1,
            shuffle=False,
            verbose=0,
        )
        return outputs, history.history["loss"][0], model.get_weights()

    outputs_zero, loss_zero, zero = run(0.0)
    if not np.isfinite(outputs_zero).all() or not all(
        np.isfinite(w).all() for w in zero
    ):
        return dict.fromkeys(values, "not finite even with zeros there")
    report = {}
    for value in values:
        outputs, loss, weights = run(value)
        if not np.isfinite(outputs).all():
            report[value] = "outputs not finite"
        elif not np.array_equal(outputs, outputs_zero):
            away = np.abs(outputs - outputs_zero).max()
            report[value] = f"outputs {away:.3g} away from the zero run"
        else:
            report[value] = compare_to_zero_run(loss, weights, loss_zero, zero)
    return report


def run(cases, jit_compile=False, values=(float("nan"), float("inf"))):
    report = {}
    for name, build in cases.items():
        try:
            results = compare(build, values, jit_compile=jit_compile)
        except Exception:  # noqa: BLE001 - reported, not hidden
            results = dict.fromkeys(values, traceback.format_exc(limit=-3))
        for value, result in results.items():
            report[f"{name}/{value}"] = result
    return report


if __name__ == "__main__":
    arguments = sys.argv[1:]
    jit_compile = "jit" in arguments
    selected = [name for name in arguments if name != "jit"] or list(CASES)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    report = run({name: CASES[name] for name in selected}, jit_compile)
    print(json.dumps({"backend": keras.backend.backend(), "cases": report}))
