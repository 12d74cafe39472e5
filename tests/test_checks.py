"""Tests of `keras_recurrent._checks`: `check_option` and its use (every
string option of the package is case-insensitive and stored canonically),
`check_int`'s `context`, `check_output_units`, `check_float_dtype`, the
boolean, float, string, dtype and shape checks, and the rank-3 check that
the sequence layers share."""

import inspect

import keras
import numpy as np
import pytest

import keras_recurrent as kr
from keras_recurrent._checks import check_at_most
from keras_recurrent._checks import check_bool
from keras_recurrent._checks import check_dtype
from keras_recurrent._checks import check_float_dtype
from keras_recurrent._checks import check_int
from keras_recurrent._checks import check_known_last_axis
from keras_recurrent._checks import check_not_empty
from keras_recurrent._checks import check_option
from keras_recurrent._checks import check_output_units
from keras_recurrent._checks import check_positive_float
from keras_recurrent._checks import check_string
from keras_recurrent._checks import float_or_cast


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
        rf"_Layer: `node_inputs` must be floating-point .*Embedding.*"
        rf"Received: node_inputs\.dtype={dtype}$"
    )
    with pytest.raises(ValueError, match=message):
        check_float_dtype(_Layer(), np.zeros((2, 3), dtype), "node_inputs")


def test_layers_and_cells_share_the_dtype_check():
    # Integers are cast, as `keras.layers.LSTM` takes them; strings are not.
    tokens = np.zeros((2, 3, 4), "int32")
    strings = np.full((2, 3, 4), "a")
    for layer in (
        kr.layers.PeepholeLSTM(2),
        kr.layers.GatedFeedbackRNN(2),
        keras.layers.RNN(kr.layers.CoupledLSTMCell(2)),
    ):
        assert keras.ops.convert_to_numpy(layer(tokens)).dtype == "float32"
        with pytest.raises(ValueError, match=r"Received: inputs\.dtype=str"):
            layer(strings)


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8", "bool"])
def test_float_or_cast_casts_integers_to_the_compute_dtype(dtype):
    layer = keras.layers.Layer(dtype="mixed_float16")
    values = np.arange(6).reshape(2, 3).astype(dtype)
    cast = float_or_cast(layer, values)
    assert keras.backend.standardize_dtype(cast.dtype) == "float16"
    np.testing.assert_array_equal(keras.ops.convert_to_numpy(cast), values)
    # Floats are left to Keras' autocasting.
    floats = np.zeros((2, 3), "float64")
    assert float_or_cast(layer, floats) is floats


def test_float_or_cast_names_layer_argument_and_dtype():
    message = (
        r"_Layer: `inputs` must be numeric or boolean \(integers and booleans "
        r"are cast .*\)\. Received: inputs\.dtype=complex64$"
    )
    with pytest.raises(ValueError, match=message):
        float_or_cast(_Layer(), np.zeros((2, 3), "complex64"))


def test_check_bool_refuses_what_bool_would_coerce():
    assert check_bool("flag", True) is True
    # A NumPy bool is a bool (`tf.numpy_function` and arrays give them).
    flag = check_bool("flag", np.bool_(False))
    assert flag is False and type(flag) is bool
    assert check_bool("flag", None, allow_none=True) is None
    for value in ("yes", 1, 0, None, np.array([True])):
        with pytest.raises(
            ValueError,
            match=r"^Argument `flag` must be a boolean\. Received: flag=",
        ):
            check_bool("flag", value)
    with pytest.raises(ValueError, match=r"boolean or None\. .*flag='no'$"):
        check_bool("flag", "no", allow_none=True)


# Each constructor given one boolean argument, by name.
BOOLEAN_ARGUMENTS = {
    "ResidualStack.residual": lambda v: kr.layers.ResidualStack(
        [keras.layers.LSTMCell(2)], residual=v
    ),
    "ResidualStack.layer_norm": lambda v: kr.layers.ResidualStack(
        [keras.layers.LSTMCell(2)], layer_norm=v
    ),
    "ResidualStack.return_sequences": lambda v: kr.layers.ResidualStack(
        [keras.layers.LSTMCell(2)], return_sequences=v
    ),
    "TruncatedRNN.return_sequences": lambda v: kr.layers.TruncatedRNN(
        keras.layers.LSTM(2), window=2, return_sequences=v
    ),
    "SequencePooling.return_attention_scores": lambda v: (
        kr.layers.SequencePooling("attention", return_attention_scores=v)
    ),
    "LSTMVariantCell.use_peepholes": lambda v: kr.layers.LSTMVariantCell(
        2, use_peepholes=v
    ),
    "LSTMVariantCell.use_bias": lambda v: kr.layers.LSTMVariantCell(
        2, use_bias=v
    ),
    "LSTMVariantCell.unit_forget_bias": lambda v: kr.layers.LSTMVariantCell(
        2, unit_forget_bias=v
    ),
    "GatedFeedbackCell.use_bias": lambda v: kr.layers.GatedFeedbackCell(
        2, use_bias=v
    ),
    "GatedFeedbackCell.unit_forget_bias": lambda v: kr.layers.GatedFeedbackCell(
        2, unit_forget_bias=v
    ),
    "NodeSelection.use_bias": lambda v: kr.layers.NodeSelection(use_bias=v),
    "PeepholeLSTM.return_sequences": lambda v: kr.layers.PeepholeLSTM(
        2, return_sequences=v
    ),
    "GatedFeedbackRNN.go_backwards": lambda v: kr.layers.GatedFeedbackRNN(
        2, go_backwards=v
    ),
    "CoupledLSTM.stateful": lambda v: kr.layers.CoupledLSTM(2, stateful=v),
    "BackupAndRestore.delete_checkpoint": lambda v: (
        kr.callbacks.BackupAndRestore("backup", delete_checkpoint=v)
    ),
}


@pytest.mark.parametrize("argument", sorted(BOOLEAN_ARGUMENTS))
def test_boolean_arguments_refuse_other_values(argument):
    make = BOOLEAN_ARGUMENTS[argument]
    name = argument.split(".")[1]
    # `bool()` used to turn these into True (or 0 into False), silently.
    for value, shown in (("yes", "'yes'"), (0, "0")):
        with pytest.raises(
            ValueError,
            match=rf"^Argument `{name}` must be a boolean.*{name}={shown}$",
        ):
            make(value)


def test_boolean_arguments_keep_their_values():
    for value in (True, False):
        stack = kr.layers.ResidualStack(
            [keras.layers.LSTMCell(2)],
            residual=value,
            layer_norm=value,
            return_sequences=value,
        )
        assert (stack.residual, stack.layer_norm) == (value, value)
        assert stack.get_config()["return_sequences"] is value
        truncated = kr.layers.TruncatedRNN(
            keras.layers.LSTM(2), window=2, return_sequences=value
        )
        assert truncated.get_config()["return_sequences"] is value
        cell = kr.layers.LSTMVariantCell(
            2, variant="NIG", use_peepholes=value, use_bias=value
        )
        assert (cell.use_peepholes, cell.use_bias) == (value, value)
    # `None`: the variant's own choice.
    assert kr.layers.LSTMVariantCell(2, variant="NP").use_peepholes is False


def test_check_positive_float():
    assert check_positive_float("epsilon", 1) == 1.0
    assert check_positive_float("clip", None, allow_none=True) is None
    for value in (0, -0.5, True, "1", None, float("nan")):
        with pytest.raises(
            ValueError,
            match=r"^Argument `epsilon` must be a positive float\. Received",
        ):
            check_positive_float("epsilon", value)
    with pytest.raises(ValueError, match=r"float or None\. .*clip=0$"):
        kr.layers.LSTMVariantCell(2, cell_clip=0)
    with pytest.raises(ValueError, match=r"layer_norm_epsilon=-1\.0$"):
        kr.layers.ResidualStack(
            [keras.layers.LSTMCell(2)], layer_norm_epsilon=-1.0
        )


def test_check_int_without_bounds():
    assert check_int("seed", -3, allow_none=True) == -3
    assert check_int("seed", None, allow_none=True) is None
    with pytest.raises(
        ValueError,
        match=r"^Argument `seed` must be an integer or None\. Received: "
        r"seed=1\.5$",
    ):
        check_int("seed", 1.5, allow_none=True)
    with pytest.raises(ValueError, match=r"must be an integer in \[1, 3\]\."):
        check_int("nesting", 4, 1, 3)


def test_check_at_most():
    assert check_at_most("min_length", 3, "length", 3) == 3
    assert check_at_most("min_length", None, "length", 3) is None
    assert check_at_most("min_length", 9, "max_length", None) == 9
    message = (
        r"^Argument `min_length` must be <= `length`\. "
        r"Received: min_length=4, length=3$"
    )
    with pytest.raises(ValueError, match=message):
        check_at_most("min_length", 4, "length", 3)
    with pytest.raises(ValueError, match=message):
        kr.datasets.adding_problem(2, length=3, min_length=4)


def test_check_string_and_not_empty():
    assert check_string("run_id", "a") == "a"
    assert check_string("run_id", None, allow_none=True) is None
    for value in ("", 3, None):
        with pytest.raises(ValueError, match=r"non-empty string\. Received"):
            check_string("endpoint_name", value)
    with pytest.raises(ValueError, match=r"string or None\. .*run_id=''$"):
        kr.callbacks.BackupAndRestore("backup", run_id="")
    assert check_not_empty("graphs", [1]) == [1]
    with pytest.raises(ValueError, match=r"empty\. Received: graphs=\[\]$"):
        check_not_empty("graphs", [])
    with pytest.raises(ValueError, match=r"Received: targets.shape=\(2, 0\)$"):
        check_not_empty("targets", np.zeros((2, 0)))


def test_check_dtype_takes_dtype_objects_by_name():
    allowed = ("int32", "bool")
    assert check_dtype("node_mask_dtype", "bool", allowed) == "bool"
    assert check_dtype("node_mask_dtype", np.int32, allowed) == "int32"
    assert check_dtype("node_mask_dtype", np.dtype("bool"), allowed) == "bool"
    for value in ("int8", "float", None, "yes", 3):
        with pytest.raises(
            ValueError,
            match=r"must be one of \['int32', 'bool'\]\. "
            rf"Received: node_mask_dtype={value!r}$",
        ):
            check_dtype("node_mask_dtype", value, allowed)


def test_check_known_last_axis():
    assert check_known_last_axis("inputs", [2, 3]) == (2, 3)
    with pytest.raises(
        ValueError,
        match=r"^The last dimension of `inputs` must be defined for "
        r"mode='attention'\. Received: inputs.shape=\(None, 3, None\)$",
    ):
        kr.layers.SequencePooling("attention").build((None, 3, None))
    with pytest.raises(ValueError, match=r"`node_inputs` must be defined\. "):
        check_known_last_axis("node_inputs", (None, 4, None))


# Every sequence layer, to check its rank-3 message from `build`,
# `compute_output_shape` and `call`.
SEQUENCE_LAYERS = {
    "PeepholeLSTM": lambda: kr.layers.PeepholeLSTM(2),
    "ResidualStack": lambda: kr.layers.ResidualStack(
        [keras.layers.LSTMCell(2)]
    ),
    "SequencePooling": lambda: kr.layers.SequencePooling("mean"),
    "TruncatedRNN": lambda: kr.layers.TruncatedRNN(
        keras.layers.LSTM(2), window=2
    ),
}


@pytest.mark.parametrize("name", sorted(SEQUENCE_LAYERS))
def test_sequence_layers_share_the_rank_check(name):
    make = SEQUENCE_LAYERS[name]
    message = (
        rf"^{name}: `inputs` must have rank 3, \(batch, timesteps, "
        r"features\)\."
        r" Received: inputs.shape=\(2, 4\)$"
    )
    with pytest.raises(ValueError, match=message):
        make()(np.ones((2, 4), "float32"))
    with pytest.raises(ValueError, match=message):
        make().build((2, 4))
    if name != "PeepholeLSTM":  # Keras' RNN computes its own shapes.
        with pytest.raises(ValueError, match=message):
            make().compute_output_shape((2, 4))
    layer = make()
    outputs = layer(np.ones((2, 3, 4), "float32"))
    assert tuple(keras.tree.flatten(outputs)[0].shape)[0] == 2


# Every layer and cell that takes a `seed`, made with one.
SEEDED = {
    "ChildSumTreeLSTM": lambda seed: kr.layers.ChildSumTreeLSTM(2, seed=seed),
    "NaryTreeLSTM": lambda seed: kr.layers.NaryTreeLSTM(2, 2, seed=seed),
    "ChildSumTreeLSTMCell": lambda seed: kr.layers.ChildSumTreeLSTMCell(
        2, seed=seed
    ),
    "NaryTreeLSTMCell": lambda seed: kr.layers.NaryTreeLSTMCell(
        2, 2, seed=seed
    ),
    "GatedFeedbackCell": lambda seed: kr.layers.GatedFeedbackCell(
        2, num_layers=2, seed=seed
    ),
    "GatedFeedbackRNN": lambda seed: kr.layers.GatedFeedbackRNN(
        2, num_layers=2, seed=seed
    ),
    "LSTMVariant": lambda seed: kr.layers.LSTMVariant(2, seed=seed),
    "LSTMVariantCell": lambda seed: kr.layers.LSTMVariantCell(2, seed=seed),
    "PeepholeLSTM": lambda seed: kr.layers.PeepholeLSTM(2, seed=seed),
    "PeepholeLSTMCell": lambda seed: kr.layers.PeepholeLSTMCell(2, seed=seed),
    "CoupledLSTM": lambda seed: kr.layers.CoupledLSTM(2, seed=seed),
    "CoupledLSTMCell": lambda seed: kr.layers.CoupledLSTMCell(2, seed=seed),
    "LayerNormLSTM": lambda seed: kr.layers.LayerNormLSTM(2, seed=seed),
    "LayerNormLSTMCell": lambda seed: kr.layers.LayerNormLSTMCell(2, seed=seed),
    "LayerNormSimpleRNN": lambda seed: kr.layers.LayerNormSimpleRNN(
        2, seed=seed
    ),
    "LayerNormSimpleRNNCell": lambda seed: kr.layers.LayerNormSimpleRNNCell(
        2, seed=seed
    ),
    "ResidualStack": lambda seed: kr.layers.ResidualStack(
        [keras.layers.LSTMCell(2)], dropout=0.5, seed=seed
    ),
}


def test_every_seeded_layer_is_listed():
    takes_seed = {
        name
        for name in dir(kr.layers)
        if inspect.isclass(getattr(kr.layers, name))
        and "seed" in inspect.signature(getattr(kr.layers, name)).parameters
    }
    assert takes_seed and takes_seed <= set(SEEDED)


@pytest.mark.parametrize("name", sorted(SEEDED))
def test_every_layer_and_cell_checks_its_seed(name):
    assert SEEDED[name](7).get_config()["seed"] == 7
    assert SEEDED[name](None).get_config()["seed"] is None
    for seed in ("1", 1.5, True):
        with pytest.raises(
            ValueError,
            match=r"^Argument `seed` must be an integer or None\. Received: "
            rf"seed={seed!r}$",
        ):
            SEEDED[name](seed)
