"""Batches for truncated backpropagation through time with stateful RNNs."""

import numpy as np

from keras_recurrent._checks import check_positive_int


def tbptt_batches(
    sequences, targets=None, *, batch_size, window, as_dataset=False
):
    """Cuts long sequences into `window`-step chunks for stateful training.

    Truncated backpropagation through time (TBPTT) trains on a long sequence
    `window` steps at a time: a `stateful=True` RNN carries its states from
    one batch to the next, so the forward pass sees the whole sequence, while
    gradients flow back at most `window` steps. For this, row `r` of batch
    `j + 1` must continue row `r` of batch `j`. This function lays the data
    out that way:

    - the `N` sequences are taken `batch_size` at a time; sequence
      `g * batch_size + r` goes to row `r` of the `g`-th group of batches, so
      every row holds one contiguous stream, sequence after sequence;
    - each sequence of length `T` is cut into `T // window` chunks, and
      chunk `c` of the sequences of group `g` forms batch
      `g * (T // window) + c`.

    A new set of sequences therefore starts every `T // window` batches: reset
    the RNN states there (and at the start of each epoch) with
    `kr.callbacks.ResetStatesCallback(reset_every=T // window)`. Batches must be
    fed in order: pass `shuffle=False` to `fit`. Sequences are neither
    padded nor dropped: `N` must be a multiple of `batch_size` and `T` of
    `window` (trim or pad them first; padded steps can be masked with
    `keras.layers.Masking`).

    Args:
        sequences: Array `(N, T, ...)`: `N` sequences of `T` steps (features,
            or integer tokens, per step).
        targets: Optional array `(N, T, ...)` of per-step targets, cut the
            same way.
        batch_size: Positive integer, the number of streams per batch. The
            stateful model must be built with this batch size.
        window: Positive integer, the number of steps per chunk (the
            truncation length of backpropagation).
        as_dataset: Whether to return a `tf.data.Dataset` of batches instead
            of arrays. Defaults to `False`.

    Returns:
        `(inputs, targets, num_batches)` where `inputs` is an array
        `(num_batches * batch_size, window, ...)` whose consecutive blocks of
        `batch_size` rows are the batches in order (so that `model.fit(
        inputs, targets, batch_size=batch_size, shuffle=False)` feeds them
        right), `targets` the same for the targets (`None` without targets),
        and `num_batches = (N // batch_size) * (T // window)` the number of
        batches per epoch. With `as_dataset=True`, `(dataset, num_batches)`:
        an unshuffled `tf.data.Dataset` of `inputs` batches, or of
        `(inputs, targets)` batches.

    Example:

    >>> x = np.random.rand(4, 12, 3).astype("float32")  # 4 sequences
    >>> inputs, _, num_batches = kr.data.tbptt_batches(
    ...     x, batch_size=2, window=4
    ... )
    >>> inputs.shape, num_batches  # 2 groups x 3 chunks
    ((12, 4, 3), 6)
    >>> np.array_equal(inputs[2:4], x[:2, 4:8])  # batch 1 continues batch 0
    True

    Reference:
        - [Williams & Peng, 1990. An Efficient Gradient-Based Algorithm for
          On-Line Training of Recurrent Network Trajectories](
          https://doi.org/10.1162/neco.1990.2.4.490)
    """
    batch_size = check_positive_int("batch_size", batch_size)
    window = check_positive_int("window", window)
    sequences = _check_sequences("sequences", sequences)
    num_sequences, timesteps = sequences.shape[:2]
    if targets is not None:
        targets = _check_sequences("targets", targets)
        if targets.shape[:2] != sequences.shape[:2]:
            raise ValueError(
                "Arguments `sequences` and `targets` must have the same "
                "number of sequences and steps. Received: sequences.shape="
                f"{sequences.shape}, targets.shape={targets.shape}"
            )
    if num_sequences % batch_size:
        raise ValueError(
            "The number of sequences must be a multiple of `batch_size`, so "
            "that every batch has one row per stream. Drop or add sequences. "
            f"Received: sequences.shape={sequences.shape}, "
            f"batch_size={batch_size}"
        )
    if timesteps % window:
        raise ValueError(
            "The sequence length must be a multiple of `window`. Trim or pad "
            "the sequences (and mask the padding). "
            f"Received: sequences.shape={sequences.shape}, window={window}"
        )
    num_batches = (num_sequences // batch_size) * (timesteps // window)
    inputs = _chunk(sequences, batch_size, window)
    if targets is not None:
        targets = _chunk(targets, batch_size, window)
    if not as_dataset:
        return inputs, targets, num_batches

    import tensorflow as tf

    elements = inputs if targets is None else (inputs, targets)
    dataset = tf.data.Dataset.from_tensor_slices(elements).batch(batch_size)
    return dataset, num_batches


def _chunk(array, batch_size, window):
    """`(N, T, ...)` to `(num_batches * batch_size, window, ...)`."""
    num_sequences, timesteps = array.shape[:2]
    rest = array.shape[2:]
    groups = num_sequences // batch_size
    chunks = timesteps // window
    array = array.reshape((groups, batch_size, chunks, window) + rest)
    # (group, chunk, row, step, ...): batch `group * chunks + chunk`.
    array = np.swapaxes(array, 1, 2)
    return np.ascontiguousarray(array).reshape((-1, window) + rest)


def _check_sequences(name, array):
    array = np.asarray(array)
    if array.ndim < 2:
        raise ValueError(
            f"Argument `{name}` must have shape (num_sequences, timesteps, "
            f"...). Received: {name}.shape={array.shape}"
        )
    return array
