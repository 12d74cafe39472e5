"""Models made on JAX, to LiteRT (issue 44).

    KERAS_BACKEND=jax python -m tests.export.jax_litert_cases DIRECTORY

Keras' `model.export(format="litert")` refuses the JAX backend. The route
that works from JAX for the sequence families: `kr.export.export_saved_model`
with every size fixed in `input_signature` (batch and `T`), then the TFLite
converter, LiteRT builtin ops only. For each case of `FIXED_CASES` this
exports the model, converts it, runs the file in `ai_edge_litert` and
compares it with the JAX model's `predict`. It also saves each model of
`KERAS_FILES` as a `.keras` file with its feeds and JAX outputs
(`name.keras`, `name_inputs.npz`, `name_outputs.npz`), for the route of
every family: load on TensorFlow and export there
(tests/export/test_jax_litert.py). It prints one JSON line: for each case
`{"max difference", "ops"}` or the error.
"""

import json
import pathlib
import sys
import traceback

import keras
import numpy as np
import tensorflow as tf

import keras_recurrent as kr
from tests import export_matrix
from tests import runtime_export_matrix


def _gated_feedback(masking):
    def case():
        model, feeds, _ = export_matrix._sequence_case(
            lambda: kr.layers.GatedFeedbackRNN(
                [export_matrix.UNITS, 3], cell_type="lstm"
            ),
            masking=masking,
            lengths=masking or None,
            seed=4,
        )()
        return model, {"frames": feeds["frames"]}

    return case


def _tree():
    from tests.export import tree_export_cases as trees

    return trees.model("nary"), trees.batch("nary", trees.TREES[0], 0)


# Converted from JAX with builtins only: the sequence families.
FIXED_CASES = {
    "PeepholeLSTM (Masking, clip, projection)": (
        runtime_export_matrix._peephole_case
    ),
    "CoupledLSTM (lengths input)": runtime_export_matrix._lengths_case,
    "LSTMVariant(FGR)": runtime_export_matrix._sequence("LSTMVariant(FGR)"),
    "GatedFeedbackRNN (Masking)": _gated_feedback(masking=True),
    "GatedFeedbackRNN (no mask)": _gated_feedback(masking=False),
}
# Saved as `.keras` files for TensorFlow to export: a sequence model, and
# a Tree-LSTM, which does not convert from JAX (its tree checks sort, and
# LiteRT does not run the scatters of its parents' segment min and max).
KERAS_FILES = {
    "gated_feedback_masked": _gated_feedback(masking=True),
    "nary_tree": _tree,
}


def _specs(model, feeds):
    """The fixed-shape `tf.TensorSpec`s of the model inputs, in order."""
    names = [tensor.name for tensor in model.inputs]
    return [
        tf.TensorSpec(feeds[name].shape, feeds[name].dtype, name=name)
        for name in names
    ]


def litert_from_jax(model, feeds, directory):
    """`{"max difference", "ops"}` of the model's LiteRT file made on JAX
    (fixed shapes, builtin ops), against the model's `predict`."""
    from ai_edge_litert.interpreter import Interpreter

    expected = runtime_export_matrix._predict(model, feeds)
    path = str(pathlib.Path(directory) / "saved_model")
    kr.export.export_saved_model(
        model, path, input_signature=_specs(model, feeds)
    )
    converter = tf.lite.TFLiteConverter.from_saved_model(
        path, signature_keys=["serve"]
    )
    converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS]
    interpreter = Interpreter(model_content=converter.convert())
    served = interpreter.get_signature_runner("serve")(**feeds)
    difference = max(
        float(np.max(np.abs(np.asarray(got, "float64") - want)))
        for want, got in runtime_export_matrix._match(expected, served)
    )
    ops = sorted({op["op_name"] for op in interpreter._get_ops_details()})
    return {"max difference": difference, "ops": ops}


def main(directory):
    directory = pathlib.Path(directory)
    report = {"backend": keras.backend.backend(), "cases": {}}
    for name, case in FIXED_CASES.items():
        case_directory = directory / export_matrix._slug(name)
        case_directory.mkdir(parents=True, exist_ok=True)
        try:
            model, feeds = case()
            report["cases"][name] = litert_from_jax(
                model, feeds, case_directory
            )
        except Exception as error:  # noqa: BLE001 - reported, not hidden
            lines = traceback.format_exception_only(type(error), error)
            report["cases"][name] = "".join(lines).strip()[-800:]
    for name, case in KERAS_FILES.items():
        model, feeds = case()
        model.save(directory / f"{name}.keras")
        expected = runtime_export_matrix._predict(model, feeds)
        np.savez(directory / f"{name}_inputs.npz", **feeds)
        np.savez(directory / f"{name}_outputs.npz", **expected)
    print(json.dumps(report))


if __name__ == "__main__":
    main(sys.argv[1])
