"""Training callbacks."""

from keras_recurrent.callbacks.backup_and_restore import BackupAndRestore

__all__ = ["BackupAndRestore"]
