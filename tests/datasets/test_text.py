"""The line reading of the readers of published files (`_text.py`)."""

import codecs
import gzip

import pytest

from keras_recurrent.datasets._text import MAX_LINE_BYTES
from keras_recurrent.datasets._text import check_file
from keras_recurrent.datasets._text import read_lines


def _lines(tmp_path, data):
    path = tmp_path / "file.txt"
    path.write_bytes(data)
    return list(read_lines(str(path)))


@pytest.mark.parametrize(
    "data",
    [
        b"a b\nc\n\nd\n",
        b"a b\r\nc\r\n\r\nd\r\n",  # CRLF
        b"a b\rc\r\rd\r",  # lone CR, as Python's text mode reads it
        b"a b\nc\n\nd",  # no final newline
        codecs.BOM_UTF8 + b"a b\nc\n\nd\n",  # a UTF-8 byte order mark
    ],
)
def test_line_endings_and_bom(tmp_path, data):
    assert _lines(tmp_path, data) == [(1, "a b"), (2, "c"), (3, ""), (4, "d")]


def test_utf8_is_decoded(tmp_path):
    assert _lines(tmp_path, "é ١\n".encode()) == [(1, "é ١")]


def test_a_latin1_byte_names_the_file_line_and_byte(tmp_path):
    with pytest.raises(ValueError) as info:
        _lines(tmp_path, b"ok\nalso ok\ncaf\xe9 au lait\n")
    message = str(info.value)
    assert f"{tmp_path / 'file.txt'}, line 3:" in message
    assert "byte 0xe9 at offset 3" in message
    assert "not UTF-8" in message


def test_a_nul_byte_names_the_line(tmp_path):
    with pytest.raises(ValueError, match="line 2: a NUL byte at offset 1"):
        _lines(tmp_path, b"ok\n1\x002\n")


def test_gzip_and_utf16_files_are_named(tmp_path):
    with pytest.raises(ValueError, match="is gzip-compressed"):
        _lines(tmp_path, gzip.compress(b"1 2 3\n"))
    with pytest.raises(ValueError, match="is UTF-16 text"):
        _lines(tmp_path, "1 2 3\n".encode("utf-16"))


def test_an_overlong_line_is_refused_without_reading_it_whole(tmp_path):
    lines = _lines(tmp_path, b"x" * MAX_LINE_BYTES + b"\n")
    assert len(lines[0][1]) == MAX_LINE_BYTES
    with pytest.raises(ValueError, match="line 2: the line is longer than"):
        _lines(tmp_path, b"ok\n" + b"x" * (MAX_LINE_BYTES + 1))


def test_a_directory_names_the_argument(tmp_path):
    with pytest.raises(ValueError, match="`path` must be a file, not a dir"):
        check_file("path", tmp_path)
    with pytest.raises(ValueError, match="Received: path=3"):
        check_file("path", 3)
    assert check_file("path", tmp_path / "x.tsv") == str(tmp_path / "x.tsv")
