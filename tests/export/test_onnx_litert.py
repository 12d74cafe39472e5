"""Every family through Keras' own `model.export` to ONNX Runtime and LiteRT.

`tests/runtime_export_matrix.py` exports each case on one backend and runs
the file in `onnxruntime` or `ai_edge_litert` (see its docstring for the
signatures each exporter allows), every family, the Tree-LSTMs included;
here every output must be finite and equal `predict` to 1e-5. The GG-NN
through ONNX from TensorFlow runs in the default suite: tf2onnx once
turned its outputs into NaN, silently.
"""

import json

import keras
import numpy as np
import pytest

import keras_recurrent as kr
from tests import export_matrix
from tests._subprocess import run_backend_module
from tests._subprocess import skip_unless_installed
from tests.layers import graph_reference
from tests.runtime_export_matrix import CASES
from tests.runtime_export_matrix import SEQUENCE_CASES
from tests.runtime_export_matrix import TREE_CASES
from tests.runtime_export_matrix import OnnxRunner
from tests.runtime_export_matrix import _predict

ATOL = 1e-5
FEATURES = export_matrix.FEATURES


def _small_graph_model():
    """A GG-NN of one step and a `GraphReadout`: the layers whose NaN fill
    of invalid graphs tf2onnx spread to every output."""
    inputs = kr.graphs.graph_inputs(FEATURES)
    states = kr.layers.GatedGraph(4, 2, propagation_steps=1)(inputs)
    graph = kr.layers.GraphReadout(3, name="graph")(
        [states, inputs["node_inputs"], inputs["node_mask"]]
    )
    model = export_matrix._set_weights(keras.Model(inputs, graph), 7)
    graphs = graph_reference.random_graphs(12)
    return model, {name: graphs[name] for name in model._inputs_struct}


def test_gated_graph_onnx_from_tensorflow_is_not_nan(tmp_path):
    """Open sizes: finite and equal to `predict`, even with NaN in the
    padding; an invalid graph gets NaN in its own row only. (The whole
    family is in the slow matrix below.)"""
    pytest.importorskip("onnxruntime")
    pytest.importorskip("tf2onnx")
    if keras.backend.backend() != "tensorflow":
        pytest.skip("ONNX from TensorFlow")
    model, feeds = _small_graph_model()
    expected = _predict(model, feeds)["output_0"]
    model.export(str(tmp_path / "graph.onnx"), format="onnx", verbose=False)
    runner = OnnxRunner(tmp_path / "graph.onnx")
    [served] = runner(feeds).values()
    assert np.all(np.isfinite(served))
    np.testing.assert_allclose(served, expected, atol=ATOL)
    # Any batch size.
    [served] = runner({k: v[:1] for k, v in feeds.items()}).values()
    np.testing.assert_allclose(served, expected[:1], atol=ATOL)

    # NaN in the padding rows of `node_inputs`: ignored, as in Keras.
    padded = {name: value.copy() for name, value in feeds.items()}
    padded["node_inputs"][padded["node_mask"] == 0] = np.nan
    [served] = runner(padded).values()
    np.testing.assert_allclose(served, expected, atol=ATOL)

    # An edge to node 99 of 6: no assertion runs in ONNX, so graph 1 is
    # poisoned, and only graph 1.
    bad = {name: value.copy() for name, value in feeds.items()}
    bad["edges"][1, 0] = [0, 99]
    [served] = runner(bad).values()
    assert np.isnan(served[1]).all()
    np.testing.assert_allclose(served[[0, 2]], expected[[0, 2]], atol=ATOL)


@pytest.mark.slow
@pytest.mark.parametrize(
    "backend, fmt",
    [("tensorflow", "onnx"), ("torch", "onnx"), ("tensorflow", "litert")],
)
def test_every_family_runs_in_runtime(backend, fmt):
    skip_unless_installed(backend)
    skip_unless_installed("onnxruntime" if fmt == "onnx" else "ai_edge_litert")
    report = run_backend_module(
        "tests.runtime_export_matrix", backend, fmt, timeout=1800
    )
    assert (report["backend"], report["format"]) == (backend, fmt)
    cases = report["cases"]
    failed = {k: v for k, v in cases.items() if isinstance(v, str)}
    assert not failed, failed
    assert sorted(cases) == sorted(CASES)
    print(json.dumps({k: v["max difference"] for k, v in cases.items()}))
    for name, result in cases.items():
        assert result["finite"], name
        assert result["max difference"] <= ATOL, (name, result)
    # The open sizes were run at two sizes each.
    for name in SEQUENCE_CASES:
        shapes = {tuple(feeds["frames"]) for feeds in cases[name]["shapes"]}
        assert len(shapes) >= 2, (name, shapes)
    if (backend, fmt) == ("tensorflow", "onnx"):
        # The trees with open batch and `N`: other shapes than the model's.
        for name in TREE_CASES:
            shapes = cases[name]["shapes"]
            assert len({tuple(f["children"]) for f in shapes}) >= 2, shapes
