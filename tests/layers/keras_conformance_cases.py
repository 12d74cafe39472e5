"""Keras 3.15.1's own LSTM tests, run on our drop-ins for `keras.layers.LSTM`.

    KERAS_BACKEND=torch python -m tests.layers.keras_conformance_cases

The cases port Keras' `keras/src/layers/rnn/lstm_test.py`, `rnn_test.py`,
`bidirectional_test.py`, `stacked_rnn_cells_test.py` and
`dropout_rnn_cell_test.py` (3.15.1) onto `kr.layers.LSTMVariant(variant=
"NP")` and onto `kr.layers.PeepholeLSTM` with zero peepholes: the same
arguments (`implementation`, `use_cudnn`, integer inputs included) and the
same expected numbers, which Keras' tests hard-code, and each output also
against `keras.layers.LSTM` with the same weights, on the current backend.

Run as a module (with case names as arguments: those cases only), it
prints one JSON line: the backend, and for each case
`"ok"` or the error it raised (`tests/layers/test_keras_conformance.py`
runs it on JAX and PyTorch; on TensorFlow it runs the cases in-process).
It needs only Keras, NumPy and the package.
"""

import json
import traceback

import keras
import numpy as np
from keras import initializers

import keras_recurrent as kr

# Keras' tests compare with `atol=1e-5, rtol=1e-5`.
TOLERANCE = {"atol": 1e-5, "rtol": 1e-5}

# The drop-ins: each `make(units, **kwargs)` takes what `keras.layers.LSTM`
# takes.
DROP_INS = {
    "lstm_variant_np": lambda units, **kwargs: kr.layers.LSTMVariant(
        units, variant="NP", **kwargs
    ),
    "peephole_zero": lambda units, **kwargs: kr.layers.PeepholeLSTM(
        units, peephole_initializer="zeros", **kwargs
    ),
}
# Their extra trainable weights over `keras.layers.LSTM`'s three.
EXTRA_WEIGHTS = {"lstm_variant_np": 0, "peephole_zero": 3}


def _constant():
    """The initializers of Keras' correctness tests."""
    return {
        "kernel_initializer": initializers.Constant(0.01),
        "recurrent_initializer": initializers.Constant(0.02),
        "bias_initializer": initializers.Constant(0.03),
    }


def _numpy(value):
    return keras.ops.convert_to_numpy(value)


def _close(actual, expected):
    np.testing.assert_allclose(_numpy(actual), expected, **TOLERANCE)


def _both(make, units, inputs, call_kwargs=None, **kwargs):
    """Ours and `keras.layers.LSTM`, built alike with Keras' constant
    initializers, called alike: `(ours, keras_output)`."""
    call_kwargs = call_kwargs or {}
    ours = make(units, **_constant(), **kwargs)
    reference = keras.layers.LSTM(units, **_constant(), **kwargs)
    return ours(inputs, **call_kwargs), reference(inputs, **call_kwargs)


def _copy_lstm_weights(source, target):
    """`keras.layers.LSTM` (or `LSTMCell`) `source`'s weights into ours."""
    source = getattr(source, "cell", source)
    target = getattr(target, "cell", target)
    for name in ("kernel", "recurrent_kernel", "bias"):
        # A copy: JAX may donate (delete) the arrays of a model's variables.
        getattr(target, name).assign(_numpy(getattr(source, name)))


# lstm_test.py, `test_correctness`: each option and Keras' expected output.
_CORRECTNESS = {
    "default": (
        {},
        [0.6288687, 0.86899155, 0.9460773],
    ),
    "go_backwards": (
        {"go_backwards": True},
        [0.35622165, 0.74789524, 0.8872726],
    ),
    "unroll": ({"unroll": True}, [0.6288687, 0.86899155, 0.9460773]),
    "unit_forget_bias=False": (
        {"unit_forget_bias": False},
        [0.57019705, 0.8661914, 0.9459622],
    ),
    "use_bias=False": (
        {"use_bias": False},
        [0.54986924, 0.86226785, 0.9443936],
    ),
}


def lstm_correctness(make):
    sequence = np.arange(72).reshape((3, 6, 4)).astype("float32")
    # Keras runs each option with `implementation` 1 and 2; here each
    # option runs once, with one of the four `implementation` and
    # `use_cudnn` pairs in turn (the pairs all run in
    # `implementation_and_use_cudnn`).
    pairs = [(1, "auto"), (2, False), (1, False), (2, "auto"), (1, "auto")]
    for (options, rows), (implementation, use_cudnn) in zip(
        _CORRECTNESS.values(), pairs
    ):
        ours, reference = _both(
            make,
            3,
            sequence,
            implementation=implementation,
            use_cudnn=use_cudnn,
            **options,
        )
        expected = np.repeat(np.array(rows)[:, None], 3, axis=1)
        _close(ours, expected)
        _close(ours, _numpy(reference))


def lstm_statefulness(make):
    sequence = np.arange(24).reshape((2, 3, 4)).astype("float32")
    layer = make(4, stateful=True, **_constant())
    expected = np.repeat([[0.3124785], [0.6863672]], 4, axis=1)
    layer(sequence)
    _close(layer(sequence), expected)
    layer.reset_state()
    layer(sequence)
    _close(layer(sequence), expected)


def lstm_pass_initial_state(make):
    sequence = np.arange(24).reshape((2, 4, 3)).astype("float32")
    initial_state = [
        np.arange(4).reshape((2, 2)).astype("float32"),
        np.arange(4).reshape((2, 2)).astype("float32"),
    ]
    call = {"initial_state": initial_state}
    ours, reference = _both(make, 2, sequence, call)
    _close(ours, [[0.20574439, 0.3558822], [0.64930826, 0.66276]])
    _close(ours, _numpy(reference))
    ours, reference = _both(make, 2, sequence, call, go_backwards=True)
    _close(ours, [[0.13281618, 0.2790356], [0.5839337, 0.5992567]])
    _close(ours, _numpy(reference))


def lstm_masking(make):
    sequence = np.arange(24).reshape((2, 4, 3)).astype("float32")
    mask = np.array([[True, True, True, False], [True, True, False, False]])
    call = {"mask": mask}
    ours, reference = _both(make, 2, sequence, call, unroll=True)
    _close(ours, [[0.11755939] * 2, [0.28556206] * 2])
    _close(ours, _numpy(reference))
    first = [[0.0158891] * 2, [0.05552048] * 2, [0.11755939] * 2]
    second = [[0.14185596] * 2, [0.28556206] * 2]
    ours, reference = _both(make, 2, sequence, call, return_sequences=True)
    _close(ours[0], first + [[0.11755939] * 2])
    _close(ours[1], second + [[0.28556206] * 2] * 2)
    _close(ours, _numpy(reference))
    ours, reference = _both(
        make,
        2,
        sequence,
        call,
        return_sequences=True,
        zero_output_for_mask=True,
    )
    _close(ours[0], first + [[0.0, 0.0]])
    _close(ours[1], second + [[0.0, 0.0]] * 2)
    _close(ours, _numpy(reference))
    backwards = {
        "mask": np.array(
            [[False, True, True, True], [False, False, True, True]]
        )
    }
    ours, reference = _both(make, 2, sequence, backwards, go_backwards=True)
    _close(ours, [[0.15341201] * 2, [0.3844719] * 2])
    _close(ours, _numpy(reference))


def lstm_basics(make, name):
    """`test_basics`: shapes, weights and losses, dropout in training (the
    seeded masks are Keras' own), masking support and the config."""
    x = np.random.default_rng(0).normal(size=(3, 2, 4)).astype("float32")
    weights = 3 + EXTRA_WEIGHTS[name]
    for kwargs in (
        {"dropout": 0.5},
        {"dropout": 0.5, "recurrent_dropout": 0.5},
    ):
        layer = make(3, seed=1337, **kwargs)
        reference = keras.layers.LSTM(3, seed=1337, **kwargs)
        reference.build(x.shape)
        layer.build(x.shape)
        _copy_lstm_weights(reference, layer)
        output = layer(x, training=True)
        if "recurrent_dropout" not in kwargs:
            # One input mask per sequence, from the same seed: Keras' numbers.
            _close(output, _numpy(reference(x, training=True)))
        assert tuple(output.shape) == (3, 3)
        assert len(layer.trainable_weights) == weights
        assert not layer.non_trainable_weights
        assert layer.supports_masking
        _close(layer(x), _numpy(reference(x)))
    layer = make(
        3,
        return_sequences=True,
        bias_regularizer="l1",
        kernel_regularizer="l2",
        recurrent_regularizer="l2",
    )
    assert tuple(layer(x).shape) == (3, 2, 3)
    assert len(layer.losses) == 3
    config = layer.get_config()
    assert type(layer).from_config(config).get_config() == config


def implementation_and_use_cudnn(make):
    """`implementation` and `use_cudnn` are taken as `keras.layers.LSTM`
    takes them, and kept out of the config as Keras keeps them out."""
    x = np.random.default_rng(1).normal(size=(2, 5, 3)).astype("float32")
    outputs = []
    weights = None
    for implementation in (1, 2):
        for use_cudnn in ("auto", False):
            layer = make(
                4, implementation=implementation, use_cudnn=use_cudnn, seed=3
            )
            reference = keras.layers.LSTM(
                4, implementation=implementation, use_cudnn=use_cudnn
            )
            assert layer.cell.implementation == reference.cell.implementation
            assert layer.use_cudnn == reference.use_cudnn
            for key in ("implementation", "use_cudnn"):
                assert (key in layer.get_config()) == (
                    key in reference.get_config()
                ), key
                assert (key in layer.cell.get_config()) == (
                    key in reference.cell.get_config()
                ), key
            reference.build(x.shape)
            if weights is None:
                weights = [_numpy(w) for w in reference.weights]
            reference.set_weights(weights)
            layer.build(x.shape)
            _copy_lstm_weights(reference, layer)
            outputs.append(_numpy(layer(x)))
            _close(outputs[-1], _numpy(reference(x)))
    cell = kr.layers.LSTMVariantCell(4, variant="NP", implementation=1)
    assert cell.implementation == 1
    for output in outputs[1:]:
        np.testing.assert_allclose(output, outputs[0], atol=1e-6)
    try:
        make(4, use_cudnn="yes")
    except ValueError as error:
        assert "use_cudnn='yes'" in str(error), error
    else:
        raise AssertionError("use_cudnn='yes' was taken")


def use_cudnn_true(make, name):
    """`use_cudnn=True`: where `keras.layers.LSTM(use_cudnn=True)` runs
    (a GPU, or PyTorch's fused loop), `LSTMVariant("NP")` runs it too, with
    Keras' numbers; where it raises, ours raises a `ValueError` saying
    why. `PeepholeLSTM` always has peepholes: refused when built."""
    x = np.random.default_rng(2).normal(size=(2, 5, 3)).astype("float32")
    reference = keras.layers.LSTM(4, use_cudnn=True)
    try:
        expected = _numpy(reference(x))
    except ValueError:
        expected = None
    if name == "peephole_zero":
        try:
            make(4, use_cudnn=True)
        except ValueError as error:
            assert "use_peepholes=True" in str(error), error
            return
        raise AssertionError("PeepholeLSTM took use_cudnn=True")
    layer = make(4, use_cudnn=True)
    layer.build(x.shape)
    _copy_lstm_weights(reference, layer)
    try:
        output = _numpy(layer(x))
    except ValueError as error:
        assert expected is None, f"keras ran, ours raised {error}"
        assert "use_cudnn=True" in str(error), error
        assert "use_cudnn='auto'" in str(error), error
        return
    assert expected is not None, "keras raised, ours ran"
    _close(output, expected)


def integer_inputs(make):
    """Integer and boolean sequences are cast as `keras.layers.LSTM`
    casts them (bidirectional_test.py, `test_output_shape`, feeds ints)."""
    values = np.random.default_rng(3).integers(-3, 4, size=(2, 5, 3))
    reference = keras.layers.LSTM(4)
    layer = make(4)
    reference.build(values.shape)
    layer.build(values.shape)
    _copy_lstm_weights(reference, layer)
    for dtype in ("int32", "int64", "uint8", "bool"):
        sequence = (np.abs(values) if dtype == "uint8" else values).astype(
            dtype
        )
        _close(layer(sequence), _numpy(reference(sequence)))
    # A functional model with an integer `Input`.
    inputs = keras.Input((5, 3), dtype="int32")
    model = keras.Model(inputs, layer(inputs))
    _close(model.predict(values, verbose=0), _numpy(reference(values)))


def bidirectional(make):
    """bidirectional_test.py: statefulness, initial states, return_state,
    output shapes (on integer inputs) and `use_cudnn` kept."""
    sequence = np.arange(24).reshape((2, 4, 3)).astype("float32")
    layer = keras.layers.Bidirectional(make(2, stateful=True, **_constant()))
    expected = [
        [0.26234663, 0.26234663, 0.16959146, 0.16959146],
        [0.6137073, 0.6137073, 0.5381646, 0.5381646],
    ]
    layer(sequence)
    _close(layer(sequence), expected)
    layer.reset_state()
    layer(sequence)
    _close(layer(sequence), expected)

    initial_state = [
        np.arange(4).reshape((2, 2)).astype("float32") * factor
        for factor in (1, 2, 3, 4)
    ]
    layer = keras.layers.Bidirectional(make(2, **_constant()))
    _close(
        layer(sequence, initial_state=initial_state),
        [
            [0.20794602, 0.4577124, 0.14046375, 0.48191673],
            [0.6682636, 0.6711909, 0.60943645, 0.60950446],
        ],
    )

    layer = keras.layers.Bidirectional(
        make(2, return_state=True, **_constant())
    )
    output, h1, c1, h2, c2 = layer(sequence)
    _close(
        output,
        [
            [0.1990008, 0.1990008, 0.12659755, 0.12659755],
            [0.52335435, 0.52335435, 0.44717982, 0.44717982],
        ],
    )
    _close(h1, [[0.1990008] * 2, [0.52335435] * 2])
    _close(c1, [[0.35567185] * 2, [1.0492687] * 2])
    _close(h2, [[0.12659755] * 2, [0.44717982] * 2])
    _close(c2, [[0.2501858] * 2, [0.941473] * 2])

    x = np.array([[[101, 202], [303, 404]]])
    for merge_mode in ("ave", "concat", "mul", "sum", None):
        for return_state in (True, False):
            layer = keras.layers.Bidirectional(
                make(2, return_state=return_state), merge_mode=merge_mode
            )
            shapes = layer.compute_output_shape(x.shape)
            if not return_state and merge_mode is not None:
                shapes = [shapes]
            outputs = keras.tree.flatten(layer(x))
            assert [tuple(o.shape) for o in outputs] == [
                tuple(shape) for shape in shapes
            ], (merge_mode, return_state, shapes)
    for use_cudnn in ("auto", False):
        layer = keras.layers.Bidirectional(make(1, use_cudnn=use_cudnn))
        assert layer.forward_layer.use_cudnn == use_cudnn
        assert layer.backward_layer.use_cudnn == use_cudnn


def stacked_cells(make, name):
    """stacked_rnn_cells_test.py and dropout_rnn_cell_test.py: our cells
    in `keras.layers.RNN` and `StackedRNNCells`, with dropout."""
    del make
    cell_class = {
        "lstm_variant_np": lambda units, **kwargs: kr.layers.LSTMVariantCell(
            units, variant="NP", **kwargs
        ),
        "peephole_zero": lambda units, **kwargs: kr.layers.PeepholeLSTMCell(
            units, peephole_initializer="zeros", **kwargs
        ),
    }[name]
    x = np.random.default_rng(4).normal(size=(2, 3, 4)).astype("float32")
    cells = [
        cell_class(units, dropout=0.1, recurrent_dropout=0.1, seed=units)
        for units in (3, 4, 5)
    ]
    layer = keras.layers.RNN(cells, return_sequences=True)
    assert tuple(layer(x, training=True).shape) == (2, 3, 5)
    extra = EXTRA_WEIGHTS[name]
    assert len(layer.trainable_weights) == 3 * (3 + extra)
    # One seed generator state per cell (Keras' `expected_num_seed_generators`).
    assert len(layer.non_trainable_variables) == 3
    references = [keras.layers.LSTMCell(units) for units in (3, 4, 5)]
    reference = keras.layers.RNN(references, return_sequences=True)
    reference.build(x.shape)
    for source, target in zip(references, cells):
        _copy_lstm_weights(source, target)
    _close(layer(x), _numpy(reference(x)))
    # dropout_rnn_cell_test.py, `test_seed_tracking`.
    cell = cell_class(3, seed=1337)
    assert len(cell.non_trainable_variables) == 1
    assert len(keras.layers.RNN(cell).non_trainable_variables) == 1


def stateful_batch_size_mismatch(make):
    """rnn_test.py, `test_stateful_batch_size_mismatch_raises`."""
    inputs = keras.Input((5, 3), batch_size=4)
    model = keras.Model(inputs, make(2, stateful=True)(inputs))
    model(np.random.default_rng(5).uniform(size=(4, 5, 3)))
    try:
        model(np.random.default_rng(5).uniform(size=(1, 5, 3)))
    except ValueError as error:
        assert "batch size" in str(error), error
    else:
        raise AssertionError("a batch of 1 was taken by a stateful layer")


CASES = {
    "lstm_correctness": lstm_correctness,
    "lstm_statefulness": lstm_statefulness,
    "lstm_pass_initial_state": lstm_pass_initial_state,
    "lstm_masking": lstm_masking,
    "lstm_basics": lstm_basics,
    "implementation_and_use_cudnn": implementation_and_use_cudnn,
    "use_cudnn_true": use_cudnn_true,
    "integer_inputs": integer_inputs,
    "bidirectional": bidirectional,
    "stacked_cells": stacked_cells,
    "stateful_batch_size_mismatch": stateful_batch_size_mismatch,
}
# The cases that take the drop-in's name too.
_NAMED = ("lstm_basics", "use_cudnn_true", "stacked_cells")


def run_case(case, name):
    """Runs `CASES[case]` on `DROP_INS[name]`; raises if it fails."""
    arguments = (DROP_INS[name], name) if case in _NAMED else (DROP_INS[name],)
    CASES[case](*arguments)


def run_cases(cases=None):
    """`{"case/drop-in": "ok" or the error}` for the cases named (all)."""
    report = {}
    for case in cases or CASES:
        for name in DROP_INS:
            try:
                run_case(case, name)
                report[f"{case}/{name}"] = "ok"
            except Exception:  # noqa: BLE001 - reported, not hidden
                report[f"{case}/{name}"] = traceback.format_exc()[-2000:]
    return report


if __name__ == "__main__":
    import sys

    report = run_cases(sys.argv[1:])
    print(json.dumps({"backend": keras.backend.backend(), "cases": report}))
