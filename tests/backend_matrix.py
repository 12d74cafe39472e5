"""Every layer against its NumPy reference, on the current Keras backend.

    KERAS_BACKEND=jax python -m tests.backend_matrix

prints one JSON line: the backend, and for each case the largest absolute
difference between the layer and the NumPy reference of its paper's
equations (tests/layers/*_reference.py), or the error it raised.
`tests/test_backends.py` runs it once per backend. It needs only Keras,
NumPy and the package, so it runs where TensorFlow is not installed.
"""

import json
import traceback

import keras
import numpy as np

import keras_recurrent as kr
from tests.layers import gated_feedback_reference as gf_reference
from tests.layers import graph_reference
from tests.layers import lstm_reference
from tests.layers import tfa_fixtures
from tests.layers import tree_reference

BATCH, STEPS, FEATURES, UNITS = 3, 6, 4, 5


def _numpy(value):
    return np.asarray(keras.ops.convert_to_numpy(value), "float64")


def _sequence_data(seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(BATCH, STEPS, FEATURES)).astype("float32")
    mask = np.ones((BATCH, STEPS), dtype=bool)
    mask[0, 4:] = False
    mask[2, 2] = False
    return x, mask


def _lstm_case(make_layer, variant):
    def case():
        x, mask = _sequence_data()
        layer = make_layer()
        layer.build((None, None, FEATURES))
        lstm_reference.randomize_weights(layer)
        outputs = layer(x, mask=mask)
        expected, _ = lstm_reference.lstm_sequence(
            x.astype("float64"),
            lstm_reference.named_weights(layer),
            variant,
            mask=mask,
        )
        return np.abs(_numpy(outputs) - expected).max()

    return case


def _gated_feedback_case(cell_type, feedback):
    def case():
        x, mask = _sequence_data(1)
        layer = kr.layers.GatedFeedbackRNN(
            [UNITS, UNITS],
            cell_type=cell_type,
            feedback=feedback,
            return_sequences=True,
        )
        layer.build((None, None, FEATURES))
        gf_reference.randomize_weights(layer)
        expected, _, _ = gf_reference.gf_sequence(
            x.astype("float64"),
            gf_reference.named_weights(layer),
            [UNITS, UNITS],
            cell_type,
            feedback,
            mask=mask,
        )
        return np.abs(_numpy(layer(x, mask=mask)) - expected).max()

    return case


def _gated_feedback_last_case(cell_type):
    """The last output of a backwards, masked layer with `output_mode="all"`:
    masked steps carry the last kept output of every layer."""

    def case():
        x, mask = _sequence_data(2)
        mask[1, :3] = False  # masked at the end of the backwards loop
        layer = kr.layers.GatedFeedbackRNN(
            [UNITS, UNITS],
            cell_type=cell_type,
            output_mode="all",
            go_backwards=True,
        )
        layer.build((None, None, FEATURES))
        gf_reference.randomize_weights(layer)
        expected, _, _ = gf_reference.gf_sequence(
            x[:, ::-1].astype("float64"),
            gf_reference.named_weights(layer),
            [UNITS, UNITS],
            cell_type,
            "gated",
            output_mode="all",
            mask=mask[:, ::-1],
        )
        return np.abs(_numpy(layer(x, mask=mask)) - expected[:, -1]).max()

    return case


def _tree_case(kind):
    def case():
        arity = 5 if kind == "child_sum" else 2
        trees = tree_reference.mixed_trees()
        if kind == "nary":
            trees = [trees[0], trees[2], trees[3]]
        inputs = tree_reference.encode(trees, arity, FEATURES)
        if kind == "child_sum":
            layer = kr.layers.ChildSumTreeLSTM(UNITS, return_nodes=True)
        else:
            layer = kr.layers.NaryTreeLSTM(
                UNITS, arity=arity, return_nodes=True
            )
        layer.build([array.shape for array in inputs])
        weights = tree_reference.random_weights(layer)
        expected, _ = tree_reference.expected_states(
            inputs, weights, kind, UNITS
        )
        return np.abs(_numpy(layer(inputs)) - expected).max()

    return case


def _tree_layer(kind, arity):
    if kind == "child_sum":
        return kr.layers.ChildSumTreeLSTM(UNITS, return_nodes=True)
    return kr.layers.NaryTreeLSTM(UNITS, arity=arity, return_nodes=True)


def _tree_data(kind):
    arity = 5 if kind == "child_sum" else 2
    trees = tree_reference.mixed_trees()
    if kind == "nary":
        trees = [trees[0], trees[2], trees[3]]
    inputs = tree_reference.encode(trees, arity, FEATURES)
    # A width of one node per step: several steps per level, so the
    # schedule is not the levels themselves.
    levels = kr.trees.tree_levels(inputs[1], inputs[2], level_width=1)
    return arity, inputs, levels


def _tree_schedule_case(kind):
    """The layer fed the host schedule `tree_levels` (read on JAX, unread
    on TensorFlow without XLA and on PyTorch) against the reference."""

    def case():
        arity, inputs, levels = _tree_data(kind)
        layer = _tree_layer(kind, arity)
        layer.build([array.shape for array in inputs])
        weights = tree_reference.random_weights(layer)
        expected, _ = tree_reference.expected_states(
            inputs, weights, kind, UNITS
        )
        return np.abs(_numpy(layer([*inputs, levels])) - expected).max()

    return case


def _tree_gradient_case(kind):
    """One SGD step (learning rate 1, so the weights move by the gradient)
    of a model fed the schedule, compiled (XLA on TensorFlow, `jax.jit`;
    eager on PyTorch), against the same model without it,
    as `jit_compile="auto"` runs it: the largest difference of the
    weights after the step, that is of the gradients."""

    def trained_weights(inputs, levels, jit_compile):
        arrays = [*inputs, levels] if levels is not None else list(inputs)
        model_inputs = [
            keras.Input(array.shape[1:], dtype=str(array.dtype))
            for array in arrays
        ]
        layer = _tree_layer(kind, 5 if kind == "child_sum" else 2)
        outputs = keras.layers.Dense(1)(layer(model_inputs))
        model = keras.Model(model_inputs, outputs)
        start = list(tree_reference.random_weights(layer).values())
        model.layers[-1].set_weights(
            [np.full((UNITS, 1), 0.5, "float32"), np.zeros(1, "float32")]
        )
        model.compile(keras.optimizers.SGD(1.0), "mse", jit_compile=jit_compile)
        targets = np.linspace(-1, 1, arrays[0].shape[0] * arrays[0].shape[1])
        targets = targets.reshape(arrays[0].shape[:2] + (1,))
        model.train_on_batch(arrays, targets.astype("float32"))
        after = [_numpy(weight) for weight in layer.weights]
        moved = max(np.abs(a - b).max() for a, b in zip(after, start))
        if not moved > 1e-3:
            raise AssertionError(f"the step barely moved the weights: {moved}")
        return after

    def case():
        _, inputs, levels = _tree_data(kind)
        # XLA on TensorFlow, `jax.jit` on JAX; PyTorch runs eagerly (its
        # `jit_compile=True` is `torch.compile`, not what its users get).
        compiled = keras.backend.backend() != "torch"
        with_levels = trained_weights(inputs, levels, jit_compile=compiled)
        without = trained_weights(inputs, None, jit_compile="auto")
        pairs = zip(with_levels, without, strict=True)
        return max(np.abs(a - b).max() for a, b in pairs)

    return case


def _gated_graph_reference(layer, arrays):
    """The NumPy reference of `layer` (a built `GatedGraph`) on `arrays`."""
    return graph_reference.gated_graph(
        *(np.asarray(array) for array in arrays),
        graph_reference.gated_graph_weights(layer),
        num_edge_types=layer.num_edge_types,
        propagation_steps=layer.propagation_steps,
        add_reverse_edges=layer.add_reverse_edges,
        reset_after=layer.reset_after,
        concatenate_directions=layer.concatenate_directions,
    )


def _gated_graph_case(**options):
    def case():
        graphs = graph_reference.random_graphs()
        layer = kr.layers.GatedGraph(UNITS, 2, propagation_steps=3, **options)
        layer.build([array.shape for array in graph_reference.as_list(graphs)])
        graph_reference.randomize_weights(layer)
        expected = _gated_graph_reference(
            layer, graph_reference.as_list(graphs)
        )
        outputs = layer(graph_reference.as_list(graphs))
        return np.abs(_numpy(outputs) - expected).max()

    return case


def _gated_graph_model_case():
    """One edge type, in a functional model, through `predict`: the shape
    inference of Keras' PyTorch backend (tensors on the "meta" device, or
    filled with ones) must not trip the value checks or the NaN poisoning."""

    def case():
        arrays = graph_reference.as_list(graph_reference.random_graphs())
        arrays[2] = np.zeros_like(arrays[2])  # every edge of type 0
        inputs = [
            keras.Input(array.shape[1:], dtype=str(array.dtype))
            for array in arrays
        ]
        layer = kr.layers.GatedGraph(UNITS, 1, propagation_steps=3)
        model = keras.Model(inputs, layer(inputs))
        graph_reference.randomize_weights(layer)
        expected = _gated_graph_reference(layer, arrays)
        outputs = model.predict(arrays, verbose=0, batch_size=len(arrays[0]))
        model.compile(loss="mse")
        loss = model.evaluate(arrays, expected, verbose=0)  # builds metrics
        return max(np.abs(outputs - expected).max(), loss)

    return case


def _tfa_case(name, as_layer):
    """Ours against TensorFlow Addons' fixture `name` (`tfa_fixtures`)."""
    return lambda: tfa_fixtures.fixture_difference(name, as_layer)


def _readout_case(layer_class):
    def case():
        states, node_inputs, node_mask = graph_reference.node_data()
        if layer_class is kr.layers.GraphReadout:
            layer = kr.layers.GraphReadout(3)
        else:
            layer = kr.layers.NodeSelection(hidden_units=3)
        layer.build([(None, 5, 4), (None, 5, 2), (None, 5)])
        graph_reference.randomize_weights(layer)
        arguments = (
            states.astype("float64"),
            node_inputs.astype("float64"),
            node_mask,
            _numpy(layer.kernel),
            _numpy(layer.bias),
        )
        if layer_class is kr.layers.GraphReadout:
            expected = graph_reference.graph_readout(*arguments)
        else:
            hidden = (_numpy(layer.hidden_kernel), _numpy(layer.hidden_bias))
            expected = graph_reference.node_selection(*arguments, hidden=hidden)
        outputs = layer([states, node_inputs, node_mask])
        return np.abs(_numpy(outputs) - expected).max()

    return case


CASES = {
    "PeepholeLSTM": _lstm_case(
        lambda: kr.layers.PeepholeLSTM(UNITS, return_sequences=True), "V"
    ),
    "CoupledLSTM": _lstm_case(
        lambda: kr.layers.CoupledLSTM(
            UNITS, use_peepholes=False, return_sequences=True
        ),
        "CIFG",
    ),
    **{
        f"LSTMVariant({variant})": _lstm_case(
            lambda v=variant: kr.layers.LSTMVariant(
                UNITS, variant=v, return_sequences=True
            ),
            variant,
        )
        for variant in kr.layers.VARIANTS
    },
    "GatedFeedbackRNN(simple, gated)": _gated_feedback_case("simple", "gated"),
    "GatedFeedbackRNN(gru, fixed)": _gated_feedback_case("gru", "fixed"),
    "GatedFeedbackRNN(lstm, gated)": _gated_feedback_case("lstm", "gated"),
    "GatedFeedbackRNN(gru, last, backwards)": _gated_feedback_last_case("gru"),
    "ChildSumTreeLSTM": _tree_case("child_sum"),
    "NaryTreeLSTM": _tree_case("nary"),
    "ChildSumTreeLSTM(tree_levels)": _tree_schedule_case("child_sum"),
    "NaryTreeLSTM(tree_levels)": _tree_schedule_case("nary"),
    "ChildSumTreeLSTM(tree_levels, gradients)": _tree_gradient_case(
        "child_sum"
    ),
    "NaryTreeLSTM(tree_levels, gradients)": _tree_gradient_case("nary"),
    "GatedGraph": _gated_graph_case(),
    "GatedGraph(paper directions)": _gated_graph_case(
        concatenate_directions=True, reset_after=False
    ),
    "GatedGraph(1 type, functional predict)": _gated_graph_model_case(),
    "GraphReadout": _readout_case(kr.layers.GraphReadout),
    "NodeSelection": _readout_case(kr.layers.NodeSelection),
    # TFA's outputs, by our layer and by `keras.layers.RNN` over our cell;
    # not the latter for NASCell, whose output is its second state: Keras'
    # JAX loop outputs the first at masked steps (`kr.layers.NAS` orders
    # them for it); "esn" is TFA's `ESN` layer.
    **{
        f"TFA {name} ({'layer' if as_layer else 'RNN(cell)'})": _tfa_case(
            name, as_layer
        )
        for name in tfa_fixtures.CASES
        for as_layer in (True, False)
        if as_layer or not (name.startswith("nas") or name == "esn")
    },
}


def run():
    """`{case: largest difference to the reference, or the error}`."""
    results = {}
    for name, case in CASES.items():
        try:
            results[name] = float(case())
        except Exception as error:  # noqa: BLE001 - reported, not hidden
            lines = traceback.format_exception_only(type(error), error)
            results[name] = "".join(lines).strip()[-500:]
    return results


if __name__ == "__main__":
    print(json.dumps({"backend": keras.backend.backend(), "cases": run()}))
