"""NaN and inf at masked steps: one `fit` step, on the current backend.

    KERAS_BACKEND=jax python -m tests.layers.nan_mask_cases

prints one JSON line: the backend, and for each case what one `fit` step
gave with NaN (and with inf) at the masked steps, against the same step
with zeros there: `"equal"` when every weight came out finite and
bit-identical, else a short description. `tests/layers/test_nan_masks.py`
runs it once per backend. It needs only Keras, NumPy and the package.
"""

import json
import os
import sys
import traceback

import keras
import numpy as np

import keras_recurrent as kr

BATCH, STEPS, FEATURES, UNITS = 4, 7, 3, 5


def _mask():
    mask = np.ones((BATCH, STEPS), dtype=bool)
    mask[0, 5:] = False  # padding at the end
    mask[1, 2] = False  # a hole
    mask[1, 4] = False
    mask[2, :2] = False  # padding in front
    mask[3, 6] = False
    return mask


def _data(seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(BATCH, STEPS, FEATURES)).astype("float32")
    y = rng.normal(size=(BATCH, 1)).astype("float32")
    return x, y


def _with(x, mask, value):
    x = x.copy()
    x[~mask] = value
    return x


def _model(make_layer, jit_compile):
    keras.utils.set_random_seed(1)
    sequences = keras.Input((STEPS, FEATURES))
    mask = keras.Input((STEPS,), dtype="bool")
    outputs = sequences
    layers = make_layer()
    for layer in layers if isinstance(layers, list) else [layers]:
        outputs = layer(outputs, mask=mask)
    outputs = keras.layers.Dense(1, name="head")(outputs)
    model = keras.Model([sequences, mask], outputs)
    model.compile(
        optimizer=keras.optimizers.SGD(0.1), loss="mse", jit_compile=jit_compile
    )
    return model


def compare(make_layer, values, jit_compile=False, mask=None):
    """One `fit` step with each of `values` at the masked steps against one
    with zeros there, from the same weights, on one compiled model: for each
    value, `"equal"` or what differed."""
    mask = _mask() if mask is None else mask
    x, y = _data()
    model = _model(make_layer, jit_compile)
    initial = model.get_weights()

    def fit_step(value):
        model.set_weights(initial)
        history = model.fit(
            [_with(x, mask, value), mask],
            y,
            batch_size=BATCH,
            epochs=1,
            shuffle=False,
            verbose=0,
        )
        return history.history["loss"][0], model.get_weights()

    loss_zero, zero = fit_step(0.0)
    if not all(np.isfinite(w).all() for w in zero):
        return dict.fromkeys(values, "not finite even with zeros there")
    return {
        value: compare_to_zero_run(*fit_step(value), loss_zero, zero)
        for value in values
    }


def compare_to_zero_run(loss, weights, loss_zero, zero):
    """`"equal"` if a fit step's loss and weights equal those of the run
    with zeros in place of the non-finite values, else what differs."""
    non_finite = sum(int((~np.isfinite(w)).any()) for w in weights)
    difference = max(np.abs(a - b).max() for a, b in zip(weights, zero))
    if non_finite:
        return (
            f"{non_finite} of {len(weights)} weights not finite, "
            f"loss {loss:.4g}"
        )
    if difference > 0:
        return f"weights {difference:.3g} away from the zero run"
    if loss != loss_zero:
        return f"loss {loss} != {loss_zero}"
    return "equal"


def _residual_stack():
    return kr.layers.ResidualStack(
        [
            kr.layers.PeepholeLSTM(FEATURES, return_sequences=True),
            keras.layers.LSTM(UNITS, return_sequences=True),
        ],
        layer_norm=True,
        return_sequences=False,
    )


LAYERS = {
    "PeepholeLSTM": lambda: kr.layers.PeepholeLSTM(UNITS),
    "CoupledLSTM": lambda: kr.layers.CoupledLSTM(UNITS),
    "LSTMVariant-projection": lambda: kr.layers.LSTMVariant(
        UNITS, variant="NOG", projection_units=3, cell_clip=3.0
    ),
    "PeepholeLSTM-backwards-sequences": lambda: [
        kr.layers.PeepholeLSTM(UNITS, return_sequences=True, go_backwards=True),
        kr.layers.SequencePooling("mean"),
    ],
    "GatedFeedbackRNN-gru": lambda: kr.layers.GatedFeedbackRNN(
        [UNITS, UNITS], cell_type="gru"
    ),
    "GatedFeedbackRNN-lstm-backwards": lambda: kr.layers.GatedFeedbackRNN(
        [UNITS, 4], cell_type="lstm", go_backwards=True
    ),
    "ResidualStack": _residual_stack,
    "Bidirectional-CoupledLSTM": lambda: keras.layers.Bidirectional(
        kr.layers.CoupledLSTM(UNITS)
    ),
    "TruncatedRNN-LSTM": lambda: kr.layers.TruncatedRNN(
        keras.layers.LSTM(UNITS), window=3
    ),
    "SequencePooling-last": lambda: kr.layers.SequencePooling("last"),
    "SequencePooling-mean": lambda: kr.layers.SequencePooling("mean"),
    "SequencePooling-max": lambda: kr.layers.SequencePooling("max"),
    "SequencePooling-attention": lambda: kr.layers.SequencePooling("attention"),
}

# Upstream: Keras' own LSTM selects a masked step's output away with `where`,
# and the gradient of the discarded branch is 0 * NaN = NaN.
UPSTREAM = {"keras.layers.LSTM": lambda: keras.layers.LSTM(UNITS)}


def run(cases, values=(float("nan"), float("inf"))):
    report = {}
    for name, make_layer in cases.items():
        try:
            results = compare(make_layer, values)
        except Exception:  # noqa: BLE001 - reported, not hidden
            results = dict.fromkeys(values, traceback.format_exc(limit=-3))
        for value, result in results.items():
            report[f"{name}/{value}"] = result
    return report


if __name__ == "__main__":
    selected = sys.argv[1:] or list(LAYERS) + list(UPSTREAM)
    everything = {**LAYERS, **UPSTREAM}
    cases = {name: everything[name] for name in selected}
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    print(json.dumps({"backend": keras.backend.backend(), "cases": run(cases)}))
