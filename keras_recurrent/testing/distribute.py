"""Checking that models train the same under `tf.distribute`."""

import json
import os
import signal
import socket
import subprocess
import sys
import time

import keras
import numpy as np
import tensorflow as tf

from keras_recurrent._checks import check_positive_int

# One strategy per device list and process: every `MirroredStrategy` numbers
# its collective ops from the same keys, so a second one over the same devices
# reuses the instance keys of the first and its all-reduces fail with "Shape
# mismatch in the collective instance" (tensorflow/tensorflow#62790).
_STRATEGIES = {}


def configure_cpu_replicas(num_replicas=2):
    """Splits the first physical CPU into `num_replicas` logical devices.

    `tf.distribute.MirroredStrategy` then has several devices to mirror over
    on a machine without accelerators. TensorFlow only accepts this before its
    runtime is initialized (before the first op or device listing), so call it
    early, e.g. at import time of a `conftest.py`. Calling it again once the
    CPU is split into at least `num_replicas` devices does nothing.

    Args:
        num_replicas: Positive integer, the number of logical CPU devices.
            Defaults to 2.

    Returns:
        The names of the first `num_replicas` logical CPU devices,
        `["/device:CPU:0", "/device:CPU:1", ...]`.

    Raises:
        RuntimeError: If the TensorFlow runtime is already initialized with
            fewer logical CPU devices.

    Example:

    >>> kr.testing.configure_cpu_replicas(2)
    ['/device:CPU:0', '/device:CPU:1']
    """
    _check_num_replicas(num_replicas)
    names = [f"/device:CPU:{index}" for index in range(num_replicas)]
    cpu = tf.config.list_physical_devices("CPU")[0]
    configured = tf.config.get_logical_device_configuration(cpu) or []
    if len(configured) >= num_replicas:
        return names
    try:
        tf.config.set_logical_device_configuration(
            cpu,
            [tf.config.LogicalDeviceConfiguration()] * num_replicas,
        )
    except RuntimeError as error:
        # Raised once the runtime is initialized; listing is harmless then.
        available = len(tf.config.list_logical_devices("CPU"))
        if available >= num_replicas:
            return names
        raise RuntimeError(
            f"Cannot split the CPU into {num_replicas} logical devices: the "
            f"TensorFlow runtime is already initialized with {available}. "
            "Call `configure_cpu_replicas` before running any TensorFlow op "
            "or listing logical devices (for tests, at import time of "
            "`conftest.py`)."
        ) from error
    return names


def mirrored_strategy(num_replicas=2):
    """A `tf.distribute.MirroredStrategy` with exactly `num_replicas` replicas.

    Mirrors over the first `num_replicas` GPUs when there are that many, else
    over logical CPU devices (see `configure_cpu_replicas`). The strategy is
    made once per process and device list and then reused: two
    `MirroredStrategy` objects over the same devices number their collective
    ops alike, and the second one's all-reduces fail with "Shape mismatch in
    the collective instance" (tensorflow/tensorflow#62790). In tests, use
    this function rather than creating `tf.distribute.MirroredStrategy`
    directly.

    Args:
        num_replicas: Positive integer, the number of replicas. Defaults to 2.

    Returns:
        A `tf.distribute.MirroredStrategy` with
        `num_replicas_in_sync == num_replicas`.

    Raises:
        RuntimeError: If there are fewer GPUs and logical CPUs than
            `num_replicas`.

    Example:

    >>> strategy = kr.testing.mirrored_strategy(2)
    >>> strategy.num_replicas_in_sync
    2
    """
    _check_num_replicas(num_replicas)
    # Physical devices: listing them leaves the runtime uninitialized, so
    # the CPU can still be split below. Listing logical devices would start
    # it, and a fresh process could then never get two logical CPUs.
    if len(tf.config.list_physical_devices("GPU")) >= num_replicas:
        gpus = tf.config.list_logical_devices("GPU")
        devices = [device.name for device in gpus[:num_replicas]]
    else:
        devices = configure_cpu_replicas(num_replicas)
    key = tuple(devices)
    if key not in _STRATEGIES:
        _STRATEGIES[key] = tf.distribute.MirroredStrategy(devices)
    strategy = _STRATEGIES[key]
    if strategy.num_replicas_in_sync != num_replicas:
        raise RuntimeError(
            f"Expected a MirroredStrategy with {num_replicas} replicas, got "
            f"{strategy.num_replicas_in_sync} over devices {devices}."
        )
    return strategy


def assert_mirrored_equivalence(
    build_model,
    x,
    y,
    *,
    steps=3,
    global_batch_size=8,
    num_replicas=2,
    atol=1e-5,
    compile_kwargs=None,
):
    """Asserts that training under `MirroredStrategy` matches one device.

    Builds the model twice with the same seed, once under the default strategy
    (on the device of the first replica) and once in the scope of
    `mirrored_strategy(num_replicas)`, copies the initial weights of the first
    into the second, compiles both the same way and trains each for `steps`
    steps of `fit(batch_size=global_batch_size, shuffle=False)`. Every replica
    then sees `global_batch_size / num_replicas` samples a step, and the
    all-reduced gradients must give the same weights as the single-device run
    (Keras divides each replica's loss by the number of replicas).

    Only `MirroredStrategy` is covered here; for several worker processes
    see `kr.distribute.MultiWorkerMirroredStrategy` and
    `start_local_workers`. Under
    `MirroredStrategy`, Keras 3.15 `fit` fails on boolean inputs (it adds
    them up with `AddN`), so boolean arrays in `x` are rejected: feed masks
    as int32 and cast them to bool in the model.

    Args:
        build_model: Callable with no arguments that returns a new, built,
            uncompiled `keras.Model`. It is called once per strategy.
        x: Input array(s): a NumPy array, or a list or dict of them, not
            boolean. The first `steps * global_batch_size` samples are used.
        y: Target array(s), like `x`.
        steps: Positive integer, the number of training steps. Defaults to 3.
        global_batch_size: Positive integer divisible by `num_replicas`, the
            batch size summed over replicas. Defaults to 8.
        num_replicas: Positive integer, the number of replicas. Defaults to 2.
        atol: Absolute tolerance on every weight after training.
            Defaults to `1e-5`.
        compile_kwargs: Optional dict of `compile` arguments. Defaults to
            `{"optimizer": keras.optimizers.SGD(0.1), "loss": "mse",
            "jit_compile": False}`, with a new optimizer per model. XLA is off
            by default because Keras turns it off under `tf.distribute` but
            on for a single accelerator, which would compare two graphs.

    Returns:
        A dict with the two trained models, `"single"` and `"mirrored"`, and
        the strategy, `"strategy"`.

    Raises:
        AssertionError: If a weight differs by more than `atol`.

    Example:

    >>> def build_model():
    ...     inputs = keras.Input((5, 3))
    ...     x = kr.layers.PeepholeLSTM(8)(inputs)
    ...     return keras.Model(inputs, keras.layers.Dense(1)(x))
    >>> x = np.random.rand(24, 5, 3).astype("float32")
    >>> y = np.random.rand(24, 1).astype("float32")
    >>> kr.testing.assert_mirrored_equivalence(build_model, x, y)
    """
    check_positive_int("steps", steps)
    check_positive_int("global_batch_size", global_batch_size)
    _check_num_replicas(num_replicas)
    if global_batch_size % num_replicas:
        raise ValueError(
            "Argument `global_batch_size` must be divisible by "
            f"`num_replicas` ({num_replicas}), so that every replica gets "
            f"as many samples. Received: global_batch_size={global_batch_size}"
        )
    if any(np.asarray(a).dtype == bool for a in keras.tree.flatten(x)):
        raise ValueError(
            "Argument `x` must not hold boolean arrays: Keras `fit` under "
            "MirroredStrategy fails on them (an `AddN` over bool tensors). "
            "Pass masks as int32 and cast them in the model. Received dtypes: "
            f"{[str(np.asarray(a).dtype) for a in keras.tree.flatten(x)]}"
        )
    num_samples = steps * global_batch_size
    x = _take(x, num_samples, "x")
    y = _take(y, num_samples, "y")

    strategy = mirrored_strategy(num_replicas)
    # The reference runs on the device of the first replica, with the same
    # kernels: when the CPUs are mirrored on a machine with one GPU, the
    # default device would be the GPU (and its TensorFloat-32 matmuls).
    reference_device = strategy.extended.worker_devices[0]
    with tf.device(reference_device):
        keras.utils.set_random_seed(0)
        single = _build(build_model, x)
    keras.utils.set_random_seed(0)
    with strategy.scope():
        mirrored = _build(build_model, x)
    if len(single.weights) != len(mirrored.weights):
        raise ValueError(
            "`build_model` must build the same model on every call. Received "
            f"models with {len(single.weights)} and {len(mirrored.weights)} "
            "weights."
        )
    mirrored.set_weights(single.get_weights())

    fit_kwargs = {
        "batch_size": global_batch_size,
        "shuffle": False,
        "epochs": 1,
        "verbose": 0,
    }
    with tf.device(reference_device):
        single.compile(**_compile_kwargs(compile_kwargs))
        single.fit(x, y, **fit_kwargs)
    with strategy.scope():
        mirrored.compile(**_compile_kwargs(compile_kwargs))
    mirrored.fit(x, y, **fit_kwargs)

    for reference, weight in zip(single.weights, mirrored.weights, strict=True):
        np.testing.assert_allclose(
            keras.ops.convert_to_numpy(weight.value),
            keras.ops.convert_to_numpy(reference.value),
            rtol=0,
            atol=atol,
            err_msg=(
                f"Weight {reference.path!r} differs after training "
                f"(steps={steps}) under MirroredStrategy with "
                f"{num_replicas} replicas."
            ),
        )
    return {"single": single, "mirrored": mirrored, "strategy": strategy}


def _build(build_model, x):
    model = build_model()
    if not isinstance(model, keras.Model):
        raise ValueError(
            "Argument `build_model` must return a `keras.Model`. "
            f"Received: {model!r}"
        )
    if not model.built:
        model(keras.tree.map_structure(lambda array: array[:1], x))
    return model


def _compile_kwargs(compile_kwargs):
    """The `compile` arguments, with an optimizer of its own per model."""
    kwargs = {
        "optimizer": keras.optimizers.SGD(0.1),
        "loss": "mse",
        # The same graph for both: `jit_compile="auto"` turns XLA on for a
        # single accelerator but off under `tf.distribute`.
        "jit_compile": False,
        **(compile_kwargs or {}),
    }
    optimizer = kwargs["optimizer"]
    if isinstance(optimizer, keras.optimizers.Optimizer):
        kwargs["optimizer"] = type(optimizer).from_config(
            optimizer.get_config()
        )
    return kwargs


def _take(arrays, num_samples, name):
    def take(array):
        array = np.asarray(array)
        if array.shape[0] < num_samples:
            raise ValueError(
                f"Argument `{name}` must hold at least steps * "
                f"global_batch_size = {num_samples} samples. "
                f"Received: {name}.shape={array.shape}"
            )
        return array[:num_samples]

    return keras.tree.map_structure(take, arrays)


def _check_num_replicas(num_replicas):
    check_positive_int("num_replicas", num_replicas)


def local_worker_addresses(num_workers=2):
    """Free `127.0.0.1:port` addresses for a cluster of local workers.

    Args:
        num_workers: Positive integer. Defaults to 2.

    Returns:
        A list of `num_workers` distinct `"127.0.0.1:port"` strings whose
        ports were free when asked for.
    """
    check_positive_int("num_workers", num_workers)
    sockets = []
    try:
        for _ in range(num_workers):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind(("127.0.0.1", 0))
            sockets.append(sock)
        return [f"127.0.0.1:{sock.getsockname()[1]}" for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def start_local_workers(argv, addresses, *, env=None, log_dir=None):
    """Starts one `python argv...` process per worker, each with `TF_CONFIG`.

    Worker `i` gets `TF_CONFIG={"cluster": {"worker": addresses},
    "task": {"type": "worker", "index": i}}`, the layout
    `tf.distribute.MultiWorkerMirroredStrategy` reads.

    Args:
        argv: List of arguments after `python`, e.g. `["-m", "my.worker"]`.
        addresses: List of `"host:port"` strings, one per worker.
        env: Optional dict of environment variables added for every worker.
        log_dir: Optional directory; worker `i` writes its output to
            `worker-{i}.log` there. Defaults to discarding it.

    Returns:
        The list of `subprocess.Popen`, in worker order.
    """
    processes = []
    for index in range(len(addresses)):
        config = {
            "cluster": {"worker": list(addresses)},
            "task": {"type": "worker", "index": index},
        }
        worker_env = {**os.environ, **(env or {})}
        worker_env["TF_CONFIG"] = json.dumps(config)
        output = subprocess.DEVNULL
        if log_dir is not None:
            path = os.path.join(log_dir, f"worker-{index}.log")
            output = open(path, "ab")  # noqa: SIM115 (closed by the child)
        processes.append(
            subprocess.Popen(
                [sys.executable, *argv],
                env=worker_env,
                stdout=output,
                stderr=subprocess.STDOUT,
            )
        )
        if output is not subprocess.DEVNULL:
            output.close()
    return processes


def wait_for_workers(processes, timeout, *, grace=30):
    """Waits for the workers; once one fails, stops the others.

    A synchronous job cannot go on without one of its workers: the others
    block in their next collective op. So when a worker exits with an
    error, the others get `grace` seconds to exit on their own and are then
    killed, and every worker is killed at `timeout`.

    Args:
        processes: The `subprocess.Popen` of the workers.
        timeout: Seconds to wait in all.
        grace: Seconds the others may run on after a worker failed.
            Defaults to 30.

    Returns:
        The list of exit codes, in worker order (negative: killed by that
        signal, e.g. `-9`).
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        codes = [process.poll() for process in processes]
        if all(code is not None for code in codes):
            return codes
        if any(code not in (None, 0) for code in codes):
            deadline = min(deadline, time.monotonic() + grace)
        time.sleep(0.2)
    for process in processes:
        if process.poll() is None:
            process.send_signal(signal.SIGKILL)
    return [process.wait() for process in processes]
