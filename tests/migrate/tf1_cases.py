"""The TF1 fixtures against `kr.migrate.tf1_rnn`, on the current backend.

    KERAS_BACKEND=jax python -m tests.migrate.tf1_cases

prints one JSON line: the backend, and for each case the largest absolute
difference between the layer and TF1's outputs saved in the fixture, or the
error it raised. A case is a fixture and what the layer returns:
`sequences` (`return_sequences=True`, every step, zeros past the lengths
included), `final` (the last valid output), and, on TensorFlow and JAX,
`compiled` (the sequences from a `jit_compile=True` model whose `Masking`
layer makes the mask from zero-padded inputs). `tests/migrate/
test_tf1_rnn.py` runs it on JAX and PyTorch; TensorFlow is needed to read
the checkpoints, on every backend.
"""

import json
import pathlib
import traceback

import keras
import numpy as np

import keras_recurrent as kr

FIXTURES = pathlib.Path(__file__).parent / "fixtures" / "tf1"
NAMES = sorted(path.stem for path in FIXTURES.glob("*.npz"))


def load_fixture(name):
    """The arrays of fixture `name`, and the `tf1_rnn` keyword arguments of
    its TF1 cells."""
    with np.load(FIXTURES / f"{name}.npz") as arrays:
        fixture = {key: arrays[key] for key in arrays.files}
    options = {"forget_bias": float(fixture["forget_bias"])}
    for key in ("cell_clip", "proj_clip"):
        if not np.isnan(fixture[key]):
            options[key] = float(fixture[key])
    return fixture, options


def build(name, **overrides):
    """`(layer, fixture)` for fixture `name`; `overrides` go to `tf1_rnn`."""
    fixture, options = load_fixture(name)
    layer = kr.migrate.tf1_rnn(
        str(FIXTURES / f"{name}.ckpt"),
        str(fixture["scope"]),
        **{**options, **overrides},
    )
    return layer, fixture


def sequence_mask(fixture):
    steps = fixture["x"].shape[1]
    return np.arange(steps)[None, :] < fixture["lengths"][:, None]


def difference(actual, expected):
    actual = np.asarray(keras.ops.convert_to_numpy(actual), "float64")
    if actual.shape != expected.shape:
        return f"shape {actual.shape}, expected {expected.shape}"
    return float(np.max(np.abs(actual - expected)))


def run_case(name, returns):
    """The largest difference of one case (see the module docstring)."""
    if returns == "compiled":
        layer, fixture = build(name, return_sequences=True)
        mask = sequence_mask(fixture)
        padded = np.where(mask[..., None], fixture["x"], 0.0)
        model = keras.Sequential(
            [
                keras.Input(padded.shape[1:]),
                keras.layers.Masking(0.0),
                layer,
            ]
        )
        model.compile(jit_compile=True)
        outputs = model.predict(padded, verbose=0)
        return difference(outputs, fixture["outputs"])
    layer, fixture = build(name, return_sequences=returns == "sequences")
    outputs = layer(fixture["x"], mask=sequence_mask(fixture))
    expected = fixture["outputs" if returns == "sequences" else "final"]
    return difference(outputs, expected)


def cases(backend):
    kinds = ["sequences", "final"]
    if backend != "torch":
        kinds.append("compiled")
    return [(name, kind) for name in NAMES for kind in kinds]


def main():
    backend = keras.backend.backend()
    report = {}
    for name, kind in cases(backend):
        try:
            report[f"{name}/{kind}"] = run_case(name, kind)
        except Exception:
            report[f"{name}/{kind}"] = traceback.format_exc(limit=3)
    print(json.dumps({"backend": backend, "cases": report}))


if __name__ == "__main__":
    main()
