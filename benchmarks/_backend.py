"""`--backend` for the benchmarks: one subprocess per Keras backend.

Keras picks its backend once, at import, from `KERAS_BACKEND`. So a
benchmark run with `--backend jax|torch|tensorflow|all` starts itself again
once per backend, in a subprocess with `KERAS_BACKEND` set, and without
`--backend`. The subprocess prints its tables as usual and writes the median
seconds of each timed row to the JSON file named by `KR_BENCHMARK_RESULTS`
(`record`). The launching process prints a last table: each row's time on
every backend and its ratio to TensorFlow (`ratio_table`).

A benchmark whose measured part uses TensorFlow directly (a `tf.function`
step, PyTorch Geometric) times only its Keras rows in a subprocess
(`in_backend_run()`): the same models, trained with `train_on_batch`, which
every backend compiles its own way (`tf.function`, `jax.jit`, eager torch).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

BACKENDS = ("tensorflow", "jax", "torch")
CHOICES = (*BACKENDS, "all")
RESULTS_ENV = "KR_BENCHMARK_RESULTS"


def add_backend_argument(parser):
    """Adds `--backend {tensorflow,jax,torch,all}` to an argparse parser.

    The script's own parser takes the option so that `--help` lists it and
    it parses. Only `dispatch_if_requested`, in the script's `__main__`
    block before Keras is imported, acts on it: with `--backend`, the
    launching process exits there and its subprocesses run without it, so
    the script's `main()` never sees it set.
    """
    parser.add_argument(
        "--backend",
        choices=CHOICES,
        default=None,
        help="run the timed part in one subprocess per Keras backend "
        "(KERAS_BACKEND set before Keras is imported) and print the ratio "
        "of each backend to TensorFlow; 'all' runs the three. Default: the "
        "backend of this process, without the ratio table",
    )
    parser.add_argument(
        "--backend-timeout",
        type=float,
        default=None,
        help="seconds each backend's subprocess may run; one that runs "
        "longer is stopped and its rows reported as failed",
    )


def backends_of(choice):
    """The backends a `--backend` value names, TensorFlow first."""
    if choice not in CHOICES:
        raise ValueError(
            f"Argument `backend` must be one of {CHOICES}. "
            f"Received: backend={choice!r}"
        )
    return BACKENDS if choice == "all" else (choice,)


def without_backend(argv):
    """`argv` without `--backend[-timeout] X` or `=X`, for the subprocess."""
    kept, skip = [], False
    for argument in argv:
        if skip:
            skip = False
        elif argument in ("--backend", "--backend-timeout"):
            skip = True
        elif not argument.startswith(("--backend=", "--backend-timeout=")):
            kept.append(argument)
    return kept


def child_env(backend, results_path, base=None):
    """The environment of the subprocess that times `backend`."""
    env = dict(os.environ if base is None else base)
    env["KERAS_BACKEND"] = backend
    env[RESULTS_ENV] = str(results_path)
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    # PyTorch's OpenMP workers spin while they wait: on a machine with more
    # runnable threads than cores, that slows torch many times over.
    env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    return env


def in_backend_run():
    """Whether this process was started by `run_backends`."""
    return RESULTS_ENV in os.environ


def record(medians):
    """Writes `{row: median seconds}` for the launching process, if any."""
    path = os.environ.get(RESULTS_ENV)
    if path is None:
        return
    with open(path, "w") as file:
        json.dump(
            {str(name): float(value) for name, value in medians.items()}, file
        )


def run_backends(script, argv, choice, *, timeout=None):
    """Runs `script argv` once per backend of `choice`, one subprocess each.

    The subprocesses print to this process' stdout. Returns
    `{backend: {row: median seconds}}`, or `{backend: None}` for a backend
    whose run failed (its error is in the printed output).
    """
    results = {}
    with tempfile.TemporaryDirectory() as scratch:
        for backend in backends_of(choice):
            path = os.path.join(scratch, f"{backend}.json")
            print(f"\n## backend: {backend}\n", flush=True)
            try:
                completed = subprocess.run(
                    [sys.executable, script, *without_backend(argv)],
                    env=child_env(backend, path),
                    timeout=timeout,
                    check=False,
                )
                code = completed.returncode
            except subprocess.TimeoutExpired:
                code = "timeout"
            if code == 0 and os.path.exists(path):
                with open(path) as file:
                    results[backend] = json.load(file)
            else:
                print(f"backend {backend} failed ({code})", flush=True)
                results[backend] = None
    return results


def ratio_table(results):
    """A Markdown table of each row's median on every backend vs TensorFlow."""
    backends = list(results)
    rows = []
    for medians in results.values():
        for name in medians or {}:
            if name not in rows:
                rows.append(name)
    reference = results.get("tensorflow") or {}
    header = ["row"]
    for backend in backends:
        header.append(f"{backend} ms")
        if backend != "tensorflow":
            header.append(f"{backend} / tensorflow")
    lines = [
        "\n### Backends: median step time and ratio to TensorFlow\n",
        "| " + " | ".join(header) + " |",
        "|---|" + "---:|" * (len(header) - 1),
    ]
    for name in rows:
        cells = [name]
        for backend in backends:
            value = (results[backend] or {}).get(name)
            cells.append("failed" if value is None else f"{1000 * value:.1f}")
            if backend != "tensorflow":
                base = reference.get(name)
                cells.append(f"{value / base:.2f}" if value and base else "-")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def dispatch(script, argv, choice, *, timeout=None):
    """Runs the backends and prints the ratio table; returns the results."""
    results = run_backends(script, argv, choice, timeout=timeout)
    print(ratio_table(results), flush=True)
    return results


def dispatch_if_requested(script, argv=None):
    """With `--backend` in `argv`, runs `dispatch` and exits.

    The exit status is 1 when a backend's subprocess failed, else 0.

    Call it before importing Keras: the launching process then never loads
    a backend of its own. Other arguments are left to the script's parser
    (each subprocess parses them).
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = argparse.ArgumentParser(add_help=False)
    add_backend_argument(parser)
    known, _ = parser.parse_known_args(argv)
    if known.backend is None:
        return
    results = dispatch(
        script, argv, known.backend, timeout=known.backend_timeout
    )
    sys.exit(0 if all(value is not None for value in results.values()) else 1)
