"""Training across workers with `tf.distribute` (needs TensorFlow).

Keras 3's `Model.fit` fails under `tf.distribute.MultiWorkerMirroredStrategy`
(keras-team/keras#20585); `kr.distribute.MultiWorkerMirroredStrategy` is the
same strategy with the one method Keras trips over made to accept what Keras
passes it, and `kr.distribute.backup_and_restore` is the backup of a job that
resumes after a worker is killed. See `docs/guides/distributed_training.md`.
"""

from keras_recurrent.distribute.backup_and_restore import backup_and_restore
from keras_recurrent.distribute.multi_worker_mirrored_strategy import (
    MultiWorkerMirroredStrategy,
)

__all__ = ["MultiWorkerMirroredStrategy", "backup_and_restore"]
