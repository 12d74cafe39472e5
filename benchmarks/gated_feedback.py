"""Train-step time of the Gated-Feedback RNN against a stacked RNN.

For each unit type (simple, GRU, LSTM) four models of the same widths are
timed: the stacked network a user would otherwise build,
`keras.layers.RNN(keras.layers.StackedRNNCells([...]))` of `SimpleRNNCell`,
`GRUCell` or `LSTMCell`, and `kr.layers.GatedFeedbackRNN` with
`feedback="none"` (the same stacked network), `"fixed"` and `"gated"`.
Every model is `Input -> recurrent layer -> Dense(1)`, trained with SGD on
MSE with `train_on_batch`; all models are timed round-robin in one process,
so that a noisy machine slows them all alike.

The table sets the step time of each model, as a ratio to the stacked Keras
network, next to the ratio of their FLOP counts, and the quotient of the two
against the target of the issue: the feedback may cost what its extra
matmuls add and no more, `time ratio <= 1.15 * FLOP ratio`. The time ratio
is paired, the median over rounds of a model's step time over the stacked
network's in the same round, which drifting load skews less than the ratio
of the medians (also given).

FLOP counts are per sample and time step, forward, of the matmuls only: every
kernel of the built cells is one matmul operand used once per step (on PyTorch,
layer 0's input projection of `GatedFeedbackRNN` runs before the time loop, but
still once per step), so its multiply-adds are rows x cols, and the count is
the sum over kernels; this includes the feedback `h*_{t-1} U^{.->j}` and the
gates' `w_g . h^{j-1}` and `u_g . h*`. Biases, activations and other
elementwise products (the gates' broadcast over `h*`, the GRU/LSTM gating) are
left out: they are O(units) per step against O(units^2) of the matmuls. The
counts are checked against a closed form in the widths and against
`count_params()` (kernel entries + biases). A FLOP is a multiply-add here; the
backward pass costs about twice the forward one for every model alike, so the
ratios hold for the whole train step.

    python benchmarks/gated_feedback.py                       # 3 x 256
    python benchmarks/gated_feedback.py --repeats 40 --cell-types lstm
    python benchmarks/gated_feedback.py --sizes small mixed
    python benchmarks/gated_feedback.py --backend all   # + ratio to TF
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

import keras_recurrent as kr  # noqa: E402

SIZES = {
    # name: (batch, timesteps, input features, per-layer widths)
    "default": (32, 100, 64, [256, 256, 256]),
    "small": (32, 100, 64, [128, 128]),
    "large": (32, 100, 64, [512, 512, 512]),
    "mixed": (32, 100, 64, [128, 256, 192]),
    # For a quick check that it runs, e.g. on every backend.
    "tiny": (8, 10, 8, [16, 16]),
}
CELL_TYPES = ("simple", "gru", "lstm")
FEEDBACK = ("none", "fixed", "gated")
KERAS_CELLS = {
    "simple": keras.layers.SimpleRNNCell,
    "gru": keras.layers.GRUCell,
    "lstm": keras.layers.LSTMCell,
}
TARGET = 1.15


def stacked_name(cell_type):
    return f"RNN(StackedRNNCells({KERAS_CELLS[cell_type].__name__}))"


def candidates(cell_type, widths):
    """`{name: layer factory}`, the stacked Keras network first."""
    cell = KERAS_CELLS[cell_type]
    models = {
        stacked_name(cell_type): lambda: keras.layers.RNN(
            keras.layers.StackedRNNCells([cell(n) for n in widths])
        )
    }
    for feedback in FEEDBACK:
        name = f'GatedFeedbackRNN(feedback="{feedback}")'
        models[name] = lambda f=feedback: kr.layers.GatedFeedbackRNN(
            list(widths), cell_type=cell_type, feedback=f
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


def kernel_macs(layer):
    """Multiply-adds per sample and step: rows x cols of every kernel.

    Every weight of the cells is either a kernel (a matmul operand, used
    once per step) or a bias; anything else would make the count wrong.
    """
    macs = 0
    for weight in layer.cell.weights:
        name = weight.name
        if "kernel" in name:
            rows, cols = weight.shape
            macs += int(rows) * int(cols)
        elif not name.startswith("bias"):
            raise ValueError(f"unexpected weight {weight.path}")
    return macs


def closed_form(cell_type, feedback, features, widths):
    """`(multiply-adds, parameters)` of the recurrent layer from its widths.

    `G` blocks per unit type, `m_j` the input width of layer `j`, `n_j` its
    width, `N = sum n_j`, `L` layers. Stacked (Keras, or `feedback="none"`):
    `sum G n_j (m_j + n_j)`. `"fixed"`: the candidate's recurrent block reads
    all of `h*` instead of `h^j`, `sum G m_j n_j + (G-1) n_j^2 + N n_j`.
    `"gated"`: plus the gates, `sum m_j L + N L^2`.
    """
    blocks = {"simple": 1, "gru": 3, "lstm": 4}[cell_type]
    inputs = [features, *widths[:-1]]
    total, num_layers = sum(widths), len(widths)
    if feedback in (None, "none"):
        macs = sum(blocks * n * (m + n) for m, n in zip(inputs, widths))
    else:
        macs = sum(
            blocks * m * n + (blocks - 1) * n * n + total * n
            for m, n in zip(inputs, widths)
        )
    if feedback == "gated":
        macs += sum(inputs) * num_layers + total * num_layers**2
    # Keras' GRUCell(reset_after=True) has an input and a recurrent bias.
    bias_sets = 2 if feedback is None and cell_type == "gru" else 1
    biases = sum(bias_sets * blocks * n for n in widths)
    return macs, macs + biases


def time_models(size, cell_types, repeats, warmup=2, seed=0):
    batch, timesteps, features, widths = SIZES[size]
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(batch, timesteps, features)).astype("float32")
    y = rng.normal(size=(batch, 1)).astype("float32")
    models, info = {}, {}
    for cell_type in cell_types:
        for name, factory in candidates(cell_type, widths).items():
            model = build(factory, timesteps, features)
            layer = model.layers[0]
            feedback = getattr(layer, "feedback", None)
            macs = kernel_macs(layer)
            expected_macs, expected_params = closed_form(
                cell_type, feedback, features, widths
            )
            if (macs, layer.count_params()) != (
                expected_macs,
                expected_params,
            ):
                raise AssertionError(
                    f"{cell_type} {name}: kernels give {macs} multiply-adds "
                    f"and the layer {layer.count_params()} parameters; the "
                    f"closed form {expected_macs} and {expected_params}"
                )
            models[cell_type, name] = model
            info[cell_type, name] = (model.count_params(), macs)
    for model in models.values():
        for _ in range(warmup):
            model.train_on_batch(x, y)
    times = {key: [] for key in models}
    for _ in range(repeats):
        for key, model in models.items():
            start = time.perf_counter()
            model.train_on_batch(x, y)
            times[key].append(time.perf_counter() - start)
    return times, info


def report(size, cell_types, times, info):
    batch, timesteps, features, widths = SIZES[size]
    repeats = len(next(iter(times.values())))
    lines = [
        f"\n{size}: {len(widths)} layers of {widths} units, batch {batch}, "
        f"{timesteps} steps, {features} inputs; median of {repeats} train "
        "steps (p25-p75); time ratio = median over rounds of the step time "
        "over the stacked network's in the same round; MACs = forward "
        "matmul multiply-adds per sample and step;"
        f" target: time ratio / FLOP ratio <= {TARGET}",
        "",
        "| unit | layer | params | MACs | median step (ms) | p25-p75 (ms) "
        "| ratio of medians | time ratio | FLOP ratio | time / FLOP "
        "| target |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for cell_type in cell_types:
        base_key = (cell_type, stacked_name(cell_type))
        base_time = statistics.median(times[base_key])
        base_macs = info[base_key][1]
        for (unit, name), samples in times.items():
            if unit != cell_type:
                continue
            params, macs = info[unit, name]
            p25, median, p75 = np.percentile(samples, [25, 50, 75])
            # Paired: the median over rounds of this model's step time over
            # the stacked network's in the same round (robust to drift).
            time_ratio = statistics.median(
                t / b for t, b in zip(samples, times[base_key])
            )
            flop_ratio = macs / base_macs
            quotient = time_ratio / flop_ratio
            verdict = (
                ""
                if (unit, name) == base_key
                else ("ok" if quotient <= TARGET else "MISSED")
            )
            lines.append(
                f"| {unit} | {name} | {params:,} | {macs:,} "
                f"| {1000 * median:.1f} | {1000 * p25:.1f}-{1000 * p75:.1f} "
                f"| {median / base_time:.3f} | {time_ratio:.3f} "
                f"| {flop_ratio:.3f} | {quotient:.3f} "
                f"| {verdict} |"
            )
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--sizes", nargs="+", default=["default"], choices=list(SIZES)
    )
    parser.add_argument(
        "--cell-types", nargs="+", default=list(CELL_TYPES), choices=CELL_TYPES
    )
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=2)
    _backend.add_backend_argument(parser)
    args = parser.parse_args(argv)
    print(f"Keras {keras.__version__}, backend {keras.backend.backend()}")
    medians = {}
    for size in args.sizes:
        times, info = time_models(
            size, args.cell_types, args.repeats, warmup=args.warmup
        )
        print(report(size, args.cell_types, times, info), flush=True)
        for (unit, name), samples in times.items():
            medians[f"{size}: {unit} {name}"] = statistics.median(samples)
    _backend.record(medians)


if __name__ == "__main__":
    main()
