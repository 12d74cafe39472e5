"""Layer outputs on fixed inputs and weights, for comparing Keras backends.

`run_cases()` uses only Keras, NumPy and `keras_recurrent`, so it gives the
same numbers under every backend that runs the layers; `tests/test_import.py`
runs it under PyTorch without TensorFlow and compares with TensorFlow.
"""

import keras
import numpy as np

import keras_recurrent as kr


def _set_weights(layer, seed):
    rng = np.random.default_rng(seed)
    layer.set_weights(
        [
            rng.uniform(-0.5, 0.5, w.shape).astype("float32")
            for w in layer.get_weights()
        ]
    )


def _run(layer, inputs, seed):
    layer(inputs)
    _set_weights(layer, seed)
    return keras.ops.convert_to_numpy(layer(inputs))


def run_cases():
    """Outputs of one layer of each family, as a dict of NumPy arrays."""
    rng = np.random.default_rng(0)
    x = rng.random((2, 5, 3), dtype="float32")
    outputs = {
        "peephole": _run(kr.layers.PeepholeLSTM(4), x, 1),
        "coupled": _run(kr.layers.CoupledLSTM(4), x, 2),
        "gf_gru": _run(
            kr.layers.GatedFeedbackRNN(4, num_layers=2, cell_type="gru"), x, 3
        ),
        "gf_lstm": _run(
            kr.layers.GatedFeedbackRNN([4, 3], cell_type="lstm"), x, 4
        ),
    }

    trees = kr.trees.encode_trees(
        [kr.trees.parse_tree("(a (b c) d)"), kr.trees.parse_tree("(a b)")],
        vocabulary={"a": 1, "b": 2, "c": 3, "d": 4},
        binarize="left",
        num_children=2,
    )
    node_inputs = rng.random(trees["node_tokens"].shape + (3,), "float32")
    tree_inputs = [node_inputs, trees["children"], trees["node_mask"]]
    outputs["nary"] = _run(kr.layers.NaryTreeLSTM(4, arity=2), tree_inputs, 5)
    outputs["child_sum"] = _run(kr.layers.ChildSumTreeLSTM(4), tree_inputs, 6)

    graphs = kr.graphs.encode_graphs(
        [
            kr.graphs.encode_graph(
                [(0, 1), (1, 2), (2, 0)],
                num_nodes=3,
                edge_types=[0, 1, 1],
                num_edge_types=2,
            ),
            kr.graphs.encode_graph([(0, 1)], num_nodes=2, num_edge_types=2),
        ],
        num_edge_types=2,
    )
    graph_inputs = [graphs[name] for name in kr.graphs.GRAPH_TENSOR_NAMES]
    outputs["gated_graph"] = _run(
        kr.layers.GatedGraph(4, num_edge_types=2, propagation_steps=3),
        graph_inputs,
        7,
    )
    return outputs
