"""The Keras and TensorFlow internals of `keras_recurrent._compat`.

Each test checks that one internal still behaves as the package relies on,
and fails with a message naming it. `test_versions_were_checked` pins the
versions they were checked with: a new Keras or TensorFlow fails it until
someone has run this file against it and added the version to
`_compat.CHECKED_WITH`.
"""

import inspect

import keras
import numpy as np
import pytest
import tensorflow as tf

from keras_recurrent import _compat


def _major_minor(version):
    return ".".join(version.split(".")[:2])


@pytest.mark.parametrize(
    "package, version",
    [("keras", keras.__version__), ("tensorflow", tf.__version__)],
)
def test_versions_were_checked(package, version):
    checked = _compat.CHECKED_WITH[package]
    assert _major_minor(version) in checked, (
        f"keras_recurrent._compat (rnn_inner_loop, fused_lstm, cudnn_ok, "
        f"KERAS_DROPOUT_CELL, in_xla_context, set_initial_epoch, "
        f"BACKUP_AND_RESTORE_HOOKS) was "
        f"checked with {package} {', '.join(checked)}, not {version}: run "
        "tests/test_compat.py and, if it passes, add the version to "
        "CHECKED_WITH."
    )


def _simple_rnn(x, mask=None, **options):
    """`keras.layers.RNN(SimpleRNNCell)` and the same cell stepped by
    `rnn_inner_loop`, each `(last_output, outputs)` as NumPy arrays."""
    cell = keras.layers.SimpleRNNCell(3, seed=1)
    layer = keras.layers.RNN(cell, return_sequences=True, **options)
    expected = keras.ops.convert_to_numpy(layer(x, mask=mask))
    initial = [keras.ops.zeros((x.shape[0], 3))]

    def step(inputs, states):
        return cell(inputs, states)

    last, outputs, _ = _compat.rnn_inner_loop(
        step,
        keras.ops.convert_to_tensor(x),
        initial,
        None if mask is None else keras.ops.convert_to_tensor(mask),
        go_backwards=options.get("go_backwards", False),
        unroll=False,
        stateful=False,
        zero_output_for_mask=options.get("zero_output_for_mask", False),
        return_sequences=True,
    )
    return expected, keras.ops.convert_to_numpy(outputs), last


@pytest.mark.parametrize(
    "options",
    [{}, {"go_backwards": True}, {"zero_output_for_mask": True}],
    ids=["forward", "go_backwards", "zero_output_for_mask"],
)
def test_rnn_inner_loop_steps_the_function_with_the_options(options):
    # `keras.layers.RNN.inner_loop` reads its loop options from the object
    # passed as `self` and steps its `cell`: the stand-in of `_compat`.
    parameters = list(inspect.signature(keras.layers.RNN.inner_loop).parameters)
    assert parameters[:4] == ["self", "sequences", "initial_state", "mask"], (
        "keras.layers.RNN.inner_loop (used by _compat.rnn_inner_loop) "
        f"changed its signature: {parameters}"
    )
    x = np.random.default_rng(0).normal(size=(2, 4, 5)).astype("float32")
    mask = np.array([[True, True, False, True], [True, False, True, True]])
    try:
        expected, outputs, last = _simple_rnn(x, mask, **options)
    except AttributeError as error:
        raise AssertionError(
            "keras.layers.RNN.inner_loop reads an attribute that "
            f"_compat._LoopOptions does not give: {error}"
        ) from error
    np.testing.assert_allclose(outputs, expected, atol=1e-6)
    np.testing.assert_allclose(
        keras.ops.convert_to_numpy(last), expected[:, -1], atol=1e-6
    )


class _RecordingCell(keras.layers.Layer, _compat.KERAS_DROPOUT_CELL):
    """A cell that records the dropout-mask protocol Keras runs on it."""

    def __init__(self):
        super().__init__()
        self.state_size = 2
        self.output_size = 2
        self.events = []

    def get_dropout_mask(self, step_input):
        self.events.append("get_dropout_mask")

    def get_recurrent_dropout_mask(self, step_state):
        self.events.append("get_recurrent_dropout_mask")

    def reset_dropout_mask(self):
        self.events.append("reset_dropout_mask")

    def reset_recurrent_dropout_mask(self):
        self.events.append("reset_recurrent_dropout_mask")

    def call(self, inputs, states):
        self.events.append("step")
        return inputs[:, :2], [inputs[:, :2]]


def test_fused_lstm_is_the_kernel_keras_lstm_runs():
    # `keras.src.backend.lstm` takes the arguments `fused_lstm` passes, as
    # `keras.layers.LSTM.inner_loop` passes them.
    from keras.src import backend

    parameters = inspect.signature(backend.lstm).parameters
    assert list(parameters)[:4] == [
        "inputs",
        "initial_state_h",
        "initial_state_c",
        "mask",
    ], "keras.src.backend.lstm changed its positional arguments"
    for name in (
        "kernel",
        "recurrent_kernel",
        "bias",
        "activation",
        "recurrent_activation",
        "return_sequences",
        "go_backwards",
        "unroll",
    ):
        assert name in parameters, f"keras.src.backend.lstm lost `{name}`"
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 5, 3)).astype("float32")
    layer = keras.layers.LSTM(4, return_sequences=True, use_cudnn=True)
    layer.build(x.shape)
    zeros = keras.ops.zeros((2, 4))
    try:
        last, outputs, states = _compat.fused_lstm(
            x,
            zeros,
            zeros,
            None,
            kernel=layer.cell.kernel,
            recurrent_kernel=layer.cell.recurrent_kernel,
            bias=layer.cell.bias,
            activation=layer.cell.activation,
            recurrent_activation=layer.cell.recurrent_activation,
            return_sequences=True,
            go_backwards=False,
            unroll=False,
        )
    except NotImplementedError:
        # No kernel here (no GPU): Keras' LSTM refuses use_cudnn=True too.
        with pytest.raises(ValueError, match="use_cudnn=True"):
            layer(x)
    else:
        outputs = keras.ops.convert_to_numpy(outputs)
        expected = keras.ops.convert_to_numpy(layer(x))
        np.testing.assert_allclose(outputs, expected, atol=1e-5)
        last = keras.ops.convert_to_numpy(last)
        np.testing.assert_allclose(last, outputs[:, -1], atol=1e-6)
        assert len(states) == 2


def test_cudnn_ok_is_what_keras_lstm_asks():
    # `keras.layers.LSTM` turns XLA off on TensorFlow exactly when
    # `backend.cudnn_ok` holds for its arguments.
    for activation in ("tanh", "relu"):
        layer = keras.layers.LSTM(4, activation=activation)
        cell = layer.cell
        ok = _compat.cudnn_ok(
            cell.activation, cell.recurrent_activation, False, True
        )
        assert isinstance(ok, bool)
        assert ok is (not layer.supports_jit), activation
        if activation == "relu":
            assert ok is False


def test_keras_dropout_cell_gets_masks_once_per_sequence():
    assert _compat.KERAS_DROPOUT_CELL in keras.layers.LSTMCell.__mro__
    assert "get_dropout_mask" in vars(_compat.KERAS_DROPOUT_CELL)
    cell = _RecordingCell()
    keras.layers.RNN(cell, unroll=True)(np.zeros((1, 3, 2), "float32"))
    events = [event for event in cell.events if event != "step"]
    # The build may trace a step first; one call asks once, before the
    # steps, and resets once, after them.
    assert events[-4:] == [
        "get_dropout_mask",
        "get_recurrent_dropout_mask",
        "reset_dropout_mask",
        "reset_recurrent_dropout_mask",
    ], (
        "keras.layers.RNN no longer asks instances of "
        f"{_compat.KERAS_DROPOUT_CELL.__name__} (_compat.KERAS_DROPOUT_CELL) "
        f"for their dropout masks around the loop: {cell.events}"
    )
    last = len(cell.events) - 1 - cell.events[::-1].index("get_dropout_mask")
    assert cell.events[last + 2 : last + 5] == ["step"] * 3, cell.events


def test_get_enclosing_xla_context_tells_xla_apart():
    # `_compat.in_xla_context` on TensorFlow.
    seen = {}

    def probe(name):
        def function():
            seen[name] = tf.__internal__.get_enclosing_xla_context()
            return tf.constant(0.0)

        return function

    probe("eager")()
    tf.function(probe("graph"))()
    tf.function(probe("xla"), jit_compile=True)()
    assert seen["eager"] is None and seen["graph"] is None, (
        "tf.__internal__.get_enclosing_xla_context (used by "
        f"_compat.in_xla_context) sees XLA outside it: {seen}"
    )
    assert seen["xla"] is not None, (
        "tf.__internal__.get_enclosing_xla_context (used by "
        "_compat.in_xla_context) no longer sees jit_compile=True"
    )


@pytest.mark.skipif(
    keras.backend.backend() != "tensorflow", reason="TensorFlow's XLA"
)
def test_in_xla_context_on_tensorflow():
    seen = []

    def function():
        seen.append(_compat.in_xla_context())
        return tf.constant(0.0)

    function()
    tf.function(function)()
    tf.function(function, jit_compile=True)()
    assert seen == [False, False, True]


def _tiny_model():
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    return model


def test_set_initial_epoch_in_on_train_begin_skips_epochs():
    class StartAtTwo(keras.callbacks.Callback):
        def on_train_begin(self, logs=None):
            _compat.set_initial_epoch(self.model, 2)

    history = _tiny_model().fit(
        np.zeros((4, 2)),
        np.zeros((4, 1)),
        epochs=4,
        verbose=0,
        callbacks=[StartAtTwo()],
    )
    assert history.epoch == [2, 3], (
        "keras.Model.fit no longer reads Model._initial_epoch after "
        f"on_train_begin (_compat.set_initial_epoch): {history.epoch}"
    )


def test_backup_and_restore_hooks_are_called_as_relied_on(tmp_path):
    calls = []

    class Recording(keras.callbacks.BackupAndRestore):
        def _load_model(self):
            calls.append("_load_model")

        def _should_save_on_batch(self, batch):
            calls.append("_should_save_on_batch")
            return batch == 0

        def _save_model(self):
            calls.append("_save_model")

    callback = Recording(str(tmp_path), save_freq=1)
    for name in _compat.BACKUP_AND_RESTORE_HOOKS:
        assert hasattr(callback, name), (
            f"keras.callbacks.BackupAndRestore no longer has `{name}` "
            "(_compat.BACKUP_AND_RESTORE_HOOKS)"
        )
    _tiny_model().fit(
        np.zeros((4, 2)),
        np.zeros((4, 1)),
        batch_size=2,
        epochs=1,
        verbose=0,
        callbacks=[callback],
    )
    assert calls == [
        "_load_model",
        "_should_save_on_batch",
        "_save_model",
        "_should_save_on_batch",
    ], (
        "keras.callbacks.BackupAndRestore calls its hooks "
        f"(_compat.BACKUP_AND_RESTORE_HOOKS) differently: {calls}"
    )
