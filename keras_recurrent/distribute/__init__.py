"""Training across workers with `tf.distribute` (needs TensorFlow).

Keras 3's `Model.fit` fails under `tf.distribute.MultiWorkerMirroredStrategy`
(keras-team/keras#20585); `kr.distribute.MultiWorkerMirroredStrategy` is the
same strategy with the one method Keras trips over made to accept what Keras
passes it. The backup of a job that resumes after a worker is killed is
`kr.callbacks.multi_worker_backup_and_restore` (here as `backup_and_restore`
until the next release, with a `DeprecationWarning`). See
`docs/guides/distributed_training.md`.
"""

from keras_recurrent._deprecation import moved_getattr
from keras_recurrent.distribute.multi_worker_mirrored_strategy import (
    MultiWorkerMirroredStrategy,
)

__getattr__ = moved_getattr(
    __name__,
    {
        "backup_and_restore": (
            "keras_recurrent.callbacks",
            "multi_worker_backup_and_restore",
        )
    },
)

__all__ = ["MultiWorkerMirroredStrategy"]
