import itertools

import keras
import numpy as np
import pytest

import keras_recurrent as kr
from keras_recurrent.layers._initializers import reseeded

UNITS = 4
GRAPH_SHAPES = [(None, 5, 2), (None, 6, 2), (None, 6), (None, 5)]
TREE_SHAPES = [(None, 7, 3), (None, 7, 2), (None, 7)]


def test_reseeded_moves_integer_seeds_only():
    unseeded = keras.initializers.GlorotUniform()
    # Keras draws the same values at every call of one instance...
    np.testing.assert_array_equal(unseeded((3, 3)), unseeded((3, 3)))
    assert reseeded(unseeded, 0) is unseeded
    moved = reseeded(unseeded, 2)
    assert type(moved) is keras.initializers.GlorotUniform
    assert moved.seed == unseeded.seed + 2
    # ... and different ones after `reseeded`, reproducibly.
    assert not np.allclose(moved((3, 3)), unseeded((3, 3)))
    np.testing.assert_array_equal(moved((3, 3)), reseeded(unseeded, 2)((3, 3)))
    seeded = keras.initializers.Orthogonal(gain=2.0, seed=7)
    assert reseeded(seeded, 1).get_config() == {"gain": 2.0, "seed": 8}
    zeros = keras.initializers.Zeros()
    assert reseeded(zeros, 3) is zeros
    generator = keras.initializers.RandomNormal(
        seed=keras.random.SeedGenerator(1)
    )
    assert reseeded(generator, 3) is generator


def _pieces(weight):
    """A weight split into what must not start out equal: the matrices of a
    stacked `(T, rows, cols)` weight, else the `UNITS`-wide column blocks
    (gate blocks, layers' blocks)."""
    value = keras.ops.convert_to_numpy(weight)
    if value.ndim == 3:
        return list(value)
    if value.shape[-1] % UNITS == 0:
        return np.split(value, value.shape[-1] // UNITS, axis=-1)
    return [value]


def _built(name):
    bias = {"bias_initializer": "random_uniform"}
    if name == "peephole_lstm_cell":
        layer = kr.layers.PeepholeLSTMCell(UNITS, **bias)
        layer.build((None, 3))
    elif name == "full_gate_recurrence_cell":
        layer = kr.layers.LSTMVariantCell(UNITS, variant="FGR", **bias)
        layer.build((None, 3))
    elif name.startswith("gated_feedback_"):
        layer = kr.layers.GatedFeedbackCell(
            [UNITS] * 3, cell_type=name.rsplit("_", 1)[1], **bias
        )
        layer.build((None, UNITS))
    elif name in ("child_sum_tree_lstm", "nary_tree_lstm"):
        cls = {
            "child_sum_tree_lstm": kr.layers.ChildSumTreeLSTM,
            "nary_tree_lstm": kr.layers.NaryTreeLSTM,
        }[name]
        layer = cls(UNITS, **bias)
        layer.build(TREE_SHAPES)
    elif name == "gated_graph":
        layer = kr.layers.GatedGraph(UNITS, 2, **bias)
        layer.build(GRAPH_SHAPES)
    elif name.startswith("ggsnn_"):
        # Two propagation models and every output network: all from the
        # same three initializers.
        mode = name.split("_", 1)[1]
        layer = kr.layers.GGSNN(
            UNITS,
            2,
            output_steps=2,
            task=mode,
            num_classes=UNITS if mode == "graph_classification" else None,
            hidden_units=UNITS,
            **bias,
        )
        layer.build(GRAPH_SHAPES)
    elif name == "node_selection":
        layer = kr.layers.NodeSelection(hidden_units=UNITS, **bias)
        layer.build([(None, 5, UNITS), (None, 5, 2), (None, 5)])
    else:
        assert name == "residual_stack"
        # Widths 2 -> 4 -> 2 -> 4: two projections of shape (2, 4).
        layer = kr.layers.ResidualStack(
            [
                keras.layers.SimpleRNN(width, return_sequences=True)
                for width in (UNITS, 2, UNITS)
            ]
        )
        layer.build((None, 6, 2))
    return layer


@pytest.mark.parametrize(
    "name",
    [
        "peephole_lstm_cell",
        "full_gate_recurrence_cell",
        "gated_feedback_tanh",
        "gated_feedback_gru",
        "gated_feedback_lstm",
        "child_sum_tree_lstm",
        "nary_tree_lstm",
        "gated_graph",
        "ggsnn_node_selection",
        "ggsnn_graph_classification",
        "node_selection",
        "residual_stack",
    ],
)
def test_weights_from_one_initializer_start_out_different(name):
    # A layer that starts several weights (layers of equal width, edge
    # types, gate blocks, peepholes) from one unseeded initializer must
    # not start them equal, nor with equal first values.
    layer = _built(name)
    pieces = []
    for weight in layer.weights:
        pieces += [
            (f"{weight.path}[{index}]", piece)
            for index, piece in enumerate(_pieces(weight))
            if np.ptp(piece) > 0  # Constant blocks (zeros, ones) may repeat.
        ]
    assert len(pieces) >= 3
    for (name_a, a), (name_b, b) in itertools.combinations(pieces, 2):
        size = min(a.size, b.size, 3)
        assert not np.allclose(a.ravel()[:size], b.ravel()[:size]), (
            f"{name_a} and {name_b} start with the same values"
        )
