"""Train-step compilations of one epoch of variable-size batches on JAX.

    KERAS_BACKEND=jax python -m tests.compile_counts

prints one JSON line: for graphs (`kr.graphs.padded_batch` with and without
node and edge budgets) and for sequences (`bucket_by_sequence_length` with
padding to the bucket boundary, and plain `padded_batch`), the number of
batches, of distinct batch shapes, and of compilations of Keras' train step
during one `fit` epoch. `tests/testing/test_compilation.py` runs it.
"""

import json

import keras
import numpy as np
import tensorflow as tf

import keras_recurrent as kr
from keras_recurrent.testing.compilation import count_jax_compilations

FEATURES, UNITS, BATCH = 3, 4, 4
NUM_EDGE_TYPES = 2
NUM_GRAPHS = 24  # 6 batches
MAX_NODES, MAX_EDGES = 12, 20
LENGTH_BOUNDARIES = [4, 8, 13]  # 3 buckets; lengths 1 .. 12
NUM_TREES = 48  # 11 bucketed batches
TREE_BOUNDARIES = [8, 16, 32]  # 3 buckets; 1 .. 31 nodes
# `padded_batch(..., level_shapes=...)`: one `(L, W)` per bucket, `L`
# enough for its trees with `W = 2` slots (a chain of `n` nodes takes
# `n - 1` steps).
TREE_LEVEL_SHAPES = [(7, 2), (15, 2), (31, 2)]


def _graph_dataset(seed=0):
    rng = np.random.default_rng(seed)
    examples = []
    for _ in range(NUM_GRAPHS):
        num_nodes = int(rng.integers(2, MAX_NODES + 1))
        num_edges = int(rng.integers(1, MAX_EDGES + 1))
        edges = rng.integers(0, num_nodes, size=(num_edges, 2))
        graph = kr.graphs.encode_graph(
            [tuple(edge) for edge in edges],
            num_nodes=num_nodes,
            node_inputs=rng.normal(size=(num_nodes, FEATURES)),
            edge_types=rng.integers(0, NUM_EDGE_TYPES, size=num_edges),
            num_edge_types=NUM_EDGE_TYPES,
        )
        examples.append((graph, np.float32(rng.normal())))
    spec = (kr.graphs.graph_spec(FEATURES), tf.TensorSpec((), tf.float32))
    return tf.data.Dataset.from_generator(
        lambda: iter(examples), output_signature=spec
    )


def _graph_model():
    inputs = kr.graphs.graph_inputs(FEATURES)
    states = kr.layers.GatedGraph(UNITS, NUM_EDGE_TYPES, propagation_steps=2)(
        inputs
    )
    pooled = kr.layers.GraphReadout(UNITS)(
        [states, inputs["node_inputs"], inputs["node_mask"]]
    )
    model = keras.Model(inputs, keras.layers.Dense(1)(pooled))
    model.compile("sgd", "mse")
    return model


def _sequence_dataset(seed=0):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, LENGTH_BOUNDARIES[-1], size=6 * BATCH)
    sequences = [
        rng.normal(size=(length, FEATURES)).astype("float32")
        for length in lengths
    ]
    targets = rng.normal(size=len(sequences)).astype("float32")
    return tf.data.Dataset.from_generator(
        lambda: zip(sequences, targets, strict=True),
        output_signature=(
            tf.TensorSpec((None, FEATURES), tf.float32),
            tf.TensorSpec((), tf.float32),
        ),
    )


def bucket_sequences(dataset, batch_size, boundaries):
    """The documented bucketing: one padded length per bucket."""
    return dataset.bucket_by_sequence_length(
        lambda x, y: tf.shape(x)[0],
        bucket_boundaries=boundaries,
        bucket_batch_sizes=[batch_size] * (len(boundaries) + 1),
        padded_shapes=([None, FEATURES], []),
        pad_to_bucket_boundary=True,
        drop_remainder=True,
    )


def _sequence_model():
    frames = keras.Input((None, FEATURES))
    x = keras.layers.Masking(0.0)(frames)
    x = kr.layers.PeepholeLSTM(UNITS)(x)
    model = keras.Model(frames, keras.layers.Dense(1)(x))
    model.compile("sgd", "mse")
    return model


def _tree_dataset(seed=0):
    """Random trees of 1 .. 31 nodes (chains among them), to fill the
    buckets with varied heights."""
    rng = np.random.default_rng(seed)
    examples = []
    for index in range(NUM_TREES):
        num_nodes = int(rng.integers(1, TREE_BOUNDARIES[-1]))
        if index % 6 == 0:
            # A chain: the most levels for its size.
            parents = [-1] + list(range(num_nodes - 1))
        else:
            # At most 4 children a node.
            parents, free = [-1], [0]
            for node in range(1, num_nodes):
                parent = free[int(rng.integers(len(free)))]
                parents.append(parent)
                free.append(node)
                if parents.count(parent) == 4:
                    free.remove(parent)
        tree = kr.trees.from_parents(parents)
        encoded = kr.trees.encode_tree(tree, num_children=4)
        encoded["node_tokens"] = rng.integers(
            1, 5, size=len(encoded["node_mask"])
        ).astype("int32")
        examples.append((encoded, np.float32(rng.normal())))
    spec = (kr.trees.tree_spec(4), tf.TensorSpec((), tf.float32))
    return tf.data.Dataset.from_generator(
        lambda: iter(examples), output_signature=spec
    )


def _tree_model():
    inputs = kr.trees.tree_inputs(4)
    tensors = {
        **inputs,
        "node_inputs": keras.layers.Embedding(5, 3)(inputs["node_tokens"]),
    }
    del tensors["node_tokens"]
    root = kr.layers.ChildSumTreeLSTM(UNITS)(tensors)
    model = keras.Model(inputs, keras.layers.Dense(1)(root))
    model.compile("sgd", "mse")
    return model


def bucket_trees(dataset, **options):
    """The documented tree bucketing: one `N` per bucket."""
    return kr.trees.padded_batch(
        dataset,
        BATCH,
        bucket_boundaries=TREE_BOUNDARIES,
        pad_to_bucket_boundary=True,
        drop_remainder=True,
        **options,
    )


def _count(make_model, batched):
    shapes = {
        tuple(tuple(t.shape) for t in tf.nest.flatten(element[0]))
        for element in batched
    }
    model = make_model()
    with count_jax_compilations() as compiles:
        model.fit(batched, epochs=1, verbose=0)
    return {
        "batches": int(sum(1 for _ in batched)),
        "shapes": len(shapes),
        "compilations": compiles.of("train_step"),
        "by_function": dict(compiles.by_function),
    }


def run():
    keras.utils.set_random_seed(0)
    graphs = _graph_dataset()
    sequences = _sequence_dataset()
    trees = _tree_dataset()
    return {
        "graphs, budgets": _count(
            _graph_model,
            kr.graphs.padded_batch(
                graphs,
                BATCH,
                num_nodes=MAX_NODES,
                num_edges=MAX_EDGES,
                drop_remainder=True,
            ),
        ),
        "graphs, no budgets": _count(
            _graph_model,
            kr.graphs.padded_batch(graphs, BATCH, drop_remainder=True),
        ),
        "sequences, buckets": _count(
            _sequence_model,
            bucket_sequences(sequences, BATCH, LENGTH_BOUNDARIES),
        ),
        "trees, buckets": _count(_tree_model, bucket_trees(trees)),
        "trees, buckets and level shapes": _count(
            _tree_model,
            bucket_trees(trees, level_shapes=TREE_LEVEL_SHAPES),
        ),
        "sequences, no buckets": _count(
            _sequence_model,
            sequences.padded_batch(BATCH, drop_remainder=True),
        ),
    }


if __name__ == "__main__":
    print(json.dumps({"backend": keras.backend.backend(), "counts": run()}))
