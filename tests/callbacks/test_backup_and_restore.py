import hashlib
import json
import os
import pathlib

import keras
import numpy as np
import pytest

import keras_recurrent as kr
from keras_recurrent.callbacks import backup_and_restore

EPOCHS, BATCH_SIZE, EXAMPLES = 3, 2, 8  # 4 batches an epoch.


@pytest.fixture(scope="module")
def fresh():
    """A function giving the same compiled model, reset to its start.

    Every `fit` here trains one model, so that its train function is traced
    once; each `fit` starts from the same weights and optimizer state, as a
    new process would.
    """
    keras.utils.set_random_seed(0)
    model = keras.Sequential(
        [keras.Input((3,)), keras.layers.Dense(4), keras.layers.Dense(1)]
    )
    model.compile(
        optimizer=keras.optimizers.Adam(0.05), loss="mse", jit_compile=False
    )
    model.optimizer.build(model.trainable_variables)
    weights = model.get_weights()
    optimizer = [v.numpy() for v in model.optimizer.variables]

    def reset():
        model.set_weights(weights)
        for variable, value in zip(model.optimizer.variables, optimizer):
            variable.assign(value)
        # Upstream sets this on a restore and never resets it.
        model._initial_epoch = None
        return model

    return reset


@pytest.fixture(autouse=True)
def no_fsync(monkeypatch):
    # Flushing to disk matters only on a power loss, which no test here
    # simulates; on a busy disk it takes most of the time of a save.
    monkeypatch.setattr(os, "fsync", lambda fd: None)


def _data():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(EXAMPLES, 3)).astype("float32")
    y = rng.normal(size=(EXAMPLES, 1)).astype("float32")
    return x, y


class _Interrupt(keras.callbacks.Callback):
    """Raises before batch `batch` of epoch `epoch` starts."""

    def __init__(self, epoch, batch):
        super().__init__()
        self.at = (epoch, batch)
        self.epoch = None

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch

    def on_train_batch_begin(self, batch, logs=None):
        if (self.epoch, batch) == self.at:
            raise RuntimeError("Interrupted")


class _Batches(keras.callbacks.Callback):
    """Records the (epoch, batch) pairs trained."""

    def __init__(self):
        super().__init__()
        self.batches = []

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        self.batches.append((self.epoch, batch))


def _fit(model, callbacks):
    x, y = _data()
    return model.fit(
        x,
        y,
        batch_size=BATCH_SIZE,
        epochs=EPOCHS,
        shuffle=False,
        verbose=0,
        callbacks=callbacks,
    )


def _interrupted_fit(model, callback, epoch, batch):
    with pytest.raises(RuntimeError, match="Interrupted"):
        _fit(model, [callback, _Interrupt(epoch, batch)])


def _assert_weights_equal(actual, expected):
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        np.testing.assert_array_equal(a, e)


@pytest.fixture(scope="module")
def uninterrupted(fresh):
    model = fresh()
    _fit(model, [])
    return model.get_weights()


def _metadata(directory):
    with open(os.path.join(directory, "training_metadata.json")) as f:
        return json.load(f)


def _digests(directory):
    digests = {}
    for name in sorted(os.listdir(directory)):
        with open(os.path.join(directory, name), "rb") as f:
            digests[name] = hashlib.sha256(f.read()).hexdigest()
    return digests


@pytest.mark.parametrize(
    "save_freq, epoch, batch, resumed_epoch",
    [
        (1, 1, 2, 1),  # Mid-epoch: batch 1 of epoch 1 is the last backup.
        (1, 0, 1, 0),  # Within the first epoch.
        (1, 2, 0, 1),  # At an epoch's start: the previous one's last batch.
        (2, 1, 3, 1),  # Every 2 batches: batch 1 of epoch 1.
        ("epoch", 2, 2, 2),
    ],
)
def test_resume_equals_uninterrupted_training(
    tmp_path, fresh, uninterrupted, save_freq, epoch, batch, resumed_epoch
):
    directory = str(tmp_path / "backup")
    _interrupted_fit(
        fresh(),
        kr.callbacks.BackupAndRestore(directory, save_freq=save_freq),
        epoch,
        batch,
    )
    model, batches = fresh(), _Batches()
    callback = kr.callbacks.BackupAndRestore(directory, save_freq=save_freq)
    history = _fit(model, [callback, batches])
    _assert_weights_equal(model.get_weights(), uninterrupted)
    # A batch backup's epoch is run again from its first batch.
    assert history.epoch == list(range(resumed_epoch, EPOCHS))
    assert batches.batches[0] == (resumed_epoch, 0)
    assert not os.path.exists(directory)


def test_resume_after_two_interruptions_in_one_epoch(
    tmp_path, fresh, uninterrupted
):
    # Upstream records a batch backup's epoch only from the end of an epoch
    # on: its second restart here would begin again at epoch 0.
    directory = str(tmp_path / "backup")
    for batch in (2, 3):
        callback = kr.callbacks.BackupAndRestore(directory, save_freq=1)
        _interrupted_fit(fresh(), callback, 1, batch)
        assert _metadata(directory)["epoch"] == 1
        assert _metadata(directory)["batch_done"] == batch - 1
    model = fresh()
    history = _fit(
        model, [kr.callbacks.BackupAndRestore(directory, save_freq=1)]
    )
    _assert_weights_equal(model.get_weights(), uninterrupted)
    assert history.epoch == [1, 2]


def test_upstream_restarts_at_epoch_0_after_two_interruptions(tmp_path, fresh):
    directory = str(tmp_path / "backup")
    for batch in (2, 3):
        callback = keras.callbacks.BackupAndRestore(directory, save_freq=1)
        _interrupted_fit(fresh(), callback, 1, batch)
    assert _metadata(directory)["epoch"] == 0
    history = _fit(
        fresh(), [keras.callbacks.BackupAndRestore(directory, save_freq=1)]
    )
    assert history.epoch == [0, 1, 2]


def test_interruption_while_batches_are_run_again(
    tmp_path, fresh, uninterrupted
):
    # A restart runs the epoch's batches up to the backup's again, without
    # saving: an interruption then leaves the backup as it was.
    directory = str(tmp_path / "backup")
    callback = kr.callbacks.BackupAndRestore(directory, save_freq=1)
    _interrupted_fit(fresh(), callback, 1, 3)
    before = _digests(directory)
    callback = kr.callbacks.BackupAndRestore(directory, save_freq=1)
    _interrupted_fit(fresh(), callback, 1, 1)
    assert _digests(directory) == before
    model = fresh()
    _fit(model, [kr.callbacks.BackupAndRestore(directory, save_freq=1)])
    _assert_weights_equal(model.get_weights(), uninterrupted)


def test_upstream_batch_resume_trains_batches_twice(
    tmp_path, fresh, uninterrupted
):
    # What the mid-epoch resume fixes: upstream restarts epoch 1 at its
    # first batch from the weights after its batch 1.
    directory = str(tmp_path / "backup")
    callback = keras.callbacks.BackupAndRestore(directory, save_freq=1)
    _interrupted_fit(fresh(), callback, 1, 2)
    model = fresh()
    history = _fit(
        model, [keras.callbacks.BackupAndRestore(directory, save_freq=1)]
    )
    assert history.epoch == [1, 2]
    difference = max(
        np.max(np.abs(a - e))
        for a, e in zip(model.get_weights(), uninterrupted)
    )
    assert difference > 1e-3


def test_restores_a_backup_written_upstream(tmp_path, fresh, uninterrupted):
    directory = str(tmp_path / "backup")
    callback = keras.callbacks.BackupAndRestore(directory)
    _interrupted_fit(fresh(), callback, 2, 1)
    model = fresh()
    history = _fit(model, [kr.callbacks.BackupAndRestore(directory)])
    assert history.epoch == [2]
    _assert_weights_equal(model.get_weights(), uninterrupted)


def test_metadata_names_the_slot_that_holds_the_backup(tmp_path, fresh):
    directory = str(tmp_path / "backup")
    saved = keras.Sequential(
        [keras.Input((3,)), keras.layers.Dense(4), keras.layers.Dense(1)]
    )
    saved.compile(optimizer=keras.optimizers.Adam(0.05), loss="mse")
    saved.optimizer.build(saved.trainable_variables)

    class _Check(keras.callbacks.Callback):
        # Runs after the backup: the committed slot holds this batch's state.
        def __init__(self):
            super().__init__()
            self.slots = []

        def on_epoch_begin(self, epoch, logs=None):
            self.epoch = epoch

        def on_train_batch_end(self, batch, logs=None):
            if batch % 2 == 0:
                return
            metadata = _metadata(directory)
            assert metadata["epoch"] == self.epoch
            assert metadata["batch_done"] == batch
            self.slots.append(metadata["slot"])
            saved.load_weights(
                os.path.join(directory, f"slot{metadata['slot']}.weights.h5")
            )
            _assert_weights_equal(saved.get_weights(), self.model.get_weights())
            _assert_weights_equal(
                [v.numpy() for v in saved.optimizer.variables],
                [v.numpy() for v in self.model.optimizer.variables],
            )

    check = _Check()
    callback = kr.callbacks.BackupAndRestore(
        directory, save_freq=2, delete_checkpoint=False
    )
    _fit(fresh(), [callback, check])
    assert check.slots == [0, 1, 0, 1, 0, 1]
    # The two slots and the metadata; no temporary file is left.
    assert sorted(os.listdir(directory)) == [
        "slot0.weights.h5",
        "slot1.weights.h5",
        "training_metadata.json",
    ]


class _CrashError(Exception):
    pass


@pytest.mark.parametrize(
    "crash_at, committed",
    [
        ("weights_write", False),
        ("weights_replace", False),
        ("metadata_replace", False),
        ("directory_sync", True),  # After the commit point.
    ],
)
def test_crash_during_a_save(
    tmp_path, monkeypatch, fresh, uninterrupted, crash_at, committed
):
    # The third save (after batch 2 of epoch 0, into slot 0) stops at
    # `crash_at`. Before the metadata's rename, the metadata and slot 1 of
    # the second save are left as they were; after it, the third save is
    # the backup. Either way, a restart resumes exactly.
    directory = str(tmp_path / "backup")
    saves = []
    before = {}

    def crash(step):
        if len(saves) == 3 and step == crash_at:
            raise _CrashError(step)

    save_weights = keras.Model.save_weights

    def half_writing_save_weights(model, filepath, **kwargs):
        saves.append(filepath)
        if len(saves) == 3:
            before.update(_digests(directory))
        save_weights(model, filepath, **kwargs)
        if len(saves) == 3 and crash_at == "weights_write":
            # Stopped half-way, as a killed process leaves the file.
            with open(filepath, "r+b") as f:
                f.truncate(os.path.getsize(filepath) // 2)
            crash("weights_write")

    replace = os.replace

    def crashing_replace(source, target):
        if target.endswith(".weights.h5"):
            crash("weights_replace")
        else:
            crash("metadata_replace")
        replace(source, target)

    sync_directory = backup_and_restore._sync_directory

    def crashing_sync_directory(path):
        crash("directory_sync")
        sync_directory(path)

    monkeypatch.setattr(keras.Model, "save_weights", half_writing_save_weights)
    monkeypatch.setattr(backup_and_restore.os, "replace", crashing_replace)
    monkeypatch.setattr(
        backup_and_restore, "_sync_directory", crashing_sync_directory
    )
    with pytest.raises(_CrashError):
        _fit(fresh(), [kr.callbacks.BackupAndRestore(directory, save_freq=1)])
    monkeypatch.undo()

    metadata = _metadata(directory)
    if committed:
        assert (metadata["batch_done"], metadata["slot"]) == (2, 0)
    else:
        assert (metadata["batch_done"], metadata["slot"]) == (1, 1)
        after = _digests(directory)
        for name in ("training_metadata.json", "slot1.weights.h5"):
            assert after[name] == before[name]
    # The `finally` clauses remove the temporary files.
    assert not [n for n in os.listdir(directory) if n.startswith(".tmp-")]
    model = fresh()
    _fit(model, [kr.callbacks.BackupAndRestore(directory, save_freq=1)])
    _assert_weights_equal(model.get_weights(), uninterrupted)


def test_garbage_left_by_a_kill_is_ignored_and_removed(
    tmp_path, fresh, uninterrupted
):
    # A kill during a save leaves a half-written temporary file, which no
    # `finally` removes; and the slot that the metadata does not name may
    # hold anything. The restart resumes from the named slot and removes
    # the temporary files.
    directory = str(tmp_path / "backup")
    callback = kr.callbacks.BackupAndRestore(directory, save_freq=1)
    _interrupted_fit(fresh(), callback, 1, 2)
    slot = _metadata(directory)["slot"]
    with open(os.path.join(directory, f"slot{slot}.weights.h5"), "rb") as f:
        content = f.read()
    other = os.path.join(directory, f"slot{1 - slot}.weights.h5")
    with open(other, "wb") as f:
        f.write(content[: len(content) // 2])
    with open(os.path.join(directory, ".tmp-a1b2.weights.h5"), "wb") as f:
        f.write(content[: len(content) // 3])
    with open(os.path.join(directory, ".tmp-c3d4.json"), "w") as f:
        f.write('{"epoch": 0, "sl')

    model = fresh()
    callback = kr.callbacks.BackupAndRestore(
        directory, save_freq=1, delete_checkpoint=False
    )
    _fit(model, [callback])
    _assert_weights_equal(model.get_weights(), uninterrupted)
    assert not [n for n in os.listdir(directory) if n.startswith(".tmp-")]


def test_upstream_fails_on_a_half_written_backup(tmp_path, fresh):
    # The failure that the atomic writes avoid: upstream writes
    # `latest.weights.h5` in place, and a kill during that write leaves it
    # like this.
    directory = str(tmp_path / "backup")
    callback = keras.callbacks.BackupAndRestore(directory, save_freq=1)
    _interrupted_fit(fresh(), callback, 1, 2)
    path = os.path.join(directory, "latest.weights.h5")
    with open(path, "r+b") as f:
        f.truncate(os.path.getsize(path) // 2)
    with pytest.raises(OSError, match="Unable to"):
        _fit(
            fresh(), [keras.callbacks.BackupAndRestore(directory, save_freq=1)]
        )


@pytest.mark.parametrize(
    "callback_class",
    [keras.callbacks.BackupAndRestore, kr.callbacks.BackupAndRestore],
    ids=["upstream", "kr"],
)
@pytest.mark.parametrize("delete_checkpoint", [True, False])
def test_delete_on_train_end_as_upstream(
    tmp_path, fresh, callback_class, delete_checkpoint
):
    directory = str(tmp_path / "backup")
    callback = callback_class(directory, delete_checkpoint=delete_checkpoint)
    _fit(fresh(), [callback])
    assert os.path.exists(directory) == (not delete_checkpoint)
    if not delete_checkpoint:
        # A kept epoch backup records the end of training: fitting again
        # with the same `epochs` trains nothing.
        callback = callback_class(directory, delete_checkpoint=False)
        assert _fit(fresh(), [callback]).epoch == []


@pytest.mark.parametrize(
    "save_freq", [0, -2, 1.5, "batch", "1", True, False, None]
)
def test_invalid_save_freq(tmp_path, save_freq):
    with pytest.raises(ValueError, match=f"save_freq={save_freq!r}"):
        kr.callbacks.BackupAndRestore(str(tmp_path), save_freq=save_freq)


@pytest.mark.parametrize("save_freq", [0, -2, False])
def test_upstream_saves_every_batch_with_save_freq(save_freq):
    # What the validation above rejects: upstream takes these silently.
    callback = keras.callbacks.BackupAndRestore("backup", save_freq=save_freq)
    assert [callback._should_save_on_batch(b) for b in range(3)] == [True] * 3


@pytest.mark.parametrize("backup_dir", ["", None, "gs://bucket/backup"])
def test_invalid_backup_dir(backup_dir):
    with pytest.raises(ValueError, match=f"backup_dir={backup_dir!r}"):
        kr.callbacks.BackupAndRestore(backup_dir)


def test_no_double_checkpoint(tmp_path):
    with pytest.raises(TypeError, match="double_checkpoint"):
        kr.callbacks.BackupAndRestore(str(tmp_path), double_checkpoint=True)


def test_path_and_defaults(tmp_path):
    callback = kr.callbacks.BackupAndRestore(pathlib.Path(tmp_path) / "b")
    assert callback.backup_dir == str(tmp_path / "b")
    assert callback.save_freq == "epoch"
    assert callback.delete_checkpoint is True
    assert callback.double_checkpoint is False


def test_unbuilt_model_with_a_backup(tmp_path, fresh):
    directory = str(tmp_path / "backup")
    callback = kr.callbacks.BackupAndRestore(directory)
    _interrupted_fit(fresh(), callback, 1, 0)
    unbuilt = keras.Sequential([keras.layers.Dense(1)], name="unbuilt")
    callback = kr.callbacks.BackupAndRestore(directory)
    callback.set_model(unbuilt)
    with pytest.raises(ValueError, match="'unbuilt' is not"):
        callback.on_train_begin()
