"""Masking maths of the sequence layers, on a mask already checked."""

from keras import ops


def last_valid_step(mask):
    """The index of each row's last `True` step, `(batch, 1)`; -1 if none.

    An `argmax`, not `ops.max`: eagerly, `ops.max` refuses an empty tensor,
    so a batch of 0 sequences would fail where a traced call passes.
    """
    steps = ops.arange(ops.shape(mask)[1], dtype="int32")[None, :]
    latest = ops.argmax(ops.where(mask, steps, -1), axis=1)
    latest = ops.expand_dims(ops.cast(latest, "int32"), 1)
    return ops.where(ops.any(mask, axis=1, keepdims=True), latest, -1)


def zero_masked_steps(sequences, mask):
    """`sequences` with zeros at the steps `mask` drops; as is without a mask.

    A masked step's output is selected away with `where`, but its inputs
    still go through the cell's math, and the gradient of the discarded
    branch is 0 * NaN = NaN: NaN or inf at a masked step would reach every
    weight while the loss stays finite. Zeroed once before the time loop,
    they cannot (one elementwise op; unmasked steps are unchanged).
    """
    if mask is None:
        return sequences
    return ops.where(ops.expand_dims(mask, -1), sequences, 0)
