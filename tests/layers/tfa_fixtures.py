"""Our Addons cells against TensorFlow Addons' own outputs.

The fixtures (`fixtures/tfa/*.npz`, made by `fixtures/tfa/make_fixtures.py`
with TFA 0.23) hold a TFA cell's config, its weights in TFA's order and its
outputs and final states on fixed inputs, plain and with a mask and initial
states. `fixture_difference` builds ours from that config unchanged
(`from_config`), loads the weights as they are (`set_weights`) and returns
the largest difference. It needs only Keras, NumPy and the package, so
`tests/backend_matrix.py` runs it on every backend.
"""

import json
import pathlib

import keras
import numpy as np

import keras_recurrent as kr

FIXTURES = pathlib.Path(__file__).parent / "fixtures" / "tfa"

# Fixture -> (our cell class, our layer class).
CASES = {
    "peephole_lstm_cell": (kr.layers.PeepholeLSTMCell, kr.layers.PeepholeLSTM),
    "layer_norm_lstm_cell": (
        kr.layers.LayerNormLSTMCell,
        kr.layers.LayerNormLSTM,
    ),
    "layer_norm_lstm_cell_no_bias": (
        kr.layers.LayerNormLSTMCell,
        kr.layers.LayerNormLSTM,
    ),
    "layer_norm_simple_rnn_cell": (
        kr.layers.LayerNormSimpleRNNCell,
        kr.layers.LayerNormSimpleRNN,
    ),
    "nas_cell": (kr.layers.NASCell, kr.layers.NAS),
    "nas_cell_projection": (kr.layers.NASCell, kr.layers.NAS),
    "esn_cell": (kr.layers.ESNCell, kr.layers.ESN),
    "esn": (None, kr.layers.ESN),
}


def load(name):
    """The fixture's arrays, with `"config"` parsed and `"weights"` listed."""
    with np.load(FIXTURES / f"{name}.npz") as data:
        arrays = dict(data)
    arrays["config"] = json.loads(str(arrays["config"]))
    count = len(arrays["weight_names"])
    arrays["weights"] = [arrays.pop(f"weight_{i}") for i in range(count)]
    return arrays


def _states(arrays, prefix):
    return [
        arrays[f"{prefix}{index}"]
        for index in range(10)
        if f"{prefix}{index}" in arrays
    ]


def build(name, as_layer):
    """Ours, from the fixture's TFA config, with its weights set.

    `as_layer=False`: `keras.layers.RNN` over our cell (the cell's `call`);
    `as_layer=True`: our sequence layer (its loop over the cell's `step`),
    made from the cell's config (the TFA `ESN` layer's for `"esn"`).
    """
    arrays = load(name)
    cell_class, layer_class = CASES[name]
    config = arrays["config"]
    options = {"return_sequences": True, "return_state": True}
    if cell_class is None:
        layer = layer_class.from_config(config)
    elif as_layer:
        cell = cell_class.from_config(config)
        cell_config = {
            key: value
            for key, value in cell.get_config().items()
            if key not in ("name", "trainable", "dtype")
        }
        layer = layer_class(**cell_config, **options)
    else:
        layer = keras.layers.RNN(cell_class.from_config(config), **options)
    layer.build((None, None, arrays["inputs"].shape[-1]))
    layer.set_weights(arrays["weights"])
    return layer, arrays


def fixture_difference(name, as_layer=False):
    """The largest absolute difference between ours and TFA's outputs and
    final states, plain and masked (with TFA's initial states)."""
    layer, arrays = build(name, as_layer)
    plain = layer(arrays["inputs"])
    masked = layer(
        arrays["inputs"],
        mask=arrays["mask"],
        initial_state=_states(arrays, "initial_state_"),
    )
    expected = [arrays["outputs"], *_states(arrays, "state_")]
    expected += [arrays["masked_outputs"], *_states(arrays, "masked_state_")]
    got = [*plain, *masked]
    if len(got) != len(expected):
        raise AssertionError(f"{len(got)} outputs, TFA has {len(expected)}")
    return max(
        float(np.abs(keras.ops.convert_to_numpy(a) - b).max())
        for a, b in zip(got, expected)
    )
