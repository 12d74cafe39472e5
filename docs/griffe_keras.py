"""Reads Keras-style docstrings for the API reference.

Keras and keras-hub docstrings hold three sections that Google style does
not know, written flush with their title: `Call arguments:` (a list like
`Args:`), `Example:` (doctest lines and text) and `Reference:` (a list).
This griffe extension rewrites them into Markdown before the Google parser
reads the docstring: doctest lines become Python code blocks, the call
arguments a list, and the section titles bold lines, so that the rest
(`Args:`, `Returns:`, `Raises:`) is parsed as usual.
"""

import re

import griffe

_TITLES = ("Call arguments", "Example", "Examples", "Reference", "References")
_GOOGLE = re.compile(
    r"^(Args|Arguments|Returns|Yields|Raises|Attributes|Note|Notes|Warning)"
    r":\s*$"
)
_ITEM = re.compile(r"^(\w+)( \([^)]*\))?: ?(.*)$")


def _indent(line):
    return len(line) - len(line.lstrip())


def _is_title(line):
    stripped = line.strip()
    return stripped.rstrip(":") in _TITLES and stripped.endswith(":")


def _section_end(lines, start):
    """The index of the first line after the section body at `start`."""
    index = start
    while index < len(lines):
        line = lines[index]
        if _is_title(line) or _GOOGLE.match(line.strip()):
            if _indent(line) == 0:
                return index
        index += 1
    return index


def _code(block):
    """Doctest lines and their output as a fenced Python block."""
    return ["```python", *block, "```"]


def _example(body):
    out, block = [], []
    for line in body:
        text = line.strip("\n")
        if text.lstrip().startswith((">>>", "...")) or (block and text.strip()):
            block.append(text.strip())
            continue
        if block:
            out += [*_code(block), ""]
            block = []
        out.append(text.strip())
    if block:
        out += _code(block)
    return out


def _call_arguments(body):
    out, base = [], None
    for line in body:
        if not line.strip():
            continue
        indent = _indent(line)
        base = indent if base is None else base
        match = _ITEM.match(line.strip())
        if indent == base and match:
            name, _, text = match.groups()
            out.append(f"- `{name}`: {text}")
        elif out:
            out[-1] += " " + line.strip()
        else:
            out.append(line.strip())
    return out


def _references(body):
    out = []
    for line in body:
        text = line.strip()
        if text.startswith("- ") or not out:
            out.append(text)
        elif text:
            out[-1] += ("" if out[-1].endswith("(") else " ") + text
    return out


def _bullet_continuations(lines):
    """Indents a list item's continuation lines by 4, not 2, past its dash
    (Google style reads 2 as a confusing indentation)."""
    out, dash = [], None
    for line in lines:
        if line.lstrip().startswith("- "):
            dash = _indent(line)
        elif dash is not None and line.strip() and _indent(line) == dash + 2:
            line = "  " + line
        elif dash is not None and (not line.strip() or _indent(line) <= dash):
            dash = None
        out.append(line)
    return out


def keras_to_markdown(text):
    """Rewrites the Keras-only sections of a docstring into Markdown."""
    lines = _bullet_continuations(text.split("\n"))
    out, index = [], 0
    while index < len(lines):
        line = lines[index]
        if not (_is_title(line) and _indent(line) == 0):
            out.append(line)
            index += 1
            continue
        title = line.strip().rstrip(":")
        end = _section_end(lines, index + 1)
        body = lines[index + 1 : end]
        if title.startswith("Call"):
            rendered = _call_arguments(body)
        elif title.startswith("Example"):
            rendered = _example(body)
        else:
            rendered = _references(body)
        out += [f"**{title}:**", "", *rendered, ""]
        index = end
    return "\n".join(out)


class KerasDocstrings(griffe.Extension):
    """Applies `keras_to_markdown` to every docstring."""

    def on_object(self, *, obj, **kwargs):
        if obj.docstring is not None:
            obj.docstring.value = keras_to_markdown(obj.docstring.value)
