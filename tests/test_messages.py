"""Every error message of the package is written once.

A message written twice drifts apart when one copy is edited, and a check
written by hand beside `keras_recurrent._checks` is a message written twice:
"Argument `dropout` must be a float in [0, 1)" in a layer repeats
`check_rate`'s. The test reads every module's source (nothing is imported)
and takes each string that reads as a sentence: a raised message, a message
constant, a rule table's entry. It replaces what varies between two uses of
one message (f-string fields, argument names in backquotes and before `=`)
by `{}`, cuts the text into sentences (a copied rule often gets its own
"Received: ..." ending), and fails on any sentence that two places write.
"""

import ast
import collections
import pathlib
import re

PACKAGE = pathlib.Path(__file__).parents[1] / "keras_recurrent"

# A message reads as a sentence: at least this many words and characters.
MIN_WORDS = 4
MIN_CHARS = 25


def normalize(text):
    """`text` with what varies between two uses of one message as `{}`:
    argument names in backquotes and the names before `=` (`Received:
    rate=`, `inputs.shape=`)."""
    text = re.sub(r"`[A-Za-z_]\w*`", "`{}`", text)
    return re.sub(r"[\w.{}\[\]']+=\{\}", "{}={}", text)


def sentences(text):
    """The sentences of `text` long enough to be a message of their own,
    less the "Received: ..." that ends most messages."""
    return [
        sentence
        for sentence in re.split(r"(?<=[.:;])\s+(?=[A-Z`])", text)
        if len(sentence) >= MIN_CHARS
        and len(sentence.split()) >= MIN_WORDS
        and not sentence.startswith("Received")
    ]


def _text(node):
    """The text of a string literal, f-string fields as `{}`."""
    if isinstance(node, ast.Constant):
        return node.value
    return "".join(
        part.value if isinstance(part, ast.Constant) else "{}"
        for part in node.values
    )


def _docstrings(tree):
    holders = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    return {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, holders)
        and node.body
        and isinstance(node.body[0], ast.Expr)
    }


def messages(source):
    """`(line, sentence)` for each sentence of each string of `source` that
    is not a docstring, normalized; an f-string counts whole, not its
    parts."""
    tree = ast.parse(source)
    docstrings = _docstrings(tree)
    found = []
    pending = [tree]
    while pending:
        node = pending.pop()
        is_string = isinstance(node, ast.JoinedStr) or (
            isinstance(node, ast.Constant) and isinstance(node.value, str)
        )
        if not is_string:
            pending.extend(ast.iter_child_nodes(node))
            continue
        if id(node) in docstrings:
            continue
        for sentence in sentences(normalize(_text(node))):
            found.append((node.lineno, sentence))
    return sorted(found)


def duplicated_messages(sources):
    """`{sentence: [where, ...]}` for the sentences that more than one
    place of `sources` (`{name: source}`) writes."""
    places = collections.defaultdict(list)
    for name, source in sources.items():
        for line, text in messages(source):
            places[text].append(f"{name}:{line}")
    return {text: where for text, where in places.items() if len(where) > 1}


def test_the_scan_finds_a_message_written_twice():
    one = (
        "def check(rate):\n"
        '    """Argument `rate` must be a float in [0, 1), says the doc."""\n'
        "    raise ValueError(\n"
        '        "Argument `rate` must be a float in [0, 1). "\n'
        '        f"Received: rate={rate!r}"\n'
        "    )\n"
    )
    other = (
        "MESSAGE = (\n"
        "    f'Argument `{name}` must be a float in [0, 1). '\n"
        "    f'Received: {name}={value}, {name}.shape={value.shape}'\n"
        ")\n"
        "SHORT = 'a b c'\n"
        "ALSO_SHORT = 'must be a float in [0, 1)'\n"
    )
    found = duplicated_messages({"one.py": one, "other.py": other})
    assert found == {
        "Argument `{}` must be a float in [0, 1).": ["one.py:4", "other.py:2"]
    }
    assert duplicated_messages({"one.py": one}) == {}
    # Twice in one module is twice too.
    assert list(duplicated_messages({"one.py": one + one}).values()) == [
        ["one.py:4", "one.py:10"]
    ]
    # A rule copied into a table, with its own ending: found; a message that
    # differs in more than an argument's name (here a type's): not.
    rules = (
        "RULES = [(bad, '`children` must be -1 at padding nodes.')]\n"
        "TYPE = 'Argument `data` must be a `tf.data.Dataset`.'\n"
    )
    eager = (
        "def problem(node, data):\n"
        "    if node:\n"
        "        return (\n"
        "            '`children` must be -1 at padding nodes. '\n"
        "            f'Received: children[{node}]={node}'\n"
        "        )\n"
        "    return 'Argument `model` must be a `keras.Model`.'\n"
    )
    assert duplicated_messages({"rules.py": rules, "eager.py": eager}) == {
        "`{}` must be -1 at padding nodes.": ["rules.py:1", "eager.py:4"]
    }


def test_no_error_message_is_defined_twice():
    sources = {
        str(path.relative_to(PACKAGE.parent)): path.read_text()
        for path in sorted(PACKAGE.rglob("*.py"))
    }
    assert len(sources) > 50
    duplicates = duplicated_messages(sources)
    report = "\n".join(
        f"{text!r}\n    " + "\n    ".join(where)
        for text, where in duplicates.items()
    )
    assert not duplicates, (
        "These messages are written more than once; write each once (in "
        f"`keras_recurrent._checks` for argument checks):\n{report}"
    )
