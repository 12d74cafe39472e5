"""Checking that an exported SavedModel serves what the Keras model predicts."""

import os
import pathlib
import subprocess
import sys
import warnings

import keras
import numpy as np

from keras_recurrent.export import saved_model

# Run with `python -c`: loads the SavedModel where `keras_recurrent` cannot be
# imported, as a serving binary would, and calls its signature.
_SERVE_SCRIPT = """
import sys

sys.modules["keras_recurrent"] = None
try:
    import keras_recurrent  # noqa: F401
except ImportError:
    pass
else:
    sys.exit("keras_recurrent is importable in the serving process")

import numpy as np
import tensorflow as tf

path, endpoint, inputs_path, outputs_path = sys.argv[1:]
serve = tf.saved_model.load(path).signatures[endpoint]
with np.load(inputs_path) as inputs:
    feeds = {name: tf.constant(inputs[name]) for name in inputs.files}
outputs = serve(**feeds)
np.savez(outputs_path, **{name: t.numpy() for name, t in outputs.items()})
"""


def assert_export_roundtrip(
    model,
    inputs,
    *,
    tmp_path,
    lengths=None,
    atol=1e-5,
    input_signature=None,
    endpoint_name="serve",
):
    """Asserts that the exported SavedModel serves what the model predicts.

    Exports `model` with `kr.export.export_saved_model` (with the `"lengths"`
    input when `lengths` is given), then in a separate Python process, where
    `keras_recurrent` cannot be imported, loads it with `tf.saved_model.load`
    and calls its signature on `inputs`. Arrays go to and come back from that
    process through `.npz` files in `tmp_path`. Meanwhile it runs
    `saved_model_cli show` on the artifact and checks that it lists every
    signature input.

    The served outputs are compared with `model.predict(inputs)`; with
    `lengths`, with what the Keras model predicts for that padding: if the
    model derives its mask from values (`Masking`, `Embedding(mask_zero=
    True)`), `model.predict` on `inputs` with the pad value written into the
    padded steps, else `model(inputs, mask=t < lengths)`.

    Args:
        model: A built `keras.Model`.
        inputs: The model's input: a NumPy array, or a list of arrays in the
            order of `model.inputs`, or a dict keyed by the signature's input
            names.
        tmp_path: `str` or `pathlib.Path` of an existing, writable directory
            (pytest's `tmp_path`).
        lengths: Optional int array `(batch,)` of valid time steps per
            sequence. Exports with `lengths=True` and feeds them.
        atol: Largest absolute difference allowed per output.
            Defaults to `1e-5`.
        input_signature: Optional list of specs, as in
            `kr.export.export_saved_model`; needed for subclassed models.
        endpoint_name: Name of the signature. Defaults to `"serve"`.

    Returns:
        The served outputs, a dict of NumPy arrays keyed by output name.

    Raises:
        AssertionError: If the serving process fails, `saved_model_cli` does
            not list an input, or an output differs by more than `atol`.

    Example:

    >>> served = kr.testing.assert_export_roundtrip(
    ...     model, x, tmp_path=tmp_path, lengths=np.array([5, 3])
    ... )
    >>> sorted(served)
    ['dense']
    """
    tmp_path = pathlib.Path(tmp_path)
    export_path = tmp_path / "saved_model"
    specs = saved_model.export_saved_model(
        model,
        export_path,
        lengths=lengths is not None,
        input_signature=input_signature,
        endpoint_name=endpoint_name,
    )
    input_specs = specs[:-1] if lengths is not None else specs
    arrays = _signature_arrays(inputs, input_specs)
    feeds = {
        spec.name: array
        for spec, array in zip(input_specs, arrays, strict=True)
    }
    if lengths is not None:
        lengths = np.asarray(lengths, dtype="int32")
        feeds[saved_model.LENGTHS_NAME] = lengths
    served = _serve_and_check_inputs(export_path, endpoint_name, specs, feeds)
    expected = saved_model._output_dict(
        model, _expected_outputs(model, arrays, input_specs, lengths)
    )
    _assert_outputs_match(served, expected, atol)
    return served


def _signature_arrays(inputs, input_specs):
    """`inputs` as one array per signature input, in the specs' dtypes."""
    return [
        array.astype(spec.dtype.as_numpy_dtype)
        for spec, array in zip(
            input_specs,
            _input_arrays(inputs, [spec.name for spec in input_specs]),
            strict=True,
        )
    ]


def _serve_and_check_inputs(export_path, endpoint_name, specs, feeds):
    """Serves `feeds` in a separate process and checks `saved_model_cli`.

    Returns the served outputs, a dict of NumPy arrays. The `.npz` files
    that carry the arrays lie next to `export_path`.
    """
    tmp_path = export_path.parent
    inputs_path = tmp_path / "serve_inputs.npz"
    outputs_path = tmp_path / "serve_outputs.npz"
    np.savez(inputs_path, **feeds)
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}
    # Both load TensorFlow for seconds: run them side by side.
    show = _start_saved_model_cli_show(export_path, endpoint_name, env)
    serve = subprocess.run(
        [
            sys.executable,
            "-c",
            _SERVE_SCRIPT,
            str(export_path),
            endpoint_name,
            str(inputs_path),
            str(outputs_path),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    show_stdout, show_stderr = show.communicate()
    if serve.returncode:
        raise AssertionError(
            "Serving the SavedModel in a separate process failed:\n"
            f"{serve.stderr[-4000:]}"
        )
    if show.returncode:
        raise AssertionError(f"saved_model_cli failed:\n{show_stderr[-4000:]}")
    for spec in specs:
        if f"inputs['{spec.name}']" not in show_stdout:
            raise AssertionError(
                f"saved_model_cli does not list the input {spec.name!r} of "
                f"signature {endpoint_name!r}:\n{show_stdout}"
            )
    with np.load(outputs_path) as outputs:
        return {name: outputs[name] for name in outputs.files}


def _start_saved_model_cli_show(export_path, endpoint_name, env):
    """Starts `saved_model_cli show` on the signature; returns the process."""
    saved_model_cli = pathlib.Path(sys.executable).parent / "saved_model_cli"
    return subprocess.Popen(
        [
            str(saved_model_cli),
            "show",
            "--dir",
            str(export_path),
            "--tag_set",
            "serve",
            "--signature_def",
            endpoint_name,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def _assert_outputs_match(served, expected, atol):
    """Asserts that the served outputs are the model's, within `atol`."""
    if sorted(served) != sorted(expected):
        raise AssertionError(
            f"The signature serves outputs {sorted(served)}, but the model "
            f"has outputs {sorted(expected)}."
        )
    for name, value in expected.items():
        np.testing.assert_allclose(
            served[name],
            keras.ops.convert_to_numpy(value),
            rtol=0,
            atol=atol,
            err_msg=f"Served output {name!r} differs from the Keras model's.",
        )


def _input_arrays(inputs, names):
    if isinstance(inputs, dict):
        missing = sorted(set(names) - set(inputs))
        if missing:
            raise ValueError(
                f"Argument `inputs` misses the signature inputs {missing}. "
                f"Received keys: {sorted(inputs)}"
            )
        arrays = [inputs[name] for name in names]
    elif isinstance(inputs, (list, tuple)):
        arrays = list(inputs)
    else:
        arrays = [inputs]
    if len(arrays) != len(names):
        raise ValueError(
            f"Argument `inputs` must hold one array per model input {names}. "
            f"Received {len(arrays)} arrays."
        )
    return [np.asarray(array) for array in arrays]


def _expected_outputs(model, arrays, input_specs, lengths):
    """What the Keras model predicts for `arrays` padded to `lengths`."""
    model_inputs = saved_model._pack_inputs(model, arrays)
    if lengths is None:
        return model.predict(model_inputs, verbose=0)
    index, pad_value = saved_model._sequence_input(
        model, saved_model._model_inputs(model), input_specs
    )
    timesteps = arrays[index].shape[1]
    mask = np.arange(timesteps)[None, :] < lengths[:, None]
    if pad_value is not None:
        padded = list(arrays)
        broadcast_mask = mask.reshape(
            mask.shape + (1,) * (padded[index].ndim - 2)
        )
        padded[index] = np.where(
            broadcast_mask,
            padded[index],
            np.asarray(pad_value, padded[index].dtype),
        )
        return model.predict(saved_model._pack_inputs(model, padded), verbose=0)
    masks = [None] * len(arrays)
    masks[index] = keras.ops.convert_to_tensor(mask)  # torch takes no NumPy
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore", saved_model._MASK_WARNING, UserWarning
        )
        return model(
            model_inputs,
            mask=saved_model._pack_inputs(model, masks),
            training=False,
        )
