"""Argument checks shared by the bAbI graph generator and builder."""

import numbers

from keras_recurrent._checks import check_option
from keras_recurrent.datasets.babi_graph_task import BABI_GRAPH_TASKS


def check_task(task):
    """Returns the `BabiGraphTask` named `task`, or raises ValueError."""
    return BABI_GRAPH_TASKS[
        check_option("task", task, sorted(BABI_GRAPH_TASKS))
    ]


def check_question_type(spec, question_type):
    """Validates `question_type` for the task `spec`; returns an int or None."""
    if question_type is None:
        return None
    if (
        isinstance(question_type, bool)
        or not isinstance(question_type, numbers.Integral)
        or not 0 <= question_type < spec.num_question_types
    ):
        raise ValueError(
            "Argument `question_type` must be None or an integer in "
            f"[0, {spec.num_question_types}) for {spec.name} (question types "
            f"{spec.question_type_names}). "
            f"Received: question_type={question_type!r}"
        )
    return int(question_type)


def check_num_examples(num_examples):
    if (
        isinstance(num_examples, bool)
        or not isinstance(num_examples, numbers.Integral)
        or num_examples < 1
    ):
        raise ValueError(
            "Argument `num_examples` must be a positive integer. "
            f"Received: num_examples={num_examples!r}"
        )
    return int(num_examples)
