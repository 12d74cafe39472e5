"""`kr.callbacks.multi_worker_backup_and_restore`: who writes, who reads.

These tests run in one process: a fake strategy stands in for the cluster
of each role. The kills of real worker processes are in
`tests/distribute/test_kill_and_resume.py` (slow).
"""

import json
import os
import types

import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_recurrent as kr

EPOCHS = 4


def _strategy(task_type, task_id, jobs=("worker",)):
    """A stand-in for the strategy of one task of a cluster."""
    cluster = {job: [f"127.0.0.1:{2000 + i}" for i in range(2)] for job in jobs}
    if "chief" in cluster:
        cluster["chief"] = cluster["chief"][:1]
    resolver = tf.distribute.cluster_resolver.SimpleClusterResolver(
        tf.train.ClusterSpec(cluster), task_type=task_type, task_id=task_id
    )
    return types.SimpleNamespace(cluster_resolver=resolver)


class _InterruptError(Exception):
    pass


class _Epochs(keras.callbacks.Callback):
    """Records the epochs run; raises at the start of `stop_at` (a kill)."""

    def __init__(self, stop_at=None):
        super().__init__()
        self.epochs, self.stop_at = [], stop_at

    def on_epoch_begin(self, epoch, logs=None):
        if epoch == self.stop_at:
            raise _InterruptError
        self.epochs.append(epoch)


def _train(callbacks):
    keras.utils.set_random_seed(0)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(16, 3)).astype("float32")
    y = rng.normal(size=(16, 1)).astype("float32")
    # The callback does not depend on the layers: a small model keeps this
    # fast. The worker processes of the slow tests train each family.
    inputs = keras.Input((3,))
    outputs = keras.layers.Dense(1)(keras.layers.Dense(4, "tanh")(inputs))
    model = keras.Model(inputs, outputs)
    model.compile(
        optimizer=keras.optimizers.Adam(0.05), loss="mse", run_eagerly=True
    )
    model.fit(
        x,
        y,
        batch_size=8,
        epochs=EPOCHS,
        shuffle=False,
        verbose=0,
        callbacks=callbacks,
    )
    return model.get_weights()


def _snapshot(directory):
    """Every file of the backup with its content."""
    files = {}
    for name in sorted(os.listdir(directory)):
        with open(os.path.join(directory, name), "rb") as f:
            files[name] = f.read()
    return files


def _assert_same_weights(first, second):
    for a, b in zip(first, second, strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize(
    "task_type, task_id, jobs, writes",
    [
        ("worker", 0, ("worker",), True),
        ("worker", 1, ("worker",), False),
        ("chief", 0, ("chief", "worker"), True),
        ("worker", 0, ("chief", "worker"), False),
    ],
)
def test_only_the_chief_writes(tmp_path, task_type, task_id, jobs, writes):
    backup = kr.callbacks.multi_worker_backup_and_restore(
        str(tmp_path / "backup"), _strategy(task_type, task_id, jobs)
    )
    # A killed first epoch; the backup is only ever made at an epoch's end.
    epochs = _Epochs(stop_at=1)
    with pytest.raises(_InterruptError):
        _train([backup, epochs])
    assert epochs.epochs == [0]
    assert os.path.exists(tmp_path / "backup") == writes


def test_workers_resume_from_the_chiefs_backup(tmp_path):
    directory = str(tmp_path / "backup")
    uninterrupted = _train([])

    # The job is killed at the start of epoch 2, after the chief's backup.
    chief, reader = _strategy("worker", 0), _strategy("worker", 1)
    with pytest.raises(_InterruptError):
        _train(
            [
                kr.callbacks.multi_worker_backup_and_restore(directory, chief),
                kr.callbacks.multi_worker_backup_and_restore(directory, reader),
                _Epochs(stop_at=2),
            ]
        )
    with open(os.path.join(directory, "training_metadata.json")) as f:
        assert json.load(f)["epoch"] == 2
    before = _snapshot(directory)

    # Restarted, a worker reads the backup and neither changes nor deletes
    # it; it trains on from epoch 2 to the weights of the uninterrupted run.
    epochs = _Epochs()
    resumed = _train(
        [
            kr.callbacks.multi_worker_backup_and_restore(directory, reader),
            epochs,
        ]
    )
    assert epochs.epochs == [2, 3]
    _assert_same_weights(resumed, uninterrupted)
    assert _snapshot(directory) == before

    # The chief does the same, and deletes the backup once training is done.
    epochs = _Epochs()
    resumed = _train(
        [kr.callbacks.multi_worker_backup_and_restore(directory, chief), epochs]
    )
    assert epochs.epochs == [2, 3]
    _assert_same_weights(resumed, uninterrupted)
    assert not os.path.exists(directory)


def test_a_job_without_cluster_is_its_own_chief(tmp_path):
    directory = str(tmp_path / "backup")
    strategy = tf.distribute.get_strategy()
    with pytest.raises(_InterruptError):
        _train(
            [
                kr.callbacks.multi_worker_backup_and_restore(
                    directory, strategy
                ),
                _Epochs(stop_at=3),
            ]
        )
    with open(os.path.join(directory, "training_metadata.json")) as f:
        assert json.load(f)["epoch"] == 3


@pytest.mark.parametrize("save_freq", [1, 10, "batch"])
def test_backups_within_an_epoch_are_rejected(tmp_path, save_freq):
    with pytest.raises(ValueError, match=f"save_freq={save_freq!r}"):
        kr.callbacks.multi_worker_backup_and_restore(
            str(tmp_path), _strategy("worker", 0), save_freq=save_freq
        )


def test_readers_neither_lock_nor_clean_the_chiefs_directory(tmp_path):
    # The chief (another process here) holds the lock on the shared backup
    # and is in the middle of a save: a worker that starts reads the
    # backup, without taking the lock and without deleting that file.
    import subprocess
    import sys

    directory = str(tmp_path / "backup")
    chief, reader = _strategy("worker", 0), _strategy("worker", 1)
    first = kr.callbacks.multi_worker_backup_and_restore(
        directory, chief, delete_checkpoint=False
    )
    with pytest.raises(_InterruptError):
        _train([first, _Epochs(stop_at=2)])
    first.on_train_end()  # This process lets the lock go.
    in_flight = os.path.join(directory, ".tmp-chief.weights.h5")
    with open(in_flight, "wb") as f:
        f.write(b"half a backup")
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, os, sys, time\n"
            "handle = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)\n"
            "fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)\n"
            "print('locked', flush=True)\n"
            "time.sleep(600)\n",
            os.path.join(directory, ".lock"),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        epochs = _Epochs()
        _train(
            [
                kr.callbacks.multi_worker_backup_and_restore(directory, reader),
                epochs,
            ]
        )
        assert epochs.epochs == [2, 3]
        with open(in_flight, "rb") as f:
            assert f.read() == b"half a backup"
    finally:
        holder.kill()
        holder.wait()


def test_old_name_in_distribute_warns_and_works(tmp_path):
    import keras_recurrent.distribute

    with pytest.warns(DeprecationWarning, match="multi_worker_backup_and"):
        old = keras_recurrent.distribute.backup_and_restore
    assert old is kr.callbacks.multi_worker_backup_and_restore
    with pytest.warns(DeprecationWarning):
        from keras_recurrent.distribute import backup_and_restore
    backup = backup_and_restore(str(tmp_path), _strategy("worker", 1))
    assert isinstance(backup, kr.callbacks.BackupAndRestore)
    assert not backup._writes_backup
    assert "backup_and_restore" not in keras_recurrent.distribute.__all__
