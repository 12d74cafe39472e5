"""Every command-line option of every example says what it does."""

import ast

import pytest

from tests.examples import EXAMPLES

SCRIPTS = sorted(p for p in EXAMPLES.glob("*.py") if not p.name.startswith("_"))


def options_without_help(source):
    """The options of `add_argument` calls in `source` with no help text."""
    missing = []
    for node in ast.walk(ast.parse(source)):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "add_argument"
        ):
            continue
        names = [
            arg.value
            for arg in node.args
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str)
        ]
        help_text = next(
            (kw.value for kw in node.keywords if kw.arg == "help"), None
        )
        empty = isinstance(help_text, ast.Constant) and not str(
            help_text.value
        ).strip(" .")
        if help_text is None or empty:
            missing.append(names[0] if names else f"line {node.lineno}")
    return missing


def test_options_without_help_are_found():
    source = (
        "parser.add_argument('--a', type=int)\n"
        "group.add_argument('--b', help='')\n"
        "parser.add_argument('--c', help='the c')\n"
        "parser.add_argument('--d', help=f'{x} ds')\n"
    )
    assert options_without_help(source) == ["--a", "--b"]


def test_there_are_examples_with_options():
    with_options = [
        path for path in SCRIPTS if "add_argument(" in path.read_text()
    ]
    assert len(with_options) >= 9


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda path: path.name)
def test_every_option_has_help(path):
    assert options_without_help(path.read_text()) == []
