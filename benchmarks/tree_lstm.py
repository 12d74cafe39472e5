"""Train-step time of the level-batched Tree-LSTM on ListOps trees.

Three contenders take one Adam step (forward, backward, update) of a
classifier of the ListOps value on the same batches of generated ListOps
expressions (`kr.datasets.listops`, at most `--max-length` tokens):

- (a) `level`: `Embedding` -> `kr.layers.ChildSumTreeLSTM` (or
  `NaryTreeLSTM` on the binary gold trees with `--cell nary`) -> `Dense(10)`;
  the layer computes the leaves at once, then updates every inner node of
  every tree at one level in one batched step, so a batch takes `height`
  sequential steps.
- (b) `node`: the same layers and weights, but the tree recursion runs one
  node at a time: the input projection of the real nodes in one matmul (as
  in (a) and DGL), then a `tf.while_loop` over the real nodes of the batch
  in topological order; each step reads its projection from a
  `TensorArray`, gathers its children's `[h, c]` from another one (written
  once per node; only the real nodes, as (a) keeps them) and applies the
  layer's own cell step (`layer.cell.step`, with the weights prepared once
  by `layer.cell.prepare_loop`, as (a) does) to that single node. It
  checks that its logits equal (a)'s before timing. This is how a
  Tree-LSTM runs without level batching (e.g. the Lua Torch one), but
  compiled into one graph rather than a Python loop. (An earlier version
  sliced each node's row out of the projection tensor, whose gradient is a
  dense tensor of all nodes per step, and kept padding nodes in its arrays;
  that made it several times slower than it needs to be.)
- (c) `lstm`: `Embedding(mask_zero=True)` -> `keras.layers.LSTM` ->
  `Dense(10)` over the same expressions as token sequences.
- (d) `static`: (a)'s model and weights in a step compiled with XLA
  (`jit_compile=True`, what Keras' `"auto"` picks on a GPU), where the
  layer runs its static-shape path: each level is a window of
  `batch * N // 2` rows of the padded batch. XLA compiles once per batch
  shape (before timing). Its logits must equal (a)'s.
- (e) `scheduled`: (a)'s model and weights under XLA, fed
  `kr.trees.encode_trees`' default schedule (`tree_levels`, one per tree):
  the path a model of `kr.trees.tree_inputs(K)`'s defaults takes under XLA.

The forward passes of (a), (b) and (d) are also timed alone.

Each step is a `tf.function` traced once for all batch shapes (dynamic
`N` and length). The contenders are timed round-robin, batch after batch,
so that a noisy machine slows them alike; the table gives medians. The
ratios are given twice: of the medians, and paired (the median over
batches and repeats of the ratio of the two times of the same batch, taken
one right after the other), which drifting load skews less.

    python benchmarks/tree_lstm.py                    # batch 64, ~3 minutes
    python benchmarks/tree_lstm.py --cell nary --repeats 5
    python benchmarks/tree_lstm.py --backend all   # (a) and (c) per backend

With `--backend`, each backend's subprocess times (a) and (c) only, the
models compiled and trained with `train_on_batch` (`jit_compile="auto"`:
XLA on JAX, where the layer takes its static-shape path; off on
TensorFlow's CPU and on torch), and a last table gives the ratio of each
backend to TensorFlow. (b) and (d) are TensorFlow graphs and stay out.
"""

import argparse
import os
import statistics
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import _backend  # noqa: E402

if __name__ == "__main__":
    # Before Keras is imported: with --backend, this process only launches
    # one subprocess per backend.
    _backend.dispatch_if_requested(__file__)

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import keras_recurrent as kr  # noqa: E402

VOCABULARY = kr.datasets.LISTOPS_VOCABULARY
VOCABULARY_SIZE = max(VOCABULARY.values()) + 1


def make_batches(args):
    data = kr.datasets.listops(
        args.batch_size * args.num_batches,
        max_length=args.max_length,
        seed=args.seed,
    )
    batches = []
    for start in range(0, len(data["trees"]), args.batch_size):
        stop = start + args.batch_size
        if args.cell == "child_sum":
            trees = kr.trees.encode_trees(
                data["trees"][start:stop],
                vocabulary=VOCABULARY,
                pack_levels=True,
            )
        else:
            trees = kr.trees.encode_trees(
                [
                    kr.datasets.listops_binary_tree(tree)
                    for tree in data["trees"][start:stop]
                ],
                vocabulary=VOCABULARY,
                labeled=False,
                num_children=2,
                pack_levels=True,
            )
        tokens = data["tokens"][start:stop]
        sequences = np.zeros((len(tokens), max(map(len, tokens))), "int32")
        for row, sequence in enumerate(tokens):
            sequences[row, : len(sequence)] = [VOCABULARY[t] for t in sequence]
        batches.append(
            {
                "trees": (
                    trees["node_tokens"],
                    trees["children"],
                    trees["node_mask"],
                ),
                # The same trees with the host's level schedule, packed
                # (the batch reaches the model whole) and one per tree.
                "scheduled": (
                    trees["node_tokens"],
                    trees["children"],
                    trees["node_mask"],
                    trees["tree_levels"],
                ),
                "unpacked": (
                    trees["node_tokens"],
                    trees["children"],
                    trees["node_mask"],
                    kr.trees.tree_levels(trees["children"], trees["node_mask"]),
                ),
                "sequences": sequences,
                "labels": data["labels"][start:stop],
            }
        )
    return batches


class TreeClassifier(keras.Model):
    def __init__(self, cell, units, embedding_dim):
        super().__init__()
        self.embedding = keras.layers.Embedding(VOCABULARY_SIZE, embedding_dim)
        if cell == "child_sum":
            self.tree = kr.layers.ChildSumTreeLSTM(units)
        else:
            self.tree = kr.layers.NaryTreeLSTM(units, arity=2)
        self.classify = keras.layers.Dense(10)

    def call(self, inputs, training=False):
        tokens, children, node_mask, *levels = inputs
        x = self.embedding(tokens)
        return self.classify(
            self.tree([x, children, node_mask, *levels], training=training)
        )

    def node_by_node(self, inputs):
        """The same forward pass, one node at a time."""
        tokens, children, node_mask = inputs[:3]
        layer = self.tree
        units = layer.units
        batch_size = tf.shape(children)[0]
        num_nodes = tf.shape(children)[1]
        width = tf.shape(children)[2]
        # Only the real nodes, in their topological order: node v of tree
        # b (flat row b * N + v) is real node `position[row]`, whose state
        # is element `position[row] + 1` of one TensorArray of `[h, c]`;
        # element 0 is the zero state that empty slots read.
        real = tf.reshape(node_mask, (-1,)) > 0
        real_rows = tf.cast(tf.where(real)[:, 0], tf.int32)
        position = tf.cumsum(tf.cast(real, tf.int32)) - 1
        offsets = tf.reshape(tf.range(batch_size) * num_nodes, (-1, 1, 1))
        child_rows = tf.reshape(tf.maximum(children, 0) + offsets, (-1, width))
        slots = tf.where(
            tf.reshape(children, (-1, width)) >= 0,
            tf.gather(position, child_rows) + 1,
            0,
        )
        slots = tf.gather(slots, real_rows)
        x = self.embedding(tf.gather(tf.reshape(tokens, (-1,)), real_rows))
        size = tf.size(real_rows)
        cell = layer.cell
        # The cell's rows (its inputs or their projections: it projects
        # narrow inputs in its steps) and the weights arranged once.
        loop_inputs, loop_state = cell.prepare_loop(
            x, tf.zeros((size,), tf.int32), 1
        )
        projected = loop_inputs["inputs"]
        # Reading a node's projection from a TensorArray, not by slicing
        # `projected`: a slice's gradient is a dense `(nodes, 4 * units)`
        # tensor per node, which would make the loop quadratic.
        x_array = tf.TensorArray(
            projected.dtype, size=size, element_shape=projected.shape[1:]
        ).unstack(projected)
        states = tf.TensorArray(
            projected.dtype,
            size=size + 1,
            clear_after_read=False,
            element_shape=(2 * units,),
        ).write(0, tf.zeros((2 * units,), projected.dtype))

        def body(step, states):
            # One gather of the K slots was faster here than K reads.
            child = tf.expand_dims(states.gather(slots[step]), 0)
            _, (new_h, new_c) = cell.step(
                {"inputs": tf.expand_dims(x_array.read(step), 0)},
                [child[..., :units], child[..., units:]],
                None,
                loop_state,
            )
            return step + 1, states.write(
                step + 1, tf.concat([new_h, new_c], axis=-1)[0]
            )

        _, states = tf.while_loop(
            lambda step, _: step < size, body, (tf.constant(0), states)
        )
        num_real = tf.reduce_sum(tf.cast(node_mask > 0, tf.int32), axis=1)
        roots = tf.gather(
            position, tf.range(batch_size) * num_nodes + num_real - 1
        )
        return self.classify(states.gather(roots + 1)[:, :units])


class SequenceClassifier(keras.Model):
    def __init__(self, units, embedding_dim):
        super().__init__()
        self.embedding = keras.layers.Embedding(
            VOCABULARY_SIZE, embedding_dim, mask_zero=True
        )
        self.lstm = keras.layers.LSTM(units)
        self.classify = keras.layers.Dense(10)

    def call(self, tokens, training=False):
        return self.classify(
            self.lstm(self.embedding(tokens), training=training)
        )


def train_step_function(model, forward, signature, jit_compile=False):
    optimizer = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    optimizer.build(model.trainable_variables)

    @tf.function(input_signature=signature, jit_compile=jit_compile)
    def step(inputs, labels):
        with tf.GradientTape() as tape:
            loss = loss_fn(labels, forward(inputs))
        variables = model.trainable_variables
        gradients = tape.gradient(loss, variables)
        optimizer.apply_gradients(zip(gradients, variables))
        return loss

    return step


def backend_run(args):
    """What one `--backend` subprocess times: `train_on_batch` of (a) and
    (c), (e) (a)'s model fed the host schedule, and on TensorFlow (d) and
    (e) compiled with XLA; then the compilations over one epoch."""
    keras.utils.set_random_seed(args.seed)
    batches = make_batches(args)
    backend = keras.backend.backend()
    level = TreeClassifier(args.cell, args.units, args.embedding_dim)
    scheduled = TreeClassifier(args.cell, args.units, args.embedding_dim)
    models = {
        "(a) level-batched layer": (level, "trees", "auto"),
        "(e) with tree_levels": (scheduled, "scheduled", "auto"),
        "(c) keras.layers.LSTM": (
            SequenceClassifier(args.units, args.embedding_dim),
            "sequences",
            "auto",
        ),
    }
    if backend == "tensorflow":
        models["(d) static path, XLA"] = (
            TreeClassifier(args.cell, args.units, args.embedding_dim),
            "trees",
            True,
        )
        models["(e) with tree_levels, XLA"] = (
            TreeClassifier(args.cell, args.units, args.embedding_dim),
            "scheduled",
            True,
        )
        models["(e) unpacked, XLA"] = (
            TreeClassifier(args.cell, args.units, args.embedding_dim),
            "unpacked",
            True,
        )
    if backend == "jax":
        models["(e) unpacked"] = (
            TreeClassifier(args.cell, args.units, args.embedding_dim),
            "unpacked",
            "auto",
        )
    if args.skip_derived_static and backend == "jax":
        # (a) on JAX is the static path derived in the graph (slow).
        del models["(a) level-batched layer"]
    first = batches[0]["trees"]
    level(first)
    for model, _, _ in models.values():
        if isinstance(model, TreeClassifier):
            model(first)
            model.set_weights(level.get_weights())
    for model, _, jit_compile in models.values():
        model.compile(
            keras.optimizers.Adam(1e-3),
            keras.losses.SparseCategoricalCrossentropy(from_logits=True),
            jit_compile=jit_compile,
        )
    # Same weights, same math: the schedules must not change the logits
    # (TensorFlow reads them under XLA only).
    forward = scheduled
    if backend == "tensorflow":
        forward = tf.function(
            lambda inputs: scheduled(inputs), jit_compile=True
        )
    difference = max(
        float(
            np.abs(
                keras.ops.convert_to_numpy(forward(batch[key]))
                - keras.ops.convert_to_numpy(level(batch["trees"]))
            ).max()
        )
        for batch in batches
        for key in ("scheduled", "unpacked")
    )
    if difference > 1e-4:
        raise RuntimeError(f"The schedule changes the logits: {difference}")
    for model, key, _ in models.values():
        for batch in batches:  # Traced or compiled once per batch shape.
            model.train_on_batch(batch[key], batch["labels"])
    times = {name: [] for name in models}
    for _ in range(args.repeats):
        for batch in batches:
            for name, (model, key, _) in models.items():
                start = time.perf_counter()
                model.train_on_batch(batch[key], batch["labels"])
                times[name].append(time.perf_counter() - start)
    print(
        f"ListOps, {args.cell} cell, batch {args.batch_size}, units "
        f"{args.units}, backend {backend}: train_on_batch; the schedule "
        f"matches the layer's logits to {difference:.1e}"
    )
    print(f"{'train step':28s} {'median ms/step':>15s}")
    medians = {name: statistics.median(t) for name, t in times.items()}
    for name, value in medians.items():
        print(f"{name:28s} {1000 * value:15.1f}")
    if "(a) level-batched layer" in medians:
        ratio = (
            medians["(a) level-batched layer"]
            / medians["(c) keras.layers.LSTM"]
        )
        print(f"(a) / (c): {ratio:.2f}x")
    if backend == "tensorflow":
        for name in ("(e) with tree_levels, XLA", "(e) unpacked, XLA"):
            paired = statistics.median(
                a / b
                for a, b in zip(
                    times[name], times["(a) level-batched layer"], strict=True
                )
            )
            ratio = medians[name] / medians["(a) level-batched layer"]
            print(
                f"{name} / (a): {ratio:.2f}x, paired {paired:.2f}x"
                + (" (target <= 1.5x)" if "unpacked" not in name else "")
            )
    if backend in ("tensorflow", "jax"):
        for fixed in (False, True):
            compiles, buckets, num_batches, shapes, step = count_compilations(
                args, level_shapes=fixed
            )
            print(
                f"compilations over one epoch of {num_batches} bucketed "
                f"batches ({buckets} buckets, {shapes} batch shapes), with "
                "tree_levels"
                + (" of level_shapes from the data" if fixed else "")
                + (", XLA" if backend == "tensorflow" else "")
                + f": {compiles} (median step {1000 * step:.1f} ms)"
            )
            key = "compilations per epoch" + (", level_shapes" if fixed else "")
            medians[key] = compiles / 1000
    _backend.record(medians)


def data_level_shapes(dataset, boundaries):
    """`padded_batch`'s `level_shapes` from one pass over `dataset` (its
    batches without them): per bucket, the widest `W` that
    `kr.trees.tree_levels` picks for a batch of it, and the most steps a
    batch of it takes with `W` slots (rounded up by `kr.trees.bucket_size`)."""
    batches = [[] for _ in boundaries]
    for trees, _ in dataset:
        children = np.asarray(trees["children"])
        node_mask = np.asarray(trees["node_mask"])
        size = int(node_mask.sum(axis=1).max())
        bucket = min(
            int(np.searchsorted(boundaries, size, side="right")),
            len(boundaries) - 1,
        )
        batches[bucket].append((children, node_mask))
    shapes = []
    for bucket in batches:
        width = max(
            (
                kr.trees.tree_levels(*batch, pack=True).shape[2]
                for batch in bucket
            ),
            default=1,
        )
        steps = max(
            (
                kr.trees.tree_levels(
                    *batch, level_width=width, round_up=False, pack=True
                ).shape[1]
                for batch in bucket
            ),
            default=1,
        )
        shapes.append((kr.trees.bucket_size(steps), width))
    return shapes


def bucketed_dataset(args, level_shapes=False):
    """One epoch of ListOps trees through `kr.trees.padded_batch`, bucketed
    by size and padded to the bucket boundaries (the documented
    pipeline), and its number of buckets."""
    data = kr.datasets.listops(
        args.batch_size * args.compile_batches,
        max_length=args.max_length,
        seed=args.seed + 1,
    )
    if args.cell == "child_sum":
        encoded = [
            kr.trees.encode_tree(tree, vocabulary=VOCABULARY, num_children=5)
            for tree in data["trees"]
        ]
        width, boundaries = 5, [16, 32, 64, 128]
    else:
        encoded = [
            kr.trees.encode_tree(
                kr.datasets.listops_binary_tree(tree),
                vocabulary=VOCABULARY,
                labeled=False,
                num_children=2,
            )
            for tree in data["trees"]
        ]
        width, boundaries = 2, [32, 64, 128, 256]
    encoded = [
        (tree, label)
        for tree, label in zip(encoded, data["labels"], strict=True)
        if len(tree["node_mask"]) < boundaries[-1]
        and tree["children"].shape[1] == width
    ]
    dataset = tf.data.Dataset.from_generator(
        lambda: iter(encoded),
        output_signature=(
            kr.trees.tree_spec(width),
            tf.TensorSpec((), tf.int32),
        ),
    )
    options = {
        "bucket_boundaries": boundaries,
        "pad_to_bucket_boundary": True,
        "drop_remainder": True,
    }
    batched = kr.trees.padded_batch(dataset, args.batch_size, **options)
    if level_shapes:
        shapes = data_level_shapes(batched, boundaries)
        batched = kr.trees.padded_batch(
            dataset, args.batch_size, level_shapes=shapes, **options
        )
    return batched, len(boundaries)


def count_compilations(args, level_shapes=False):
    """The programs compiled to train (a)'s model with the schedule over
    one epoch of `bucketed_dataset`: jitted on JAX, XLA on TensorFlow;
    with the median step time of a second epoch."""
    dataset, buckets = bucketed_dataset(args, level_shapes)
    model = TreeClassifier(args.cell, args.units, args.embedding_dim)
    batches = [
        (
            tuple(
                np.asarray(trees[name])
                for name in (
                    "node_tokens",
                    "children",
                    "node_mask",
                    "tree_levels",
                )
            ),
            np.asarray(labels),
        )
        for trees, labels in dataset
    ]
    model(batches[0][0])
    if keras.backend.backend() == "jax":
        model.compile(
            keras.optimizers.Adam(1e-3),
            keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        )
        # The train step's programs alone (not the small jitted ops that
        # Keras also compiles once).
        with kr.testing.count_jax_compilations() as counted:
            for inputs, labels in batches:
                model.train_on_batch(inputs, labels)
        compiles = counted.of("train_step")
        step = model.train_on_batch
    else:
        step = train_step_function(
            model, lambda inputs: model(inputs, training=True), None, True
        )
        for inputs, labels in batches:
            step(inputs, labels)
        compiles = step.experimental_get_tracing_count()
    times = []
    for inputs, labels in batches:
        start = time.perf_counter()
        np.asarray(step(inputs, labels))
        times.append(time.perf_counter() - start)
    shapes = len({tuple(a.shape for a in inputs) for inputs, _ in batches})
    return compiles, buckets, len(batches), shapes, statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--cell", choices=["child_sum", "nary"], default="child_sum"
    )
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--num-batches", type=int, default=4)
    parser.add_argument(
        "--compile-batches",
        type=int,
        default=24,
        help="trees (in batches) of the bucketed epoch whose compilations "
        "are counted (with --backend)",
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--max-length", type=int, default=100)
    parser.add_argument("--units", type=int, default=64)
    parser.add_argument("--embedding-dim", type=int, default=32)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--skip-derived-static",
        action="store_true",
        help="with --backend: leave out JAX's row (a), the static path "
        "that derives its levels in the graph (tens of seconds a step)",
    )
    _backend.add_backend_argument(parser)
    args = parser.parse_args()
    if _backend.in_backend_run():
        backend_run(args)
        return
    keras.utils.set_random_seed(args.seed)

    batches = make_batches(args)
    width = batches[0]["trees"][1].shape[-1]
    tree_signature = (
        (
            tf.TensorSpec((None, None), tf.int32),
            tf.TensorSpec((None, None, width), tf.int32),
            tf.TensorSpec((None, None), tf.int32),
        ),
        tf.TensorSpec((None,), tf.int32),
    )
    sequence_signature = (
        tf.TensorSpec((None, None), tf.int32),
        tf.TensorSpec((None,), tf.int32),
    )

    tree_model = TreeClassifier(args.cell, args.units, args.embedding_dim)
    node_model = TreeClassifier(args.cell, args.units, args.embedding_dim)
    lstm_model = SequenceClassifier(args.units, args.embedding_dim)
    first = batches[0]
    tree_model(first["trees"])
    node_model(first["trees"])
    lstm_model(first["sequences"])
    node_model.set_weights(tree_model.get_weights())

    # Same weights, same math: the node loop must give (a)'s logits.
    node_forward = tf.function(
        node_model.node_by_node, input_signature=tree_signature[:1]
    )
    difference = max(
        float(
            np.abs(
                node_forward(batch["trees"]) - tree_model(batch["trees"])
            ).max()
        )
        for batch in batches[:2]
    )
    if difference > 1e-4:
        raise RuntimeError(f"Node loop differs from the layer: {difference}")
    static_forward = tf.function(
        lambda inputs: tree_model(inputs),
        input_signature=tree_signature[:1],
        jit_compile=True,
    )
    static_difference = max(
        float(
            np.abs(
                static_forward(batch["trees"]) - tree_model(batch["trees"])
            ).max()
        )
        for batch in batches
    )
    if static_difference > 1e-4:
        raise RuntimeError(
            f"The static path differs from the layer: {static_difference}"
        )

    steps = {
        "level": (
            train_step_function(
                tree_model,
                lambda inputs: tree_model(inputs, training=True),
                tree_signature,
            ),
            "trees",
        ),
        "node": (
            train_step_function(
                node_model, node_model.node_by_node, tree_signature
            ),
            "trees",
        ),
        "lstm": (
            train_step_function(
                lstm_model,
                lambda inputs: lstm_model(inputs, training=True),
                sequence_signature,
            ),
            "sequences",
        ),
        "static": (
            train_step_function(
                tree_model,
                lambda inputs: tree_model(inputs, training=True),
                tree_signature,
                jit_compile=True,
            ),
            "trees",
        ),
    }
    # (e): XLA with `encode_trees`' default schedule (one per tree).
    scheduled_signature = (
        (*tree_signature[0], tf.TensorSpec((None, None, None), tf.int32)),
        tree_signature[1],
    )
    steps["scheduled"] = (
        train_step_function(
            tree_model,
            lambda inputs: tree_model(inputs, training=True),
            scheduled_signature,
            jit_compile=True,
        ),
        "unpacked",
    )
    # Forward passes alone, for the ratio without the backward pass.
    level_forward = tf.function(
        lambda inputs: tree_model(inputs), input_signature=tree_signature[:1]
    )
    steps["level forward"] = (lambda inputs, _: level_forward(inputs), "trees")
    steps["node forward"] = (lambda inputs, _: node_forward(inputs), "trees")
    steps["static forward"] = (
        lambda inputs, _: static_forward(inputs),
        "trees",
    )
    for step, key in steps.values():  # Trace and warm up.
        step(first[key], first["labels"])
    for batch in batches:  # XLA compiles once per batch shape.
        for name in ("static", "static forward", "scheduled"):
            step, key = steps[name]
            step(batch[key], batch["labels"])

    times = {name: [] for name in steps}
    for _ in range(args.repeats):
        for batch in batches:
            for name, (step, key) in steps.items():
                start = time.perf_counter()
                np.asarray(step(batch[key], batch["labels"]))
                times[name].append(time.perf_counter() - start)

    nodes = np.mean([batch["trees"][2].sum(1).mean() for batch in batches])
    padded = np.mean([batch["trees"][2].shape[1] for batch in batches])
    length = np.mean([batch["sequences"].shape[1] for batch in batches])
    print(
        f"ListOps, {args.cell} cell, batch {args.batch_size}, units "
        f"{args.units}: {nodes:.1f} nodes per tree (padded to {padded:.0f}), "
        f"sequences padded to {length:.0f} tokens; node loop matches the "
        f"layer to {difference:.1e}, the static path (XLA) to "
        f"{static_difference:.1e}"
    )
    median = {name: statistics.median(t) * 1000 for name, t in times.items()}
    labels = {
        "level": "(a) level-batched layer",
        "node": "(b) node-by-node loop",
        "lstm": "(c) keras.layers.LSTM",
        "level forward": "(a) forward pass only",
        "node forward": "(b) forward pass only",
        "static": "(d) static path, XLA",
        "static forward": "(d) forward pass only",
        "scheduled": "(e) default schedule, XLA",
    }
    print(f"{'train step':26s} {'median ms/step':>15s}")
    for name, value in median.items():
        print(f"{labels[name]:26s} {value:15.1f}")

    def paired(numerator, denominator):
        return statistics.median(
            a / b
            for a, b in zip(times[numerator], times[denominator], strict=True)
        )

    for label, numerator, denominator, target in (
        ("(b) / (a)", "node", "level", "target >= 20x"),
        ("(a) / (c)", "level", "lstm", "target <= 3x"),
        ("forward only, (b) / (a)", "node forward", "level forward", None),
        ("(d) / (a)", "static", "level", None),
        ("(b) / (d)", "node", "static", None),
        ("forward only, (d) / (a)", "static forward", "level forward", None),
        ("(e) / (a)", "scheduled", "level", "target <= 1.5x"),
    ):
        print(
            f"{label}: {median[numerator] / median[denominator]:.2f}x, "
            f"paired {paired(numerator, denominator):.2f}x"
            + (f" ({target})" if target else "")
        )


if __name__ == "__main__":
    main()
