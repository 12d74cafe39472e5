"""`kill -9` at random moments of a training, then a restart.

Each training runs `tests.callbacks.kill_worker.child` in a new process,
forked from a `multiprocessing` forkserver that has imported TensorFlow
and the worker once (starting a Python process that imports TensorFlow
takes most of a minute on a busy 2-core machine; a fork, nothing). The
forked process builds, compiles and trains its model, writes its backups
and is killed with SIGKILL; a restart is another such process. Slow.
"""

import multiprocessing
import os
import pathlib
import random
import time

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BATCHES = 18  # kill_worker: 3 epochs of 6 batches.
KILLS = 20
TIMEOUT = 600


@pytest.fixture(scope="module")
def context():
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["tests.callbacks.kill_worker"])
    return context


class _Training:
    """A worker process and the end of the pipe that it beats on."""

    def __init__(self, context, kind, directory, result, upstream=False):
        from tests.callbacks import kill_worker

        self.beats, send = context.Pipe(duplex=False)
        self.process = context.Process(
            target=kill_worker.child,
            args=(kind, str(directory), str(result), send, upstream),
        )
        self.process.start()
        send.close()

    def wait_for_batches(self, batches):
        """Whether `batches` batches ended (their backups not yet written)."""
        for _ in range(batches):
            if not self.beats.poll(TIMEOUT):
                return False
            try:
                self.beats.recv_bytes()
            except EOFError:
                return False  # The process ended.
        return True

    def kill(self):
        """SIGKILLs the process; whether it was still running."""
        running = self.process.is_alive()
        self.process.kill()
        self.process.join(TIMEOUT)
        self.beats.close()
        return running and self.process.exitcode == -9

    def finish(self):
        """Waits for the end; the exit code."""
        while self.wait_for_batches(1):
            pass
        self.process.join(TIMEOUT)
        self.beats.close()
        return self.process.exitcode


def _weights(result):
    with np.load(result) as arrays:
        return [arrays[f"arr_{i}"] for i in range(len(arrays.files))]


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["peephole", "tree"])
def test_killed_at_random_moments_then_restarted(tmp_path, context, kind):
    start = time.monotonic()
    reference = tmp_path / "reference.npz"
    training = _Training(context, kind, tmp_path / "reference", reference)
    assert training.finish() == 0
    expected = _weights(reference)

    rng = random.Random(f"kill-{kind}")
    identical = bit_identical = mid_save = 0
    for trial in range(KILLS):
        directory = tmp_path / f"backup{trial}"
        result = tmp_path / f"result{trial}.npz"
        # A random moment: after a random number of batches, a random delay
        # into the backup of the last one and the next batch. With 0
        # batches, while the model is built and its train step traced.
        batches = rng.randrange(BATCHES - 1)
        delay = rng.uniform(0, 2.0 if batches == 0 else 0.15)
        training = _Training(context, kind, directory, result)
        assert training.wait_for_batches(batches)
        time.sleep(delay)
        assert training.kill()
        assert not result.exists()
        if directory.exists():
            names = os.listdir(directory)
            mid_save += any(name.startswith(".tmp-") for name in names)
        training = _Training(context, kind, directory, result)
        assert training.finish() == 0
        weights = _weights(result)
        identical += all(
            np.allclose(a, e, rtol=0, atol=1e-6)
            for a, e in zip(weights, expected)
        )
        bit_identical += all(
            np.array_equal(a, e) for a, e in zip(weights, expected)
        )
        assert not directory.exists()  # Deleted at the end of training.
    seconds = time.monotonic() - start
    print(
        f"\n{kind}: {identical} of {KILLS} restarts identical to 1e-6 "
        f"({bit_identical} bit-identical); {mid_save} kills left a "
        f"temporary file (killed during a save); {seconds:.0f} s"
    )
    assert identical == KILLS


def _writing(directory, upstream, size):
    """Whether a backup of the "ballast" model is being written."""
    try:
        if upstream:
            return os.path.getsize(directory / "latest.weights.h5") < size
        return any(
            name.startswith(".tmp-")
            and name.endswith(".weights.h5")
            and os.path.getsize(directory / name) > 0
            for name in os.listdir(directory)
        )
    except FileNotFoundError:
        return False  # Renamed, or training ended and deleted the backup.


def _kill_while_writing(training, directory, upstream):
    """Kills the worker during a write; whether that succeeded."""
    size = None
    if upstream:
        size = os.path.getsize(directory / "latest.weights.h5")
    deadline = time.monotonic() + TIMEOUT
    while training.process.is_alive() and time.monotonic() < deadline:
        if _writing(directory, upstream, size):
            return training.kill()
    training.finish()
    return False  # Every write was missed.


@pytest.mark.slow
@pytest.mark.parametrize("upstream", [True, False], ids=["upstream", "kr"])
def test_killed_while_writing_a_backup(tmp_path, context, upstream):
    # The worker's "ballast" model has a 128 MB backup. From its second
    # batch on, the test watches the files and kills the worker as soon as
    # a backup's weights file is being written: upstream writes
    # `latest.weights.h5` in place (its size drops below that of the first
    # backup), here a temporary file grows. Upstream's restart fails; here
    # it resumes.
    message = code = None
    for attempt in range(1, 4):
        directory = tmp_path / f"backup{attempt}"
        result = tmp_path / f"result{attempt}.npz"
        training = _Training(context, "ballast", directory, result, upstream)
        assert training.wait_for_batches(2)
        # The first backup is complete.
        if not _kill_while_writing(training, directory, upstream):
            continue
        if upstream:
            from tests.callbacks import kill_worker

            try:
                kill_worker.train("ballast", str(directory), upstream=True)
            except OSError as error:
                message = str(error)
                break
        else:
            training = _Training(context, "ballast", directory, result)
            code = training.finish()
            break
    name = "upstream" if upstream else "kr"
    print(f"\n{name}: attempt {attempt}: {message or code}")
    if upstream:
        assert message is not None and "Unable to" in message
    else:
        assert code == 0
        assert result.exists()
