"""The backup callback of one worker of a multi-worker job."""

from keras_recurrent.callbacks.backup_and_restore import BackupAndRestore


def multi_worker_backup_and_restore(backup_dir, strategy, **kwargs):
    """Makes the `BackupAndRestore` callback for this worker of a job.

    All workers of a synchronous job hold the same weights, so one backup
    serves them all: the chief (task `"chief"`, else worker 0) writes it at
    the end of every epoch, and every worker reads it when `fit` starts.
    `backup_dir` must therefore be a directory all workers see on a mounted
    shared file system (NFS, for instance): the atomic rename of
    `kr.callbacks.BackupAndRestore` needs a file system path, so URLs such
    as `gs://...` are refused with a `ValueError`. Workers that each wrote
    their own backup could be an epoch apart when one is killed between the
    end of a step and its save, and a job restarted from two different
    epochs would hang in its first collective.

    The recipe after a worker dies: restart every worker, not only the dead
    one. A synchronous job cannot go on without one of its workers, nor
    take a new process in: once TensorFlow's coordination service misses
    the dead worker's heartbeats, the next collective op of every survivor
    fails with `UnavailableError` ("The following tasks are unhealthy
    (stopped sending heartbeats)") and its `fit` raises. Start all workers
    again with the same `TF_CONFIG` and call `fit` with the same arguments
    and this callback: training resumes at the first epoch not backed up,
    from the weights and optimizer state backed up at the end of the epoch
    before. Keep the data of an epoch the same in every run (no shuffling,
    or a seed per epoch): the final weights then equal those of a job that
    was never killed. Killing either worker 1 or the chief mid-training and
    restarting both gives the weights of one uninterrupted process to
    6e-8 (`tests/distribute/test_kill_and_resume.py`).

    The callback is a `kr.callbacks.BackupAndRestore` (it replaces the
    backup atomically). The chief's callback locks `backup_dir` for the job
    (a second job on the same directory fails to start); the other workers'
    callbacks only read the backup, and neither lock the directory nor
    remove files in it.

    Args:
        backup_dir: Path of the backup directory, the same on all workers.
        strategy: The `tf.distribute.MultiWorkerMirroredStrategy` of the job
            (or any strategy with a `cluster_resolver`; without one, this
            process is its own chief).
        **kwargs: Further arguments of the `BackupAndRestore` callback, e.g.
            `double_checkpoint=True`. `save_freq` must stay `"epoch"`: Keras
            resumes at the start of an epoch.

    Returns:
        A `keras.callbacks.Callback` for `fit`'s `callbacks`.

    Example:

    ```python
    strategy = kr.distribute.MultiWorkerMirroredStrategy()
    with strategy.scope():
        model = build_model()
        model.compile(optimizer="sgd", loss="mse")
    backup = kr.callbacks.multi_worker_backup_and_restore(
        "/shared/job-7", strategy
    )
    model.fit(dataset, epochs=20, callbacks=[backup])
    ```
    """
    save_freq = kwargs.get("save_freq", "epoch")
    if save_freq != "epoch":
        raise ValueError(
            "Argument `save_freq` must be 'epoch': Keras' BackupAndRestore "
            "resumes at the start of an epoch, so a backup taken within one "
            f"would repeat its first steps. Received: save_freq={save_freq!r}"
        )
    if _is_chief(strategy):
        return BackupAndRestore(backup_dir, **kwargs)
    # Workers other than the chief only read the backup: they must not
    # write it, nor delete it when their training ends.
    reader = type(
        "BackupReader",
        (BackupAndRestore,),
        {
            "on_epoch_end": _do_nothing,
            "on_train_batch_end": _do_nothing,
            "on_train_end": _do_nothing,
            "_writes_backup": False,
        },
    )
    return reader(backup_dir, **kwargs)


def _do_nothing(self, *args, **kwargs):
    del self, args, kwargs


def _is_chief(strategy):
    resolver = getattr(strategy, "cluster_resolver", None)
    if resolver is None or not resolver.cluster_spec().as_dict():
        return True
    if resolver.task_type == "chief":
        return True
    jobs = resolver.cluster_spec().jobs
    return (
        "chief" not in jobs
        and resolver.task_type == "worker"
        and resolver.task_id == 0
    )
