"""Models made on JAX, to LiteRT (issue 44): from JAX with every size fixed
(`tests/export/jax_litert_cases.py`, run on JAX), and, for what does not
convert from JAX, a `.keras` file saved on JAX and exported on TensorFlow.
Each LiteRT file's output must equal the JAX model's `predict` to 1e-5."""

import json

import keras
import numpy as np
import pytest

from tests._subprocess import run_backend_module
from tests._subprocess import skip_unless_installed
from tests.export import jax_litert_cases

ATOL = 1e-5


@pytest.fixture(scope="module")
def made_on_jax(tmp_path_factory):
    skip_unless_installed("jax")
    skip_unless_installed("ai_edge_litert")
    directory = tmp_path_factory.mktemp("jax_litert")
    report = run_backend_module(
        "tests.export.jax_litert_cases", "jax", directory, timeout=900
    )
    assert report["backend"] == "jax"
    return directory, report["cases"]


@pytest.mark.slow
def test_fixed_shapes_from_jax_builtin_ops(made_on_jax):
    _, cases = made_on_jax
    failed = {k: v for k, v in cases.items() if isinstance(v, str)}
    assert not failed, failed
    assert sorted(cases) == sorted(jax_litert_cases.FIXED_CASES)
    print(json.dumps({k: v["max difference"] for k, v in cases.items()}))
    for name, result in cases.items():
        assert result["max difference"] <= ATOL, (name, result)
        # LiteRT builtins, the recurrence a `WHILE` (no Select TF ops, no
        # StableHLO op left).
        assert "WHILE" in result["ops"], (name, result["ops"])
        assert not any(
            op.startswith(("FLEX", "STABLEHLO")) for op in result["ops"]
        )


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(jax_litert_cases.KERAS_FILES))
def test_keras_file_from_jax_exports_on_tensorflow(made_on_jax, name, tmp_path):
    """A `.keras` file saved on JAX loads on TensorFlow and exports to
    LiteRT there (fixed shapes, builtin ops), for every family: the route
    for the models that do not convert from JAX (the trees, the graphs)."""
    if keras.backend.backend() != "tensorflow":
        pytest.skip("LiteRT export runs on TensorFlow")
    import tensorflow as tf
    from ai_edge_litert.interpreter import Interpreter

    directory, _ = made_on_jax
    model = keras.saving.load_model(directory / f"{name}.keras")
    with np.load(directory / f"{name}_inputs.npz") as arrays:
        feeds = {key: arrays[key] for key in arrays.files}
    with np.load(directory / f"{name}_outputs.npz") as arrays:
        (expected,) = (arrays[key] for key in arrays.files)
    names = [tensor.name for tensor in model.inputs]
    specs = {
        key: keras.InputSpec(
            shape=feeds[key].shape, dtype=str(feeds[key].dtype), name=key
        )
        for key in names
    }
    path = str(tmp_path / f"{name}.tflite")
    model.export(
        path,
        format="litert",
        verbose=False,
        input_signature=[specs] if len(names) > 1 else [specs[names[0]]],
        target_spec={"supported_ops": [tf.lite.OpsSet.TFLITE_BUILTINS]},
    )
    (served,) = (
        Interpreter(model_path=path).get_signature_runner()(**feeds).values()
    )
    print(name, float(np.max(np.abs(served - expected))))
    np.testing.assert_allclose(served, expected, atol=ATOL)
