"""Train-step time of the LSTM variants against `keras.layers.LSTM`.

Every model is `Input -> recurrent layer -> Dense(1)`, trained with SGD on MSE
with `train_on_batch`. The models are timed round-robin in one process, so
that a noisy machine slows them all alike; the table gives the median step
time and its ratio to `keras.layers.LSTM` of the same size.

    python benchmarks/lstm_variants.py                 # both sizes
    python benchmarks/lstm_variants.py --sizes small --repeats 5
    python benchmarks/lstm_variants.py --only PeepholeLSTM CoupledLSTM
    python benchmarks/lstm_variants.py --backend all   # + ratio to TF

On JAX (`--backend jax`) it first counts the train-step compilations of one
`fit` epoch over sequences of varied lengths (`kr.testing.
count_jax_compilations`): padded to each batch's longest sequence, and
bucketed by length with `tf.data`'s `bucket_by_sequence_length` padded to
the bucket boundaries.
"""

import argparse
import os
import statistics
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import _backend  # noqa: E402

if __name__ == "__main__":
    # Before Keras is imported: with --backend, this process only launches
    # one subprocess per backend.
    _backend.dispatch_if_requested(__file__)

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402  (tf.data, on every backend)

import keras_recurrent as kr  # noqa: E402

SIZES = {
    # name: (batch, timesteps, input features, units)
    "small": (64, 100, 64, 256),
    "large": (64, 100, 128, 512),
    # For a quick check that it runs, e.g. on every backend.
    "tiny": (8, 10, 8, 16),
}


def candidates(units):
    """`{name: layer factory}`, the built-in LSTM first."""
    models = {
        "keras.layers.LSTM": lambda: keras.layers.LSTM(units),
        "PeepholeLSTM": lambda: kr.layers.PeepholeLSTM(units),
        "CoupledLSTM": lambda: kr.layers.CoupledLSTM(
            units, use_peepholes=False
        ),
        # TensorFlow Addons' cell; the issue's target is at most 1.3x.
        "LayerNormLSTM": lambda: kr.layers.LayerNormLSTM(units),
    }
    for variant in kr.layers.VARIANTS:
        models[f"LSTMVariant({variant})"] = lambda v=variant: (
            kr.layers.LSTMVariant(units, variant=v)
        )
    return models


def build(layer_factory, timesteps, features):
    model = keras.Sequential(
        [
            keras.Input((timesteps, features)),
            layer_factory(),
            keras.layers.Dense(1),
        ]
    )
    model.compile(keras.optimizers.SGD(1e-3), "mse")
    return model


def time_models(size, repeats, warmup=2, seed=0, only=None):
    batch, timesteps, features, units = SIZES[size]
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(batch, timesteps, features)).astype("float32")
    y = rng.normal(size=(batch, 1)).astype("float32")
    models = {
        name: build(factory, timesteps, features)
        for name, factory in candidates(units).items()
        if only is None or name in only or name == "keras.layers.LSTM"
    }
    for model in models.values():
        for _ in range(warmup):
            model.train_on_batch(x, y)
    times = {name: [] for name in models}
    for _ in range(repeats):
        for name, model in models.items():
            start = time.perf_counter()
            model.train_on_batch(x, y)
            times[name].append(time.perf_counter() - start)
    params = {name: model.count_params() for name, model in models.items()}
    return times, params


def report(size, times, params):
    batch, timesteps, features, units = SIZES[size]
    baseline = statistics.median(times["keras.layers.LSTM"])
    lines = [
        f"\n{size}: batch {batch}, {timesteps} steps, {features} inputs, "
        f"{units} units; median of {len(times['keras.layers.LSTM'])} "
        "train steps",
        "",
        "| layer | params | median step (ms) | ratio to keras LSTM |",
        "|---|---:|---:|---:|",
    ]
    for name, samples in times.items():
        median = statistics.median(samples)
        lines.append(
            f"| {name} | {params[name]:,} | {1000 * median:.1f} "
            f"| {median / baseline:.2f} |"
        )
    return "\n".join(lines)


def bucket_by_length(dataset, batch_size, boundaries):
    """Batches of one padded length per bucket: `boundaries[i] - 1`."""
    return dataset.bucket_by_sequence_length(
        lambda x, y: tf.shape(x)[0],
        bucket_boundaries=boundaries,
        bucket_batch_sizes=[batch_size] * (len(boundaries) + 1),
        pad_to_bucket_boundary=True,
        drop_remainder=True,
    )


def compile_counts(args, features=8, units=16, batch_size=16):
    """Train-step compilations of one `fit` epoch of sequences of 1 to
    `args.max_length` steps, with and without length buckets (JAX)."""
    rng = np.random.default_rng(3)
    lengths = rng.integers(1, args.max_length + 1, size=args.compile_sequences)
    sequences = [
        rng.normal(size=(length, features)).astype("float32")
        for length in lengths
    ]
    targets = rng.normal(size=len(sequences)).astype("float32")
    dataset = tf.data.Dataset.from_generator(
        lambda: zip(sequences, targets, strict=True),
        output_signature=(
            tf.TensorSpec((None, features), tf.float32),
            tf.TensorSpec((), tf.float32),
        ),
    )
    boundaries = [
        args.max_length * (i + 1) // args.buckets + 1
        for i in range(args.buckets)
    ]
    pipelines = {
        "padded to each batch's longest": dataset.padded_batch(
            batch_size, drop_remainder=True
        ),
        f"bucket_by_sequence_length, boundaries {boundaries}": (
            bucket_by_length(dataset, batch_size, boundaries)
        ),
    }
    print(
        f"\nCompilations, one epoch of {len(sequences)} sequences of 1-"
        f"{args.max_length} steps, batch {batch_size}, PeepholeLSTM({units}) "
        f"({keras.backend.backend()})\n"
    )
    print(
        "| pipeline | batches | batch shapes | train-step compilations "
        "| epoch s |"
    )
    print("|---|---:|---:|---:|---:|")
    for name, batched in pipelines.items():
        shapes = {tuple(x.shape) for x, _ in batched}
        frames = keras.Input((None, features))
        hidden = kr.layers.PeepholeLSTM(units)(keras.layers.Masking()(frames))
        model = keras.Model(frames, keras.layers.Dense(1)(hidden))
        model.compile(keras.optimizers.SGD(1e-3), "mse")
        start = time.perf_counter()
        with kr.testing.count_jax_compilations() as compiles:
            model.fit(batched, epochs=1, verbose=0)
        seconds = time.perf_counter() - start
        batches = sum(1 for _ in batched)
        print(
            f"| {name} | {batches} | {len(shapes)} | "
            f"{compiles.of('train_step')} | {seconds:.1f} |",
            flush=True,
        )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--sizes", nargs="+", default=["small", "large"], choices=list(SIZES)
    )
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument(
        "--only",
        nargs="+",
        default=None,
        help="time only these layers (and keras.layers.LSTM), e.g. "
        "PeepholeLSTM 'LSTMVariant(NIG)'",
    )
    parser.add_argument(
        "--compile-sequences",
        type=int,
        default=128,
        help="on JAX: sequences of the epoch whose compilations are "
        "counted (0 to skip)",
    )
    parser.add_argument("--max-length", type=int, default=100)
    parser.add_argument("--buckets", type=int, default=4)
    _backend.add_backend_argument(parser)
    args = parser.parse_args(argv)
    print(f"Keras {keras.__version__}, backend {keras.backend.backend()}")
    if keras.backend.backend() == "jax" and args.compile_sequences:
        compile_counts(args)
    medians = {}
    for size in args.sizes:
        times, params = time_models(size, args.repeats, only=args.only)
        print(report(size, times, params), flush=True)
        for name, samples in times.items():
            medians[f"{size}: {name}"] = statistics.median(samples)
    _backend.record(medians)


if __name__ == "__main__":
    main()
