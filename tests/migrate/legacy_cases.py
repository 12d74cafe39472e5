"""The `kr.migrate` fixtures against the original's outputs, on one backend.

    KERAS_BACKEND=jax python -m tests.migrate.legacy_cases \
        --without-tensorflow [CASE ...]

prints one JSON line: the backend, whether TensorFlow was imported, and
for each case the largest absolute difference between the Keras 3 model
and the outputs tf.keras 2 (or TensorFlow Addons) computed when it saved
the fixture, or the error it raised; all the cases this checkout can run,
or those named. `--without-tensorflow` makes
`import tensorflow` fail, to show that reading the files needs only h5py.
`tests/migrate/test_backends.py` runs it on JAX and PyTorch; the TensorFlow
tests call `run_case` in their own process.
"""

import json
import sys
from pathlib import Path

import numpy as np

FIXTURES = Path(__file__).resolve().parent / "fixtures"

# Full models saved by tf.keras 2 (`model.save("NAME.h5")`).
MODEL_CASES = (
    "lstm_sequential",
    "gru_functional",
    "gru_masked",
    "simple_rnn_embedding",
    "rnn_cells",
    "bidirectional",
    "nested",
    "sequential_input_shape",
)

# Full models with TensorFlow Addons layers, by the keras_recurrent class
# each needs.
TFA_CASES = {
    "tfa_layer_norm_lstm": "LayerNormLSTMCell",
    "tfa_layer_norm_simple_rnn": "LayerNormSimpleRNNCell",
    "tfa_nas": "NASCell",
    "tfa_esn_cell": "ESNCell",
    "tfa_esn": "ESN",
    "tfa_peephole_lstm": "PeepholeLSTMCell",
}

# Weights-only files of the model `weights_model` builds.
WEIGHTS_CASES = ("weights.h5", "weights.weights.h5")

# TFA's LayerNormLSTMCell weights in the `.weights.h5` layout, where its
# layer norms are sublayers (`layers/rnn/cell/kernel_norm/vars`, ...),
# into `tfa_model`.
TFA_WEIGHTS_CASE = "tfa_layer_norm_lstm.weights.h5"


def expected_outputs(name):
    """The fixture's input and the original's outputs."""
    data = np.load(FIXTURES / f"{name}.npz")
    outputs = [data[f"y{i}"] for i in range(len(data.files) - 1)]
    return data["x"], outputs


def max_difference(model, name):
    """Largest |model(x) - original(x)| over the fixture's outputs."""
    import keras

    x, expected = expected_outputs(name)
    outputs = model(x)
    if not isinstance(outputs, (list, tuple)):
        outputs = [outputs]
    assert len(outputs) == len(expected), (len(outputs), len(expected))
    return max(
        float(np.abs(keras.ops.convert_to_numpy(y) - e).max())
        for y, e in zip(outputs, expected)
    )


def weights_model():
    """The Keras 3 architecture of the weights-only fixtures."""
    import keras
    from keras import layers

    x = layers.Input((5, 4))
    m = layers.Masking(0.0)(x)
    h = layers.Bidirectional(layers.LSTM(3, return_sequences=True))(m)
    h = layers.RNN([layers.GRUCell(3), layers.LSTMCell(2)])(h)
    h = layers.Dense(3, activation="relu")(h)
    return keras.Model(x, layers.Dense(2)(h))


def tfa_model():
    """Keras 3 with keras_recurrent: the model of `tfa_layer_norm_lstm`."""
    import keras
    from keras import layers

    from keras_recurrent.layers import LayerNormLSTMCell

    x = layers.Input((5, 4))
    m = layers.Masking(0.0)(x)
    h = layers.RNN(LayerNormLSTMCell(3), return_sequences=True)(m)
    return keras.Model(x, layers.Dense(2)(h))


def available_cases():
    """The cases this checkout can run (TFA cases need their class)."""
    from keras_recurrent import layers

    tfa = [n for n, cls in TFA_CASES.items() if hasattr(layers, cls)]
    if hasattr(layers, "LayerNormLSTMCell"):
        tfa.append(TFA_WEIGHTS_CASE)
    return list(MODEL_CASES) + tfa + list(WEIGHTS_CASES)


def run_case(case):
    """The largest difference of one case from the original's outputs."""
    import keras_recurrent as kr

    if case == TFA_WEIGHTS_CASE:
        model = kr.migrate.load_legacy_weights(tfa_model(), FIXTURES / case)
        return max_difference(model, "tfa_layer_norm_lstm")
    if case in WEIGHTS_CASES:
        model = kr.migrate.load_legacy_weights(weights_model(), FIXTURES / case)
        return max_difference(model, "weights")
    return max_difference(
        kr.migrate.load_legacy_model(FIXTURES / f"{case}.h5"), case
    )


def main(argv):
    if "--without-tensorflow" in argv:
        # `import tensorflow` then raises ImportError, and
        # `importlib.util.find_spec("tensorflow")` returns None, as where
        # TensorFlow (and so TensorFlow Datasets) is not installed.
        sys.modules["tensorflow"] = None
        sys.modules["tensorflow_datasets"] = None
    import keras

    report = {"backend": keras.backend.backend(), "cases": {}}
    cases = [arg for arg in argv if not arg.startswith("--")]
    for case in cases or available_cases():
        try:
            report["cases"][case] = run_case(case)
        except Exception as error:  # reported, not raised: one JSON line
            report["cases"][case] = f"{type(error).__name__}: {error}"
    report["tensorflow_imported"] = sys.modules.get("tensorflow") is not None
    print(json.dumps(report))


if __name__ == "__main__":
    main(sys.argv[1:])
