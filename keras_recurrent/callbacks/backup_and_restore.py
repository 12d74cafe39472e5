"""`keras.callbacks.BackupAndRestore` that survives a kill at any moment."""

import errno
import hashlib
import json
import os
import shutil
import tempfile
import warnings

import keras

from keras_recurrent import _file_lock
from keras_recurrent._checks import check_bool
from keras_recurrent._checks import check_string
from keras_recurrent._checks import invalid
from keras_recurrent._compat import set_initial_epoch

_METADATA_NAME = "training_metadata.json"
_TEMPORARY_PREFIX = ".tmp-"
# The HDF5 file is written first on this memory-backed file system, when it
# has room, and copied from there with Python's file I/O (see `_stage`).
_STAGING_DIR = "/dev/shm"
_STAGING_PREFIX = ".tmp-kr-backup-"
# Room left free besides a backup's size: HDF5 metadata, the JSON file.
_SPARE_BYTES = 1 << 20
_CHUNK_BYTES = 16 << 20

# The locks this process holds, by the lock file's (device, inode).
_held_locks = {}


class BackupAndRestore(keras.callbacks.BackupAndRestore):
    """Backs up the training state so that a killed `fit` loses nothing.

    A drop-in replacement for `keras.callbacks.BackupAndRestore` that works
    around these upstream behaviours (Keras 3):

    - Upstream rewrites `latest.weights.h5` and `training_metadata.json` in
      place. A process killed during that write (`kill -9`, preemption, out
      of memory) leaves a truncated HDF5 file, and the restart fails with
      `OSError: Unable to synchronously open file (bad object header version
      number)`. Here every file is written to a temporary file in the backup
      directory, flushed to disk and then renamed over its target
      (`os.replace`, atomic on POSIX and Windows), and the weights alternate
      between two files, `slot0.weights.h5` and `slot1.weights.h5`. The
      metadata file names the slot it belongs to, so its rename is the one
      moment a backup becomes current: a kill before it leaves the previous
      backup whole and current, a kill after it the new one. A temporary
      file left behind by a kill is removed when training starts again.
    - With an integer `save_freq`, upstream restarts the interrupted epoch at
      its first batch from the weights of a batch in the middle of it, so
      the batches before the backup are trained twice. Here those batches
      are run again (a callback cannot skip data), without saving, and at
      the end of the batch of the backup the backed-up state (weights and
      optimizer variables) is loaded again: the resumed training then
      continues exactly as the interrupted one would have. With a
      deterministic model and data pipeline (seeded, `shuffle=False`), the
      final weights equal those of an uninterrupted run. The metrics logged
      for that epoch include the repeated batches.
    - Upstream records the epoch of a batch-level backup only from the end
      of the first epoch of a `fit` on; a resumed run killed again within its
      first epoch would then restart at epoch 0. Here the epoch is taken
      at its beginning.
    - Upstream lets two trainings share one directory: each overwrites and
      deletes the other's files. Here a training holds an exclusive lock
      on `backup_dir` (`fcntl.flock` on its `.lock` file) from
      `on_train_begin` until `on_train_end` or the end of its process (a
      killed process releases it, so its restart is not blocked). A second
      training started on the same directory in another process gets a
      `ValueError` that names the directory and the process holding it.
      In the same process, a new callback on the directory takes the lock
      over (the earlier `fit` was interrupted); the earlier callback can
      then no longer write.
    - Upstream resumes from whatever backup the directory holds. Here the
      backup records the run that wrote it, and a restore refuses a backup
      of another run with a `ValueError` naming the directory: one whose
      model (or optimizer) has other variable shapes or dtypes, or whose
      `run_id` differs. Two trainings of the same model are the same run
      unless they are given different `run_id`s.
    - Upstream's save crashes the process with a segmentation fault in
      h5py on a full disk (when the interpreter exits after the `OSError`).
      Here a save first checks the free space against the backup's size,
      and on Linux the HDF5 file is written in memory (`/dev/shm`) and
      copied to the backup directory with Python's file I/O: a full or
      failing disk is an `OSError` that names the directory, the previous
      backup stays whole and current, and no temporary file is left.
    - Upstream fails with h5py's `OSError`, which names no file, on a
      damaged weights file, and with a bare `json.JSONDecodeError` on a
      damaged metadata file. Here the metadata records the SHA-256 digest
      of the current slot and of the other one (the previous backup): a
      current slot that is damaged (truncated, overwritten) is skipped with
      a warning naming it, and training resumes from the previous backup.
      A damaged metadata file, or two damaged slots, raise a `ValueError`
      naming the file and the way out (delete the directory to train from
      scratch).
    - Upstream trains nothing when the metadata names an epoch past
      `fit`'s `epochs`. Here that is a `ValueError` naming the file. The
      finished state of a training with the same `epochs` (kept with
      `delete_checkpoint=False`) still trains nothing, as upstream, and
      says so with a warning.
    - A read-only `backup_dir` fails upstream at the first save. Here
      `on_train_begin` creates the directory, takes the lock and writes
      and removes a probe file, and raises an `OSError` naming the
      directory when any of it fails.

    Upstream accepts a `save_freq` of 0 or below (and `True`, `False`) and
    then saves after every batch; here these are a `ValueError`.
    `double_checkpoint` is not needed (the previous backup stays whole until
    the next one is complete) and not accepted. The backup directory must be
    on a local file system, where renames are atomic. On Windows there is
    no lock.

    Args:
        backup_dir: String, path of a directory used only for this backup.
        save_freq: `"epoch"` or a positive integer, the number of batches
            between backups. Defaults to `"epoch"`.
        delete_checkpoint: Whether to delete the backup when `fit` completes.
            Defaults to `True`.
        run_id: Optional string naming this training. A backup is restored
            only by a callback with the same `run_id` (and a model with the
            same variable shapes and dtypes). Give two trainings of the same
            model different `run_id`s so that one never resumes from the
            other's backup. Defaults to `None`.

    Example:

    >>> backup = kr.callbacks.BackupAndRestore("/tmp/backup", save_freq=10)
    >>> model.fit(x, y, epochs=5, shuffle=False, callbacks=[backup])
    """

    # Whether this callback writes the backup; the readers of a multi-worker
    # job (`kr.distribute.backup_and_restore`) only restore it.
    _writes_backup = True

    def __init__(
        self,
        backup_dir,
        save_freq="epoch",
        delete_checkpoint=True,
        run_id=None,
    ):
        if not backup_dir or "://" in str(backup_dir):
            raise invalid(
                "backup_dir", backup_dir, "a directory on a local file system"
            )
        if save_freq != "epoch" and (
            isinstance(save_freq, bool)
            or not isinstance(save_freq, int)
            or save_freq < 1
        ):
            raise invalid(
                "save_freq", save_freq, "'epoch' or a positive integer"
            )
        check_string("run_id", run_id, allow_none=True)
        check_bool("delete_checkpoint", delete_checkpoint)
        super().__init__(
            os.fspath(backup_dir),
            save_freq=save_freq,
            double_checkpoint=False,
            delete_checkpoint=delete_checkpoint,
        )
        self.run_id = run_id
        self._metadata_path = os.path.join(self.backup_dir, _METADATA_NAME)
        self._slot = None
        self._committed = None
        self._resume_batch = None
        self._lock = None

    def _slot_path(self, slot):
        return os.path.join(self.backup_dir, f"slot{slot}.weights.h5")

    def _read_metadata(self):
        try:
            with open(self._metadata_path, "rb") as f:
                content = f.read()
        except FileNotFoundError:
            return None
        try:
            metadata = json.loads(content.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            raise self._bad_backup(
                self._metadata_path, f"it is not valid JSON ({error})"
            ) from None
        if not isinstance(metadata, dict):
            raise self._bad_backup(
                self._metadata_path, "it does not hold a JSON object"
            )
        return metadata

    def _bad_backup(self, path, reason):
        return ValueError(
            f"The backup in backup_dir={self.backup_dir!r} cannot be "
            f"restored: the file {path!r} is damaged: {reason}. Delete the "
            "directory to train from scratch, or pass another `backup_dir`."
        )

    # Training begins: the directory, the lock and the restore.

    def on_train_begin(self, logs=None):
        if self._writes_backup:
            self._prepare_directory()
        super().on_train_begin(logs)

    def _prepare_directory(self):
        directory = self.backup_dir
        if os.path.exists(directory) and not os.path.isdir(directory):
            raise ValueError(
                f"Argument `backup_dir` must be a directory, but "
                f"{directory!r} is a file. Pass another `backup_dir`. "
                f"Received: backup_dir={directory!r}"
            )
        try:
            os.makedirs(directory, exist_ok=True)
            self._lock = _acquire_lock(directory, self)
            # A read-only directory fails here, not at the first save.
            os.remove(_temporary_path(directory, ".probe"))
        except OSError as error:
            raise _directory_error(
                error, directory, "is not writable", "Make it writable"
            ) from error
        self._remove_temporaries()

    def _remove_temporaries(self):
        # A process killed during a save leaves its temporary file behind;
        # nothing reads it, and each one is as large as a backup.
        if not os.path.isdir(self.backup_dir):
            return
        for name in os.listdir(self.backup_dir):
            if name.startswith(_TEMPORARY_PREFIX):
                os.remove(os.path.join(self.backup_dir, name))
        _remove_stale_staging_files()

    def _load_model(self):
        metadata = self._read_metadata()
        if metadata is None or "slot" not in metadata:
            # No backup, or one written by the upstream callback.
            self._slot = self._committed = self._resume_batch = None
            return super()._load_model()
        if not self.model.built:
            raise ValueError(
                "To use the BackupAndRestore callback, the model must be "
                f"built before `fit()`. Model {self.model.name!r} is not."
            )
        optimizer = self.model.optimizer
        if optimizer is not None and not optimizer.built:
            # The backup holds the optimizer's variables too.
            optimizer.build(self.model.trainable_variables)
        current = self._check_state(metadata)
        self._check_run(metadata)
        states = [current]
        if isinstance(metadata.get("previous"), dict):
            states.append(self._check_state(metadata["previous"]))
        state = self._load_first_intact(states)
        self._check_epoch(state)
        self._slot = state["slot"]
        self._committed = state
        set_initial_epoch(self.model, state["epoch"])
        self._current_epoch = state["epoch"]
        self._resume_batch = state.get("batch_done")

    def _check_state(self, state):
        def is_count(value):
            return isinstance(value, int) and not isinstance(value, bool)

        slot, epoch = state.get("slot"), state.get("epoch")
        batch_done = state.get("batch_done")
        if (
            slot not in (0, 1)
            or not is_count(epoch)
            or epoch < 0
            or not (batch_done is None or is_count(batch_done))
        ):
            raise self._bad_backup(
                self._metadata_path,
                "its slot, epoch or batch_done is missing or not a valid "
                f"number (slot={slot!r}, epoch={epoch!r}, "
                f"batch_done={batch_done!r})",
            )
        return {key: value for key, value in state.items() if key != "previous"}

    def _check_run(self, metadata):
        recorded = metadata.get("fingerprint")
        if recorded is not None and recorded != _fingerprint(self.model):
            raise ValueError(
                f"backup_dir={self.backup_dir!r} holds the backup of another "
                "training: its model or optimizer has variables of other "
                "shapes or dtypes than this one. Pass another `backup_dir`, "
                "or delete the directory to train from scratch."
            )
        if metadata.get("run_id") != self.run_id:
            raise ValueError(
                f"backup_dir={self.backup_dir!r} holds the backup of another "
                f"training: it was written with run_id="
                f"{metadata.get('run_id')!r}, this callback has run_id="
                f"{self.run_id!r}. Pass the run_id of the training to "
                "resume, another `backup_dir`, or delete the directory to "
                "train from scratch."
            )

    def _load_first_intact(self, states):
        problems = []
        for state in states:
            path = self._slot_path(state["slot"])
            problem = _check_digest(path, state)
            if problem is None:
                try:
                    self.model.load_weights(path)
                except (OSError, ValueError, KeyError) as error:
                    problem = f"it cannot be loaded ({error})"
            if problem is None:
                if problems:
                    warnings.warn(
                        f"The backup file {problems[0][0]!r} is damaged: "
                        f"{problems[0][1]}. Resuming from the previous "
                        f"backup, {path!r} (epoch {state['epoch']}).",
                        stacklevel=2,
                    )
                return state
            problems.append((path, problem))
        path, problem = problems[0]
        if len(problems) > 1:
            problem += f"; the previous backup {problems[1][0]!r} too"
        raise self._bad_backup(path, problem)

    def _check_epoch(self, state):
        params = self.params or {}
        epochs, steps = params.get("epochs"), params.get("steps")
        epoch, batch_done = state["epoch"], state.get("batch_done")
        if epochs is None:
            return
        if epoch == epochs and batch_done is None:
            warnings.warn(
                f"The backup in backup_dir={self.backup_dir!r} is that of "
                f"a finished training (all {epochs} epochs): `fit` trains "
                "nothing. Delete the directory to train again.",
                stacklevel=2,
            )
            return
        past_epochs = epoch >= epochs
        past_steps = (
            batch_done is not None and steps is not None and batch_done >= steps
        )
        if past_epochs or past_steps:
            where = f"epoch {epoch}"
            if batch_done is not None:
                where += f", batch {batch_done}"
            raise ValueError(
                f"The backup file {self._metadata_path!r} records {where}, "
                f"past the end of this `fit` (epochs={epochs}, "
                f"steps={steps}): it was written by a longer training. "
                "Call `fit` with the arguments of that training, pass "
                "another `backup_dir`, or delete the directory to train "
                "from scratch."
            )

    # During training.

    def on_epoch_begin(self, epoch, logs=None):
        self._current_epoch = epoch

    def on_epoch_end(self, epoch, logs=None):
        # An epoch-level backup: the next epoch starts at its first batch.
        self._resume_batch = None
        super().on_epoch_end(epoch, logs)

    def on_train_batch_end(self, batch, logs=None):
        if self._resume_batch is None:
            if self._should_save_on_batch(batch):
                self._save_model(batch_done=batch)
            return
        if batch < self._resume_batch:
            return  # A batch that the backup has already seen.
        # The end of the backup's batch: put its state back, and go on
        # counting batches from there.
        self.model.load_weights(self._slot_path(self._slot))
        self._resume_batch = None
        self._last_batch_seen = batch
        self._batches_seen_since_last_saving = 0

    def _save_model(self, batch_done=None):
        if self._lock is not None and self._lock.owner is not self:
            raise RuntimeError(
                f"backup_dir={self.backup_dir!r} is now used by another "
                "BackupAndRestore callback of this process; this one no "
                "longer writes to it."
            )
        os.makedirs(self.backup_dir, exist_ok=True)
        slot = 0 if self._slot is None else 1 - self._slot
        try:
            digest, size = self._write_weights(self._slot_path(slot))
            state = {
                "epoch": self._current_epoch,
                "batch": self._last_batch_seen,
                "batch_done": batch_done,
                "slot": slot,
                "sha256": digest,
                "size": size,
            }
            metadata = {
                **state,
                "run_id": self.run_id,
                "fingerprint": _fingerprint(self.model),
                "previous": self._committed,
            }
            _write_atomically(self._metadata_path, json.dumps(metadata))
            _sync_directory(self.backup_dir)
        except OSError as error:
            raise _directory_error(
                error,
                self.backup_dir,
                "could not take a backup",
                "Any earlier backup is whole and current: free space (or "
                "fix the disk) and restart the training, or pass another "
                "`backup_dir`",
            ) from error
        self._slot = slot
        self._committed = state

    def _write_weights(self, weights_path):
        """Writes the weights to `weights_path`; their SHA-256 and size."""
        estimate = _estimate_size(self.model, self._committed)
        _check_free_space(self.backup_dir, estimate)
        temporary = _temporary_path(self.backup_dir, ".weights.h5")
        staged = None
        try:
            staged = _stage(self.model, estimate)
            if staged is None:
                # No room in memory: HDF5 writes in the backup directory,
                # whose free space was checked above.
                self.model.save_weights(temporary, overwrite=True)
                digest, size = _digest(temporary)
            else:
                digest, size = _copy(staged, temporary)
            _sync_file(temporary)
            os.replace(temporary, weights_path)
        finally:
            for path in (temporary, staged):
                if path is not None and os.path.lexists(path):
                    os.remove(path)
        return digest, size

    def on_train_end(self, logs=None):
        if self._lock is not None and self._lock.owner is not self:
            # Another callback of this process took the directory over.
            self._lock = None
            return
        if self.delete_checkpoint and os.path.exists(self._metadata_path):
            # The metadata first: a kill during the deletion then leaves no
            # backup rather than a metadata file without its weights.
            os.remove(self._metadata_path)
        self._slot = self._committed = self._resume_batch = None
        try:
            super().on_train_end(logs)
        finally:
            if self._lock is not None:
                _release_lock(self._lock)
                self._lock = None


def _acquire_lock(directory, owner):
    """Locks `directory` for `owner`; a `FileLock`, or `None` without locks."""

    def reuse(held):
        # An earlier `fit` of this process was interrupted.
        held.owner = owner
        return held

    def busy(holder):
        return ValueError(
            f"backup_dir={directory!r} is in use by another training "
            f"({holder} holds its lock). Two trainings cannot share a backup "
            "directory: pass another `backup_dir`, or wait for the other "
            "training to end (or stop it) to resume its backup."
        )

    lock = _file_lock.acquire(
        directory, _held_locks, owner, reuse=reuse, busy=busy
    )
    if lock is None and _file_lock.fcntl is not None:
        warnings.warn(
            f"The file system of backup_dir={directory!r} does not "
            "support locks: nothing stops another training from using "
            "the same directory.",
            stacklevel=4,
        )
    return lock


def _release_lock(lock):
    _file_lock.release(lock, _held_locks)


def _directory_error(error, directory, what, way_out):
    """An `OSError` of `error`'s class naming `directory`."""
    reason = error.strerror or str(error)
    return OSError(
        error.errno,
        f"backup_dir={directory!r} {what}: {reason}"
        f"{f' ({error.filename})' if error.filename else ''}. {way_out}.",
    )


def _fingerprint(model):
    """A digest of the shapes and dtypes of the model's and optimizer's
    variables, in order: what `load_weights` needs to match."""
    variables = list(model.weights)
    optimizer = getattr(model, "optimizer", None)
    if optimizer is not None and optimizer.built:
        variables += list(optimizer.variables)
    layout = [[list(v.shape), str(v.dtype)] for v in variables]
    return hashlib.sha256(json.dumps(layout).encode("utf-8")).hexdigest()[:16]


def _estimate_size(model, committed):
    """An upper bound of the size of the model's weights file."""
    variables = list(model.weights)
    optimizer = getattr(model, "optimizer", None)
    if optimizer is not None and optimizer.built:
        variables += list(optimizer.variables)
    size = 0
    for v in variables:
        count = 1
        for dim in v.shape:
            count *= int(dim)
        size += count * _itemsize(v.dtype) + 4096  # HDF5's per-dataset cost.
    if committed is not None and committed.get("size"):
        size = max(size, int(committed["size"]))
    return size + _SPARE_BYTES


def _itemsize(dtype):
    dtype = str(dtype)
    for width in ("64", "32", "16", "8"):
        if dtype.endswith(width):
            return int(width) // 8
    return 8


def _check_free_space(directory, size):
    free = shutil.disk_usage(directory).free
    if free < size:
        raise OSError(
            errno.ENOSPC,
            f"No space left on device: a backup needs about {size} bytes, "
            f"{free} are free",
        )


def _stage(model, estimate):
    """`model.save_weights` into a memory-backed file; its path, or `None`.

    HDF5 that fails to write (a full disk, an I/O error) raises an `OSError`
    but leaves h5py objects that crash the interpreter when it exits; in
    memory, it does not fail. Copying the file to the disk with Python's
    I/O then raises an `OSError` that leaves nothing behind.
    """
    if not os.path.isdir(_STAGING_DIR):
        return None
    try:
        if shutil.disk_usage(_STAGING_DIR).free < 2 * estimate:
            return None
        handle, path = tempfile.mkstemp(
            dir=_STAGING_DIR,
            prefix=f"{_STAGING_PREFIX}{os.getpid()}-",
            suffix=".weights.h5",
        )
    except OSError:
        return None
    os.close(handle)
    try:
        model.save_weights(path, overwrite=True)
    except BaseException:
        os.remove(path)
        raise
    return path


def _remove_stale_staging_files():
    # Those of killed processes: the name holds the process id.
    if not os.path.isdir(_STAGING_DIR):
        return
    try:
        names = os.listdir(_STAGING_DIR)
    except OSError:
        return
    for name in names:
        if not name.startswith(_STAGING_PREFIX):
            continue
        pid = name[len(_STAGING_PREFIX) :].split("-")[0]
        if not pid.isdigit() or _process_exists(int(pid)):
            continue
        try:
            os.remove(os.path.join(_STAGING_DIR, name))
        except OSError:
            pass


def _process_exists(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _copy(source, target):
    """Copies `source` to `target`; the SHA-256 and size of the bytes."""
    digest, size = hashlib.sha256(), 0
    with open(source, "rb") as f, open(target, "wb") as out:
        while chunk := f.read(_CHUNK_BYTES):
            digest.update(chunk)
            out.write(chunk)
            size += len(chunk)
        out.flush()
    return digest.hexdigest(), size


def _digest(path):
    digest, size = hashlib.sha256(), 0
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK_BYTES):
            digest.update(chunk)
            size += len(chunk)
    return digest.hexdigest(), size


def _check_digest(path, state):
    """Why the slot file at `path` is not the one `state` records; or None."""
    if not os.path.isfile(path):
        return "it is missing"
    if "sha256" not in state:
        return None  # Written by an earlier version of this callback.
    try:
        digest, size = _digest(path)
    except OSError as error:
        return f"it cannot be read ({error})"
    if digest != state["sha256"]:
        return (
            f"its content ({size} bytes) is not the one recorded "
            f"({state.get('size')} bytes, SHA-256 {state['sha256'][:12]}...)"
        )
    return None


def _temporary_path(directory, suffix):
    handle, temporary = tempfile.mkstemp(
        dir=directory, prefix=_TEMPORARY_PREFIX, suffix=suffix
    )
    os.close(handle)
    return temporary


def _sync_file(path):
    with open(path, "rb") as f:
        os.fsync(f.fileno())


def _sync_directory(path):
    # Makes the renames durable on power loss too; not possible on Windows.
    if os.name != "posix":
        return
    handle = os.open(path, os.O_RDONLY)
    try:
        os.fsync(handle)
    finally:
        os.close(handle)


def _write_atomically(path, text):
    temporary = _temporary_path(os.path.dirname(path), ".json")
    try:
        with open(temporary, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.remove(temporary)
