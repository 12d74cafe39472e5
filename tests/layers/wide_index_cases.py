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


def main():
    report = {"backend": keras.backend.backend(), "cases": {}}
    for name, case in (("tree", tree_case), ("graph", graph_case)):
        try:
            case()
            report["cases"][name] = "silent"
        except ValueError as error:
            report["cases"][name] = f"ValueError: {error}"
    print(json.dumps(report))


if __name__ == "__main__":
    main()
