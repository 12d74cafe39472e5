"""`kr.migrate.load_legacy_model` against models saved by tf.keras 2 and
TensorFlow Addons (tests/migrate/fixtures, made by make_fixtures.py), on
the TensorFlow backend; tests/migrate/test_backends.py runs the same cases
on JAX and PyTorch."""

import json
import shutil

import h5py
import keras
import numpy as np
import pytest

import keras_recurrent as kr
from tests.migrate.legacy_cases import FIXTURES
from tests.migrate.legacy_cases import MODEL_CASES
from tests.migrate.legacy_cases import TFA_CASES
from tests.migrate.legacy_cases import expected_outputs
from tests.migrate.legacy_cases import max_difference
from tests.migrate.legacy_cases import run_case


@pytest.mark.parametrize("case", MODEL_CASES)
def test_model_matches_the_original(case):
    assert run_case(case) < 1e-5


@pytest.mark.parametrize("case", sorted(TFA_CASES))
def test_addons_model_matches_the_original(case):
    if not hasattr(kr.layers, TFA_CASES[case]):
        pytest.skip(f"kr.layers.{TFA_CASES[case]} is not on this branch")
    assert run_case(case) < 1e-5


@pytest.mark.parametrize(
    "case, layer",
    [("tfa_nas", "NAS"), ("tfa_peephole_lstm", "PeepholeLSTM")],
)
def test_rnn_over_an_addons_cell_becomes_its_layer(case, layer):
    if not hasattr(kr.layers, layer):
        pytest.skip(f"kr.layers.{layer} is not on this branch")
    model = kr.migrate.load_legacy_model(FIXTURES / f"{case}.h5")
    rnn = model.layers[2]
    assert type(rnn) is getattr(kr.layers, layer)
    assert rnn.return_sequences
    assert type(rnn.cell) is getattr(kr.layers, f"{layer}Cell")


def test_masked_steps_change_nothing():
    # Rows 0 and 1 of the fixture's input are zero (masked) after steps 3
    # and 1: the original skipped them, so an unmasked port differs.
    model = kr.migrate.load_legacy_model(FIXTURES / "lstm_sequential.h5")
    x, (expected,) = expected_outputs("lstm_sequential")
    unmasked = keras.Sequential(model.layers[1:])
    unmasked.build(x.shape)
    difference = np.abs(keras.ops.convert_to_numpy(unmasked(x)) - expected)
    assert difference[:2].max() > 1e-3
    assert difference[2].max() < 1e-5


def test_layers_and_weights_are_keras_3s():
    model = kr.migrate.load_legacy_model(FIXTURES / "bidirectional.h5")
    forward = model.get_layer("bidirectional").forward_layer
    assert type(forward) is keras.layers.LSTM
    gru = model.get_layer("bidirectional_1").forward_layer
    assert gru.cell.reset_after is False
    with h5py.File(FIXTURES / "bidirectional.h5") as f:
        group = f["model_weights"]["bidirectional"]
        names = [str(n) for n in group.attrs["weight_names"]]
        # bidirectional/backward_lstm_<n>/lstm_cell/kernel:0
        (name,) = [n for n in names if "backward" in n and "/kernel" in n]
        kernel = np.asarray(group[name])
    backward = model.get_layer("bidirectional").backward_layer
    np.testing.assert_array_equal(
        keras.ops.convert_to_numpy(backward.cell.kernel), kernel
    )


def test_saved_as_keras_file_loads_back(tmp_path):
    model = kr.migrate.load_legacy_model(FIXTURES / "rnn_cells.h5")
    model.save(tmp_path / "model.keras")
    reloaded = keras.saving.load_model(tmp_path / "model.keras")
    assert max_difference(reloaded, "rnn_cells") < 1e-5


def test_compiled_predict_matches_the_original():
    model = kr.migrate.load_legacy_model(FIXTURES / "gru_masked.h5")
    model.compile(jit_compile=True)
    x, expected = expected_outputs("gru_masked")
    outputs = model.predict(x, verbose=0)
    for y, e in zip(outputs, expected):
        np.testing.assert_allclose(y, e, atol=1e-5)


def _edited_copy(tmp_path, case, edit):
    """A copy of a fixture whose model config `edit` rewrote."""
    path = tmp_path / f"{case}.h5"
    shutil.copy(FIXTURES / f"{case}.h5", path)
    with h5py.File(path, "r+") as f:
        config = json.loads(f.attrs["model_config"])
        edit(config)
        f.attrs["model_config"] = json.dumps(config)
    return path


def _rename_dense(config):
    for entry in config["config"]["layers"]:
        if entry["class_name"] == "Dense":
            entry["class_name"] = "Custom>MyDense"


def test_sequential_without_input_layer_gets_one(tmp_path):
    # Older tf.keras 2 wrote no InputLayer in a Sequential model's config,
    # only the first layer's `batch_input_shape`.
    def drop_input_layer(config):
        layers = config["config"]["layers"]
        assert layers[0]["class_name"] == "InputLayer"
        del layers[0]

    path = _edited_copy(tmp_path, "sequential_input_shape", drop_input_layer)
    model = kr.migrate.load_legacy_model(path)
    assert model.built
    assert max_difference(model, "sequential_input_shape") < 1e-5


def test_unknown_class_error_names_it_and_custom_objects(tmp_path):
    path = _edited_copy(tmp_path, "gru_functional", _rename_dense)
    with pytest.raises(ValueError) as error:
        kr.migrate.load_legacy_model(path)
    message = str(error.value)
    assert "'Custom>MyDense'" in message
    assert "custom_objects={'Custom>MyDense': MyLayer}" in message


def test_custom_objects_replace_unknown_classes(tmp_path):
    path = _edited_copy(tmp_path, "gru_functional", _rename_dense)
    model = kr.migrate.load_legacy_model(
        path, custom_objects={"Custom>MyDense": keras.layers.Dense}
    )
    assert max_difference(model, "gru_functional") < 1e-5


def test_addons_class_without_replacement_names_it(tmp_path):
    def rename_cell(config):
        cell = config["config"]["layers"][2]["config"]["cell"]
        cell["registered_name"] = "Addons>NoSuchCell"

    path = _edited_copy(tmp_path, "tfa_peephole_lstm", rename_cell)
    with pytest.raises(ValueError, match=r"'Addons>NoSuchCell'.*custom_obj"):
        kr.migrate.load_legacy_model(path)


def test_time_major_true_is_refused(tmp_path):
    def time_major(config):
        config["config"]["layers"][2]["config"]["time_major"] = True

    path = _edited_copy(tmp_path, "gru_masked", time_major)
    with pytest.raises(ValueError, match=r"'gru.*time_major=True"):
        kr.migrate.load_legacy_model(path)


def test_weights_only_file_is_refused_with_the_way_out():
    with pytest.raises(ValueError, match="load_legacy_weights"):
        kr.migrate.load_legacy_model(FIXTURES / "weights.h5")


def test_not_hdf5_is_refused(tmp_path):
    path = tmp_path / "model.h5"
    path.write_text("not HDF5")
    with pytest.raises(ValueError, match="not an HDF5 file"):
        kr.migrate.load_legacy_model(path)
