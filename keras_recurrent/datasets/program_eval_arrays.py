"""Programs and their targets as padded integer arrays."""

import numpy as np

from keras_recurrent.datasets._checks import check_int
from keras_recurrent.datasets.program_eval_vocabulary import (
    PROGRAM_EVAL_VOCABULARY,
)

_SEPARATOR = "@"
_END = "."


def _encode(text, row, offset=0):
    for position, character in enumerate(text):
        token = PROGRAM_EVAL_VOCABULARY.get(character)
        if token is None or character in (_SEPARATOR, _END):
            raise ValueError(
                "Programs and targets may only hold characters of "
                "`kr.datasets.PROGRAM_EVAL_VOCABULARY` other than "
                f"{_SEPARATOR!r} and {_END!r}. Received: {character!r} in "
                f"{text!r}"
            )
        row[offset + position] = token


def program_eval_arrays(
    programs, targets, *, program_length=None, target_length=None
):
    """Encodes programs and targets as zero-padded int32 arrays.

    Two layouts of the same characters (ids of
    `kr.datasets.PROGRAM_EVAL_VOCABULARY`), both teacher forced:

    - Encoder-decoder: `"program"`; `"decoder_inputs"`, `@` then the target;
      `"decoder_targets"`, the target then `.`, one step ahead of
      `"decoder_inputs"`.
    - One stream, as the original trains its LSTM: `"inputs"` is the
      program, `@` and the target, and at each step `t` from the `@` on,
      `"targets"` is the character at `t + 1` (the target's characters,
      then `.`). `"targets"` is 0 at the program's steps and at the padding,
      where `"target_mask"` is 0, so a loss weighted by `"target_mask"`
      (e.g. `sample_weight=` in `model.fit`) counts the target's
      characters only, and a recurrent network predicting `"targets"` from
      `"inputs"` never sees a character before it predicts it.

    Args:
        programs: List of program strings, e.g.
            `kr.datasets.program_eval(...)["programs"]`.
        targets: List of the strings they print, as many as `programs`.
        program_length: Optional integer, the padded width `P` of the
            programs. Defaults to `None` (the longest program).
        target_length: Optional integer, the padded width `T` of the
            targets. Defaults to `None` (the longest target).

    Returns:
        A dict of NumPy arrays, for `B = len(programs)`:

        - `"program"`: int32 `(B, P)`;
        - `"decoder_inputs"`, `"decoder_targets"`: int32 `(B, T + 1)`;
        - `"inputs"`, `"targets"`: int32 `(B, P + T + 1)`;
        - `"target_mask"`: float32 `(B, P + T + 1)`, 1 where `"targets"`
          holds a character.

    Raises:
        ValueError: If the lists differ in length or are empty, a string
            has a character outside the vocabulary (or `@` or `.`), or is
            longer than `program_length` or `target_length`.

    Example:

    >>> arrays = kr.datasets.program_eval_arrays(["print((1+2))"], ["3"])
    >>> arrays["inputs"].shape, arrays["decoder_targets"].shape
    ((1, 14), (1, 2))
    """
    programs, targets = list(programs), list(targets)
    if not programs or len(programs) != len(targets):
        raise ValueError(
            "Arguments `programs` and `targets` must be non-empty lists of "
            f"the same length. Received: len(programs)={len(programs)}, "
            f"len(targets)={len(targets)}"
        )
    longest_program = max(len(program) for program in programs)
    longest_target = max(len(target) for target in targets)
    program_length = check_int(
        "program_length", program_length, 1, allow_none=True
    )
    target_length = check_int(
        "target_length", target_length, 1, allow_none=True
    )
    if program_length is None:
        program_length = longest_program
    elif program_length < longest_program:
        raise ValueError(
            f"Argument `program_length` must be at least the longest "
            f"program's {longest_program} characters. "
            f"Received: program_length={program_length}"
        )
    if target_length is None:
        target_length = longest_target
    elif target_length < longest_target:
        raise ValueError(
            f"Argument `target_length` must be at least the longest "
            f"target's {longest_target} characters. "
            f"Received: target_length={target_length}"
        )

    batch = len(programs)
    width = program_length + target_length + 1
    program_ids = np.zeros((batch, program_length), np.int32)
    decoder_inputs = np.zeros((batch, target_length + 1), np.int32)
    decoder_targets = np.zeros((batch, target_length + 1), np.int32)
    inputs = np.zeros((batch, width), np.int32)
    stream_targets = np.zeros((batch, width), np.int32)
    separator = PROGRAM_EVAL_VOCABULARY[_SEPARATOR]
    end = PROGRAM_EVAL_VOCABULARY[_END]
    for row, (program, target) in enumerate(zip(programs, targets)):
        _encode(program, program_ids[row])
        _encode(target, decoder_targets[row])
        size, digits = len(program), len(target)
        decoder_targets[row, digits] = end
        decoder_inputs[row, 0] = separator
        decoder_inputs[row, 1 : digits + 1] = decoder_targets[row, :digits]
        inputs[row, :size] = program_ids[row, :size]
        inputs[row, size : size + digits + 1] = decoder_inputs[
            row, : digits + 1
        ]
        stream_targets[row, size : size + digits + 1] = decoder_targets[
            row, : digits + 1
        ]
    return {
        "program": program_ids,
        "decoder_inputs": decoder_inputs,
        "decoder_targets": decoder_targets,
        "inputs": inputs,
        "targets": stream_targets,
        "target_mask": (stream_targets != 0).astype(np.float32),
    }
