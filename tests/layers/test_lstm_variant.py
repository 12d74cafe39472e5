import json

import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_recurrent as kr
from tests.layers.cell_layer_api import LSTM_CELL_OVERRIDES
from tests.layers.cell_layer_api import check_cell_arguments_exposed
from tests.layers.dropout_reference import check_per_sequence_dropout
from tests.layers.lstm_reference import BLOCKS
from tests.layers.lstm_reference import lstm_sequence
from tests.layers.lstm_reference import named_weights
from tests.layers.lstm_reference import randomize_weights

BATCH, STEPS, FEATURES, UNITS = 3, 5, 4, 6
LAYERS = {
    "peephole": (kr.layers.PeepholeLSTM, {}, "V"),
    "coupled": (kr.layers.CoupledLSTM, {"use_peepholes": False}, "CIFG"),
    "coupled_peepholes": (kr.layers.CoupledLSTM, {}, "CIFG"),
    **{
        f"variant_{v}": (kr.layers.LSTMVariant, {"variant": v}, v)
        for v in sorted(BLOCKS)
    },
}


def _data(seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(BATCH, STEPS, FEATURES)).astype("float32")
    mask = np.ones((BATCH, STEPS), dtype=bool)
    mask[0, 4:] = False
    mask[2, 2] = False
    return x, mask


def _layer(name, **kwargs):
    cls, extra, variant = LAYERS[name]
    layer = cls(
        UNITS, return_sequences=True, return_state=True, **extra, **kwargs
    )
    layer.build((None, None, FEATURES))
    randomize_weights(layer)
    return layer, variant


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_layer_matches_numpy_reference(name):
    x, mask = _data()
    layer, variant = _layer(name)
    sequence, *states = layer(x, mask=mask)
    expected, expected_states = lstm_sequence(
        x.astype("float64"), named_weights(layer), variant, mask=mask
    )
    np.testing.assert_allclose(sequence, expected, atol=1e-5)
    for state, expected_state in zip(states, expected_states):
        np.testing.assert_allclose(state, expected_state, atol=1e-5)


@pytest.mark.parametrize("name", ["peephole", "coupled", "variant_FGR"])
def test_go_backwards_and_initial_state_match_reference(name):
    x, mask = _data(1)
    layer, variant = _layer(name, go_backwards=True)
    rng = np.random.default_rng(3)
    initial = [
        rng.normal(size=(BATCH, size)).astype("float32")
        for size in layer.cell.state_size
    ]
    sequence, *states = layer(x, mask=mask, initial_state=initial)
    expected, expected_states = lstm_sequence(
        x.astype("float64"),
        named_weights(layer),
        variant,
        mask=mask,
        initial_states=initial,
        go_backwards=True,
    )
    np.testing.assert_allclose(sequence, expected, atol=1e-5)
    for state, expected_state in zip(states, expected_states):
        np.testing.assert_allclose(state, expected_state, atol=1e-5)


def _plain_rnn_of(layer, shape):
    """`keras.layers.RNN` of a copy of `layer`'s cell, with its weights: its
    steps read the variables, where `layer`'s read them as `prepare_loop`
    arranged them."""
    plain = keras.layers.RNN(
        type(layer.cell).from_config(layer.cell.get_config()),
        return_sequences=True,
        return_state=True,
    )
    plain.build(shape)
    plain.set_weights(layer.get_weights())
    return plain


@pytest.mark.parametrize(
    "name, kwargs",
    [
        *[(name, {}) for name in sorted(LAYERS)],
        ("peephole", {"projection_units": 3, "cell_clip": 0.5}),
    ],
)
def test_layer_equals_plain_rnn_of_the_cell(name, kwargs):
    x, mask = _data(2)
    layer, _ = _layer(name, **kwargs)
    plain = _plain_rnn_of(layer, x.shape)
    for ours, theirs in zip(layer(x, mask=mask), plain(x, mask=mask)):
        np.testing.assert_allclose(ours, theirs, atol=1e-6)


@pytest.mark.parametrize(
    "name", ["peephole", "coupled", "variant_FGR", "variant_NIG"]
)
def test_training_gradients_equal_plain_rnn_of_the_cell(name):
    # In training the weights are read once before the loop; the gradients
    # must still reach every variable as if each step had read it.
    x, mask = _data(3)
    layer, _ = _layer(name)
    plain = _plain_rnn_of(layer, x.shape)
    gradients = []
    for rnn in (layer, plain):
        with tf.GradientTape() as tape:
            sequence, *states = rnn(x, mask=mask, training=True)
            loss = tf.reduce_sum(sequence**2) + tf.reduce_sum(states[-1])
        gradients.append(
            tape.gradient(loss, [w.value for w in rnn.trainable_weights])
        )
    assert [w.path.split("/")[-1] for w in layer.trainable_weights] == [
        w.path.split("/")[-1] for w in plain.trainable_weights
    ]
    for ours, theirs in zip(*gradients):
        np.testing.assert_allclose(ours, theirs, atol=1e-5)


def test_prepare_loop_folds_the_bias_into_the_kernel_at_inference_only():
    layer, _ = _layer("peephole")
    cell = layer.cell
    x, _ = _data()
    before = {name: id(value) for name, value in vars(cell).items()}
    inference, loop_state = cell.prepare_loop(x)
    np.testing.assert_array_equal(inference[..., :FEATURES], x)
    np.testing.assert_array_equal(inference[..., FEATURES], 1.0)
    weights = loop_state["weights"]
    assert weights["bias"] is None
    np.testing.assert_array_equal(
        weights["kernel"], np.concatenate([cell.kernel, cell.bias[None]])
    )
    assert weights["peepholes"]["o"].shape == (BATCH, UNITS)
    assert loop_state["input_mask"] is None
    assert loop_state["recurrent_mask"] is None
    training_inputs, loop_state = cell.prepare_loop(x, training=True)
    assert training_inputs is x
    np.testing.assert_array_equal(loop_state["weights"]["bias"], cell.bias)
    assert loop_state["weights"]["peepholes"]["o"].shape == (UNITS,)
    # The cell keeps nothing of a loop.
    assert {name: id(value) for name, value in vars(cell).items()} == before


def test_step_with_the_loop_state_equals_call():
    layer, _ = _layer("variant_FGR")
    cell = layer.cell
    x, _ = _data()
    states = [
        np.random.default_rng(1).normal(size=(BATCH, size)).astype("float32")
        for size in cell.state_size
    ]
    expected, expected_states = cell(x[:, 0], states)
    for training in (False, True):
        step_inputs, loop_state = cell.prepare_loop(x, training=training)
        output, new_states = cell.step(step_inputs[:, 0], states, loop_state)
        np.testing.assert_allclose(output, expected, atol=1e-6)
        for state, expected_state in zip(new_states, expected_states):
            np.testing.assert_allclose(state, expected_state, atol=1e-6)


def test_dropout_masks_are_cleared_after_a_failed_step(monkeypatch):
    layer, _ = _layer("peephole", dropout=0.5, recurrent_dropout=0.5, seed=3)
    x, mask = _data()
    expected = layer(x, mask=mask)[0]
    seen = []

    def failing_step(*args, **kwargs):
        seen.append(layer.cell.get_dropout_mask(x[:, 0]) is not None)
        raise RuntimeError("step failed")

    with monkeypatch.context() as patch:
        patch.setattr(layer.cell, "step", failing_step)
        with pytest.raises(RuntimeError, match="step failed"):
            layer(x, mask=mask, training=True)
    assert seen == [True]
    assert layer.cell.sequence_dropout_masks(x[:, 0], training=False) == (
        None,
        None,
    )
    first, second = (
        layer.cell.sequence_dropout_masks(x[:, 0], training=True)[0]
        for _ in range(2)
    )
    # No mask was left from the failed call: each is new.
    assert not np.array_equal(first, second)
    np.testing.assert_allclose(layer(x, mask=mask)[0], expected)


@pytest.mark.parametrize("name", ["peephole", "coupled", "variant_FGR"])
def test_served_time_loop_reads_no_variable(name):
    # Part of what makes the served layer as fast as Keras' LSTM on
    # TensorFlow (docs/design/lstm_variants.md): the loop body reads each
    # weight as a loop input, not with a ReadVariableOp per step.
    layer, _ = _layer(name, projection_units=4 if name == "peephole" else None)

    @tf.function(
        input_signature=[
            tf.TensorSpec((None, None, FEATURES)),
            tf.TensorSpec((None, None), tf.bool),
        ]
    )
    def serve(x, mask):
        return layer(x, mask=mask)[0]

    library = serve.get_concrete_function().graph.as_graph_def().library
    bodies = [f for f in library.function if "while_body" in f.signature.name]
    assert len(bodies) == 1
    ops_in_body = [node.op for node in bodies[0].node_def]
    assert "ReadVariableOp" not in ops_in_body
    assert "MatMul" in ops_in_body
    x, mask = _data()
    np.testing.assert_allclose(
        serve(x, mask), layer(x, mask=mask)[0], atol=1e-6
    )


@pytest.mark.parametrize("wrapped", [False, True])
def test_dropout_uses_one_mask_per_sequence(wrapped):
    x, mask = _data(3)
    kwargs = {"dropout": 0.5, "recurrent_dropout": 0.25, "seed": 11}
    if wrapped:
        cell = kr.layers.PeepholeLSTMCell(UNITS, **kwargs)
        layer = keras.layers.RNN(cell, return_sequences=True, return_state=True)
        layer.build(x.shape)
        randomize_weights(layer)
    else:
        layer, _ = _layer("peephole", **kwargs)
    weights = named_weights(layer)

    def reference(x, mask, dropout_masks):
        return lstm_sequence(
            x, weights, "V", mask=mask, dropout_masks=dropout_masks
        )

    check_per_sequence_dropout(
        layer,
        reference,
        x,
        mask,
        widths=(FEATURES, UNITS),
        rates=(kwargs["dropout"], kwargs["recurrent_dropout"]),
    )


def test_seeded_dropout_is_reproducible():
    x, _ = _data(4)
    outputs = []
    for _ in range(2):
        layer, _ = _layer("coupled", dropout=0.3, recurrent_dropout=0.3, seed=5)
        outputs.append(np.array(layer(x, training=True)[0]))
    np.testing.assert_array_equal(outputs[0], outputs[1])
    layer, _ = _layer("coupled", dropout=0.3, recurrent_dropout=0.3, seed=6)
    assert not np.allclose(outputs[0], layer(x, training=True)[0])


@pytest.mark.parametrize("name", ["peephole", "coupled", "variant_FGR"])
def test_stateful_continues_across_calls(name):
    x, _ = _data(5)
    cls, extra, _ = LAYERS[name]
    stateful = cls(UNITS, return_sequences=True, stateful=True, **extra)
    model = keras.Sequential(
        [keras.Input(batch_shape=(BATCH, None, FEATURES)), stateful]
    )
    randomize_weights(stateful)
    whole = cls(UNITS, return_sequences=True, **extra)
    whole.build(x.shape)
    whole.set_weights(stateful.get_weights())
    chunks = [model(x[:, :2]), model(x[:, 2:])]
    np.testing.assert_allclose(np.concatenate(chunks, 1), whole(x), atol=1e-5)
    stateful.reset_state()
    np.testing.assert_allclose(model(x[:, :2]), chunks[0], atol=1e-6)


@pytest.mark.parametrize("name", ["peephole", "coupled", "variant_NIAF"])
def test_bidirectional_equals_forward_and_backward_layers(name):
    x, mask = _data(6)
    cls, extra, _ = LAYERS[name]
    bidirectional = keras.layers.Bidirectional(
        cls(UNITS, return_sequences=True, **extra)
    )
    bidirectional.build(x.shape)
    randomize_weights(bidirectional)
    # Bidirectional outputs zeros at masked steps.
    options = {"return_sequences": True, "zero_output_for_mask": True}
    forward = cls(UNITS, **options, **extra)
    backward = cls(UNITS, go_backwards=True, **options, **extra)
    for layer, source in (
        (forward, bidirectional.forward_layer),
        (backward, bidirectional.backward_layer),
    ):
        layer.build(x.shape)
        layer.set_weights(source.get_weights())
    expected = np.concatenate(
        [forward(x, mask=mask), np.flip(backward(x, mask=mask), 1)], -1
    )
    np.testing.assert_allclose(bidirectional(x, mask=mask), expected, atol=1e-5)


def test_stacked_cells_equal_stacked_layers():
    x, mask = _data(7)
    cells = [
        kr.layers.PeepholeLSTMCell(UNITS),
        kr.layers.CoupledLSTMCell(4, use_peepholes=True),
        kr.layers.LSTMVariantCell(3, variant="FGR"),
    ]
    stacked = keras.layers.RNN(
        keras.layers.StackedRNNCells(cells), return_sequences=True
    )
    stacked.build(x.shape)
    randomize_weights(stacked)
    layers = [
        kr.layers.PeepholeLSTM(UNITS, return_sequences=True),
        kr.layers.CoupledLSTM(4, use_peepholes=True, return_sequences=True),
        kr.layers.LSTMVariant(3, variant="FGR", return_sequences=True),
    ]
    y = x
    for layer, cell in zip(layers, cells):
        layer.build(y.shape)
        layer.set_weights([np.array(w) for w in cell.weights])
        y = layer(y, mask=mask)
    np.testing.assert_allclose(stacked(x, mask=mask), y, atol=1e-5)


def test_mixed_float16():
    x, mask = _data(8)
    reference, _ = _layer("peephole")
    keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        layer = kr.layers.PeepholeLSTM(
            UNITS, return_sequences=True, return_state=True
        )
        layer.build(x.shape)
    finally:
        keras.mixed_precision.set_global_policy("float32")
    layer.set_weights(reference.get_weights())
    sequence, h, c = layer(x, mask=mask)
    assert keras.backend.standardize_dtype(sequence.dtype) == "float16"
    assert keras.backend.standardize_dtype(c.dtype) == "float16"
    assert layer.cell.kernel.dtype == "float32"
    np.testing.assert_allclose(
        np.array(sequence, "float32"), reference(x, mask=mask)[0], atol=2e-2
    )


def test_mixed_float16_trains_with_loss_scaling():
    x, _ = _data(9)
    keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        model = keras.Sequential(
            [
                keras.Input((STEPS, FEATURES)),
                kr.layers.CoupledLSTM(UNITS),
                keras.layers.Dense(1, dtype="float32"),
            ]
        )
        model.compile("adam", "mse")
        history = model.fit(x, np.ones((BATCH, 1)), epochs=3, verbose=0)
    finally:
        keras.mixed_precision.set_global_policy("float32")
    assert np.all(np.isfinite(history.history["loss"]))
    assert history.history["loss"][-1] < history.history["loss"][0]


def test_save_and_load_keras_file_without_custom_objects(tmp_path):
    x, _ = _data(10)
    inputs = keras.Input((None, FEATURES))
    y = keras.layers.Masking(0.0)(inputs)
    y = kr.layers.PeepholeLSTM(
        UNITS, return_sequences=True, projection_units=4, cell_clip=2.0
    )(y)
    y = keras.layers.Bidirectional(
        kr.layers.CoupledLSTM(3, use_peepholes=True, return_sequences=True)
    )(y)
    y = keras.layers.RNN(
        keras.layers.StackedRNNCells(
            [
                kr.layers.LSTMVariantCell(3, variant="FGR"),
                kr.layers.PeepholeLSTMCell(2, dropout=0.1, seed=3),
            ]
        )
    )(y)
    y = kr.layers.LSTMVariant(2, variant="NOAF")(
        keras.layers.RepeatVector(2)(y)
    )
    model = keras.Model(inputs, y)
    for layer in model.layers:
        if layer.weights:
            randomize_weights(layer, scale=0.3)
    path = tmp_path / "model.keras"
    model.save(path)
    loaded = keras.saving.load_model(path)
    np.testing.assert_array_equal(
        model.predict(x, verbose=0), loaded.predict(x, verbose=0)
    )
    # JSON, as the file stores it: tuples and lists are the same there.
    assert json.dumps(loaded.get_config(), sort_keys=True) == json.dumps(
        model.get_config(), sort_keys=True
    )


@pytest.mark.parametrize("name", ["peephole", "coupled", "variant_NFG"])
def test_layer_get_config_round_trip(name):
    cls, extra, _ = LAYERS[name]
    layer = cls(
        UNITS,
        return_sequences=True,
        go_backwards=True,
        dropout=0.2,
        recurrent_dropout=0.1,
        seed=1,
        cell_clip=5.0,
        projection_units=3,
        kernel_regularizer="l2",
        name="rnn",
        **extra,
    )
    config = layer.get_config()
    assert "cell" not in config
    clone = cls.from_config(config)
    assert clone.get_config() == config
    assert (clone.units, clone.dropout, clone.projection_units) == (
        UNITS,
        0.2,
        3,
    )


def test_layer_rejects_bad_inputs():
    layer = kr.layers.PeepholeLSTM(UNITS)
    with pytest.raises(ValueError, match=r"rank 3.*inputs.shape=\(2, 4\)"):
        layer(np.ones((2, 4), "float32"))
    # Integers are cast, as keras.layers.LSTM casts them; complex numbers
    # are refused.
    with pytest.raises(ValueError, match="inputs.dtype=complex64"):
        kr.layers.CoupledLSTM(UNITS)(np.ones((2, 3, 4), "complex64"))
    with pytest.raises(ValueError, match="units=0"):
        kr.layers.LSTMVariant(0)
    with pytest.raises(ValueError, match="variant='LSTM'"):
        kr.layers.LSTMVariant(3, variant="LSTM")
    with pytest.raises(ValueError, match="projection_units=-2"):
        kr.layers.PeepholeLSTM(3, projection_units=-2)


def test_gradient_matches_finite_differences_float64():
    rng = np.random.default_rng(0)
    x = tf.constant(rng.normal(size=(2, 4, 3)))
    layer = kr.layers.PeepholeLSTM(
        3, return_sequences=True, projection_units=2, dtype="float64"
    )
    layer.build(x.shape)
    randomize_weights(layer)

    def loss():
        return tf.reduce_sum(tf.sin(layer(x)))

    with tf.GradientTape() as tape:
        value = loss()
    gradients = tape.gradient(value, layer.trainable_variables)
    eps = 1e-6
    for variable, gradient in zip(layer.trainable_variables, gradients):
        flat = variable.numpy().ravel()
        numeric = np.zeros_like(flat)
        for k in range(flat.size):
            for sign in (1, -1):
                shifted = flat.copy()
                shifted[k] += sign * eps
                variable.assign(shifted.reshape(variable.shape))
                numeric[k] += sign * float(loss()) / (2 * eps)
            variable.assign(flat.reshape(variable.shape))
        np.testing.assert_allclose(
            np.ravel(gradient),
            numeric,
            rtol=1e-5,
            atol=1e-7,
            err_msg=variable.path,
        )


def test_cell_arguments_are_explicit_properties():
    check_cell_arguments_exposed(
        kr.layers.LSTMVariant,
        {"units": 7},
        {**LSTM_CELL_OVERRIDES, "variant": "NFG", "use_peepholes": False},
    )
