"""`.keras` files saved by earlier code keep loading, with the same outputs.

`fixtures/make_family_fixtures.py` wrote one small model per family (LSTM
variants and gated feedback, both Tree-LSTMs, GatedGraph with its
readouts) with random weights, and the model's output on fixed inputs,
before the tree layers became `TreeRNN` over public cells and `GatedGraph`
called an update cell.
"""

import pathlib

import keras
import numpy as np
import pytest

import keras_recurrent  # noqa: F401  (registers the classes)

FIXTURES = pathlib.Path(__file__).parent / "fixtures"
FAMILIES = ["sequences", "child_sum_tree_lstm", "nary_tree_lstm", "gated_graph"]


@pytest.mark.parametrize("family", FAMILIES)
def test_saved_family_loads_with_same_outputs(family):
    model = keras.saving.load_model(FIXTURES / f"family_{family}.keras")
    arrays = dict(np.load(FIXTURES / f"family_{family}_io.npz"))
    expected = arrays.pop("y")
    inputs = arrays["sequences"] if family == "sequences" else arrays
    outputs = model.predict(inputs, verbose=0)
    np.testing.assert_allclose(outputs, expected, rtol=1e-5, atol=1e-6)
