"""Tests of `keras_recurrent._checks`: `check_option` and its use (every
string option of the package is case-insensitive and stored canonically),
`check_int`'s `context`, `check_output_units` and `check_float_dtype`."""

import keras
import numpy as np
import pytest

import keras_recurrent as kr
from keras_recurrent._checks import check_float_dtype
from keras_recurrent._checks import check_int
from keras_recurrent._checks import check_option
from keras_recurrent._checks import check_output_units


def test_check_option_returns_the_canonical_spelling():
    assert check_option("mode", "MAX", ("last", "max")) == "max"
    assert check_option("mode", "Last", ["last", "max"]) == "last"
    assert check_option("variant", "cifg", {"V": 0, "CIFG": 1}) == "CIFG"
    assert check_option("split", None, ("train",), allow_none=True) is None


@pytest.mark.parametrize(
    "value, allow_none, message",
    [
        ("median", False, r"`mode` must be one of \['last', 'max'\]"),
        (None, False, "Received: mode=None"),
        (3, False, "Received: mode=3"),
        ("", True, r"`mode` must be None or one of .*Received: mode=''"),
        ("max ", False, "Received: mode='max '"),
    ],
)
def test_check_option_rejects(value, allow_none, message):
    with pytest.raises(ValueError, match=message):
        check_option("mode", value, ("last", "max"), allow_none=allow_none)


# (factory given the spelling, the option's attribute or result, canonical).
LAYER_OPTIONS = [
    (
        lambda s: kr.layers.GatedFeedbackRNN(4, cell_type=s),
        "cell_type",
        "lstm",
    ),
    (
        lambda s: kr.layers.GatedFeedbackRNN(4, feedback=s),
        "feedback",
        "fixed",
    ),
    (
        lambda s: kr.layers.GatedFeedbackCell(4, output_mode=s),
        "output_mode",
        "all",
    ),
    (lambda s: kr.layers.LSTMVariant(4, variant=s), "variant", "CIFG"),
    (lambda s: kr.layers.SequencePooling(mode=s), "mode", "attention"),
    (
        lambda s: kr.layers.GatedGraph(4, 2, aggregation=s),
        "aggregation",
        "dense",
    ),
    (
        lambda s: kr.layers.GGSNN(4, 2, 1, task=s, num_classes=3),
        "task",
        "graph_classification",
    ),
]


@pytest.mark.parametrize("factory, attribute, canonical", LAYER_OPTIONS)
def test_layer_options_are_case_insensitive(factory, attribute, canonical):
    for spelling in (canonical.lower(), canonical.upper(), canonical.title()):
        layer = factory(spelling)
        assert getattr(layer, attribute) == canonical
        assert layer.get_config()[attribute] == canonical
    with pytest.raises(ValueError, match=f"{attribute}='nope'"):
        factory("nope")


def test_tuning_tasks_are_case_insensitive():
    sequence = kr.tuning.SequenceHyperModel((5, 2), 3, task="Classification")
    assert sequence.task == "classification"
    feedback = kr.tuning.GatedFeedbackHyperModel((5, 2), 1, task="REGRESSION")
    assert feedback.task == "regression"
    tree = kr.tuning.TreeHyperModel(2, 3, vocabulary_size=5, task="Regression")
    assert tree.task == "regression"
    graph = kr.tuning.GraphHyperModel(
        2, 1, task="NODE_SELECTION", output_steps=1
    )
    assert graph.task == "node_selection"


def test_dataset_options_are_case_insensitive():
    lower = kr.datasets.program_eval(4, 3, 2, strategy="mix", split="test")
    upper = kr.datasets.program_eval(4, 3, 2, strategy="MIX", split="Test")
    assert repr(lower) == repr(upper)
    config = kr.datasets.ProgramEvalConfig(name="x", strategy="Mix")
    assert config.strategy == "mix"
    lower = kr.datasets.babi_graph_arrays("task_4", 3, seed=1)
    upper = kr.datasets.babi_graph_arrays("TASK_4", 3, seed=1)
    for key in lower:
        np.testing.assert_array_equal(lower[key], upper[key])


def test_tree_binarize_is_case_insensitive():
    lower = kr.trees.encode_tree("(0 1 2 3)", binarize="left")
    upper = kr.trees.encode_tree("(0 1 2 3)", binarize="LEFT")
    for key in lower:
        np.testing.assert_array_equal(lower[key], upper[key])
    with pytest.raises(ValueError, match="None or one of.*binarize='up'"):
        kr.trees.encode_tree("(0 1 2 3)", binarize="up")


def test_check_int_context_follows_the_bound():
    assert check_int("output_units", 2, 2, context="for task='x'") == 2
    message = (
        r"`output_units` must be an integer >= 2 for task='classification'\. "
        r"Received: output_units=1$"
    )
    with pytest.raises(ValueError, match=message):
        check_int("output_units", 1, 2, context="for task='classification'")
    with pytest.raises(ValueError, match=r"Received: output_units=True"):
        check_int("output_units", True, 1, context="for task='regression'")


def test_check_output_units_bound_depends_on_classification():
    assert check_output_units(2, "x", classification=True) == 2
    assert check_output_units(1, "x", classification=False) == 1
    with pytest.raises(ValueError, match=r">= 2 for task='x'\. .*=1$"):
        check_output_units(1, "x", classification=True)
    with pytest.raises(ValueError, match=r">= 1 for task='y'\. .*=0$"):
        check_output_units(0, "y", classification=False)


# Each HyperModel made with `(output_units, task)`.
HYPER_MODELS = {
    "sequence": lambda units, task: kr.tuning.SequenceHyperModel(
        (None, 3), units, task=task
    ),
    "tree": lambda units, task: kr.tuning.TreeHyperModel(
        2, units, node_features=3, task=task
    ),
    "graph": lambda units, task: kr.tuning.GraphHyperModel(
        2, 1, task=task, output_units=units
    ),
}


@pytest.mark.parametrize(
    ("kind", "task", "minimum"),
    [
        ("sequence", "classification", 2),
        ("sequence", "regression", 1),
        ("tree", "classification", 2),
        ("tree", "regression", 1),
        ("graph", "graph_classification", 2),
        ("graph", "graph_regression", 1),
    ],
)
def test_hyper_models_share_the_output_units_check(kind, task, minimum):
    make = HYPER_MODELS[kind]
    make(minimum, task)
    message = (
        rf"^Argument `output_units` must be an integer >= {minimum} for "
        rf"task='{task}'\. Received: output_units={minimum - 1}$"
    )
    with pytest.raises(ValueError, match=message):
        make(minimum - 1, task)


class _Layer:
    pass


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_check_float_dtype_passes_floats(dtype):
    check_float_dtype(_Layer(), np.zeros((2, 3), dtype))


@pytest.mark.parametrize("dtype", ["int32", "int64", "bool"])
def test_check_float_dtype_names_layer_argument_and_dtype(dtype):
    message = (
        rf"_Layer expects floating-point `node_inputs` .*Embedding.*"
        rf"Received: node_inputs\.dtype={dtype}$"
    )
    with pytest.raises(ValueError, match=message):
        check_float_dtype(_Layer(), np.zeros((2, 3), dtype), "node_inputs")


def test_layers_and_cells_share_the_float_check():
    tokens = np.zeros((2, 3, 4), "int32")
    for layer in (
        kr.layers.PeepholeLSTM(2),
        kr.layers.GatedFeedbackRNN(2),
        keras.layers.RNN(kr.layers.CoupledLSTMCell(2)),
    ):
        with pytest.raises(ValueError, match=r"Received: inputs\.dtype=int32"):
            layer(tokens)
