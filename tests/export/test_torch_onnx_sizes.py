"""Open sizes in Keras' ONNX export on PyTorch (issue 44): TorchScript's
trace would bake a sequence loop's one traced step, or a graph's traced
sizes, into the file; the layers refuse it with a `ValueError` (cases in
tests/export/torch_onnx_sizes_cases.py)."""

import keras
import pytest

from keras_recurrent.layers import _concrete
from keras_recurrent.layers import _sequence_checks
from tests._subprocess import run_backend_module
from tests._subprocess import skip_unless_installed

ATOL = 1e-5

# The layer each refusal must name.
REFUSED_BY = {
    "PeepholeLSTM open T": "PeepholeLSTM",
    'LSTMVariant("NP") open T': "LSTMVariant",
    "ResidualStack(keras.layers.LSTM) open T": "ResidualStack",
    "Bidirectional(GatedFeedbackRNN) open T": "GatedFeedbackRNN",
    "GatedGraph open sizes": "GatedGraph",
}


class _Layer:
    name = "peephole"


_Layer.__name__ = "PeepholeLSTM"


@pytest.mark.parametrize(
    "steps, built_steps, refused",
    [(1, None, True), (1, 7, True), (1, 1, False), (6, None, False)],
)
def test_traced_open_steps_rule(monkeypatch, steps, built_steps, refused):
    # What the layers do under TorchScript's trace (faked here, on any
    # backend): a traced `T` of 1 is Keras' stand-in for an open `T`,
    # unless the layer was built for one step.
    monkeypatch.setattr(_concrete, "torchscript_tracing", lambda: True)
    monkeypatch.setattr(_sequence_checks, "torchscript_tracing", lambda: True)
    sequences = keras.ops.ones((1, steps, 3))
    refuse = _sequence_checks.refuse_traced_open_steps
    if not refused:
        refuse(_Layer(), sequences, built_steps)
        return
    with pytest.raises(ValueError) as info:
        refuse(_Layer(), sequences, built_steps)
    message = str(info.value)
    assert message.startswith("PeepholeLSTM 'peephole': TorchScript's trace")
    assert "shape=(None, 50, 3)" in message
    assert "inputs.shape=(1, 1, 3)" in message


def test_no_refusal_outside_the_trace():
    sequences = keras.ops.ones((1, 1, 3))
    _sequence_checks.refuse_traced_open_steps(_Layer(), sequences, None)


@pytest.mark.slow
def test_torch_onnx_open_sizes_refused_fixed_sizes_served():
    skip_unless_installed("torch")
    skip_unless_installed("onnxruntime")
    report = run_backend_module(
        "tests.export.torch_onnx_sizes_cases", "torch", timeout=1200
    )
    assert report["backend"] == "torch"
    cases = report["cases"]
    assert len(cases) == 12, sorted(cases)
    assert set(REFUSED_BY) < set(cases), sorted(cases)
    for name, result in cases.items():
        if name in REFUSED_BY:
            # Before: exported, then wrong (0.35 for LSTMVariant("NP") at
            # T=5), or a `Split` failure in ONNX Runtime, or (graphs) an
            # unsupported `take_along_dim`.
            message = result.get("refused")
            assert isinstance(message, str), (name, result)
            assert f"{REFUSED_BY[name]} '" in message, (name, message)
            assert "input_signature" in message, message
            assert "TensorFlow keeps" in message, message
        else:
            assert result.get("max difference", 1.0) <= ATOL, (name, result)
            assert len(result["shapes"]) >= 1, (name, result)
