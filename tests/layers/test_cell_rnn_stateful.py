"""A stateful layer fed another batch size says so on every path."""

import keras
import numpy as np
import pytest

import keras_recurrent as kr

LAYERS = {
    "PeepholeLSTM": lambda: kr.layers.PeepholeLSTM(4, stateful=True),
    "GatedFeedbackRNN": lambda: kr.layers.GatedFeedbackRNN(
        [4, 4], stateful=True
    ),
}


def _model(name, jit_compile=False):
    inputs = keras.Input((5, 3), batch_size=3)
    model = keras.Model(inputs, LAYERS[name]()(inputs))
    model.compile(jit_compile=jit_compile)
    return model


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_known_batch_size_raises_naming_layer_and_sizes(name):
    model = _model(name)
    with pytest.raises(
        ValueError, match="stateful with batch size 3.*batch of 2"
    ):
        model(np.ones((2, 5, 3), "float32"))


@pytest.mark.skipif(
    keras.backend.backend() != "tensorflow", reason="traced TF assertion"
)
@pytest.mark.parametrize("name", sorted(LAYERS))
@pytest.mark.parametrize("samples", [5, 7])  # last batch of 2, of 1
def test_partial_last_batch_in_predict_raises(name, samples):
    # Was "Incompatible shapes: [3,4] vs. [2,4]", and for a last batch of 1
    # a silent broadcast against the states: 9 predictions for 7 samples.
    model = _model(name)
    x = np.ones((samples, 5, 3), "float32")
    with pytest.raises(Exception, match="stateful with batch size 3"):
        model.predict(x, batch_size=3, verbose=0)


@pytest.mark.skipif(
    keras.backend.backend() != "tensorflow", reason="jit_compile on TF"
)
def test_partial_last_batch_under_xla_raises_on_the_shape():
    model = _model("PeepholeLSTM", jit_compile=True)
    x = np.ones((7, 5, 3), "float32")
    with pytest.raises(Exception, match=r"expected shape \[3,5,3\]"):
        model.predict(x, batch_size=3, verbose=0)
