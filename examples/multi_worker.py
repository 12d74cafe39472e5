"""Training one model on several workers with `MultiWorkerMirroredStrategy`.

Every worker runs this same script, with `TF_CONFIG` naming all workers and
its own index, and trains the same `PeepholeLSTM` on the adding problem
with `model.fit` under `kr.distribute.MultiWorkerMirroredStrategy` (Keras
3's `fit` fails under the plain TensorFlow strategy, keras-team/keras#20585).
Each global batch is split between the workers and the gradients are summed
across them, so the job trains like one process on the same global batches.

On a cluster, start one worker per machine with the same arguments:

    TF_CONFIG='{"cluster": {"worker": ["10.0.0.1:2222", "10.0.0.2:2222"]},
                "task": {"type": "worker", "index": 0}}' \\
        python multi_worker.py --backup-dir /shared/job --out /shared/w.npz
    # on 10.0.0.2 the same, with "index": 1

`--backup-dir` must be storage every worker sees. Worker 0, the chief,
backs up the model there at the end of every epoch
(`kr.callbacks.multi_worker_backup_and_restore`) and writes the trained
weights to `--out`. When a worker dies, the others fail in their next
collective op (`UnavailableError`): restart all of them with the same
`TF_CONFIG` and arguments, and training resumes at the first epoch not
backed up, ending with the weights of a job that was never interrupted.

Without `TF_CONFIG` the script is its own launcher: it picks free ports on
127.0.0.1, starts `--workers` workers with their `TF_CONFIG`, restarts all
of them if one fails (up to `--restarts` times), then trains the same
model in this one process and prints how far the job's weights are from it.

    python examples/multi_worker.py --smoke

prints one line, `max weight difference to one process: X`.
"""

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile

os.environ["KERAS_BACKEND"] = "tensorflow"

from _quiet_tensorflow import quiet_tensorflow  # noqa: E402

quiet_tensorflow()

GLOBAL_BATCH = 16


def make_data(args):
    """The same data in every process: the adding problem."""
    import keras_recurrent as kr

    x, y, _ = kr.datasets.adding_problem(args.samples, length=args.length)
    return x, y


def make_dataset(x, y):
    import tensorflow as tf

    # The same batches in the same order on every run and worker, so that a
    # restarted job resumes exactly: no shuffling (or a seed per epoch).
    # tf.distribute splits each global batch between the workers.
    return tf.data.Dataset.from_tensor_slices((x, y)).batch(GLOBAL_BATCH)


def build_model(args):
    import keras

    import keras_recurrent as kr

    # The same initial weights in every process.
    keras.utils.set_random_seed(0)
    inputs = keras.Input((args.length, 2))
    states = kr.layers.PeepholeLSTM(args.units)(inputs)
    model = keras.Model(inputs, keras.layers.Dense(1)(states))
    model.compile(
        optimizer=keras.optimizers.Adam(0.01), loss="mse", jit_compile=False
    )
    return model


def train_worker(args):
    """One worker of the job; `TF_CONFIG` says which."""
    import numpy as np

    import keras_recurrent as kr
    import keras_recurrent.distribute  # noqa: F401

    # First thing: the strategy connects to the other workers.
    strategy = kr.distribute.MultiWorkerMirroredStrategy()
    resolver = strategy.cluster_resolver
    is_chief = resolver.task_type == "chief" or (
        resolver.task_type == "worker" and resolver.task_id == 0
    )
    x, y = make_data(args)
    with strategy.scope():
        model = build_model(args)
    callbacks = []
    if args.backup_dir:
        callbacks.append(
            kr.callbacks.multi_worker_backup_and_restore(
                args.backup_dir, strategy
            )
        )
    if is_chief:
        from _progress import EpochLine

        # One line per epoch into the chief's log.
        callbacks.append(EpochLine())
    model.fit(
        make_dataset(x, y),
        epochs=args.epochs,
        # The dataset fixes the order of the batches (see make_dataset).
        shuffle=False,
        verbose=0,
        callbacks=callbacks,
    )
    if is_chief and args.out:
        # Written to a temporary file, then renamed: a reader never sees a
        # partial file.
        temporary = args.out + ".tmp.npz"
        np.savez(temporary, *model.get_weights())
        os.replace(temporary, args.out)


def free_addresses(count):
    """`count` free `127.0.0.1:port` addresses."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [f"127.0.0.1:{sock.getsockname()[1]}" for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def start_workers(addresses, argv, log_dir):
    """Starts this script once per worker, each with its `TF_CONFIG`."""
    processes = []
    for index in range(len(addresses)):
        env = {
            **os.environ,
            "TF_CONFIG": json.dumps(
                {
                    "cluster": {"worker": addresses},
                    "task": {"type": "worker", "index": index},
                }
            ),
            # The workers share this machine's cores.
            "TF_NUM_INTRAOP_THREADS": "1",
            "TF_NUM_INTEROP_THREADS": "2",
        }
        with open(os.path.join(log_dir, f"worker-{index}.log"), "ab") as log:
            processes.append(
                subprocess.Popen(
                    [sys.executable, os.path.abspath(__file__), *argv],
                    env=env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                )
            )
    return processes


def wait(processes, timeout):
    """The exit codes; once one worker fails, the others are stopped."""
    for process in processes:
        try:
            code = process.wait(timeout)
        except subprocess.TimeoutExpired:
            code = None
        if code != 0:
            # The others cannot go on without it: stop them.
            for other in processes:
                if other.poll() is None:
                    other.kill()
            break
    return [process.wait() for process in processes]


def run_local(args, directory):
    """Runs the job on 127.0.0.1; the path of the chief's weights."""
    out = os.path.join(directory, "weights.npz")
    backup_dir = args.backup_dir or os.path.join(directory, "backup")
    argv = [
        *("--samples", str(args.samples), "--length", str(args.length)),
        *("--units", str(args.units), "--epochs", str(args.epochs)),
        *("--backup-dir", backup_dir, "--out", out),
    ]
    # The addresses stay the same across restarts: the same TF_CONFIG.
    addresses = free_addresses(args.workers)
    for attempt in range(args.restarts + 1):
        processes = start_workers(addresses, argv, directory)
        codes = wait(processes, args.timeout)
        if codes == [0] * len(codes):
            return out
        if not args.smoke:
            print(f"attempt {attempt}: worker exit codes {codes}; restarting")
    raise RuntimeError(
        f"The workers failed {args.restarts + 1} times; see the worker-*.log "
        f"files in {directory}."
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--workers",
        type=int,
        default=2,
        help="workers the local launcher starts (without TF_CONFIG)",
    )
    parser.add_argument(
        "--samples",
        type=int,
        default=512,
        help="training sequences of the adding problem",
    )
    parser.add_argument(
        "--length", type=int, default=20, help="steps per sequence"
    )
    parser.add_argument(
        "--units", type=int, default=16, help="units of the PeepholeLSTM"
    )
    parser.add_argument("--epochs", type=int, default=5, help="training epochs")
    parser.add_argument("--backup-dir", help="shared by all workers")
    parser.add_argument("--out", help="where the chief writes the weights")
    parser.add_argument(
        "--restarts",
        type=int,
        default=2,
        help="how often the launcher restarts the workers after a failure",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=1800,
        help="seconds the launcher waits for each worker",
    )
    parser.add_argument(
        "--smoke", action="store_true", help="a tiny job (about a minute)"
    )
    args = parser.parse_args()
    if args.smoke:
        args.samples, args.length, args.units, args.epochs = 64, 8, 4, 2
    if "TF_CONFIG" in os.environ:
        train_worker(args)
        return

    import numpy as np

    with tempfile.TemporaryDirectory() as directory:
        with np.load(run_local(args, directory)) as arrays:
            job = [arrays[name] for name in arrays.files]
    # The same training in this one process, on the same global batches.
    x, y = make_data(args)
    model = build_model(args)
    model.fit(make_dataset(x, y), epochs=args.epochs, shuffle=False, verbose=0)
    difference = max(
        float(np.abs(a - b).max())
        for a, b in zip(job, model.get_weights(), strict=True)
    )
    print(f"max weight difference to one process: {difference:.3g}")


if __name__ == "__main__":
    main()
