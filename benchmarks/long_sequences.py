"""Train-step time and peak memory on long sequences, against their length.

Trains `Input((T, features)) -> layer -> Dense(1)` with SGD for a few steps
at T = 1,000, 4,000 and 16,000, for `kr.layers.PeepholeLSTM` and a two-layer
gated `kr.layers.GatedFeedbackRNN`, each size in a fresh process so that the
peak resident memory (RSS) is that run's own. Backpropagation through time
keeps every step's activations, so both time and the memory above the
process's start should grow linearly in T: the table gives both per 1,000
steps, and their growth from the shortest to the longest sequences relative
to T's (1.00 is exactly linear).

    python benchmarks/long_sequences.py
    python benchmarks/long_sequences.py --lengths 1000 4000 --repeats 2

When one train step's memory (the "MB above start" column, which scales
with batch size times units) no longer fits, cut the sequences into chunks
with `kr.data.tbptt_batches` and train a `stateful=True` layer on them:
memory then depends on the chunk length, not on T.
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

LAYERS = ("PeepholeLSTM", "GatedFeedbackRNN")


def _peak_rss_mb():
    # ru_maxrss is in kilobytes on Linux.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(layer_name, timesteps, batch, features, units, repeats):
    """Median train-step seconds and peak RSS (MB) above the built model."""
    import keras
    import numpy as np

    import keras_recurrent as kr

    if layer_name == "PeepholeLSTM":
        layer = kr.layers.PeepholeLSTM(units)
    else:
        layer = kr.layers.GatedFeedbackRNN([units, units], cell_type="lstm")
    model = keras.Sequential(
        [keras.Input((timesteps, features)), layer, keras.layers.Dense(1)]
    )
    model.compile(keras.optimizers.SGD(1e-3), "mse")
    rng = np.random.default_rng(0)
    x = rng.normal(size=(batch, timesteps, features)).astype("float32")
    y = rng.normal(size=(batch, 1)).astype("float32")
    start_rss = _peak_rss_mb()
    model.train_on_batch(x, y)  # Traces and compiles.
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        loss = model.train_on_batch(x, y)
        times.append(time.perf_counter() - start)
    if not np.isfinite(loss):
        raise FloatingPointError(f"{layer_name}, T={timesteps}: loss {loss}")
    return {
        "seconds": statistics.median(times),
        "peak_mb": _peak_rss_mb(),
        "above_start_mb": _peak_rss_mb() - start_rss,
    }


def run_worker(args, layer_name, timesteps):
    """`measure` in a fresh process, for its own peak RSS."""
    command = [
        sys.executable,
        os.path.abspath(__file__),
        "--worker",
        layer_name,
        str(timesteps),
        *("--batch", str(args.batch), "--features", str(args.features)),
        *("--units", str(args.units), "--repeats", str(args.repeats)),
    ]
    result = subprocess.run(
        command, capture_output=True, text=True, check=False, timeout=3600
    )
    if result.returncode:
        raise RuntimeError(result.stderr[-3000:])
    return json.loads(result.stdout.strip().splitlines()[-1])


def report(layer_name, lengths, results):
    """The table, with the cost of each 1,000 more steps between rows: a
    constant cost per 1,000 steps is linear growth."""
    print(f"\n{layer_name}\n")
    print(
        "| T | median step (s) | peak RSS (MB) | MB above start "
        "| s per 1k more steps | MB per 1k more steps |"
    )
    print("|---:|---:|---:|---:|---:|---:|")
    slopes = []
    for index, timesteps in enumerate(lengths):
        result = results[timesteps]
        row = (
            f"| {timesteps:,} | {result['seconds']:.2f} | "
            f"{result['peak_mb']:.0f} | {result['above_start_mb']:.0f} |"
        )
        if index:
            before = results[lengths[index - 1]]
            thousands = (timesteps - lengths[index - 1]) / 1000
            slope = (
                (result["seconds"] - before["seconds"]) / thousands,
                (result["above_start_mb"] - before["above_start_mb"])
                / thousands,
            )
            slopes.append(slope)
            row += f" {slope[0]:.3f} | {slope[1]:.1f} |"
        else:
            row += " | |"
        print(row)
    if len(slopes) > 1:
        print(
            "\nCost of 1k more steps, last interval over first: time "
            f"{slopes[-1][0] / slopes[0][0]:.2f}, memory "
            f"{slopes[-1][1] / slopes[0][1]:.2f} (1.00: linear in T)"
        )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--lengths", type=int, nargs="+", default=[1000, 4000, 16000]
    )
    parser.add_argument("--layers", nargs="+", choices=LAYERS, default=LAYERS)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--features", type=int, default=8)
    parser.add_argument("--units", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        layer_name, timesteps = args.worker[0], int(args.worker[1])
        result = measure(
            layer_name,
            timesteps,
            args.batch,
            args.features,
            args.units,
            args.repeats,
        )
        print(json.dumps(result))
        return
    lengths = sorted(args.lengths)
    print(
        f"batch {args.batch}, {args.features} features, {args.units} units, "
        f"median of {args.repeats} train steps after one to compile"
    )
    for layer_name in args.layers:
        results = {t: run_worker(args, layer_name, t) for t in lengths}
        report(layer_name, lengths, results)


if __name__ == "__main__":
    main()
