"""The character vocabulary of the program evaluation task."""

# ASCII order: the newline, the space, the symbols, the digits, the
# separator "@" and the lowercase letters.
_CHARACTERS = "\n ()*+-.0123456789:;<=>@abcdefghijklmnopqrstuvwxyz"

PROGRAM_EVAL_VOCABULARY = {
    character: index + 1 for index, character in enumerate(_CHARACTERS)
}
"""Dict from character to integer id, for `kr.datasets.program_eval`.

Id 0 is padding; ids 1 to 50 are the newline, the space,
`( ) * + - .`, the digits, `: ; < = >`, `@` and the letters `a` to `z`, in
ASCII order. As in the original, `@` separates a program from its target
and `.` ends the target (`kr.datasets.program_eval_arrays` adds both). An
embedding needs `input_dim=51`.
"""
