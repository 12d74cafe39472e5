"""The argument checks that `keras_recurrent._checks` makes from one factory
(`check_positive_int`, `check_bool`, `check_string`, `check_positive_float`)
and `check_int`, which raises through the same `invalid`: exact messages,
`allow_none` and the type of what they return."""

import re

import numpy as np
import pytest

from keras_recurrent._checks import check_bool
from keras_recurrent._checks import check_int
from keras_recurrent._checks import check_positive_float
from keras_recurrent._checks import check_positive_int
from keras_recurrent._checks import check_string


@pytest.mark.parametrize(
    "check, args, kwargs, message",
    [
        (check_positive_int, ("n", 0), {}, "a positive integer. Received: n=0"),
        (
            check_positive_int,
            ("n", -1),
            {"allow_zero": True},
            "a non-negative integer. Received: n=-1",
        ),
        (
            check_positive_int,
            ("n", 1.0),
            {"allow_none": True, "allow_zero": True},
            "a non-negative integer or None. Received: n=1.0",
        ),
        (check_positive_int, ("n", True), {}, "a positive integer. Received: "),
        (check_bool, ("b", 1), {}, "a boolean. Received: b=1"),
        (
            check_bool,
            ("b", "yes"),
            {"allow_none": True},
            "a boolean or None. Received: b='yes'",
        ),
        (check_string, ("s", ""), {}, "a non-empty string. Received: s=''"),
        (
            check_positive_float,
            ("f", True),
            {"allow_none": True},
            "a positive float or None. Received: f=True",
        ),
        (
            check_positive_float,
            ("f", float("nan")),
            {},
            "a positive float. Received: f=nan",
        ),
        (
            check_int,
            ("i", 5),
            {
                "minimum": 0,
                "maximum": 3,
                "allow_none": True,
                "context": "for x",
            },
            "an integer in [0, 3] or None for x. Received: i=5",
        ),
    ],
)
def test_refusals_name_the_argument_and_the_requirement(
    check, args, kwargs, message
):
    with pytest.raises(ValueError, match=re.escape(message)) as error:
        check(*args, **kwargs)
    assert str(error.value).startswith(f"Argument `{args[0]}` must be ")


def test_accepted_values_come_back_as_plain_python_values():
    assert check_positive_int("n", np.int64(3)) == 3
    assert type(check_positive_int("n", np.int64(3))) is int
    assert check_positive_int("n", 0, allow_zero=True) == 0
    assert check_positive_int("n", None, allow_none=True) is None
    assert type(check_bool("b", np.bool_(True))) is bool
    assert check_string("s", "x") == "x"
    assert type(check_positive_float("f", 2)) is float
