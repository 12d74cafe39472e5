"""Our Addons cells give TensorFlow Addons' own numbers (fixtures made with
TFA 0.23, `fixtures/tfa/make_fixtures.py`), from TFA's config unchanged
and TFA's weights in TFA's order. JAX and PyTorch: `tests/backend_matrix.py`.
"""

import keras
import pytest

from tests.layers import tfa_fixtures


@pytest.mark.parametrize("as_layer", [False, True], ids=["cell", "layer"])
@pytest.mark.parametrize("name", sorted(tfa_fixtures.CASES))
def test_equals_tensorflow_addons(name, as_layer):
    if name.startswith("nas") and not as_layer:
        if keras.backend.backend() == "jax":
            pytest.skip("Keras' JAX loop outputs the first state when masked")
    assert tfa_fixtures.fixture_difference(name, as_layer) < 1e-5


@pytest.mark.parametrize("name", sorted(tfa_fixtures.CASES))
def test_weights_have_tfa_names_in_tfa_order(name):
    layer, arrays = tfa_fixtures.build(name, as_layer=False)
    # TFA: "rnn_3/layer_norm_lstm_cell/kernel_norm/gamma:0"; ours:
    # ".../cell_name/kernel_norm/gamma".
    theirs = [
        "/".join(n.removesuffix(":0").split("/")[2:])
        for n in arrays["weight_names"]
    ]
    ours = ["/".join(w.path.split("/")[2:]) for w in layer.weights]
    assert ours == theirs
    assert [tuple(w.shape) for w in layer.weights] == [
        w.shape for w in arrays["weights"]
    ]
    # TFA's reservoir is not trained.
    trainable = not name.startswith("esn")
    assert [w.trainable for w in layer.weights] == [trainable] * len(ours)


@pytest.mark.parametrize("name", sorted(tfa_fixtures.CASES))
def test_tfa_config_keys_are_ours(name):
    """Every key of TFA's config is an argument here, with TFA's value
    (Keras 2's `implementation` aside), and the config round-trips."""
    layer, arrays = tfa_fixtures.build(name, as_layer=False)
    cell = layer if name == "esn" else layer.cell
    theirs = arrays["config"]
    ours = cell.get_config()
    skipped = {"implementation", "name", "dtype", "time_major"}
    for key, value in theirs.items():
        if key in skipped:
            continue
        assert key in ours, key
        if isinstance(value, (bool, int, float, str)) or value is None:
            mine = ours[key]
            if isinstance(mine, dict):  # an initializer given by name
                mine = keras.initializers.get(mine).__class__.__name__
                value = keras.initializers.get(value).__class__.__name__
            assert mine == value, (key, mine, value)
    assert type(cell).from_config(ours).get_config() == ours
