import contextlib
import io
import re

import numpy as np
import pytest

import keras_recurrent as kr

_OPERATIONS = kr.datasets.PROGRAM_EVAL_OPERATIONS


def _printed(program):
    """What Python prints when it runs `program`, without the newline."""
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        exec(program, {})  # noqa: S102
    text = output.getvalue()
    assert text.endswith("\n") and text.count("\n") == 1
    return text[:-1]


def _literals(program):
    return [int(number) for number in re.findall(r"\d+", program)]


@pytest.mark.parametrize(
    "length, nesting, strategy",
    [(1, 1, "baseline"), (2, 2, "baseline"), (3, 3, "baseline"), (4, 3, "mix")],
)
def test_targets_are_what_python_prints(length, nesting, strategy):
    data = kr.datasets.program_eval(
        300, length, nesting, strategy=strategy, seed=length
    )
    assert len(data["programs"]) == len(data["targets"]) == 300
    for program, target in zip(data["programs"], data["targets"]):
        assert program.split("\n")[-1].startswith("print(")
        assert _printed(program) == target
    # Subtractions and if-else comparisons give negative results too.
    if nesting > 1:
        assert any(target.startswith("-") for target in data["targets"])


def test_every_operation_appears_in_its_form():
    data = kr.datasets.program_eval(600, 2, 2, seed=1)
    seen = {operation for ops in data["operations"] for operation in ops}
    assert seen == set(_OPERATIONS)
    # Each operation alone, composed 3 times, leaves its own trace.
    patterns = {
        "add_or_subtract": r"\(\w+[+-]\w+\)",
        "small_multiply": r"\*",
        "assign": r"^[a-j]=.*;$",
        "small_loop": r"^for x in range\(\d+\):[a-j][+-]=",
        "if_else": r" if .*[<>].* else ",
    }
    for operation, pattern in patterns.items():
        alone = kr.datasets.program_eval(50, 2, 3, operations=(operation,))
        assert all(ops == (operation,) * 3 for ops in alone["operations"])
        for program, target in zip(alone["programs"], alone["targets"]):
            assert re.search(pattern, program, re.MULTILINE), program
            assert _printed(program) == target
    identity = kr.datasets.program_eval(20, 2, 3, operations=("identity",))
    for program, target in zip(identity["programs"], identity["targets"]):
        assert program == f"print({target})"


def test_nesting_is_the_number_of_operations():
    data = kr.datasets.program_eval(200, 2, 3, seed=2)
    assert {len(ops) for ops in data["operations"]} == {3}
    # Every loop adds two lines and every assignment one, each with a new
    # variable from a to j.
    loops = kr.datasets.program_eval(
        30, 1, 10, operations=("small_loop", "assign"), seed=3
    )
    for program, ops, target in zip(
        loops["programs"], loops["operations"], loops["targets"]
    ):
        lines = program.split("\n")
        assert len(lines) == 1 + sum(
            2 if op == "small_loop" else 1 for op in ops
        )
        assigned = [line[0] for line in lines if re.match(r"^[a-j]=", line)]
        assert len(assigned) == 10 and set(assigned) == set("abcdefghij")
        assert _printed(program) == target
    mixed = kr.datasets.program_eval(300, 2, 3, strategy="mix", seed=4)
    assert {len(ops) for ops in mixed["operations"]} == {1, 2, 3}


@pytest.mark.parametrize("length", [1, 2, 4])
def test_length_is_the_number_of_digits(length):
    # Additions and subtractions only: every literal is a fresh number,
    # uniform in [1, 10**length] as in the original.
    data = kr.datasets.program_eval(
        300, length, 2, operations=("add_or_subtract",), seed=length
    )
    numbers = [n for p in data["programs"] for n in _literals(p)]
    assert len(numbers) == 3 * 300
    assert min(numbers) >= 1 and max(numbers) <= 10**length
    assert max(numbers) > 0.9 * 10**length
    assert np.mean([len(str(n)) == length for n in numbers]) > 0.85
    # Small multiplications: one number and a factor in [1, 4 * length]
    # per operation, so the product of the literals is the target and at
    # least `nesting` of them are at most 4 * length.
    products = kr.datasets.program_eval(
        200, length, 3, operations=("small_multiply",), seed=length
    )
    for program, target in zip(products["programs"], products["targets"]):
        numbers = sorted(_literals(program))
        assert len(numbers) == 4 and max(numbers) <= 10**length
        assert numbers[2] <= 4 * length
        assert np.prod(numbers, dtype=object) == int(target)
    # Loop counts are small too.
    loops = kr.datasets.program_eval(
        100, length, 1, operations=("small_loop",), seed=length
    )
    counts = [
        int(m)
        for p in loops["programs"]
        for m in re.findall(r"range\((\d+)", p)
    ]
    assert len(counts) == 100 and max(counts) <= 4 * length
    # Under "mix", numbers have 1 to `length` digits.
    mixed = kr.datasets.program_eval(
        300, length, 2, operations=("add_or_subtract",), strategy="mix"
    )
    digits = {len(str(n)) for p in mixed["programs"] for n in _literals(p)}
    assert set(range(1, length + 1)) <= digits <= set(range(1, length + 2))


def test_deterministic_by_seed():
    first = kr.datasets.program_eval(50, 2, 2, seed=7)
    second = kr.datasets.program_eval(50, 2, 2, seed=7)
    other = kr.datasets.program_eval(50, 2, 2, seed=8)
    assert first == second
    assert first["programs"] != other["programs"]
    tupled = kr.datasets.program_eval(50, 2, 2, seed=(7, 1))
    assert tupled == kr.datasets.program_eval(50, 2, 2, seed=(7, 1))
    assert tupled["programs"] != first["programs"]


def test_splits_share_no_program():
    splits = {
        split: kr.datasets.program_eval(300, 1, 1, split=split, seed=0)
        for split in kr.datasets.PROGRAM_EVAL_SPLITS
    }
    texts = {}
    for split, data in splits.items():
        for program, target in zip(data["programs"], data["targets"]):
            assert kr.datasets.program_split(program, target) == split
        texts[split] = set(data["programs"])
    assert not texts["train"] & texts["validation"]
    assert not texts["train"] & texts["test"]
    assert not texts["validation"] & texts["test"]
    # Unfiltered draws land in all three splits, about a third each.
    data = kr.datasets.program_eval(900, 3, 3, seed=1)
    counts = [
        sum(
            kr.datasets.program_split(p, t) == split
            for p, t in zip(data["programs"], data["targets"])
        )
        for split in kr.datasets.PROGRAM_EVAL_SPLITS
    ]
    assert min(counts) > 240


def test_vocabulary_covers_the_programs():
    vocabulary = kr.datasets.PROGRAM_EVAL_VOCABULARY
    assert sorted(vocabulary.values()) == list(range(1, len(vocabulary) + 1))
    assert len(vocabulary) + 1 == 51
    data = kr.datasets.program_eval(300, 3, 3, seed=5)
    characters = set("".join(data["programs"]) + "".join(data["targets"]))
    assert characters <= set(vocabulary) - {"@", "."}


def _ids(text):
    return [kr.datasets.PROGRAM_EVAL_VOCABULARY[c] for c in text]


def test_arrays_layouts():
    programs = ["print((1+2))", "a=5;\nfor x in range(2):a-=7\nprint(a)"]
    targets = ["3", "-9"]
    assert [_printed(p) for p in programs] == targets
    arrays = kr.datasets.program_eval_arrays(programs, targets)
    longest = len(programs[1])
    assert arrays["program"].shape == (2, longest)
    assert arrays["decoder_inputs"].shape == (2, 3)
    assert arrays["decoder_targets"].shape == (2, 3)
    assert arrays["inputs"].shape == (2, longest + 3)
    assert arrays["targets"].shape == (2, longest + 3)
    for key, value in arrays.items():
        assert value.dtype == (np.float32 if key == "target_mask" else np.int32)
    for row, (program, target) in enumerate(zip(programs, targets)):
        width = arrays["inputs"].shape[1]
        program_row = _ids(program) + [0] * (longest - len(program))
        np.testing.assert_array_equal(arrays["program"][row], program_row)
        decoder_in = _ids("@" + target)
        decoder_out = _ids(target + ".")
        np.testing.assert_array_equal(
            arrays["decoder_inputs"][row],
            decoder_in + [0] * (3 - len(decoder_in)),
        )
        np.testing.assert_array_equal(
            arrays["decoder_targets"][row],
            decoder_out + [0] * (3 - len(decoder_out)),
        )
        # One stream: the program, "@", the target; the label at step t is
        # the stream's character t + 1 wherever that is a target character
        # or the final ".".
        stream = program + "@" + target + "."
        inputs = _ids(stream[:-1])
        np.testing.assert_array_equal(
            arrays["inputs"][row], inputs + [0] * (width - len(inputs))
        )
        labels = [
            kr.datasets.PROGRAM_EVAL_VOCABULARY[stream[t + 1]]
            if t >= len(program)
            else 0
            for t in range(len(stream) - 1)
        ]
        labels += [0] * (width - len(labels))
        np.testing.assert_array_equal(arrays["targets"][row], labels)
        np.testing.assert_array_equal(
            arrays["target_mask"][row], np.array(labels) != 0
        )
        assert arrays["target_mask"][row].sum() == len(target) + 1
    padded = kr.datasets.program_eval_arrays(
        programs, targets, program_length=60, target_length=5
    )
    assert padded["inputs"].shape == (2, 66)
    assert padded["decoder_targets"].shape == (2, 6)
    np.testing.assert_array_equal(
        padded["targets"][:, : arrays["targets"].shape[1]], arrays["targets"]
    )


def test_arrays_of_generated_programs_decode_back():
    data = kr.datasets.program_eval(40, 2, 3, seed=6)
    arrays = kr.datasets.program_eval_arrays(data["programs"], data["targets"])
    characters = {v: k for k, v in kr.datasets.PROGRAM_EVAL_VOCABULARY.items()}
    for row, target in enumerate(data["targets"]):
        labels = arrays["targets"][row][arrays["target_mask"][row] > 0]
        assert "".join(characters[i] for i in labels) == target + "."


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"num_examples": 0}, "num_examples=0"),
        ({"length": 0}, "length=0"),
        ({"length": 16}, "length=16"),
        ({"length": 2.0}, "length=2.0"),
        ({"nesting": 0}, "nesting=0"),
        ({"nesting": 11}, "nesting=11"),
        ({"operations": ()}, r"operations=\(\)"),
        ({"operations": ("divide",)}, "operations=\\('divide',\\)"),
        ({"operations": "if_else"}, "operations='if_else'"),
        ({"strategy": "blend"}, "strategy='blend'"),
        ({"split": "dev"}, "split='dev'"),
        ({"seed": -1}, "seed=-1"),
    ],
)
def test_bad_arguments_raise(kwargs, message):
    kwargs = {"num_examples": 5, "length": 2, "nesting": 2, **kwargs}
    with pytest.raises(ValueError, match=message):
        kr.datasets.program_eval(**kwargs)


@pytest.mark.parametrize(
    "programs, targets, kwargs, message",
    [
        (["print(1)"], ["1", "2"], {}, "len\\(targets\\)=2"),
        ([], [], {}, "len\\(programs\\)=0"),
        (["print(1/2)"], ["0.5"], {}, "'/'"),
        (["print(1)@"], ["1"], {}, "'@'"),
        (["print(1)"], ["1"], {"program_length": 3}, "program_length=3"),
        (["print(10)"], ["10"], {"target_length": 1}, "target_length=1"),
        (["print(1)"], ["1"], {"target_length": 0}, "target_length=0"),
    ],
)
def test_bad_arrays_arguments_raise(programs, targets, kwargs, message):
    with pytest.raises(ValueError, match=message):
        kr.datasets.program_eval_arrays(programs, targets, **kwargs)
