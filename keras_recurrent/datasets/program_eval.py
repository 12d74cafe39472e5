"""Learning to Execute: small Python programs and what they print."""

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
