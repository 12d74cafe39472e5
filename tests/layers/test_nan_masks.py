"""NaN or inf at masked steps reaches neither the outputs nor the weights.

The same holds for the padding nodes of trees and graphs (`node_mask` 0):
`tests/layers/padding_nan_cases.py`, here on TensorFlow (eager and XLA)
and in a process of its own per backend.

A masked step's output is selected away with `where`, but the gradient of
the discarded branch is 0 * NaN = NaN: Keras' own LSTM ends one `fit` step
with NaN weights and a finite loss. Ours zero the inputs at masked steps
before the time loop, so the step equals the one with zeros there.
"""

import importlib.util

import keras
import numpy as np
import pytest

import keras_recurrent as kr
from tests._subprocess import run_backend_module
from tests._subprocess import skip_unless_installed
from tests.layers import nan_mask_cases
from tests.layers import padding_nan_cases

NAN, INF = float("nan"), float("inf")
# The layers the issue names, and Keras' LSTM for the upstream behaviour.
ISSUE_CASES = [
    "PeepholeLSTM",
    "CoupledLSTM",
    "LSTMVariant-projection",
    "GatedFeedbackRNN-gru",
    "ResidualStack",
    "keras.layers.LSTM",
]


@pytest.mark.parametrize("name", sorted(nan_mask_cases.LAYERS))
def test_fit_step_with_nan_at_masked_steps_equals_zeros_there(name):
    report = nan_mask_cases.compare(nan_mask_cases.LAYERS[name], [NAN, INF])
    assert report == {NAN: "equal", INF: "equal"}


@pytest.mark.parametrize(
    "name", ["PeepholeLSTM", "TruncatedRNN-LSTM", "SequencePooling-attention"]
)
def test_fully_masked_row_of_nan(name):
    mask = nan_mask_cases._mask()
    mask[1, :] = False
    report = nan_mask_cases.compare(
        nan_mask_cases.LAYERS[name], [NAN], mask=mask
    )
    assert report == {NAN: "equal"}


@pytest.mark.skipif(
    keras.backend.backend() != "tensorflow", reason="jit_compile on TF"
)
@pytest.mark.parametrize(
    "name", ["PeepholeLSTM", "GatedFeedbackRNN-lstm-backwards", "ResidualStack"]
)
def test_fit_step_with_nan_at_masked_steps_under_xla(name):
    report = nan_mask_cases.compare(
        nan_mask_cases.LAYERS[name], [NAN], jit_compile=True
    )
    assert report == {NAN: "equal"}


def test_keras_lstm_turns_nan_at_masked_steps_into_nan_weights():
    """Upstream behaviour, which ours must not share: if Keras fixes it,
    this test fails and can go."""
    report = nan_mask_cases.compare(
        nan_mask_cases.UPSTREAM["keras.layers.LSTM"], [NAN]
    )
    assert "weights not finite" in report[NAN]


def test_unmasked_outputs_are_bit_identical():
    x, _ = nan_mask_cases._data()
    mask = nan_mask_cases._mask()
    for make_layer in (
        lambda: kr.layers.PeepholeLSTM(4, return_sequences=True),
        lambda: kr.layers.GatedFeedbackRNN([4, 3], return_sequences=True),
    ):
        layer = make_layer()
        clean = keras.ops.convert_to_numpy(layer(x, mask=mask))
        nan = nan_mask_cases._with(x, mask, np.nan)
        dirty = keras.ops.convert_to_numpy(layer(nan, mask=mask))
        assert np.isfinite(dirty).all()
        np.testing.assert_array_equal(dirty[mask], clean[mask])


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["jax", "tensorflow", "torch"])
def test_every_backend(backend):
    if importlib.util.find_spec(backend) is None:
        pytest.skip(f"{backend} is not installed")
    report = run_backend_module(
        "tests.layers.nan_mask_cases", backend, *ISSUE_CASES, timeout=900
    )
    assert report["backend"] == backend
    upstream = {k: v for k, v in report["cases"].items() if "keras." in k}
    ours = {k: v for k, v in report["cases"].items() if k not in upstream}
    assert len(ours) == 2 * (len(ISSUE_CASES) - 1)
    assert set(ours.values()) == {"equal"}, ours
    assert all("weights not finite" in v for v in upstream.values()), upstream


# Padding nodes of trees and graphs (`node_mask` 0).


@pytest.mark.parametrize(
    "name",
    [
        "ChildSumTreeLSTM",
        "NaryTreeLSTM-levels-nodes",
        "GatedGraph-dense",
        "GraphReadout",
        "NodeSelection",
    ],
)
def test_nan_in_padding_nodes_reaches_no_output_or_weight(name):
    report = padding_nan_cases.compare(
        padding_nan_cases.CASES[name], [NAN, INF]
    )
    assert report == {NAN: "equal", INF: "equal"}


@pytest.mark.slow
@pytest.mark.parametrize(
    "backend, jit",
    [
        ("tensorflow", False),
        ("tensorflow", True),
        ("jax", False),
        ("torch", False),
    ],
)
def test_nan_in_padding_nodes_on_every_backend(backend, jit):
    skip_unless_installed(backend)
    arguments = ["jit"] if jit else []
    report = run_backend_module(
        "tests.layers.padding_nan_cases", backend, *arguments, timeout=1500
    )
    assert report["backend"] == backend
    cases = report["cases"]
    assert len(cases) == 2 * len(padding_nan_cases.CASES)
    wrong = {k: v for k, v in cases.items() if v != "equal"}
    assert not wrong, wrong
