"""The cell layers' configs and saved files, as before their cell arguments
became explicit parameters.

`fixtures/` holds what `fixtures/make_cell_layer_fixtures.py` wrote on commit
daec109: the `get_config()` of `PeepholeLSTM`, `CoupledLSTM`, `LSTMVariant`
and `GatedFeedbackRNN` for several argument sets, and a `.keras` file of a
model of the four layers with an input and the model's output.
"""

import json
import os
import pathlib
import subprocess
import sys

import keras
import numpy as np
import pytest

import keras_recurrent as kr

FIXTURES = pathlib.Path(__file__).parent / "fixtures"
RECORDS = json.loads((FIXTURES / "cell_layer_configs.json").read_text())


# Issue 27 renamed the default `cell_type="tanh"` of `GatedFeedbackRNN` to
# `"simple"`: the configs written since say `"simple"`.
RENAMED = {("GatedFeedbackRNN", "cell_type", "tanh"): "simple"}


def _as_json(config):
    return json.loads(json.dumps(config))


def _renamed(layer, config):
    return {
        key: RENAMED.get((layer, key, value), value)
        if isinstance(value, str)
        else value
        for key, value in config.items()
    }


@pytest.mark.parametrize(
    "record",
    RECORDS,
    ids=[f"{r['layer']}-{i}" for i, r in enumerate(RECORDS)],
)
def test_config_unchanged(record):
    layer_class = getattr(kr.layers, record["layer"])
    layer = layer_class(**record["kwargs"])
    config = _as_json(layer.get_config())
    expected = _renamed(record["layer"], record["config"])
    if "name" not in record["kwargs"]:  # A generated, process-wide name.
        config.pop("name")
        expected.pop("name")
    assert config == expected
    restored = layer_class.from_config(layer.get_config())
    assert _as_json(restored.get_config()) == _as_json(layer.get_config())
    # A config written before the rename still loads, to the same layer.
    old = layer_class.from_config(record["config"])
    assert _as_json(old.get_config()) == _as_json(layer.get_config()) | (
        {"name": old.name} if "name" not in record["kwargs"] else {}
    )


def test_keras_file_saved_before_loads():
    model = keras.saving.load_model(FIXTURES / "cell_layers.keras")
    arrays = np.load(FIXTURES / "cell_layers_io.npz")
    np.testing.assert_allclose(
        model.predict(arrays["x"], verbose=0), arrays["y"], atol=1e-6
    )
    kinds = [type(layer).__name__ for layer in model.layers[1:]]
    assert kinds == [
        "PeepholeLSTM",
        "CoupledLSTM",
        "LSTMVariant",
        "GatedFeedbackRNN",
    ]
    peephole = model.layers[1]
    assert (peephole.cell_clip, peephole.projection_units) == (2.0, 3)
    assert model.layers[3].variant == "FGR"
    assert model.layers[4].cell_type == "lstm"


def test_loading_without_the_package_fails_as_documented():
    # What docs/api/layers.md and the package docstring tell users: Keras
    # does not import the package, and its error names the class and the
    # registered name `keras_recurrent>...`. The NumPy backend keeps the
    # subprocess from importing TensorFlow.
    script = (
        "import sys, keras\n"
        "try:\n"
        "    keras.saving.load_model('cell_layers.keras')\n"
        "except TypeError as error:\n"
        "    print(error)\n"
        "print('imported:', 'keras_recurrent' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        env={**os.environ, "KERAS_BACKEND": "numpy"},
        cwd=FIXTURES,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "Could not locate class 'PeepholeLSTM'" in result.stdout
    assert "'registered_name': 'keras_recurrent>PeepholeLSTM'" in result.stdout
    assert result.stdout.rstrip().endswith("imported: False")
