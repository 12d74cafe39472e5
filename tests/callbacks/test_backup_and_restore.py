import hashlib
import json
import os
import pathlib
import shutil

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


# Files and disks (issue 26): shared directories, full disks, damaged
# backups, read-only directories.


def _slot(directory, slot):
    return os.path.join(directory, f"slot{slot}.weights.h5")


_LOCK_HOLDER = """
import fcntl, os, sys, time
handle = os.open(os.path.join(sys.argv[1], ".lock"), os.O_RDWR | os.O_CREAT)
fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
os.pwrite(handle, f"process {os.getpid()} on host test".encode(), 0)
print("locked", flush=True)
time.sleep(600)
"""


@pytest.mark.skipif(os.name != "posix", reason="flock is POSIX only")
def test_a_second_training_on_a_locked_directory_is_refused(tmp_path, fresh):
    # Another process holds the directory as a training does, and is in the
    # middle of a save. This training must not start, nor delete its file.
    import subprocess
    import sys

    directory = tmp_path / "shared"
    directory.mkdir()
    in_flight = directory / ".tmp-other.weights.h5"
    in_flight.write_bytes(b"half a backup")
    holder = subprocess.Popen(
        [sys.executable, "-c", _LOCK_HOLDER, str(directory)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        batches = _Batches()
        callback = kr.callbacks.BackupAndRestore(str(directory), save_freq=1)
        with pytest.raises(ValueError) as error:
            _fit(fresh(), [callback, batches])
        message = str(error.value)
        assert repr(str(directory)) in message
        assert "in use by another training" in message
        assert f"process {holder.pid}" in message
        assert "pass another `backup_dir`" in message
        assert batches.batches == []
        assert in_flight.read_bytes() == b"half a backup"
    finally:
        holder.kill()
        holder.wait()
    # A killed process releases its lock: its restart is not blocked.
    model = fresh()
    _fit(model, [kr.callbacks.BackupAndRestore(str(directory), save_freq=1)])
    assert not directory.exists()


def test_a_callback_taken_over_in_the_same_process_stops_writing(
    tmp_path, fresh
):
    directory = str(tmp_path / "backup")
    first = kr.callbacks.BackupAndRestore(directory, save_freq=1)
    _interrupted_fit(fresh(), first, 1, 2)
    # The interrupted `fit` never reached on_train_end: a new callback in
    # this process takes the directory over and resumes.
    model = fresh()
    second = kr.callbacks.BackupAndRestore(directory, save_freq=1)
    second.set_model(model)
    second.on_train_begin()
    with pytest.raises(RuntimeError, match="another BackupAndRestore"):
        first._save_model(batch_done=0)
    second.on_train_end()
    assert not os.path.exists(directory)


def test_a_backup_of_another_model_is_refused(tmp_path, fresh):
    directory = str(tmp_path / "backup")
    _interrupted_fit(
        fresh(), kr.callbacks.BackupAndRestore(directory, save_freq=1), 1, 2
    )
    other = keras.Sequential(
        [keras.Input((3,)), keras.layers.Dense(5), keras.layers.Dense(1)]
    )
    other.compile(optimizer=keras.optimizers.Adam(0.05), loss="mse")
    callback = kr.callbacks.BackupAndRestore(directory, save_freq=1)
    with pytest.raises(ValueError, match="holds the backup of another") as e:
        _fit(other, [callback])
    assert repr(directory) in str(e.value)


def test_a_backup_of_another_run_id_is_refused(tmp_path, fresh, uninterrupted):
    directory = str(tmp_path / "backup")
    callback = kr.callbacks.BackupAndRestore(directory, 1, run_id="run-a")
    _interrupted_fit(fresh(), callback, 1, 2)
    for run_id in ("run-b", None):
        callback = kr.callbacks.BackupAndRestore(directory, 1, run_id=run_id)
        with pytest.raises(ValueError, match="run_id='run-a'") as error:
            _fit(fresh(), [callback])
        assert repr(directory) in str(error.value)
    model = fresh()
    callback = kr.callbacks.BackupAndRestore(directory, 1, run_id="run-a")
    _fit(model, [callback])
    _assert_weights_equal(model.get_weights(), uninterrupted)


@pytest.mark.parametrize("run_id", ["", 3, b"run"])
def test_invalid_run_id(tmp_path, run_id):
    with pytest.raises(ValueError, match=f"run_id={run_id!r}"):
        kr.callbacks.BackupAndRestore(str(tmp_path), run_id=run_id)


@pytest.mark.parametrize("damage", ["truncated", "random"])
def test_a_damaged_current_slot_falls_back_to_the_previous_backup(
    tmp_path, fresh, uninterrupted, damage
):
    directory = str(tmp_path / "backup")
    callback = kr.callbacks.BackupAndRestore(directory, save_freq=1)
    _interrupted_fit(fresh(), callback, 1, 2)
    metadata = _metadata(directory)
    assert metadata["batch_done"] == 1
    path = _slot(directory, metadata["slot"])
    size = os.path.getsize(path)
    with open(path, "r+b") as f:
        if damage == "truncated":
            f.truncate(size // 2)
        else:
            f.write(np.random.default_rng(0).bytes(size))
    model, batches = fresh(), _Batches()
    callback = kr.callbacks.BackupAndRestore(directory, save_freq=1)
    with pytest.warns(UserWarning, match="is damaged") as record:
        _fit(model, [callback, batches])
    message = str(record[0].message)
    assert repr(path) in message
    assert repr(_slot(directory, 1 - metadata["slot"])) in message
    # The previous backup, after batch 0 of epoch 1: resumed exactly.
    assert batches.batches[0] == (1, 0)
    _assert_weights_equal(model.get_weights(), uninterrupted)


def test_two_damaged_slots_name_the_file_and_the_way_out(tmp_path, fresh):
    directory = str(tmp_path / "backup")
    callback = kr.callbacks.BackupAndRestore(directory, save_freq=1)
    _interrupted_fit(fresh(), callback, 1, 2)
    for slot in (0, 1):
        with open(_slot(directory, slot), "r+b") as f:
            f.truncate(100)
    current = _slot(directory, _metadata(directory)["slot"])
    callback = kr.callbacks.BackupAndRestore(directory, save_freq=1)
    with pytest.raises(ValueError, match="Delete the directory") as error:
        _fit(fresh(), [callback])
    assert f"the file {current!r} is damaged" in str(error.value)


@pytest.mark.parametrize(
    "content",
    [
        b'{"epoch": 1, "batch": 2, "sl',  # Truncated.
        b"\x89\xfe garbage \x00",
        b"[1, 2]",
        b'{"epoch": "one", "slot": 0, "batch_done": null}',
        b'{"epoch": 1, "slot": 2, "batch_done": null}',
    ],
    ids=["truncated", "garbage", "list", "epoch", "slot"],
)
def test_damaged_metadata_names_the_file(tmp_path, fresh, content):
    directory = str(tmp_path / "backup")
    callback = kr.callbacks.BackupAndRestore(directory, save_freq=1)
    _interrupted_fit(fresh(), callback, 1, 2)
    path = os.path.join(directory, "training_metadata.json")
    with open(path, "wb") as f:
        f.write(content)
    callback = kr.callbacks.BackupAndRestore(directory, save_freq=1)
    with pytest.raises(ValueError, match="Delete the directory") as error:
        _fit(fresh(), [callback])
    assert f"the file {path!r} is damaged" in str(error.value)


@pytest.mark.parametrize(
    "epoch, batch_done", [(EPOCHS + 2, None), (EPOCHS, 1), (1, 7)]
)
def test_a_backup_past_the_end_of_the_fit_is_refused(
    tmp_path, fresh, epoch, batch_done
):
    # Upstream (and this callback before) trained nothing here, silently.
    directory = str(tmp_path / "backup")
    callback = kr.callbacks.BackupAndRestore(directory, save_freq=1)
    _interrupted_fit(fresh(), callback, 1, 2)
    path = os.path.join(directory, "training_metadata.json")
    metadata = _metadata(directory)
    metadata.update(epoch=epoch, batch_done=batch_done, previous=None)
    with open(path, "w") as f:
        json.dump(metadata, f)
    batches = _Batches()
    callback = kr.callbacks.BackupAndRestore(directory, save_freq=1)
    with pytest.raises(ValueError, match="past the end of this `fit`") as e:
        _fit(fresh(), [callback, batches])
    assert repr(path) in str(e.value)
    assert batches.batches == []


def test_a_finished_backup_says_that_it_trains_nothing(tmp_path, fresh):
    directory = str(tmp_path / "backup")
    callback = kr.callbacks.BackupAndRestore(directory, delete_checkpoint=False)
    _fit(fresh(), [callback])
    callback = kr.callbacks.BackupAndRestore(directory, delete_checkpoint=False)
    with pytest.warns(UserWarning, match="finished training"):
        assert _fit(fresh(), [callback]).epoch == []


def _mount_tmpfs(path, options):
    """Mounts a tmpfs at `path`; skips the test where that is not allowed."""
    import subprocess

    os.makedirs(path, exist_ok=True)
    result = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)],
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {result.stderr.strip()}")


def _unmount(path):
    import subprocess

    subprocess.run(["umount", str(path)], check=False)


class _FillDisk(keras.callbacks.Callback):
    """Fills the file system of `path` after the first backup (batch 0)."""

    def __init__(self, path):
        super().__init__()
        self.path = path

    def on_train_batch_end(self, batch, logs=None):
        if batch != 0 or os.path.exists(self.path):
            return
        try:
            with open(self.path, "wb") as f:
                while True:
                    f.write(b"\0" * 4096)
                    f.flush()
        except OSError:
            pass


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0,
    reason="mounting a small file system needs root",
)
@pytest.mark.parametrize("free_space_check", [True, False])
def test_a_full_disk_is_an_oserror_naming_the_directory(
    tmp_path, monkeypatch, fresh, uninterrupted, free_space_check
):
    # A real full file system. Without the free space check, the write
    # itself fails: h5py would crash the process at its exit (see
    # test_a_full_disk_does_not_crash_the_process); the weights are
    # written in memory and copied with Python's I/O instead.
    mount = tmp_path / "small"
    _mount_tmpfs(mount, "size=4m")
    try:
        if not free_space_check:
            monkeypatch.setattr(
                backup_and_restore,
                "_check_free_space",
                lambda *args: None,
                raising=False,
            )
        directory = str(mount / "backup")
        callback = kr.callbacks.BackupAndRestore(directory, save_freq=1)
        fill = _FillDisk(str(mount / "filler"))
        with pytest.raises(OSError) as error:
            _fit(fresh(), [callback, fill])
        assert error.value.errno == 28  # ENOSPC
        assert f"backup_dir={directory!r} could not take a backup" in str(
            error.value
        )
        assert "Any earlier backup is whole and current" in str(error.value)
        assert not [n for n in os.listdir(directory) if n.startswith(".tmp")]
        if os.path.isdir("/dev/shm"):
            staged = f".tmp-kr-backup-{os.getpid()}-"
            assert not [n for n in os.listdir("/dev/shm") if staged in n]
        assert _metadata(directory)["epoch"] == 0
        assert _metadata(directory)["batch_done"] == 0
        # Space is freed: the restart resumes from the backup of batch 0.
        os.remove(mount / "filler")
        monkeypatch.undo()
        model = fresh()
        _fit(model, [kr.callbacks.BackupAndRestore(directory, save_freq=1)])
        _assert_weights_equal(model.get_weights(), uninterrupted)
    finally:
        _unmount(mount)


def test_too_little_free_space_fails_before_writing(
    tmp_path, monkeypatch, fresh
):
    directory = str(tmp_path / "backup")
    callback = kr.callbacks.BackupAndRestore(directory, save_freq=1)
    _interrupted_fit(fresh(), callback, 0, 2)
    before = _digests(directory)
    writes = []
    save_weights = keras.Model.save_weights

    def recording_save_weights(model, filepath, **kwargs):
        writes.append(filepath)
        save_weights(model, filepath, **kwargs)

    usage = shutil.disk_usage(directory)
    monkeypatch.setattr(
        shutil, "disk_usage", lambda path: usage._replace(free=1000)
    )
    monkeypatch.setattr(keras.Model, "save_weights", recording_save_weights)
    callback = kr.callbacks.BackupAndRestore(directory, save_freq=1)
    with pytest.raises(OSError, match="No space left on device") as error:
        _fit(fresh(), [callback])
    assert error.value.errno == 28
    assert repr(directory) in str(error.value)
    assert writes == []
    assert _digests(directory) == before


def test_a_write_error_mid_run_names_the_directory(
    tmp_path, monkeypatch, fresh, uninterrupted
):
    # E.g. the directory's permissions flipped, or an I/O error: the
    # fourth save cannot create its file.
    directory = str(tmp_path / "backup")
    mkstemp = backup_and_restore.tempfile.mkstemp
    calls = []

    def failing_mkstemp(dir=None, **kwargs):
        if dir == directory:
            calls.append(dir)
            if len(calls) > 7:  # The probe, then 2 files per backup.
                raise PermissionError(13, "Permission denied", dir)
        return mkstemp(dir=dir, **kwargs)

    monkeypatch.setattr(backup_and_restore.tempfile, "mkstemp", failing_mkstemp)
    callback = kr.callbacks.BackupAndRestore(directory, save_freq=1)
    with pytest.raises(PermissionError, match="could not take a backup") as e:
        _fit(fresh(), [callback])
    assert repr(directory) in str(e.value)
    assert _metadata(directory)["batch_done"] == 2
    monkeypatch.undo()
    model = fresh()
    _fit(model, [kr.callbacks.BackupAndRestore(directory, save_freq=1)])
    _assert_weights_equal(model.get_weights(), uninterrupted)


def test_an_unwritable_directory_fails_at_train_begin(
    tmp_path, monkeypatch, fresh
):
    directory = str(tmp_path / "backup")
    mkstemp = backup_and_restore.tempfile.mkstemp

    def failing_mkstemp(dir=None, **kwargs):
        if dir == directory:
            raise PermissionError(13, "Permission denied", dir)
        return mkstemp(dir=dir, **kwargs)

    monkeypatch.setattr(backup_and_restore.tempfile, "mkstemp", failing_mkstemp)
    batches = _Batches()
    callback = kr.callbacks.BackupAndRestore(directory, save_freq=3)
    with pytest.raises(PermissionError, match="is not writable") as error:
        _fit(fresh(), [callback, batches])
    assert repr(directory) in str(error.value)
    assert batches.batches == []


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0,
    reason="mounting a read-only file system needs root",
)
def test_a_read_only_directory_fails_at_train_begin(tmp_path, fresh):
    mount = tmp_path / "read-only"
    _mount_tmpfs(mount, "ro,size=1m")
    try:
        batches = _Batches()
        directory = str(mount)
        callback = kr.callbacks.BackupAndRestore(directory, save_freq=3)
        with pytest.raises(OSError, match="is not writable") as error:
            _fit(fresh(), [callback, batches])
        assert error.value.errno == 30  # EROFS
        assert repr(directory) in str(error.value)
        assert batches.batches == []
    finally:
        _unmount(mount)


def test_a_backup_dir_that_is_a_file(tmp_path, fresh):
    path = tmp_path / "backup"
    path.write_text("not a directory")
    callback = kr.callbacks.BackupAndRestore(str(path), save_freq=1)
    with pytest.raises(ValueError, match="is a file") as error:
        _fit(fresh(), [callback])
    assert f"backup_dir={str(path)!r}" in str(error.value)
    assert path.read_text() == "not a directory"


@pytest.mark.parametrize("name", ["with space", "ünï cödé ☃"])
def test_odd_directory_names(tmp_path, fresh, uninterrupted, name):
    directory = str(tmp_path / name / "backup")
    callback = kr.callbacks.BackupAndRestore(directory, save_freq=1)
    _interrupted_fit(fresh(), callback, 1, 2)
    link = str(tmp_path / "link")
    os.symlink(os.path.dirname(directory), link)
    model = fresh()
    linked = os.path.join(link, "backup")
    _fit(model, [kr.callbacks.BackupAndRestore(linked, save_freq=1)])
    _assert_weights_equal(model.get_weights(), uninterrupted)


_FULL_DISK_TRAINING = """
import os, sys
import keras, numpy as np
import keras_recurrent as kr

directory, upstream = sys.argv[1], sys.argv[2] == "upstream"
if sys.argv[2] == "kr-unchecked":
    # The write itself fails, in Python's copy from memory.
    kr.callbacks.backup_and_restore._check_free_space = lambda *args: None


# The disk is full but for 160 KB before the first backup (325 KB).
filler = os.path.join(os.path.dirname(directory), "filler")
try:
    with open(filler, "wb") as f:
        while True:
            f.write(b"\\0" * 4096)
            f.flush()
except OSError:
    pass
os.truncate(filler, os.path.getsize(filler) - 160 * 1024)

keras.utils.set_random_seed(0)
model = keras.Sequential(
    [keras.Input((200,)), keras.layers.Dense(400), keras.layers.Dense(1)]
)
model.compile(optimizer="sgd", loss="mse")
backup = (keras.callbacks if upstream else kr.callbacks).BackupAndRestore(
    directory, save_freq=1
)
try:
    model.fit(
        np.ones((16, 200), "float32"),
        np.ones((16, 1), "float32"),
        batch_size=4,
        verbose=0,
        callbacks=[backup],
    )
except OSError as error:
    print("OSError:", str(error).splitlines()[0], flush=True)
"""


@pytest.mark.slow
@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0,
    reason="mounting a small file system needs root",
)
@pytest.mark.parametrize("name", ["upstream", "kr", "kr-unchecked"])
def test_a_full_disk_does_not_crash_the_process(tmp_path, name):
    # A disk too full for the first backup. Upstream: h5py raises an
    # OSError when the write fails, but leaves objects behind that crash
    # the interpreter with SIGSEGV at its exit.
    import signal
    import subprocess
    import sys

    mount = tmp_path / "small"
    _mount_tmpfs(mount, "size=4m")
    try:
        directory = mount / "backup"
        env = dict(os.environ, KERAS_BACKEND="tensorflow")
        env["PYTHONPATH"] = str(pathlib.Path(__file__).resolve().parents[2])
        result = subprocess.run(
            [sys.executable, "-c", _FULL_DISK_TRAINING, str(directory), name],
            capture_output=True,
            text=True,
            env=env,
            timeout=600,
        )
        print(f"\n{name}: exit code {result.returncode}: {result.stdout}")
        assert "OSError:" in result.stdout
        if name == "upstream":
            assert result.returncode == -signal.SIGSEGV
        else:
            assert result.returncode == 0
            assert f"backup_dir={str(directory)!r}" in result.stdout
            assert not [n for n in os.listdir(directory) if ".tmp" in n]
    finally:
        _unmount(mount)
