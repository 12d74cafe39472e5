"""Deep stacked LSTMs on the adding problem: plain stack against residual.

Trains two models with the same budget: `--layers` LSTM layers of `--units`
each, stacked plainly (`ResidualStack(..., residual=False)`, the same as
chaining `keras.layers.LSTM(..., return_sequences=True)` layers) or with
residual connections (`ResidualStack(...)`), each followed by `Dense(1)` on
the last step. Same cells, widths, data, optimizer, batches and epochs; the
only difference is the skip path. `--layer-norm` adds a third model, the
residual stack with pre-norm layer normalization.

The task is the adding problem (`kr.datasets.adding_problem`): the target is
the sum of the two marked values of a sequence. Always predicting the mean
scores an MSE of 1/6; a model has learned the task only well below that.
The script prints the train and validation MSE of every model per epoch.

    python examples/deep_residual.py                  # about 5 min on 2 cores
    python examples/deep_residual.py --layers 4 --epochs 2 --samples 512
    python examples/deep_residual.py --layer-norm --json-out residual.json
"""

import argparse
import json
import time

from _quiet_tensorflow import quiet_tensorflow  # noqa: E402

quiet_tensorflow()

import keras  # noqa: E402
from _progress import EpochLine  # noqa: E402

import keras_recurrent as kr  # noqa: E402


def build_model(num_layers, units, length, residual, layer_norm, lr):
    stack = kr.layers.ResidualStack(
        [keras.layers.LSTMCell(units) for _ in range(num_layers)],
        residual=residual,
        layer_norm=layer_norm,
        return_sequences=False,
    )
    model = keras.Sequential(
        [keras.Input((length, 2)), stack, keras.layers.Dense(1)]
    )
    # Clipping keeps the comparison about depth, not about exploding steps.
    model.compile(keras.optimizers.Adam(lr, clipnorm=1.0), "mse")
    return model


def train(args):
    x, y, _ = kr.datasets.adding_problem(
        args.samples, length=args.length, seed=args.seed
    )
    x_val, y_val, _ = kr.datasets.adding_problem(
        max(args.samples // 4, 1), length=args.length, seed=args.seed + 1
    )
    variants = {"plain": (False, False), "residual": (True, False)}
    if args.layer_norm:
        variants["residual+layer_norm"] = (True, True)
    results = {}
    for name, (residual, layer_norm) in variants.items():
        # The same initial weights for the cells of every model.
        keras.utils.set_random_seed(args.seed)
        model = build_model(
            args.layers,
            args.units,
            args.length,
            residual,
            layer_norm,
            args.learning_rate,
        )
        start = time.perf_counter()
        history = model.fit(
            x,
            y,
            batch_size=args.batch_size,
            epochs=args.epochs,
            validation_data=(x_val, y_val),
            verbose=0,
            callbacks=[EpochLine(f"  {name} ")],
        )
        seconds = time.perf_counter() - start
        results[name] = (history.history, seconds, model.count_params())
        print(
            f"{name}: val MSE {history.history['val_loss'][-1]:.4f} "
            f"after {args.epochs} epochs, {seconds:.0f} s",
            flush=True,
        )
    return results


def report(args, results):
    names = list(results)
    print(
        f"\n{args.layers} layers x {args.units} units, length {args.length}, "
        f"{args.samples} training samples, {args.epochs} epochs. "
        f"Predicting the mean scores MSE "
        f"{kr.datasets.adding_problem_baseline_mse():.4f}.\n"
    )
    header = "| epoch | " + " | ".join(
        f"{name} train | {name} val" for name in names
    )
    print(header + " |")
    print("|" + "---|" * (1 + 2 * len(names)))
    for epoch in range(args.epochs):
        cells = []
        for name in names:
            history = results[name][0]
            cells.append(f"{history['loss'][epoch]:.4f}")
            cells.append(f"{history['val_loss'][epoch]:.4f}")
        print(f"| {epoch + 1} | " + " | ".join(cells) + " |")
    print("\n| model | parameters | best val MSE | seconds |")
    print("|---|---|---|---|")
    for name in names:
        history, seconds, params = results[name]
        print(
            f"| {name} | {params} | {min(history['val_loss']):.4f} "
            f"| {seconds:.0f} |"
        )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--layers", type=int, default=8, help="LSTM layers in each stack"
    )
    parser.add_argument(
        "--units", type=int, default=32, help="units per LSTM layer"
    )
    parser.add_argument(
        "--epochs", type=int, default=10, help="training epochs of each model"
    )
    parser.add_argument(
        "--samples",
        type=int,
        default=2048,
        help="training sequences (validation: a quarter as many)",
    )
    parser.add_argument(
        "--length",
        type=int,
        default=20,
        help="steps per sequence of the adding problem",
    )
    parser.add_argument(
        "--batch-size", type=int, default=32, help="sequences per batch"
    )
    parser.add_argument(
        "--learning-rate",
        type=float,
        default=1e-3,
        help="Adam's learning rate (gradient norm clipped to 1)",
    )
    parser.add_argument(
        "--layer-norm",
        action="store_true",
        help="also train a residual stack with pre-norm layer normalization",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seed of the data and of the initial weights",
    )
    parser.add_argument(
        "--json-out", help="Write every model's per-epoch losses here."
    )
    args = parser.parse_args(argv)
    results = train(args)
    report(args, results)
    if args.json_out:
        write_json(args, results)


def write_json(args, results):
    """Writes the settings and every model's history for plotting."""
    figures = {
        "settings": vars(args),
        "baseline_mse": kr.datasets.adding_problem_baseline_mse(),
        "models": {
            name: {"history": history, "seconds": seconds, "params": params}
            for name, (history, seconds, params) in results.items()
        },
    }
    with open(args.json_out, "w") as file:
        json.dump(figures, file, indent=1)


if __name__ == "__main__":
    main()
