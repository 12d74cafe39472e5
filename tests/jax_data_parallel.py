"""Data-parallel training on JAX over 2 CPU devices equals 1 device.

    XLA_FLAGS=--xla_force_host_platform_device_count=2 KERAS_BACKEND=jax \\
        python -m tests.jax_data_parallel

trains one model of each family twice from the same initial weights on the
same batches: on one device, and under `keras.distribution.DataParallel`
over both CPU devices (the variables replicated, each batch split between
the devices). It prints one JSON line: for each family, the largest absolute
difference between the two trained models' weights. The XLA flag must be
set before JAX starts; `tests/test_jax_data_parallel.py` runs this module in
a process of its own.
"""

import json
import os

os.environ.setdefault("KERAS_BACKEND", "jax")

import jax  # noqa: E402
import keras  # noqa: E402
import numpy as np  # noqa: E402

import keras_recurrent as kr  # noqa: E402

GLOBAL_BATCH, SAMPLES, EPOCHS = 8, 16, 2
TIMESTEPS, FEATURES = 5, 3


def _targets():
    return np.linspace(-1, 1, SAMPLES, dtype="float32")[:, None]


def _sequences():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(SAMPLES, TIMESTEPS, FEATURES)).astype("float32")
    # Padding at the end of some sequences, masked.
    x[::3, -2:] = 0.0
    return x


def _sequence_model(make_layer):
    def make():
        inputs = keras.Input((TIMESTEPS, FEATURES))
        masked = keras.layers.Masking()(inputs)
        return keras.Model(inputs, keras.layers.Dense(1)(make_layer()(masked)))

    return make


def _trees(num_children, binarize=None):
    texts = ["(1 2 3)", "(4 (5 6) 7)", "(1 (2 (3 4)))", "(5 6 (7 1 2))"]
    return kr.trees.encode_trees(
        [texts[i % 4] for i in range(SAMPLES)],
        num_nodes=9,
        num_children=num_children,
        binarize=binarize,
    )


def _tree_model(make_layer, num_children):
    def make():
        inputs = kr.trees.tree_inputs(num_children, num_nodes=9)
        embedded = keras.layers.Embedding(8, FEATURES)(inputs["node_tokens"])
        tree_tensors = {**inputs, "node_inputs": embedded}
        del tree_tensors["node_tokens"]
        root = make_layer()(tree_tensors)
        return keras.Model(inputs, keras.layers.Dense(1)(root))

    return make


def _graphs():
    return kr.graphs.encode_graphs(
        [
            {
                "edges": [(v, (v + 1 + i) % 4, v % 2) for v in range(4)],
                "node_inputs": np.eye(4, FEATURES)[(np.arange(4) + i) % 4],
            }
            for i in range(SAMPLES)
        ],
        num_nodes=5,
    )


def _graph_model():
    inputs = kr.graphs.graph_inputs(FEATURES, num_nodes=5)
    states = kr.layers.GatedGraph(4, 2, propagation_steps=2)(inputs)
    graph = kr.layers.GraphReadout(3)(
        [states, inputs["node_inputs"], inputs["node_mask"]]
    )
    return keras.Model(inputs, keras.layers.Dense(1)(graph))


FAMILIES = {
    "PeepholeLSTM": (
        _sequences,
        _sequence_model(lambda: kr.layers.PeepholeLSTM(4)),
    ),
    "GatedFeedbackRNN": (
        _sequences,
        _sequence_model(
            lambda: kr.layers.GatedFeedbackRNN([4, 3], cell_type="lstm")
        ),
    ),
    "ChildSumTreeLSTM": (
        lambda: _trees(3),
        _tree_model(lambda: kr.layers.ChildSumTreeLSTM(4), 3),
    ),
    "NaryTreeLSTM": (
        lambda: _trees(2, binarize="left"),
        _tree_model(lambda: kr.layers.NaryTreeLSTM(4, arity=2), 2),
    ),
    "GatedGraph": (_graphs, _graph_model),
}


def _train(make_model, x, initial_weights):
    model = make_model()
    if initial_weights is not None:
        model.set_weights(initial_weights)
    weights = [np.array(w) for w in model.get_weights()]
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
    model.fit(
        x,
        _targets(),
        batch_size=GLOBAL_BATCH,
        epochs=EPOCHS,
        shuffle=False,
        verbose=0,
    )
    return model, weights


def compare(name):
    """The largest weight difference of one family, 2 devices to 1."""
    make_data, make_model = FAMILIES[name]
    x = make_data()
    keras.utils.set_random_seed(0)
    single, initial = _train(make_model, x, None)
    devices = jax.devices("cpu")
    distribution = keras.distribution.DataParallel(devices=devices)
    with distribution.scope():
        parallel, _ = _train(make_model, x, initial)
    for variable in parallel.weights:
        placed_on = variable.value.sharding.device_set
        if len(placed_on) != len(devices):
            raise RuntimeError(
                f"{name}: {variable.path} is on {placed_on}, not replicated "
                f"over {devices}."
            )
    trained = [
        np.abs(np.asarray(a) - np.asarray(b)).max()
        for a, b in zip(single.get_weights(), initial, strict=True)
    ]
    if max(trained) == 0.0:
        raise RuntimeError(f"{name}: training did not change the weights.")
    return max(
        float(np.abs(np.asarray(a) - np.asarray(b)).max())
        for a, b in zip(
            single.get_weights(), parallel.get_weights(), strict=True
        )
    )


def main():
    if keras.backend.backend() != "jax":
        raise RuntimeError("Run with KERAS_BACKEND=jax.")
    devices = jax.devices("cpu")
    if len(devices) != 2:
        raise RuntimeError(
            "Expected 2 CPU devices; set "
            "XLA_FLAGS=--xla_force_host_platform_device_count=2 before JAX "
            f"starts. Found: {devices}"
        )
    report = {name: compare(name) for name in FAMILIES}
    print(json.dumps({"devices": len(devices), "differences": report}))


if __name__ == "__main__":
    main()
