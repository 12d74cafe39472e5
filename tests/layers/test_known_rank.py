"""Inputs of unknown rank get a `ValueError` naming the layer and the input.

A `tf.function` traced with `tf.TensorSpec(None)` passes tensors of unknown
rank; without the check, Keras' own `Layer.__call__` failed first with
"as_list() is not defined on an unknown TensorShape". Every public layer and
cell is tried with each of its input tensors in turn made unknown, unbuilt
and built.
"""

import re

import numpy as np
import pytest
import tensorflow as tf

import keras_recurrent as kr
from tests.layers import graph_reference
from tests.layers import tree_lstm_cases
from tests.layers import tree_reference

RNG = np.random.default_rng(0)
SEQUENCES = RNG.normal(size=(2, 5, 3)).astype("float32")
MASK = np.ones((2, 5), bool)
TREES = [
    np.array(array)
    for array in tree_reference.encode(
        tree_reference.mixed_trees(), None, tree_lstm_cases.FEATURES
    )
]
TREES_BINARY = tree_lstm_cases.encode_small([("a", ("b", "c", "d"), "e"), "x"])
_GRAPHS = graph_reference.random_graphs()
GRAPHS = [np.asarray(_GRAPHS[name]) for name in kr.graphs.GRAPH_TENSOR_NAMES]
NODES = [
    RNG.normal(size=(3, 6, 4)).astype("float32"),
    GRAPHS[0],
    GRAPHS[3],
]


def _states(count):
    return [np.zeros((2, 4), "float32") for _ in range(count)]


def _sequence_case(make, name="inputs"):
    """A sequence layer: `inputs` (the `RNN` layers call it `sequences`)
    and, as a keyword, `mask`."""
    return make, (SEQUENCES,), {"mask": MASK}, name


def _list_case(make, tensors):
    return make, (list(tensors),), {}, "inputs"


RNN = "sequences"
CASES = {
    "PeepholeLSTM": _sequence_case(lambda: kr.layers.PeepholeLSTM(4), RNN),
    "CoupledLSTM": _sequence_case(lambda: kr.layers.CoupledLSTM(4), RNN),
    "LSTMVariant": _sequence_case(lambda: kr.layers.LSTMVariant(4, "NOG"), RNN),
    "GatedFeedbackRNN": _sequence_case(
        lambda: kr.layers.GatedFeedbackRNN(4, num_layers=2), RNN
    ),
    "ResidualStack": _sequence_case(
        lambda: kr.layers.ResidualStack(
            [kr.layers.PeepholeLSTM(3, return_sequences=True)]
        )
    ),
    "TruncatedRNN": _sequence_case(
        lambda: kr.layers.TruncatedRNN(kr.layers.PeepholeLSTM(4), window=2)
    ),
    "SequencePooling": _sequence_case(
        lambda: kr.layers.SequencePooling("attention")
    ),
    "PeepholeLSTMCell": (
        lambda: kr.layers.PeepholeLSTMCell(4),
        (SEQUENCES[:, 0], _states(2)),
        {},
        "inputs",
    ),
    "GatedFeedbackCell": (
        lambda: kr.layers.GatedFeedbackCell(4),
        (SEQUENCES[:, 0], _states(1)),
        {},
        "inputs",
    ),
    "ChildSumTreeLSTM": _list_case(
        lambda: kr.layers.ChildSumTreeLSTM(4), TREES
    ),
    "NaryTreeLSTM": _list_case(
        lambda: kr.layers.NaryTreeLSTM(4, arity=2), TREES_BINARY
    ),
    "GatedGraph": _list_case(lambda: kr.layers.GatedGraph(4, 2), GRAPHS),
    "GGSNN": _list_case(lambda: kr.layers.GGSNN(4, 2, 2), GRAPHS),
    "GraphReadout": _list_case(lambda: kr.layers.GraphReadout(3), NODES),
    "NodeSelection": _list_case(lambda: kr.layers.NodeSelection(), NODES),
}


def _positions(args, kwargs, first):
    """`(path into (args, kwargs), expected name in the message)` of every
    input tensor; `first` names the first argument."""
    for index, arg in enumerate(args):
        name = first if index == 0 else "states"
        if isinstance(arg, list):
            for item in range(len(arg)):
                yield (0, index, item), f"{name}[{item}]"
        else:
            yield (0, index), name
    for key in kwargs:
        yield (1, key), key


def _params():
    for name, (_, args, kwargs, first) in CASES.items():
        for path, expected in _positions(args, kwargs, first):
            yield pytest.param(name, path, expected, id=f"{name}-{expected}")


def _call_with_unknown_rank(layer, args, kwargs, path):
    """Calls `layer` in a `tf.function` whose tensor at `path` has an
    unknown shape and the others their own."""
    structure = [list(args), dict(kwargs)]
    flat = tf.nest.flatten(structure)
    holder = structure[path[0]]
    for key in path[1:-1]:
        holder = holder[key]
    unknown = holder[path[-1]]
    index = next(i for i, item in enumerate(flat) if item is unknown)
    specs = [
        tf.TensorSpec(None if i == index else item.shape, item.dtype)
        for i, item in enumerate(flat)
    ]

    @tf.function(input_signature=specs)
    def call(*tensors):
        call_args, call_kwargs = tf.nest.pack_sequence_as(structure, tensors)
        return layer(*call_args, **call_kwargs)

    call.get_concrete_function()


@pytest.mark.parametrize("built", [False, True], ids=["unbuilt", "built"])
@pytest.mark.parametrize("name, path, expected", list(_params()))
def test_an_input_of_unknown_rank_is_named(name, path, expected, built):
    make, args, kwargs, _ = CASES[name]
    layer = make()
    if built:
        layer(*args, **kwargs)
    message = (
        f"{name} needs inputs of known rank, but `{re.escape(expected)}"
        r"( \(\w+\))?` has an unknown shape.*Received: .*shape=<unknown>"
    )
    with pytest.raises(ValueError, match=message):
        _call_with_unknown_rank(layer, args, kwargs, path)


@pytest.mark.parametrize(
    "name, index, tensor_name",
    [
        ("ChildSumTreeLSTM", 1, "children"),
        ("GatedGraph", 1, "edges"),
        ("GraphReadout", 2, "node_mask"),
    ],
)
def test_a_list_input_is_named_by_its_tensor(name, index, tensor_name):
    make, args, kwargs, _ = CASES[name]
    with pytest.raises(
        ValueError, match=rf"`inputs\[{index}\] \({tensor_name}\)`"
    ):
        _call_with_unknown_rank(make(), args, kwargs, (0, 0, index))


def test_known_ranks_with_unknown_sizes_still_trace():
    layer = kr.layers.PeepholeLSTM(4)
    spec = tf.TensorSpec((None, None, 3), tf.float32)
    outputs = tf.function(layer, input_signature=[spec])
    np.testing.assert_allclose(
        outputs(SEQUENCES).numpy(), layer(SEQUENCES).numpy(), atol=1e-6
    )
