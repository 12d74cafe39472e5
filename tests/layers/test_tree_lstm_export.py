import keras
import numpy as np

import keras_recurrent as kr
import keras_recurrent.testing
from tests.layers import tree_lstm_cases as cases
from tests.layers import tree_reference as reference


def test_saved_model_serves_both_tree_lstms(tmp_path):
    # One model with both layers, so that one export (and one serving
    # process) covers them.
    inputs = reference.encode(
        cases.mirrored_trees(), 2, cases.FEATURES, binarize="right"
    )
    # A served model takes no schedule (TensorFlow without XLA reads none).
    model_inputs = kr.trees.tree_inputs(
        2, node_features=cases.FEATURES, levels=False
    )
    trees = list(model_inputs.values())
    child_sum = kr.layers.ChildSumTreeLSTM(4, name="child_sum")(trees)
    nodes = kr.layers.NaryTreeLSTM(3, return_nodes=True, name="nary")(trees)
    model = keras.Model(
        model_inputs,
        {
            "score": keras.layers.Dense(1, name="score")(child_sum),
            "nodes": keras.layers.Identity(name="nodes")(nodes),
        },
    )
    feeds = dict(zip(kr.trees.TREE_TENSOR_NAMES, inputs, strict=True))
    served = keras_recurrent.testing.assert_export_roundtrip(
        model, feeds, tmp_path=tmp_path
    )
    assert served["score"].shape == (16, 1)
    assert served["nodes"].shape == (16, inputs[2].shape[1], 3)
    assert np.all(served["nodes"][inputs[2] == 0] == 0.0)
