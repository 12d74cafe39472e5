"""Training callbacks."""

from keras_recurrent.callbacks.backup_and_restore import BackupAndRestore
from keras_recurrent.callbacks.multi_worker_backup_and_restore import (
    multi_worker_backup_and_restore,
)
from keras_recurrent.callbacks.reset_states_callback import ResetStatesCallback

__all__ = [
    "BackupAndRestore",
    "ResetStatesCallback",
    "multi_worker_backup_and_restore",
]
