"""Dropout of a recurrent layer checked through its outputs only.

Per-sequence (variational) dropout draws one input mask and one recurrent
mask per sequence and call, and reuses them at every step. Nothing private
of the cell is read: the masks are recovered from the training output, as
the one pair, out of every candidate, with which a NumPy reference gives
that output.
"""

import itertools

import numpy as np


def per_sequence_masks(reference, x, mask, sequence, widths, rates):
    """The dropout masks, constant over time, that reproduce `sequence`.

    For each sequence, runs `reference` with every input mask and every
    recurrent mask whose entries are 0 or `1 / (1 - rate)`, and requires
    exactly one pair to match the layer's output. Masks drawn anew at each
    step match no pair.

    Args:
        reference: Callable `(x, mask, dropout_masks)` returning the
            reference's `(outputs, final_states)` for a batch, with
            `dropout_masks` a pair of `(batch, width)` arrays.
        x: Inputs `(batch, time, features)`.
        mask: Boolean `(batch, time)` mask of the inputs.
        sequence: The layer's training output `(batch, time, units)`.
        widths: Widths `(input, recurrent)` of the two masks.
        rates: Rates `(dropout, recurrent_dropout)`.

    Returns:
        The input masks `(batch, widths[0])` and the recurrent masks
        `(batch, widths[1])`.
    """
    bits = np.array(list(itertools.product([0.0, 1.0], repeat=sum(widths))))
    candidates = (
        bits[:, : widths[0]] / (1 - rates[0]),
        bits[:, widths[0] :] / (1 - rates[1]),
    )
    found = []
    for row in range(x.shape[0]):
        expected, _ = reference(
            np.repeat(x[row : row + 1].astype("float64"), len(bits), 0),
            np.repeat(mask[row : row + 1], len(bits), 0),
            candidates,
        )
        error = np.abs(expected - np.asarray(sequence)[row]).max(axis=(1, 2))
        matches = np.flatnonzero(error < 1e-5)
        assert len(matches) == 1, (row, matches, error.min())
        found.append(matches[0])
    return candidates[0][found], candidates[1][found]


def check_per_sequence_dropout(layer, reference, x, mask, widths, rates):
    """Checks that `layer` draws one mask pair per sequence and call.

    `layer` returns `(sequence, *states)`. In training, one pair of masks
    constant over time reproduces both its output and its final states
    (`per_sequence_masks`); a second call draws other masks, so none
    outlives its call; in inference the output is the reference's without
    dropout. Arguments as for `per_sequence_masks`.

    Returns:
        The mask pair of the first call.
    """
    x64 = x.astype("float64")
    sequence, *states = layer(x, mask=mask, training=True)
    first = per_sequence_masks(reference, x, mask, sequence, widths, rates)
    _, expected_states = reference(x64, mask, first)
    assert len(states) == len(expected_states)
    for state, expected_state in zip(states, expected_states, strict=True):
        np.testing.assert_allclose(state, expected_state, atol=1e-5)
    sequence, *_ = layer(x, mask=mask, training=True)
    second = per_sequence_masks(reference, x, mask, sequence, widths, rates)
    assert not all(np.array_equal(a, b) for a, b in zip(first, second))
    inference, *_ = layer(x, mask=mask, training=False)
    expected, _ = reference(x64, mask, (None, None))
    np.testing.assert_allclose(inference, expected, atol=1e-5)
    return first
