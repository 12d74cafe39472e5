"""Line reading shared by the readers of published text files.

The readers take UTF-8 text, one record per line. `read_lines` yields the
lines decoded and without their line ending, and turns every way a file can
fail to be such text into a `ValueError` that names the file, and the line
where there is one:

- a UTF-8 byte order mark at the start of the file is skipped;
- a byte that is not UTF-8 (e.g. latin-1 `0xe9`), a NUL byte, or a line
  longer than `MAX_LINE_BYTES` is refused with the line number, the byte
  and its offset in the line;
- a gzip-compressed or UTF-16/32 file is refused with what it is;
- a directory where a file is expected is refused naming the argument.

Line endings are `\\n`, `\\r\\n` or `\\r`, with or without one after the
last line.
"""

import codecs
import os

MAX_LINE_BYTES = 8 * 2**20
"""The longest line (in bytes) that the readers accept, 8 MiB.

The published files' lines are at most a few kilobytes (ListOps: under
2 KB; a 10,000-deep expression takes 250 KB); a longer "line" is a file
without line breaks, which would otherwise be read whole into memory.
"""

_GZIP = b"\x1f\x8b"
_UTF16_32 = (
    (codecs.BOM_UTF32_LE, "UTF-32"),
    (codecs.BOM_UTF32_BE, "UTF-32"),
    (codecs.BOM_UTF16_LE, "UTF-16"),
    (codecs.BOM_UTF16_BE, "UTF-16"),
)


def brief(text, limit=200):
    """`repr(text)`, cut to about `limit` characters for an error message."""
    text = repr(text)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text)} characters)"


def line_error(path, number, error, text):
    """The `ValueError` for line `number` (of text `text`) of the file
    `path`, which `error` explains."""
    return ValueError(
        f"{path}, line {number}: {error}. Received: {brief(text)}"
    )


def check_file(name, path):
    """Returns `path` as a string, or raises a `ValueError` naming `name`
    if it is a directory (an absent file gives Python's own
    `FileNotFoundError`, which names it)."""
    try:
        path = os.fspath(path)
    except TypeError:
        raise ValueError(
            f"Argument `{name}` must be a file path (a string or path-like). "
            f"Received: {name}={path!r}"
        ) from None
    if os.path.isdir(path):
        raise ValueError(
            f"Argument `{name}` must be a file, not a directory. "
            f"Received: {name}={path!r}"
        )
    return path


def read_lines(path):
    """Yields `(line number, text)` for every line of the UTF-8 file `path`.

    Numbers start at 1; `text` has no line ending (`\\n` or `\\r\\n`). See
    the module docstring for what is refused.
    """
    with open(path, "rb") as file:
        head = file.read(4)
        if head.startswith(_GZIP):
            raise ValueError(
                f"{path} is gzip-compressed (it starts with the bytes 1f 8b). "
                "Decompress it first, e.g. with `gunzip`."
            )
        for bom, encoding in _UTF16_32:
            if head.startswith(bom):
                raise ValueError(
                    f"{path} is {encoding} text (it starts with a {encoding} "
                    "byte order mark); the reader takes UTF-8. Convert it, "
                    f"e.g. `iconv -f {encoding} -t UTF-8`."
                )
        file.seek(len(codecs.BOM_UTF8) if head[:3] == codecs.BOM_UTF8 else 0)
        number = 0
        while True:
            # The longest line and its `\r\n`, or a byte more.
            line = file.readline(MAX_LINE_BYTES + 2)
            if not line:
                return
            number += 1
            if line.endswith(b"\n"):
                line = line[:-2] if line.endswith(b"\r\n") else line[:-1]
            if len(line) > MAX_LINE_BYTES:
                raise ValueError(
                    f"{path}, line {number}: the line is longer than "
                    f"{MAX_LINE_BYTES} bytes, the most a reader takes "
                    "(`MAX_LINE_BYTES`); is this the right file?"
                )
            if b"\r" not in line:
                yield number, _decoded(path, number, line)
                continue
            # A lone `\r` ends a line too (old Mac files), as in Python's
            # text mode: the lines are numbered as that counts them.
            parts = line.split(b"\r")
            if not parts[-1]:
                parts.pop()
            for part in parts:
                yield number, _decoded(path, number, part)
                number += 1
            number -= 1


def _decoded(path, number, line):
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(
            f"{path}, line {number}: byte 0x{line[error.start]:02x} at "
            f"offset {error.start} of the line is not UTF-8 ({error.reason}). "
            "The file must be UTF-8 text; convert other encodings (e.g. "
            "latin-1: `iconv -f latin1 -t UTF-8`). Received: "
            f"{brief(line)}"
        ) from None
    if "\x00" in text:
        raise ValueError(
            f"{path}, line {number}: a NUL byte at offset "
            f"{line.index(0)} of the line; the file is binary or damaged "
            f"(e.g. truncated by a crash). Received: {brief(line)}"
        )
    return text
