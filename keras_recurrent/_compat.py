"""Every use of Keras or TensorFlow internals, in one place.

The package uses the public APIs of Keras and TensorFlow, except for the
uses below, where no public API does the job. Each is written here once,
says what it relies on, and is tested in tests/test_compat.py: the test
checks that the internal still behaves as relied on, and that the installed
versions are among those it was checked with (`CHECKED_WITH`). When Keras or
TensorFlow changes, those tests fail with a message naming the internal.

- `rnn_inner_loop`: Keras' backend time loop, reached through
  `keras.layers.RNN.inner_loop` with a stand-in for the layer.
- `KERAS_DROPOUT_CELL`: the unexported base class of `keras.layers.LSTMCell`
  that gives a cell per-sequence dropout masks in `keras.layers.RNN`.
- `fused_lstm` and `cudnn_ok`: Keras' backend LSTM kernel
  (`keras.src.backend.lstm`, cuDNN where the backend has it) and its test
  of the arguments and device, as `keras.layers.LSTM` calls them.
- `in_xla_context`: whether TensorFlow traces for XLA
  (`tf.__internal__.get_enclosing_xla_context`).
- `set_initial_epoch` and `BACKUP_AND_RESTORE_HOOKS`: what
  `kr.callbacks.BackupAndRestore` reads and overrides of
  `keras.callbacks.BackupAndRestore` and `keras.Model`.
"""

import keras

# The versions each internal was checked with, as "major.minor" strings.
CHECKED_WITH = {
    "keras": ("3.15",),
    "tensorflow": ("2.21",),
}


class _LoopOptions:
    """What `keras.layers.RNN.inner_loop` reads of its layer, given here.

    `RNN.inner_loop` reads `cell`, `go_backwards`, `unroll`, `stateful`,
    `zero_output_for_mask` and `return_sequences` from the layer and steps
    `cell` (called without `training` when it is not a `Layer`).
    """

    def __init__(self, step, **options):
        self.cell = step
        for name, value in options.items():
            setattr(self, name, value)


def rnn_inner_loop(
    step,
    sequences,
    initial_state,
    mask,
    *,
    go_backwards,
    unroll,
    stateful,
    zero_output_for_mask,
    return_sequences,
):
    """Keras' time loop over `step(inputs, states) -> (output, new_states)`.

    `keras.layers.RNN.inner_loop` is Keras' public way into its backend
    time loop (`backend.rnn`, which Keras does not export), but it reads
    the loop options from the layer's attributes and steps the layer's
    `cell`. Called here with a stand-in object in place of the layer, it
    steps `step` with the options given, so that neither the layer's
    attributes nor its cell change during a call.

    Returns:
        `(last_output, outputs, states)`, as `RNN.inner_loop`.
    """
    options = _LoopOptions(
        step,
        go_backwards=go_backwards,
        unroll=unroll,
        stateful=stateful,
        zero_output_for_mask=zero_output_for_mask,
        return_sequences=return_sequences,
    )
    return keras.layers.RNN.inner_loop(options, sequences, initial_state, mask)


def fused_lstm(
    sequences,
    initial_h,
    initial_c,
    mask,
    *,
    kernel,
    recurrent_kernel,
    bias,
    activation,
    recurrent_activation,
    return_sequences,
    go_backwards,
    unroll,
):
    """Keras' fused LSTM kernel over `sequences`, or `NotImplementedError`.

    What `keras.layers.LSTM.inner_loop` runs for `use_cudnn="auto"` or
    `True` (`keras.src.backend.lstm`, which Keras does not export): the
    LSTM of `keras.layers.LSTMCell` with these weights (gate blocks
    `[i, f, c, o]`, no recurrent dropout). TensorFlow and JAX run cuDNN on
    a GPU and raise `NotImplementedError` elsewhere (no GPU, other
    activations, no bias, `unroll`, and on JAX a mask); PyTorch runs cuDNN
    on a GPU and otherwise its own loop of precomputed input projections,
    with any activations, and raises for a mask.

    Returns:
        `(last_output, outputs, states)`, as `RNN.inner_loop`.
    """
    from keras.src import backend

    return backend.lstm(
        sequences,
        initial_h,
        initial_c,
        mask,
        kernel=kernel,
        recurrent_kernel=recurrent_kernel,
        bias=bias,
        activation=activation,
        recurrent_activation=recurrent_activation,
        return_sequences=return_sequences,
        go_backwards=go_backwards,
        unroll=unroll,
    )


def cudnn_ok(activation, recurrent_activation, unroll, use_bias):
    """Whether the backend would run an LSTM of these arguments on cuDNN
    (`keras.src.backend.cudnn_ok`: a GPU, `tanh` and `sigmoid`, no
    `unroll`, a bias), which `keras.layers.LSTM` asks on TensorFlow to
    turn off XLA compilation (`supports_jit`): cuDNN kernels do not
    compile with XLA."""
    from keras.src import backend

    return bool(
        backend.cudnn_ok(activation, recurrent_activation, unroll, use_bias)
    )


def _keras_dropout_cell_class():
    """The base of `keras.layers.LSTMCell` that defines `get_dropout_mask`.

    `keras.layers.RNN` (and so `Bidirectional`, and `StackedRNNCells` inside
    an `RNN`) asks a cell for its dropout masks before the time loop, and
    clears them after it, only when the cell is an instance of this class,
    which Keras does not export (`DropoutRNNCell`).
    """
    for klass in keras.layers.LSTMCell.__mro__[1:]:
        if "get_dropout_mask" in vars(klass):
            return klass
    raise ImportError(
        "keras_recurrent needs the base class of `keras.layers.LSTMCell` "
        "that defines `get_dropout_mask`: `keras.layers.RNN` makes dropout "
        "masks once per sequence only for its instances. Received: "
        f"keras {keras.__version__}, whose LSTMCell bases are "
        f"{[klass.__name__ for klass in keras.layers.LSTMCell.__mro__]}"
    )


KERAS_DROPOUT_CELL = _keras_dropout_cell_class()


def in_xla_context():
    """Whether the layer is being traced for XLA (`jit_compile=True`).

    True on every backend but TensorFlow and PyTorch, whose traced code is
    compiled whole by XLA (JAX), and inside a TensorFlow function compiled
    with XLA: there, shapes must be static and run-time assertions do not
    run. TensorFlow tells the XLA context only through
    `tf.__internal__.get_enclosing_xla_context`.
    """
    backend = keras.backend.backend()
    if backend == "torch":
        return False
    if backend != "tensorflow":
        return True
    import tensorflow as tf

    return tf.__internal__.get_enclosing_xla_context() is not None


# The members of `keras.callbacks.BackupAndRestore` that
# `kr.callbacks.BackupAndRestore` overrides or sets: Keras calls
# `_load_model` in `on_train_begin`, `_save_model` in `on_epoch_end` and
# `on_train_batch_end` (when `_should_save_on_batch` says so), and counts
# with the three attributes. Keras has no public hooks for where a backup
# is read and written.
BACKUP_AND_RESTORE_HOOKS = (
    "_load_model",
    "_save_model",
    "_should_save_on_batch",
    "_current_epoch",
    "_last_batch_seen",
    "_batches_seen_since_last_saving",
)


def set_initial_epoch(model, epoch):
    """Makes the `fit` that is starting begin at epoch `epoch`.

    As `keras.callbacks.BackupAndRestore` does from `on_train_begin`: `fit`
    reads `Model._initial_epoch` after the callbacks' `on_train_begin`.
    """
    model._initial_epoch = epoch
