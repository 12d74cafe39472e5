"""Index values at or above 2**31, on the current Keras backend.

    KERAS_BACKEND=jax python -m tests.layers.wide_index_cases

prints one JSON line: for each case, the error class and message a layer
call on NumPy int64 indices raised, or "silent" when it returned numbers.
`tests/layers/test_wide_indices.py` runs it on JAX and PyTorch, where
Keras converts the NumPy arrays before the layer's `call` runs.
"""

import json

import keras
import numpy as np

import keras_recurrent as kr

WIDE = 2**32 + 1  # 1 after a cast to int32.


def tree_case():
    trees = kr.trees.encode_trees(["(1 2 3)"])
    children = trees["children"].astype("int64")
    # The root's second child, node 1, written so that it wraps into 1.
    children[0, 2, 1] = WIDE
    node_inputs = np.ones(children.shape[:2] + (4,), "float32")
    layer = kr.layers.ChildSumTreeLSTM(3)
    return layer([node_inputs, children, trees["node_mask"]])


def graph_case():
    graphs = kr.graphs.encode_graphs([{"edges": [(0, 1), (1, 2)]}])
    edges = graphs["edges"].astype("int64")
    edges[0, 0, 1] = WIDE
    layer = kr.layers.GatedGraph(4, num_edge_types=1, propagation_steps=2)
    return layer(
        [
            graphs["node_inputs"],
            edges,
            graphs["edge_types"],
            graphs["node_mask"],
        ]
    )


def tree_model():
    """A model on `kr.trees.tree_inputs(2)` and its data, with an int64
    child `WIDE` (Keras narrowed an int32 input's data to node 1)."""
    inputs = kr.trees.tree_inputs(2)
    tensors = dict(inputs)
    tensors["node_inputs"] = keras.layers.Embedding(10, 4)(
        tensors.pop("node_tokens")
    )
    root = kr.layers.NaryTreeLSTM(3, arity=2)(tensors)
    data = dict(kr.trees.encode_trees(["(1 2 3)", "(4 5 6)"]))
    data["children"] = data["children"].astype("int64")
    data["children"][0, 2, 1] = WIDE
    return keras.Model(inputs, root), data


def graph_model():
    """A model on `kr.graphs.graph_inputs(4)` and its data, with an int64
    edge target `WIDE`."""
    inputs = kr.graphs.graph_inputs(4)
    states = kr.layers.GatedGraph(4, num_edge_types=1, propagation_steps=2)(
        inputs
    )
    graphs = [
        {"edges": [(0, 1), (1, 2)], "node_inputs": np.ones((3, 4))},
        {"edges": [(1, 0)], "node_inputs": np.ones((2, 4))},
    ]
    data = dict(kr.graphs.encode_graphs(graphs))
    data["edges"] = data["edges"].astype("int64")
    data["edges"][0, 0, 1] = WIDE
    return keras.Model(inputs, states), data


def model_case(make, path, jit_compile):
    """`predict` or `fit` of `make()`'s model on its wide data: "nan" when
    it returned NaN, "silent" when it returned numbers."""
    model, data = make()
    model.compile("sgd", "mse", jit_compile=jit_compile)
    if path == "predict":
        outputs = model.predict(data, verbose=0)
    else:
        # (batch, units) roots, (batch, N, units) node states.
        shape = [len(data["node_mask"]), *model.output_shape[1:]]
        if len(shape) == 3:
            shape[1] = data["node_mask"].shape[1]
        target = np.zeros(shape, "float32")
        outputs = model.fit(data, target, verbose=0).history["loss"]
    return "nan" if np.isnan(outputs).any() else "silent"


def main():
    backend = keras.backend.backend()
    report = {"backend": backend, "cases": {}}
    cases = {"tree": tree_case, "graph": graph_case}
    for name, make in (("tree", tree_model), ("graph", graph_model)):
        for path in ("predict", "fit"):
            for jit_compile in (False, True):
                if jit_compile and path == "fit" and backend == "torch":
                    continue  # torch.compile of a train step: minutes.
                cases[f"{name} {path} jit={jit_compile}"] = (
                    lambda m=make, p=path, j=jit_compile: model_case(m, p, j)
                )
    for name, case in cases.items():
        try:
            report["cases"][name] = case() or "silent"
        except ValueError as error:
            report["cases"][name] = f"ValueError: {error}"
    print(json.dumps(report))


if __name__ == "__main__":
    main()
