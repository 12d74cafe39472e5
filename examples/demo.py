"""keras_recurrent in five minutes: train, tune, export, serve.

1. Generates the adding problem (Hochreiter & Schmidhuber 1997) with
   sequences of different lengths, zero-padded.
2. Trains a `PeepholeLSTM` and a `CoupledLSTM` model under
   `tf.distribute.MirroredStrategy` with two replicas (on a CPU-only machine
   the CPU is split into two logical devices, so the strategy really mirrors)
   and prints each one's test MSE against the baseline of always predicting
   the mean (1/6). With Adam at 1e-2 and the gradient norm clipped to 1,
   both learn the task within the 10 epochs: the loss stays near the
   baseline for a few epochs, then drops by two orders of magnitude.
3. Runs a short keras-tuner search over the LSTM variants, each trial with
   the same learning rate and epochs (with fewer, the plain LSTM and the
   peephole LSTM stop before they learn).
4. Exports the best model as a SavedModel whose serving signature takes the
   padded sequences and their lengths (Keras 3 export drops masks).
5. Reloads it in a fresh Python process, where `keras_recurrent` cannot be
   imported, and prints the served predictions next to the Keras ones.

Run it with `python3 dev.py demo` (creates the environment on first use);
it takes 3 to 4 minutes on 2 CPU cores and prints one line per epoch.
"""

import argparse
import json
import pathlib
import subprocess
import sys
import tempfile
import textwrap
import warnings

from _quiet_tensorflow import quiet_tensorflow  # noqa: E402

quiet_tensorflow()

# Split the CPU before TensorFlow starts its runtime.
import keras_recurrent.testing  # noqa: E402

keras_recurrent.testing.configure_cpu_replicas(2)

import keras  # noqa: E402
import keras_tuner  # noqa: E402
import numpy as np  # noqa: E402
from _progress import EpochLine  # noqa: E402

import keras_recurrent as kr  # noqa: E402

LENGTH = 40
# The settings under which every model of the demo learns the task.
LEARNING_RATE = 1e-2
CLIPNORM = 1.0
BATCH_SIZE = 64

SERVE_SCRIPT = textwrap.dedent(
    """
    import json, sys
    sys.modules["keras_recurrent"] = None  # prove the SavedModel needs no kr
    import numpy as np
    import tensorflow as tf
    data = np.load(sys.argv[2])
    serve = tf.saved_model.load(sys.argv[1]).signatures["serve"]
    outputs = serve(
        sequences=tf.constant(data["x"]), lengths=tf.constant(data["lengths"])
    )
    print(json.dumps({k: v.numpy().tolist() for k, v in outputs.items()}))
    """
)


def recurrent_model(layer, name):
    inputs = keras.Input((LENGTH, 2), name="sequences")
    x = keras.layers.Masking(0.0)(inputs)
    x = layer(x)
    outputs = keras.layers.Dense(1, name="sum")(x)
    model = keras.Model(inputs, outputs, name=name)
    model.compile(
        keras.optimizers.Adam(LEARNING_RATE, clipnorm=CLIPNORM), "mse"
    )
    return model


class ClippedSequenceHyperModel(kr.tuning.SequenceHyperModel):
    """`SequenceHyperModel` with the demo's gradient clipping."""

    def build(self, hp):
        model = super().build(hp)
        model.compile(
            keras.optimizers.Adam(hp.get("learning_rate"), clipnorm=CLIPNORM),
            "mse",
        )
        return model

    def fit(self, hp, model, *args, callbacks=None, **kwargs):
        # keras-tuner copies the callbacks for each trial: name its cell type
        # in its epoch lines.
        for callback in callbacks or ():
            if isinstance(callback, EpochLine):
                callback.prefix = f"  trial ({hp.get('cell_type')}) "
        return super().fit(hp, model, *args, callbacks=callbacks, **kwargs)


def verdict(mse, baseline):
    """How a test MSE compares with the baseline, in words."""
    if mse < baseline / 10:
        return f"learned ({baseline / mse:.0f} times below the baseline)"
    return f"not learned yet ({baseline / mse:.1f} times below the baseline)"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--epochs",
        type=int,
        default=10,
        help="training epochs of each model and of each tuner trial",
    )
    parser.add_argument(
        "--samples",
        type=int,
        default=4000,
        help="training sequences of the adding problem",
    )
    parser.add_argument(
        "--trials", type=int, default=3, help="keras-tuner trials"
    )
    parser.add_argument(
        "--workdir",
        default=None,
        help="folder for the tuner's trials and the SavedModel (default: a "
        "new temporary folder)",
    )
    args = parser.parse_args(argv)
    workdir = pathlib.Path(args.workdir or tempfile.mkdtemp(prefix="kr_demo_"))
    keras.utils.set_random_seed(0)

    print("\n== 1. Data: the adding problem, lengths 20 to 40, zero-padded")
    x, y, lengths = kr.datasets.adding_problem(
        args.samples, length=LENGTH, min_length=20, seed=0
    )
    x_val, y_val, _ = kr.datasets.adding_problem(
        500, length=LENGTH, min_length=20, seed=1
    )
    x_test, y_test, test_lengths = kr.datasets.adding_problem(
        500, length=LENGTH, min_length=20, seed=2
    )
    baseline = kr.datasets.adding_problem_baseline_mse(y_test)
    print(f"train {x.shape}, test {x_test.shape}; baseline MSE {baseline:.4f}")

    strategy = keras_recurrent.testing.mirrored_strategy(2)
    print(
        f"\n== 2. Training under MirroredStrategy with "
        f"{strategy.num_replicas_in_sync} replicas: "
        f"{', '.join(strategy.extended.worker_devices)}"
    )
    results = []
    for name, layer in (
        ("peephole_lstm", lambda: kr.layers.PeepholeLSTM(32)),
        ("coupled_lstm", lambda: kr.layers.CoupledLSTM(32)),
    ):
        with strategy.scope():
            model = recurrent_model(layer(), name)
        print(
            f"\n-- {name}: Adam({LEARNING_RATE:g}, clipnorm={CLIPNORM:g}), "
            f"batch {BATCH_SIZE}, {args.epochs} epochs"
        )
        model.fit(
            x,
            y,
            batch_size=BATCH_SIZE,
            epochs=args.epochs,
            validation_data=(x_val, y_val),
            verbose=0,
            callbacks=[EpochLine("  ")],
        )
        mse = model.evaluate(x_test, y_test, verbose=0)
        print(f"{name}: test MSE {mse:.4f}, {verdict(mse, baseline)}")
        results.append((name, model.count_params(), mse))
    print("\n| model | params | test MSE | baseline MSE |")
    print("|---|---:|---:|---:|")
    for name, params, mse in results:
        print(f"| {name} | {params:,} | {mse:.4f} | {baseline:.4f} |")

    print("\n== 3. keras-tuner search over the LSTM variants")
    hp = keras_tuner.HyperParameters()
    hp.Choice(
        "cell_type", ["peephole", "coupled", "greff_nig", "greff_nog", "lstm"]
    )
    hp.Fixed("units", 32)
    hp.Fixed("num_layers", 1)
    hp.Fixed("dropout", 0.0)
    hp.Fixed("recurrent_dropout", 0.0)
    hp.Fixed("learning_rate", LEARNING_RATE)
    tuner = keras_tuner.RandomSearch(
        ClippedSequenceHyperModel((LENGTH, 2), 1, masking=True),
        objective="val_loss",
        max_trials=args.trials,
        hyperparameters=hp,
        seed=0,
        distribution_strategy=strategy,
        directory=workdir / "tuner",
        overwrite=True,
    )
    tuner.search(
        x,
        y,
        batch_size=BATCH_SIZE,
        epochs=args.epochs,
        validation_data=(x_val, y_val),
        verbose=0,
        callbacks=[EpochLine()],  # Named per trial by the HyperModel.
    )
    for trial in tuner.oracle.get_best_trials(args.trials):
        values = trial.hyperparameters.values
        print(
            f"trial {trial.trial_id}: cell_type={values['cell_type']}, "
            f"learning_rate={values['learning_rate']:.2e}, "
            f"val_loss={trial.score:.4f}, {verdict(trial.score, baseline)}"
        )
    with warnings.catch_warnings():
        # The best checkpoint carries Adam's state, which the freshly built
        # model's optimizer does not have yet: harmless for serving.
        warnings.filterwarnings("ignore", "Skipping variable loading")
        best = tuner.get_best_models(1)[0]

    print("\n== 4. Export as a SavedModel with a lengths input")
    export_dir = workdir / "saved_model"
    kr.export.export_saved_model(best, export_dir, lengths=True)
    print(f"wrote {export_dir}")

    print("\n== 5. Serve from a fresh process without keras_recurrent")
    count = 5
    sample_file = workdir / "samples.npz"
    np.savez(
        sample_file,
        x=x_test[:count],
        lengths=test_lengths[:count].astype("int32"),
    )
    served = subprocess.run(
        [sys.executable, "-c", SERVE_SCRIPT, str(export_dir), str(sample_file)],
        check=True,
        capture_output=True,
        text=True,
    )
    served_outputs = json.loads(served.stdout.strip().splitlines()[-1])
    served_values = np.array(next(iter(served_outputs.values()))).ravel()
    keras_values = best.predict(x_test[:count], verbose=0).ravel()
    print("| sample | length | target | Keras | served | abs diff |")
    print("|---:|---:|---:|---:|---:|---:|")
    for index in range(count):
        print(
            f"| {index} | {test_lengths[index]} | {y_test[index, 0]:.4f} "
            f"| {keras_values[index]:.4f} | {served_values[index]:.4f} "
            f"| {abs(keras_values[index] - served_values[index]):.1e} |"
        )


if __name__ == "__main__":
    main()
