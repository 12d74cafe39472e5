"""NaN or inf at masked steps reaches neither the outputs nor the weights.

A masked step's output is selected away with `where`, but the gradient of
the discarded branch is 0 * NaN = NaN: Keras' own LSTM ends one `fit` step
with NaN weights and a finite loss. Ours zero the inputs at masked steps
before the time loop, so the step equals the one with zeros there.
"""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import keras
import numpy as np
import pytest

import keras_recurrent as kr
from tests.layers import nan_mask_cases

ROOT = Path(__file__).resolve().parents[2]
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
    result = subprocess.run(
        [sys.executable, "-m", "tests.layers.nan_mask_cases", *ISSUE_CASES],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={
            **os.environ,
            "KERAS_BACKEND": backend,
            "PYTHONPATH": str(ROOT),
            "TF_CPP_MIN_LOG_LEVEL": "3",
        },
        timeout=900,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["backend"] == backend
    upstream = {k: v for k, v in report["cases"].items() if "keras." in k}
    ours = {k: v for k, v in report["cases"].items() if k not in upstream}
    assert len(ours) == 2 * (len(ISSUE_CASES) - 1)
    assert set(ours.values()) == {"equal"}, ours
    assert all("weights not finite" in v for v in upstream.values()), upstream
