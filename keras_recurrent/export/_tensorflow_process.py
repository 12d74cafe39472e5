"""`export_saved_model` for backends that Keras cannot export (PyTorch).

Keras' `ExportArchive` cannot trace a model on PyTorch ("`track` is not
supported for Layers and Models in the torch backend", even for a plain
`keras.layers.LSTM`). The model is saved to a temporary `.keras` file, loaded
in a Python subprocess on the TensorFlow backend and exported there: the same
config and weights give the SavedModel that a TensorFlow user gets.
"""

import json
import os
import pathlib
import subprocess
import sys
import tempfile

import keras

# Run with `python -c` on the TensorFlow backend.
_EXPORT_SCRIPT = """
import json
import sys

import keras
import tensorflow as tf

import keras_recurrent  # noqa: F401  (registers the layers)
from keras_recurrent.export import saved_model

model_path, filepath, options = sys.argv[1:]
options = json.loads(options)
model = keras.saving.load_model(model_path, compile=False)
signature = options["input_signature"]
if signature is not None:
    signature = [
        tf.TensorSpec(spec["shape"], spec["dtype"], name=spec["name"])
        for spec in signature
    ]
saved_model.export_saved_model(
    model,
    filepath,
    lengths=options["lengths"],
    input_signature=signature,
    endpoint_name=options["endpoint_name"],
)
"""


def export_in_tensorflow_process(
    model, filepath, *, lengths, input_signature, endpoint_name
):
    """Exports `model` from a subprocess on the TensorFlow backend."""
    package_root = str(pathlib.Path(__file__).resolve().parents[2])
    python_path = os.environ.get("PYTHONPATH")
    env = {
        **os.environ,
        "KERAS_BACKEND": "tensorflow",
        "PYTHONPATH": (
            package_root
            if not python_path
            else os.pathsep.join([package_root, python_path])
        ),
    }
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    options = {
        "lengths": lengths,
        "endpoint_name": endpoint_name,
        "input_signature": None
        if input_signature is None
        else [
            {
                "shape": spec.shape.as_list(),
                "dtype": spec.dtype.name,
                "name": spec.name,
            }
            for spec in input_signature
        ],
    }
    with tempfile.TemporaryDirectory() as tmp:
        model_path = os.path.join(tmp, "model.keras")
        try:
            model.save(model_path)
        except Exception as error:
            raise ValueError(
                f"On the {keras.backend.backend()} backend the model is "
                "exported from a TensorFlow process, rebuilt from its config "
                f"and weights, but model {model.name!r} could not be saved "
                f"to a `.keras` file: {error}"
            ) from error
        result = subprocess.run(
            [
                sys.executable,
                "-c",
                _EXPORT_SCRIPT,
                model_path,
                str(filepath),
                json.dumps(options),
            ],
            capture_output=True,
            text=True,
            env=env,
        )
    if result.returncode:
        raise RuntimeError(
            f"Exporting model {model.name!r} from a TensorFlow process (the "
            f"{keras.backend.backend()} backend cannot trace it) failed:\n"
            f"{result.stderr[-4000:]}"
        )
