"""One SavedModel per family, exported on the current Keras backend.

    KERAS_BACKEND=jax python -m tests.export_matrix OUT_DIR [CASE ...]

exports, for each case of `CASES`, a model with fixed weights to
`OUT_DIR/<case>/saved_model` with `kr.export.export_saved_model` (open batch,
open `T`, `N` and `E`; `lengths=True` for sequences), and writes beside it
`inputs.npz` (the signature's feeds) and `expected.npz` (what the Keras model
predicts on this backend). It prints one JSON line: the backend, and for each
case `"ok"` or the error. `tests/export/test_backend_export.py` runs it once
per backend and serves every artifact in plain TensorFlow.
"""

import json
import pathlib
import sys
import traceback

import keras
import numpy as np

import keras_recurrent as kr
from keras_recurrent.export import saved_model
from keras_recurrent.testing import export as export_testing
from tests.layers import graph_reference
from tests.layers import tree_reference

FEATURES, UNITS = 3, 4
LENGTHS = np.array([6, 4, 1], dtype="int32")


def _set_weights(model, seed):
    rng = np.random.default_rng(seed)
    model.set_weights(
        [
            rng.uniform(-0.5, 0.5, w.shape).astype(w.dtype)
            for w in model.get_weights()
        ]
    )
    return model


def _sequences(seed, pad=0.0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(len(LENGTHS), 6, FEATURES)).astype("float32")
    valid = np.arange(6)[None, :] < LENGTHS[:, None]
    return np.where(valid[..., None], x, np.float32(pad))


def _sequence_case(make_layer, masking=True, lengths=True, seed=0):
    """A sequence model; `masking=False` passes the lengths as a mask."""

    def case():
        frames = keras.Input((None, FEATURES), name="frames")
        x = keras.layers.Masking(0.0)(frames) if masking else frames
        x = make_layer()(x)
        model = keras.Model(frames, keras.layers.Dense(2, name="score")(x))
        _set_weights(model, seed)
        # Padding the client filled with junk: the lengths decide.
        x = _sequences(seed, pad=0.0 if lengths is None else 3.0)
        return model, {"frames": x}, LENGTHS if lengths else None

    return case


def _tree_case(nary):
    """Both outputs of a Tree-LSTM: root states and every node's state."""

    def case():
        trees = tree_reference.mixed_trees()
        if nary:
            trees = [trees[0], trees[2], trees[3]]
        arity = 2 if nary else 5
        inputs = tree_reference.encode(trees, arity, FEATURES)
        model_inputs = kr.trees.tree_inputs(
            arity, node_features=FEATURES, levels=False
        )
        trees = list(model_inputs.values())
        options = {"arity": arity} if nary else {}
        layer_class = (
            kr.layers.NaryTreeLSTM if nary else kr.layers.ChildSumTreeLSTM
        )
        root = layer_class(UNITS, name="root_tree", **options)(trees)
        nodes = layer_class(
            UNITS, return_nodes=True, name="node_tree", **options
        )(trees)
        model = keras.Model(
            model_inputs,
            {
                "root": keras.layers.Dense(2, name="root")(root),
                "nodes": keras.layers.Identity(name="nodes")(nodes),
            },
        )
        _set_weights(model, 5)
        feeds = dict(zip(kr.trees.TREE_TENSOR_NAMES, inputs, strict=True))
        return model, feeds, None

    return case


def _graph_case():
    graphs = graph_reference.random_graphs(12)
    inputs = kr.graphs.graph_inputs(FEATURES)
    node_inputs, node_mask = inputs["node_inputs"], inputs["node_mask"]
    states = kr.layers.GatedGraph(6, 2, propagation_steps=2)(inputs)
    graph = kr.layers.GraphReadout(4)([states, node_inputs, node_mask])
    outputs = {
        "graph_logits": keras.layers.Dense(3, name="graph_logits")(graph),
        "node_logits": kr.layers.NodeSelection(name="node_logits")(
            [states, node_inputs, node_mask]
        ),
        "path_logits": kr.layers.GGSNN(
            6, 2, 2, propagation_steps=1, name="path_logits"
        )(inputs),
    }
    model = _set_weights(keras.Model(inputs, outputs), 7)
    return model, graphs, None


def _addons_case():
    """TensorFlow Addons' four cells, in their layers, masked."""
    frames = keras.Input((None, FEATURES), name="frames")
    x = keras.layers.Masking(0.0)(frames)
    x = kr.layers.LayerNormSimpleRNN(UNITS, return_sequences=True)(x)
    x = kr.layers.NAS(UNITS, projection=3, return_sequences=True)(x)
    x = kr.layers.ESN(UNITS, leaky=0.5, return_sequences=True)(x)
    x = kr.layers.LayerNormLSTM(UNITS)(x)
    model = keras.Model(frames, keras.layers.Dense(2, name="score")(x))
    _set_weights(model, 6)
    return model, {"frames": _sequences(6, pad=3.0)}, LENGTHS


def _wrappers_case():
    frames = keras.Input((None, FEATURES), name="frames")
    x = keras.layers.Masking(0.0)(frames)
    x = kr.layers.ResidualStack(
        [
            kr.layers.PeepholeLSTM(FEATURES, return_sequences=True),
            kr.layers.CoupledLSTM(FEATURES, return_sequences=True),
        ],
        name="stack",
    )(x)
    pooled = kr.layers.SequencePooling("mean", name="pool")(x)
    truncated = kr.layers.TruncatedRNN(
        keras.layers.LSTM(UNITS), window=3, name="truncated"
    )(frames)
    x = keras.layers.Concatenate()([pooled, truncated])
    model = keras.Model(frames, keras.layers.Dense(2, name="score")(x))
    _set_weights(model, 9)
    return model, {"frames": _sequences(9)}, None


CASES = {
    "PeepholeLSTM": _sequence_case(
        lambda: kr.layers.PeepholeLSTM(UNITS), seed=1
    ),
    "CoupledLSTM (mask)": _sequence_case(
        lambda: kr.layers.CoupledLSTM(UNITS), masking=False, seed=2
    ),
    "LSTMVariant(FGR)": _sequence_case(
        lambda: kr.layers.LSTMVariant(UNITS, variant="FGR"),
        masking=False,
        lengths=False,
        seed=3,
    ),
    "TFA cells (LayerNormSimpleRNN, NAS, ESN, LayerNormLSTM)": _addons_case,
    "GatedFeedbackRNN": _sequence_case(
        lambda: kr.layers.GatedFeedbackRNN([UNITS, 3], cell_type="lstm"),
        seed=4,
    ),
    "ChildSumTreeLSTM": _tree_case(nary=False),
    "NaryTreeLSTM": _tree_case(nary=True),
    "GatedGraph + readouts + GGSNN": _graph_case,
    "Wrappers": _wrappers_case,
}


def _slug(name):
    return "".join(c if c.isalnum() else "_" for c in name).strip("_")


def export_case(case, directory):
    """Exports one case to `directory`; writes its feeds and predictions."""
    model, feeds, lengths = case()
    export_path = directory / "saved_model"
    specs = saved_model.export_saved_model(
        model, export_path, lengths=lengths is not None
    )
    input_specs = specs[:-1] if lengths is not None else specs
    arrays = export_testing._signature_arrays(feeds, input_specs)
    expected = saved_model._output_dict(
        model,
        export_testing._expected_outputs(model, arrays, input_specs, lengths),
    )
    signature_feeds = {
        spec.name: array
        for spec, array in zip(input_specs, arrays, strict=True)
    }
    if lengths is not None:
        signature_feeds[saved_model.LENGTHS_NAME] = lengths
    np.savez(directory / "inputs.npz", **signature_feeds)
    np.savez(
        directory / "expected.npz",
        **{
            name: keras.ops.convert_to_numpy(value)
            for name, value in expected.items()
        },
    )


def run(out_dir, names=None):
    """`{case: "ok" or the error}`; artifacts under `out_dir/<slug>`.

    `names`: the cases to run, default all.
    """
    results = {}
    for name, case in CASES.items():
        if names and name not in names:
            continue
        directory = pathlib.Path(out_dir) / _slug(name)
        directory.mkdir(parents=True, exist_ok=True)
        try:
            export_case(case, directory)
            results[name] = "ok"
        except Exception as error:  # noqa: BLE001 - reported, not hidden
            lines = traceback.format_exception_only(type(error), error)
            results[name] = "".join(lines).strip()[-800:]
    return results


if __name__ == "__main__":
    results = run(sys.argv[1], sys.argv[2:])
    print(json.dumps({"backend": keras.backend.backend(), "cases": results}))
