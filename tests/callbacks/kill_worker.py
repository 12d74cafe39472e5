"""A deterministic training run with `kr.callbacks.BackupAndRestore`.

`python -m tests.callbacks.kill_worker KIND BACKUP_DIR RESULT [--upstream]`
trains a model of `KIND` with a backup after every batch, prints "batch" to
stdout at the end of each batch, just before the backup is written (so that
a test knows where training is), and when `fit` completes writes the final
weights to the `.npz` file `RESULT`. Killed and restarted with the same
arguments, it resumes from the backup.

`KIND` is "peephole" (a `PeepholeLSTM`), "tree" (a `ChildSumTreeLSTM`) or
"ballast" (the `PeepholeLSTM` model with 128 MB of non-trainable zeros, so
that a backup takes long enough to be killed while it is written; one
epoch).
`--upstream` uses `keras.callbacks.BackupAndRestore` instead.

`child` is the same for a process forked from a `multiprocessing`
forkserver that has imported this module, as the tests do: TensorFlow is
then imported once, not for every process.
"""

import os
import sys

import keras
import numpy as np

import keras_recurrent as kr

EPOCHS, BATCH_SIZE, EXAMPLES = 3, 4, 24


def _peephole_data(rng):
    x = rng.normal(size=(EXAMPLES, 5, 3)).astype("float32")
    inputs = keras.Input((5, 3))
    outputs = keras.layers.Dense(1)(kr.layers.PeepholeLSTM(4)(inputs))
    return x, keras.Model(inputs, outputs)


class _Ballast(keras.layers.Layer):
    def build(self, input_shape):
        self.ballast = self.add_weight(
            shape=(32 * 2**20,), initializer="zeros", trainable=False
        )

    def call(self, inputs):
        return inputs


def _ballast_data(rng):
    x, model = _peephole_data(rng)
    outputs = _Ballast()(model.outputs[0])
    return x, keras.Model(model.inputs, outputs)


def _tree_data(rng):
    node_inputs = rng.normal(size=(EXAMPLES, 4, 3)).astype("float32")
    # Odd examples: leaves 0 and 1 under node 2, node 2 under the root 3.
    # Even ones: the chain 0 -> 1 -> 2 (the root), with a padding node.
    trees = np.array(
        [
            [[-1, -1], [-1, -1], [0, 1], [2, -1]],
            [[-1, -1], [0, -1], [1, -1], [-1, -1]],
        ],
        "int32",
    )
    children = np.where(
        (np.arange(EXAMPLES) % 2 == 0)[:, None, None], trees[1], trees[0]
    ).astype("int32")
    node_mask = np.ones((EXAMPLES, 4), "bool")
    node_mask[::2, 3] = False
    node_inputs[::2, 3] = 0.0
    inputs = [
        keras.Input((4, 3)),
        keras.Input((4, 2), dtype="int32"),
        keras.Input((4,), dtype="bool"),
    ]
    outputs = keras.layers.Dense(1)(kr.layers.ChildSumTreeLSTM(4)(inputs))
    return [node_inputs, children, node_mask], keras.Model(inputs, outputs)


class _Heartbeat(keras.callbacks.Callback):
    def __init__(self, beat):
        super().__init__()
        self.beat = beat

    def on_train_batch_end(self, batch, logs=None):
        self.beat()


def _print_batch():
    print("batch", flush=True)


_MODELS = {
    "peephole": _peephole_data,
    "tree": _tree_data,
    "ballast": _ballast_data,
}


def train(kind, backup_dir, save_freq=1, upstream=False, beat=_print_batch):
    """Trains from the backup in `backup_dir` (if any); the final weights.

    `beat()` is called at the end of each batch, before the backup.
    """
    keras.utils.set_random_seed(0)
    rng = np.random.default_rng(0)
    x, model = _MODELS[kind](rng)
    y = rng.normal(size=(EXAMPLES, 1)).astype("float32")
    model.compile(
        optimizer=keras.optimizers.Adam(0.01), loss="mse", jit_compile=False
    )
    callback_class = (
        keras.callbacks.BackupAndRestore
        if upstream
        else kr.callbacks.BackupAndRestore
    )
    backup = callback_class(backup_dir, save_freq=save_freq)
    model.fit(
        x,
        y,
        batch_size=BATCH_SIZE,
        epochs=1 if kind == "ballast" else EPOCHS,
        shuffle=False,
        verbose=0,
        callbacks=[_Heartbeat(beat), backup],
    )
    return model.get_weights()


def _save_result(weights, result):
    temporary = result + ".tmp.npz"
    np.savez(temporary, *weights)
    os.replace(temporary, result)


def child(kind, backup_dir, result, connection, upstream=False):
    """`train` in a process forked by a test: beats sent to `connection`."""
    weights = train(
        kind,
        backup_dir,
        upstream=upstream,
        beat=lambda: connection.send_bytes(b"batch"),
    )
    _save_result(weights, result)


if __name__ == "__main__":
    kind, backup_dir, result = sys.argv[1:4]
    weights = train(kind, backup_dir, upstream="--upstream" in sys.argv[4:])
    _save_result(weights, result)
