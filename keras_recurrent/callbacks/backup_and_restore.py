"""`keras.callbacks.BackupAndRestore` that survives a kill at any moment."""

import json
import os
import tempfile

import keras

_METADATA_NAME = "training_metadata.json"
_TEMPORARY_PREFIX = ".tmp-"


class BackupAndRestore(keras.callbacks.BackupAndRestore):
    """Backs up the training state so that a killed `fit` loses nothing.

    A drop-in replacement for `keras.callbacks.BackupAndRestore` that works
    around three upstream behaviours (Keras 3):

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

    Upstream accepts a `save_freq` of 0 or below (and `True`, `False`) and
    then saves after every batch; here these are a `ValueError`.
    `double_checkpoint` is not needed (the previous backup stays whole until
    the next one is complete) and not accepted. The backup directory must be
    on a local file system, where renames are atomic.

    Args:
        backup_dir: String, path of a directory used only for this backup.
        save_freq: `"epoch"` or a positive integer, the number of batches
            between backups. Defaults to `"epoch"`.
        delete_checkpoint: Whether to delete the backup when `fit` completes.
            Defaults to `True`.

    Example:

    >>> backup = kr.callbacks.BackupAndRestore("/tmp/backup", save_freq=10)
    >>> model.fit(x, y, epochs=5, shuffle=False, callbacks=[backup])
    """

    def __init__(self, backup_dir, save_freq="epoch", delete_checkpoint=True):
        if not backup_dir or "://" in str(backup_dir):
            raise ValueError(
                "Argument `backup_dir` must be a directory on a local file "
                f"system. Received: backup_dir={backup_dir!r}"
            )
        if save_freq != "epoch" and (
            isinstance(save_freq, bool)
            or not isinstance(save_freq, int)
            or save_freq < 1
        ):
            raise ValueError(
                "Argument `save_freq` must be 'epoch' or a positive integer. "
                f"Received: save_freq={save_freq!r}"
            )
        super().__init__(
            os.fspath(backup_dir),
            save_freq=save_freq,
            double_checkpoint=False,
            delete_checkpoint=delete_checkpoint,
        )
        self._metadata_path = os.path.join(self.backup_dir, _METADATA_NAME)
        self._slot = None
        self._resume_batch = None

    def _slot_path(self, slot):
        return os.path.join(self.backup_dir, f"slot{slot}.weights.h5")

    def _read_metadata(self):
        try:
            with open(self._metadata_path) as f:
                return json.load(f)
        except FileNotFoundError:
            return None

    def on_train_begin(self, logs=None):
        self._remove_temporaries()
        super().on_train_begin(logs)

    def _remove_temporaries(self):
        # A process killed during a save leaves its temporary file behind;
        # nothing reads it, and each one is as large as a backup.
        if not os.path.isdir(self.backup_dir):
            return
        for name in os.listdir(self.backup_dir):
            if name.startswith(_TEMPORARY_PREFIX):
                os.remove(os.path.join(self.backup_dir, name))

    def _load_model(self):
        metadata = self._read_metadata()
        if metadata is None or "slot" not in metadata:
            # No backup, or one written by the upstream callback.
            self._slot = self._resume_batch = None
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
        self._slot = metadata["slot"]
        self.model.load_weights(self._slot_path(self._slot))
        self.model._initial_epoch = metadata["epoch"]
        self._current_epoch = metadata["epoch"]
        self._resume_batch = metadata.get("batch_done")

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
        os.makedirs(self.backup_dir, exist_ok=True)
        slot = 0 if self._slot is None else 1 - self._slot
        weights_path = self._slot_path(slot)
        temporary = _temporary_path(weights_path, ".weights.h5")
        try:
            self.model.save_weights(temporary, overwrite=True)
            _sync_file(temporary)
            os.replace(temporary, weights_path)
        finally:
            if os.path.exists(temporary):
                os.remove(temporary)
        metadata = {
            "epoch": self._current_epoch,
            "batch": self._last_batch_seen,
            "batch_done": batch_done,
            "slot": slot,
        }
        _write_atomically(self._metadata_path, json.dumps(metadata))
        _sync_directory(self.backup_dir)
        self._slot = slot

    def on_train_end(self, logs=None):
        if self.delete_checkpoint and os.path.exists(self._metadata_path):
            # The metadata first: a kill during the deletion then leaves no
            # backup rather than a metadata file without its weights.
            os.remove(self._metadata_path)
        self._slot = self._resume_batch = None
        super().on_train_end(logs)


def _temporary_path(path, suffix):
    handle, temporary = tempfile.mkstemp(
        dir=os.path.dirname(path), prefix=_TEMPORARY_PREFIX, suffix=suffix
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
    temporary = _temporary_path(path, ".json")
    try:
        with open(temporary, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.remove(temporary)
