"""Learning to Execute: small Python programs and what they print.

The generator, the character vocabulary, and the programs and targets as
padded arrays.
"""

import zlib

import numpy as np

from keras_recurrent._checks import check_option
from keras_recurrent.datasets._checks import check_int
from keras_recurrent.datasets._checks import check_seed
from keras_recurrent.datasets._uniforms import Uniforms

PROGRAM_EVAL_OPERATIONS = (
    "add_or_subtract",
    "small_multiply",
    "identity",
    "assign",
    "small_loop",
    "if_else",
)
PROGRAM_EVAL_SPLITS = ("train", "validation", "test")
_STRATEGIES = ("baseline", "mix")
_MAX_LENGTH = 15
# Each operation takes at most one fresh variable from `a` to `j`.
_MAX_NESTING = 10
_VARIABLES = "abcdefghij"

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

_SEPARATOR = "@"
_END = "."


class _Composer:
    """Writes one program, as the original's `compose(hardness)`.

    Operations communicate through a stack that holds at most one
    `(expression, value)` pair: an operation's first operand is the previous
    operation's result (when there is one), the others are fresh numbers,
    and the result is pushed back.
    """

    def __init__(self, draws, length, mix):
        self._draws = draws
        self._length = length
        self._mix = mix
        self._stack = []
        self._variables = None
        self.code = []

    def _hardness(self):
        # The original's `hardness()`: the target length, or under "mix" a
        # length drawn anew at every call.
        if self._mix:
            return self._draws.integer(1, self._length)
        return self._length

    def _coin(self):
        return self._draws.next() < 0.5

    def _operand(self):
        if self._stack:
            return self._stack.pop()
        value = self._draws.integer(1, 10 ** self._hardness())
        return str(value), value

    def _operands(self, count):
        # The previous result goes to a uniformly random position, as the
        # original's `torch.randperm` in `get_operands`.
        operands = [self._operand() for _ in range(count)]
        for index in range(count - 1, 0, -1):
            other = self._draws.integer(0, index)
            operands[index], operands[other] = operands[other], operands[index]
        return operands

    def _variable(self):
        if self._variables is None:
            letters = list(_VARIABLES)
            for index in range(len(letters) - 1, 0, -1):
                other = self._draws.integer(0, index)
                letters[index], letters[other] = letters[other], letters[index]
            self._variables = letters
        return self._variables.pop()

    def add_or_subtract(self):
        (a, a_value), (b, b_value) = self._operands(2)
        if self._coin():
            return f"({a}+{b})", a_value + b_value
        return f"({a}-{b})", a_value - b_value

    def small_multiply(self):
        expression, value = self._operand()
        factor = self._draws.integer(1, 4 * self._hardness())
        if self._coin():
            return f"({expression}*{factor})", value * factor
        return f"({factor}*{expression})", value * factor

    def identity(self):
        return self._operand()

    def assign(self):
        variable = self._variable()
        (a, a_value), (b, b_value) = self._operands(2)
        self.code.append(f"{variable}={a};")
        if self._coin():
            return f"({variable}+{b})", a_value + b_value
        return f"({variable}-{b})", a_value - b_value

    def small_loop(self):
        variable = self._variable()
        (a, a_value), (b, b_value) = self._operands(2)
        loops = self._draws.integer(1, 4 * self._hardness())
        operator, sign = ("+", 1) if self._coin() else ("-", -1)
        self.code.append(f"{variable}={a}")
        self.code.append(f"for x in range({loops}):{variable}{operator}={b}")
        return variable, a_value + sign * loops * b_value

    def if_else(self):
        (a, a_value), (b, b_value), (c, c_value), (d, d_value) = self._operands(
            4
        )
        if self._coin():
            comparison, holds = ">", a_value > b_value
        else:
            comparison, holds = "<", a_value < b_value
        return (
            f"({c} if {a}{comparison}{b} else {d})",
            c_value if holds else d_value,
        )

    def run(self, operation):
        self._stack.append(getattr(self, operation)())

    def result(self):
        return self._stack.pop()


def program_split(program, target):
    """The split (`"train"`, `"validation"`, `"test"`) a program belongs to.

    As in the original, which keeps a program in split `k` when the hash of
    its text is `k` modulo 3, so the splits never share a program; here the
    hash is CRC-32 of `program + "@" + target`.

    Args:
        program: String, the program.
        target: String, what it prints.

    Returns:
        One of `kr.datasets.PROGRAM_EVAL_SPLITS`.
    """
    text = f"{program}@{target}".encode()
    return PROGRAM_EVAL_SPLITS[zlib.crc32(text) % 3]


def check_program_arguments(length, nesting, operations, strategy):
    """Checks the program arguments shared with `ProgramEvalConfig`.

    Returns:
        `(length, nesting, operations)` as ints and a tuple.
    """
    length = check_int("length", length, 1, _MAX_LENGTH)
    nesting = check_int("nesting", nesting, 1, _MAX_NESTING)
    if (
        not isinstance(operations, (tuple, list))
        or not operations
        or any(
            not isinstance(operation, str)
            or operation not in PROGRAM_EVAL_OPERATIONS
            for operation in operations
        )
    ):
        raise ValueError(
            "Argument `operations` must be a non-empty tuple of names from "
            f"{PROGRAM_EVAL_OPERATIONS}. Received: operations={operations!r}"
        )
    strategy = check_option("strategy", strategy, _STRATEGIES)
    return length, nesting, tuple(operations), strategy


def program_eval(
    num_examples,
    length,
    nesting,
    *,
    operations=PROGRAM_EVAL_OPERATIONS,
    strategy="baseline",
    split=None,
    seed=0,
):
    """Generates the "Learning to Execute" programs (Zaremba & Sutskever).

    A program composes `nesting` operations, each drawn uniformly from
    `operations`, and prints the result; the target is what Python prints.
    Each operation takes the previous one's result as one operand (at a
    random position) and fresh numbers, uniform in `[1, 10**length]`, as
    the others:

    - `"add_or_subtract"`: `(a+b)` or `(a-b)`;
    - `"small_multiply"`: `(a*k)` or `(k*a)`, `k` uniform in
      `[1, 4 * length]`;
    - `"identity"`: `a` itself (the original's `equality_opr`);
    - `"assign"`: the line `v=a;`, then `(v+b)` or `(v-b)`;
    - `"small_loop"`: the lines `v=a` and `for x in range(k):v+=b` (or
      `-=`), `k` uniform in `[1, 4 * length]`, then `v`;
    - `"if_else"`: `(c if a>b else d)` or `(c if a<b else d)`.

    Variables are distinct letters from `a` to `j`. For example, with
    `length=2, nesting=3`, `add_or_subtract`, `small_multiply` and
    `small_loop` compose to

    ```
    b=70
    for x in range(1):b-=(2*(10+59))
    print(b)
    ```

    which prints `-68`. This is the original generator (`compose` and the
    `*_opr` functions of `data.lua` and `utils/operations.lua`) with
    NumPy's random source, so the programs follow the same distribution
    but differ from the original's. The original's lines are joined by
    `#`; here by newlines, so that `exec` runs a program as it is. As in the
    original, the split of a program is fixed by a hash of its text
    (`kr.datasets.program_split`), so train, validation and test sets
    drawn with `split=` never share a program.

    Args:
        num_examples: Positive integer, the number of programs.
        length: Integer in `[1, 15]`, the number of digits of the numbers
            (the paper's "length").
        nesting: Integer in `[1, 10]`, the number of operations composed
            (the paper's "nesting").
        operations: Non-empty tuple of names from
            `kr.datasets.PROGRAM_EVAL_OPERATIONS`, the operations to draw
            from. Defaults to all six, the original's set.
        strategy: `"baseline"` (every program has this `length` and
            `nesting`) or `"mix"` (the paper's mixed strategy: a program's
            nesting is uniform in `[1, nesting]`, and every number's length,
            including the bounds `4 * length` of the small factors and loop
            counts, uniform in `[1, length]`). Defaults to `"baseline"`.
        split: `None` (any program), or `"train"`, `"validation"` or
            `"test"`: only programs of that split. Defaults to `None`.
        seed: Non-negative integer, or a tuple of them, for
            `numpy.random.default_rng`. The same arguments always give the
            same programs. Defaults to `0`.

    Returns:
        A dict: `"programs"`, a list of program strings (lines joined by
        `"\\n"`, the last one `print(...)`); `"targets"`, a list of the
        strings they print (without the newline); `"operations"`, a list of
        tuples, the operations composed in each program, in order.

    Raises:
        ValueError: On bad arguments.

    Example:

    >>> data = kr.datasets.program_eval(2, length=2, nesting=2, seed=0)
    >>> print(data["programs"][0])
    a=86;
    print((2*(a-1)))
    >>> data["targets"][0]
    '170'
    >>> arrays = kr.datasets.program_eval_arrays(
    ...     data["programs"], data["targets"])

    Reference:
        - [Zaremba & Sutskever, 2014. Learning to Execute](
          https://arxiv.org/abs/1410.4615)
    """
    num_examples = check_int("num_examples", num_examples, 1)
    length, nesting, operations, strategy = check_program_arguments(
        length, nesting, operations, strategy
    )
    split = check_option("split", split, PROGRAM_EVAL_SPLITS, allow_none=True)
    draws = Uniforms(np.random.default_rng(check_seed(seed)))
    mix = strategy == "mix"

    programs, targets, composed = [], [], []
    attempts, max_attempts = 0, 1000 * num_examples + 100_000
    while len(programs) < num_examples:
        attempts += 1
        if attempts > max_attempts:
            raise ValueError(
                f"Drew only {len(programs)} of num_examples={num_examples} "
                f"programs of split={split!r} in {max_attempts} draws: "
                f"the arguments (length={length}, nesting={nesting}, "
                f"operations={operations}) admit too few."
            )
        composer = _Composer(draws, length, mix)
        steps = draws.integer(1, nesting) if mix else nesting
        chosen = tuple(
            operations[draws.integer(0, len(operations) - 1)]
            for _ in range(steps)
        )
        for operation in chosen:
            composer.run(operation)
        expression, value = composer.result()
        program = "\n".join([*composer.code, f"print({expression})"])
        target = str(value)
        if split is not None and program_split(program, target) != split:
            continue
        programs.append(program)
        targets.append(target)
        composed.append(chosen)
    return {"programs": programs, "targets": targets, "operations": composed}


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
