"""`kr.migrate.tf1_rnn` against checkpoints and outputs made by TF1.

The fixtures (tests/migrate/fixtures/tf1, made by `make_fixtures.py` with
`tf.compat.v1` in graph mode) hold a checkpoint of random weights and TF1's
`dynamic_rnn` outputs for each kind of cell. Reading a checkpoint needs
TensorFlow, so the whole module needs it, on every backend.
"""

import shutil
import sys

import keras
import numpy as np
import pytest

import keras_recurrent as kr
from keras_recurrent.migrate._tf1_projection_clip import ProjectionClipLSTMCell
from tests._subprocess import run_backend_module
from tests._subprocess import skip_unless_installed
from tests.migrate import tf1_cases
from tests.migrate.tf1_cases import FIXTURES
from tests.migrate.tf1_cases import NAMES
from tests.migrate.tf1_cases import build
from tests.migrate.tf1_cases import sequence_mask

tf = pytest.importorskip("tensorflow")

TOLERANCE = 1e-5

# What each fixture's network becomes: the layer class, and the classes of
# the cells in it (forward direction first).
EXPECTED_LAYERS = {
    "basic_rnn": (keras.layers.SimpleRNN, [keras.layers.SimpleRNNCell]),
    "gru": (keras.layers.GRU, [keras.layers.GRUCell]),
    "basic_lstm": (keras.layers.LSTM, [keras.layers.LSTMCell]),
    "lstm_custom_scope": (keras.layers.LSTM, [keras.layers.LSTMCell]),
    "lstm_peephole_projection": (keras.layers.RNN, [ProjectionClipLSTMCell]),
    "lstm_clip_projection": (
        kr.layers.LSTMVariant,
        [kr.layers.LSTMVariantCell],
    ),
    "multi": (
        keras.layers.RNN,
        [
            kr.layers.PeepholeLSTMCell,
            keras.layers.GRUCell,
            keras.layers.SimpleRNNCell,
        ],
    ),
    "bidirectional": (
        keras.layers.Bidirectional,
        [kr.layers.PeepholeLSTMCell, kr.layers.PeepholeLSTMCell],
    ),
    "bidirectional_multi": (
        keras.layers.Bidirectional,
        [keras.layers.GRUCell] * 4,
    ),
}


def keras_cells(layer):
    directions = (
        [layer.forward_layer, layer.backward_layer]
        if isinstance(layer, keras.layers.Bidirectional)
        else [layer]
    )
    return [
        cell
        for direction in directions
        for cell in getattr(direction.cell, "cells", [direction.cell])
    ]


def test_every_fixture_is_covered():
    assert sorted(EXPECTED_LAYERS) == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_equals_tf1_dynamic_rnn(name):
    # Every step, zeros past each length included, and the last valid
    # output, within 1e-5 of TF1's.
    layer, fixture = build(name, return_sequences=True)
    layer_class, cell_classes = EXPECTED_LAYERS[name]
    assert type(layer) is layer_class
    assert [type(cell) for cell in keras_cells(layer)] == cell_classes
    mask = sequence_mask(fixture)
    outputs = keras.ops.convert_to_numpy(layer(fixture["x"], mask=mask))
    np.testing.assert_allclose(outputs, fixture["outputs"], atol=TOLERANCE)
    assert np.all(outputs[~mask] == 0.0)

    last, _ = build(name)
    final = keras.ops.convert_to_numpy(last(fixture["x"], mask=mask))
    np.testing.assert_allclose(final, fixture["final"], atol=TOLERANCE)


@pytest.mark.parametrize(
    "name",
    ["multi", pytest.param("bidirectional_multi", marks=pytest.mark.slow)],
)
def test_compiled_with_a_masking_layer(name):
    # `jit_compile=True`, and the mask made by `Masking` from zero padding.
    difference = tf1_cases.run_case(name, "compiled")
    assert difference < TOLERANCE


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_other_backends(backend):
    skip_unless_installed(backend)
    report = run_backend_module("tests.migrate.tf1_cases", backend)
    assert report["backend"] == backend
    expected = [f"{name}/{kind}" for name, kind in tf1_cases.cases(backend)]
    assert sorted(report["cases"]) == sorted(expected)
    wrong = {
        case: difference
        for case, difference in report["cases"].items()
        if isinstance(difference, str) or not difference < TOLERANCE
    }
    assert not wrong, wrong


def read_checkpoint(name):
    reader = tf.train.load_checkpoint(str(FIXTURES / f"{name}.ckpt"))
    return {
        variable: reader.get_tensor(variable)
        for variable in reader.get_variable_to_shape_map()
    }


def test_forget_bias_is_folded_into_the_forget_block():
    # The fixture's cell had forget_bias=0.5: TF1 added it at each step,
    # the Keras bias holds it in the forget block [units:2 units].
    layer, fixture = build("lstm_peephole_projection")
    assert float(fixture["forget_bias"]) == 0.5
    saved = read_checkpoint("lstm_peephole_projection")["rnn/lstm_cell/bias"]
    b_i, b_j, b_f, b_o = np.split(saved, 4)
    bias = keras.ops.convert_to_numpy(layer.cell.bias)
    np.testing.assert_allclose(
        bias, np.concatenate([b_i, b_f + 0.5, b_j, b_o]), rtol=0, atol=1e-7
    )

    # TF1's default of 1.0 instead of the 0.5 the model had: other numbers.
    wrong, _ = build("lstm_peephole_projection", forget_bias=1.0)
    mask = sequence_mask(fixture)
    outputs = keras.ops.convert_to_numpy(wrong(fixture["x"], mask=mask))
    assert np.max(np.abs(outputs - fixture["final"])) > 1e-2


def test_forget_bias_leaves_gru_and_simple_rnn_cells_alone():
    for name in ("gru", "basic_rnn"):
        layer, fixture = build(name, forget_bias=3.0)
        outputs = layer(fixture["x"], mask=sequence_mask(fixture))
        np.testing.assert_allclose(
            keras.ops.convert_to_numpy(outputs),
            fixture["final"],
            atol=TOLERANCE,
        )


def test_cell_clip_and_proj_clip_are_needed_and_kept():
    # Without the clips the fixture set, TF1's numbers are not reproduced;
    # with them, the cells carry them.
    layer, fixture = build("lstm_peephole_projection")
    assert layer.cell.cell_clip == 0.6 and layer.cell.proj_clip == 0.3
    assert layer.cell.use_peepholes and layer.cell.projection_units == 3
    mask = sequence_mask(fixture)
    for overrides in ({"cell_clip": None}, {"proj_clip": None}):
        unclipped, _ = build("lstm_peephole_projection", **overrides)
        outputs = keras.ops.convert_to_numpy(unclipped(fixture["x"], mask=mask))
        assert np.max(np.abs(outputs - fixture["final"])) > 1e-3, overrides


def test_gru_weights_in_keras_order():
    # TF1's gates [r, u] over [x, h] and candidate over [x, r h] become
    # Keras' [z, r, h] blocks, z being TF1's u.
    layer, _ = build("gru")
    saved = read_checkpoint("gru")
    reset, update = np.split(saved["rnn/gru_cell/gates/kernel"], 2, axis=1)
    candidate = saved["rnn/gru_cell/candidate/kernel"]
    input_dim = 3
    kernel = np.concatenate([update, reset, candidate], axis=1)
    np.testing.assert_array_equal(
        keras.ops.convert_to_numpy(layer.cell.kernel), kernel[:input_dim]
    )
    np.testing.assert_array_equal(
        keras.ops.convert_to_numpy(layer.cell.recurrent_kernel),
        kernel[input_dim:],
    )
    assert layer.cell.reset_after is False


def test_one_cell_of_a_stack_by_its_scope():
    # A scope below the network: the middle cell of the MultiRNNCell.
    scope = "rnn/multi_rnn_cell/cell_1/gru_cell"
    layer = kr.migrate.tf1_rnn(str(FIXTURES / "multi.ckpt"), scope)
    assert isinstance(layer, keras.layers.GRU)
    assert tuple(layer.cell.kernel.shape) == (3, 12)
    saved = read_checkpoint("multi")[scope + "/candidate/bias"]
    np.testing.assert_array_equal(
        keras.ops.convert_to_numpy(layer.cell.bias)[8:], saved
    )


def test_saved_as_keras_file_and_loaded(tmp_path):
    for name in ("lstm_peephole_projection", "bidirectional_multi"):
        layer, fixture = build(name, return_sequences=True)
        inputs = keras.Input((None, fixture["x"].shape[-1]))
        model = keras.Model(inputs, layer(keras.layers.Masking(0.0)(inputs)))
        path = tmp_path / f"{name}.keras"
        model.save(path)
        loaded = keras.saving.load_model(path)
        mask = sequence_mask(fixture)
        padded = np.where(mask[..., None], fixture["x"], 0.0)
        np.testing.assert_allclose(
            loaded.predict(padded, verbose=0),
            fixture["outputs"],
            atol=TOLERANCE,
        )


def test_a_directory_gives_its_latest_checkpoint(tmp_path):
    # A directory with TF's `checkpoint` state file, as `Saver.save` leaves.
    for path in FIXTURES.glob("gru.ckpt.*"):
        shutil.copy(path, tmp_path / path.name)
    (tmp_path / "checkpoint").write_text('model_checkpoint_path: "gru.ckpt"\n')
    layer = kr.migrate.tf1_rnn(str(tmp_path), "rnn")
    fixture, _ = tf1_cases.load_fixture("gru")
    outputs = layer(fixture["x"], mask=sequence_mask(fixture))
    np.testing.assert_allclose(
        keras.ops.convert_to_numpy(outputs), fixture["final"], atol=TOLERANCE
    )


def test_a_scope_without_cells_lists_what_the_checkpoint_holds():
    checkpoint = str(FIXTURES / "multi.ckpt")
    with pytest.raises(ValueError) as error:
        kr.migrate.tf1_rnn(checkpoint, "decoder")
    message = str(error.value)
    assert "none under 'decoder'" in message
    assert "Received: scope='decoder'" in message
    # The cells found elsewhere, then the variables with their shapes,
    # sorted and cut after 30 of the checkpoint's 45.
    assert "'rnn/multi_rnn_cell/cell_1/gru_cell'" in message
    assert "holds 45 variables" in message
    assert "beta1_power []" in message
    assert "dense/kernel [3, 2]" in message
    assert "... and 15 more" in message
    assert "rnn/multi_rnn_cell/cell_2/basic_rnn_cell/kernel" not in message


def test_a_scope_with_several_networks():
    # The root scope of `multi` also holds the dense layer on top, which
    # has a kernel and a bias like a BasicRNNCell.
    with pytest.raises(ValueError, match="must name one recurrent network"):
        kr.migrate.tf1_rnn(str(FIXTURES / "multi.ckpt"), "/")


def test_optimizer_slots_are_left_out():
    # `multi` was saved with Adam's slots (`kernel/Adam`, ...), a global
    # step and a dense layer: the stack holds the cells' weights alone, as
    # many numbers as the cells' variables in the checkpoint.
    layer, _ = build("multi")
    saved = read_checkpoint("multi")
    cell_sizes = [
        value.size
        for variable, value in saved.items()
        if variable.startswith("rnn/") and "Adam" not in variable
    ]
    assert len(cell_sizes) == 12
    assert layer.count_params() == sum(cell_sizes)


def test_bad_arguments():
    checkpoint = str(FIXTURES / "gru.ckpt")
    with pytest.raises(ValueError, match="Received: forget_bias='1'"):
        kr.migrate.tf1_rnn(checkpoint, "rnn", forget_bias="1")
    with pytest.raises(ValueError, match="Received: cell_clip=-1"):
        kr.migrate.tf1_rnn(checkpoint, "rnn", cell_clip=-1)
    with pytest.raises(ValueError, match="Received: return_sequences=1"):
        kr.migrate.tf1_rnn(checkpoint, "rnn", return_sequences=1)
    with pytest.raises(ValueError, match="Received: scope=''"):
        kr.migrate.tf1_rnn(checkpoint, "")
    missing = str(FIXTURES / "no_such.ckpt")
    with pytest.raises(ValueError, match="must be a TF1 checkpoint"):
        kr.migrate.tf1_rnn(missing, "rnn")


def test_needs_tensorflow_to_read(monkeypatch):
    monkeypatch.setitem(sys.modules, "tensorflow", None)
    with pytest.raises(ImportError, match="pip install tensorflow"):
        kr.migrate.tf1_rnn(str(FIXTURES / "gru.ckpt"), "rnn")
