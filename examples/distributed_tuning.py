"""A distributed keras-tuner search: one chief, several workers.

keras-tuner runs a search over several processes or machines in its
chief/worker mode. Every process runs this same script with three
environment variables:

- `KERASTUNER_TUNER_ID`: `chief` for the process that holds the oracle (it
  hands out the trials over gRPC and trains nothing), `tuner0`, `tuner1`,
  ... for the workers, which train one trial at a time.
- `KERASTUNER_ORACLE_IP`, `KERASTUNER_ORACLE_PORT`: the address of the chief.

All of them pass the same `--directory`, a folder they share (a network file
system or a bucket on a cluster): the chief writes the oracle state and each
trial's hyperparameters and score there, the workers the trained weights.
The chief may use `--overwrite` to start afresh; a worker never does (it
would delete the shared folder).

On a cluster, start the chief and then one worker per machine:

    KERASTUNER_TUNER_ID=chief KERASTUNER_ORACLE_IP=10.0.0.1 \\
    KERASTUNER_ORACLE_PORT=8000 python distributed_tuning.py --directory D
    KERASTUNER_TUNER_ID=tuner0 KERASTUNER_ORACLE_IP=10.0.0.1 \\
    KERASTUNER_ORACLE_PORT=8000 python distributed_tuning.py --directory D

Without these variables the script is its own launcher: it starts a chief
and `--workers` workers on 127.0.0.1, waits for them, and prints the trials
and the best model. Workers may train under `MirroredStrategy`
(`--mirrored`, two logical CPUs here, the GPUs of a machine on a cluster).

Kills: a worker killed mid-trial leaves its trial running at the chief,
assigned to its tuner ID; restarted with the same ID, it gets the trial back
and trains it again from the start. A chief killed and restarted without
`--overwrite` reloads every trial from the folder; its oracle keeps the
trials the workers are still training (`kr.tuning.KeepRunningTrialsOnReload`),
so none of them is trained twice.

    python examples/distributed_tuning.py --smoke

runs 4 trials and prints one line, `trials completed: N of N`.
"""

import argparse
import json
import os
import pathlib
import socket
import subprocess
import sys
import tempfile
import time

LENGTH = 8
DEFAULT_TRIALS = 6
# Within the 3 minutes of `--smoke` on a loaded 2-core machine.
SMOKE_TRIALS = 4


def tuner_role():
    """`"chief"`, a worker's tuner ID, or `None` for the launcher."""
    if "KERASTUNER_ORACLE_IP" not in os.environ:
        return None
    return os.environ["KERASTUNER_TUNER_ID"]


def make_data():
    """The same small adding-problem data in every process."""
    import keras_recurrent as kr

    x, y, _ = kr.datasets.adding_problem(64, length=LENGTH, seed=0)
    x_val, y_val, _ = kr.datasets.adding_problem(16, length=LENGTH, seed=1)
    return x, y, x_val, y_val


def make_tuner(directory, max_trials, *, overwrite=False, strategy=None):
    """The tuner every process builds alike; the chief's oracle serves."""
    import keras_tuner

    import keras_recurrent as kr

    class Oracle(
        kr.tuning.KeepRunningTrialsOnReload,
        keras_tuner.oracles.RandomSearchOracle,
    ):
        pass

    # Small, fast trials: the cell type and learning rate are searched.
    hp = keras_tuner.HyperParameters()
    for name, value in [
        ("units", 4),
        ("num_layers", 1),
        ("dropout", 0.0),
        ("recurrent_dropout", 0.0),
    ]:
        hp.Fixed(name, value)
    return keras_tuner.Tuner(
        hypermodel=kr.tuning.SequenceHyperModel((LENGTH, 2), 1),
        oracle=Oracle(
            objective="val_loss",
            max_trials=max_trials,
            hyperparameters=hp,
            seed=0,
        ),
        distribution_strategy=strategy,
        directory=directory,
        project_name="search",
        overwrite=overwrite,
    )


def run_role(args):
    """Runs the chief (serves until the search ends) or one worker."""
    from _quiet_tensorflow import quiet_tensorflow

    quiet_tensorflow()
    strategy = None
    if args.mirrored and tuner_role() != "chief":
        import keras_recurrent.testing

        # Before TensorFlow starts: two logical CPUs to mirror over.
        strategy = keras_recurrent.testing.mirrored_strategy(2)
    tuner = make_tuner(
        args.directory,
        args.trials,
        overwrite=args.overwrite and tuner_role() == "chief",
        strategy=strategy,
    )
    x, y, x_val, y_val = make_data()
    tuner.search(
        x,
        y,
        validation_data=(x_val, y_val),
        epochs=1,
        batch_size=16,
        verbose=0,
    )
    if strategy is not None:
        # Into this worker's log.
        print(
            f"{tuner_role()} trained under {type(strategy).__name__} with "
            f"{strategy.num_replicas_in_sync} replicas"
        )


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start(tuner_id, directory, port, *, trials, overwrite=False, mirrored=0):
    """Starts this script as `tuner_id` ("chief" or "tunerN")."""
    env = {
        **os.environ,
        "KERASTUNER_TUNER_ID": tuner_id,
        "KERASTUNER_ORACLE_IP": "127.0.0.1",
        "KERASTUNER_ORACLE_PORT": str(port),
        "KERAS_BACKEND": "tensorflow",
        "TF_CPP_MIN_LOG_LEVEL": "2",
        # Several processes share the cores of one machine here.
        "TF_NUM_INTRAOP_THREADS": "1",
        "TF_NUM_INTEROP_THREADS": "2",
    }
    command = [
        sys.executable,
        str(pathlib.Path(__file__).resolve()),
        *("--directory", str(directory), "--trials", str(trials)),
        *(["--overwrite"] if overwrite else []),
        *(["--mirrored"] if mirrored else []),
    ]
    pathlib.Path(directory).mkdir(parents=True, exist_ok=True)
    log = open(pathlib.Path(directory) / f"{tuner_id}.log", "ab")
    return subprocess.Popen(command, env=env, stdout=log, stderr=log)


def wait_for_port(port, process, timeout=120):
    """Waits until the chief listens on `port`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"The chief exited with {process.returncode}.")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise TimeoutError(f"The chief did not listen on port {port}.")


def oracle_state(directory):
    """The chief's saved oracle state and trials, read as plain JSON."""
    project = pathlib.Path(directory) / "search"
    path = project / "oracle.json"
    state = json.loads(path.read_text()) if path.exists() else {}
    trials = {}
    for trial_file in sorted(project.glob("trial_*/trial.json")):
        trial = json.loads(trial_file.read_text())
        trials[trial["trial_id"]] = trial
    return state, trials


def stop_chief(chief, timeout=5):
    """Stops the chief once the workers are done.

    keras-tuner's chief re-checks for running trials every 20 s before it
    exits by itself; by now every trial is ended and saved, so stop it.
    """
    try:
        chief.wait(timeout)
    except subprocess.TimeoutExpired:
        chief.terminate()
        chief.wait(30)


def run_local(directory, *, workers=2, trials=DEFAULT_TRIALS, mirrored=0):
    """Starts a chief and `workers` workers on 127.0.0.1 and waits."""
    port = free_port()
    chief = start("chief", directory, port, trials=trials, overwrite=True)
    processes = [chief]
    try:
        wait_for_port(port, chief)
        for index in range(workers):
            processes.append(
                start(
                    f"tuner{index}",
                    directory,
                    port,
                    trials=trials,
                    mirrored=mirrored,
                )
            )
        for worker in processes[1:]:
            if worker.wait(600) != 0:
                raise RuntimeError(f"A worker exited with {worker.returncode}")
        stop_chief(chief)
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait()
    return oracle_state(directory)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--directory", help="the shared search folder")
    parser.add_argument(
        "--trials",
        type=int,
        default=None,
        help=f"trials to run (default {DEFAULT_TRIALS}, {SMOKE_TRIALS} with "
        "--smoke)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=2,
        help="workers the local launcher starts (without KERASTUNER_TUNER_ID)",
    )
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="chief only: delete the search folder's trials and start afresh",
    )
    parser.add_argument(
        "--mirrored",
        action="store_true",
        help="workers train under MirroredStrategy (two logical CPUs here)",
    )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="a tiny search that checks the script end to end; prints one line",
    )
    args = parser.parse_args()
    if args.trials is None:
        args.trials = SMOKE_TRIALS if args.smoke else DEFAULT_TRIALS
    if tuner_role() is not None:
        run_role(args)
        return
    with tempfile.TemporaryDirectory() as scratch:
        directory = args.directory or scratch
        _, trials = run_local(
            directory,
            workers=args.workers,
            trials=args.trials,
            mirrored=args.mirrored,
        )
        completed = [t for t in trials.values() if t["status"] == "COMPLETED"]
        if not args.smoke:
            for trial in sorted(completed, key=lambda t: t["score"]):
                values = trial["hyperparameters"]["values"]
                print(
                    f"trial {trial['trial_id']}: val_loss {trial['score']:.4f}"
                    f" {values['cell_type']} lr={values['learning_rate']:.2e}"
                )
        print(f"trials completed: {len(completed)} of {args.trials}")


if __name__ == "__main__":
    main()
