"""An exclusive lock on a directory's lock file, for the directories that
one run at a time may use: `kr.callbacks.BackupAndRestore`'s backup and a
`kr.tuning` project.

`fcntl.flock` on `<directory>/.lock`, which also holds the holder's process
and host for the error of the next one. A killed process releases it. Locks
this process holds are kept in the caller's `held_locks`, by the lock
file's `(device, inode)`, since `flock` does not stop a second lock of the
same process through another handle.
"""

import errno
import os
import socket

try:
    import fcntl
except ImportError:  # Windows: no advisory locks.
    fcntl = None

LOCK_NAME = ".lock"

# What `flock` raises on a file system without locks.
_NO_LOCKS = (errno.ENOLCK, errno.EOPNOTSUPP, errno.EINVAL)


class FileLock:
    """A held lock: the lock file's `key` `(device, inode)`, its open
    `handle` and `path`, and the `owner` the caller records."""

    def __init__(self, key, handle, path, owner):
        self.key, self.handle, self.path, self.owner = key, handle, path, owner


def acquire(directory, held_locks, owner, *, reuse, busy):
    """Locks `directory` for `owner`.

    Args:
        directory: The directory to lock.
        held_locks: The caller's dict of the locks this process holds.
        owner: What the new `FileLock` records as its `owner`.
        reuse: Called with the `FileLock` when this process already holds
            the lock; its result is returned.
        busy: Called with the holder's description (`"process 12 on host
            h"`) when another process holds the lock; returns the exception
            to raise.

    Returns:
        The new `FileLock`, `reuse`'s result, or `None` where there are no
        locks (no `fcntl`, or a file system without locks).
    """
    if fcntl is None:
        return None
    path = os.path.join(directory, LOCK_NAME)
    while True:
        handle = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        status = os.fstat(handle)
        key = (status.st_dev, status.st_ino)
        held = held_locks.get(key)
        if held is not None:
            os.close(handle)
            return reuse(held)
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(handle, 200, 0).decode("utf-8", "replace")
            os.close(handle)
            raise busy(holder.strip() or "a process") from None
        except OSError as error:
            os.close(handle)
            if error.errno not in _NO_LOCKS:
                raise
            return None
        try:
            current = os.stat(path)
        except FileNotFoundError:
            current = None
        if current is None or (current.st_dev, current.st_ino) != key:
            # The holder deleted the file on its release meanwhile.
            os.close(handle)
            continue
        holder = f"process {os.getpid()} on host {socket.gethostname()}\n"
        try:
            os.ftruncate(handle, 0)
            os.pwrite(handle, holder.encode("utf-8"), 0)
        except OSError:
            pass  # A full disk: the lock holds without the holder's name.
        lock = FileLock(key, handle, path, owner)
        held_locks[key] = lock
        return lock


def release(lock, held_locks):
    """Releases `lock` and removes its file, unless the file was replaced
    (or deleted with its directory) meanwhile."""
    held_locks.pop(lock.key, None)
    try:
        status = os.stat(lock.path)
        if (status.st_dev, status.st_ino) == lock.key:
            os.remove(lock.path)
    except FileNotFoundError:
        pass
    fcntl.flock(lock.handle, fcntl.LOCK_UN)
    os.close(lock.handle)
