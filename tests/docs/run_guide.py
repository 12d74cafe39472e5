"""Runs the ```python blocks of a Markdown guide in order, in one namespace.

    python -m tests.docs.run_guide docs/guides/trees.md

A block that fails is printed with its number before the traceback.
"""

import re
import sys
from pathlib import Path

_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def python_blocks(text):
    """The ```python blocks of a Markdown text, in order."""
    return _BLOCK.findall(text)


def run(path):
    namespace = {"__name__": "__main__"}
    blocks = python_blocks(Path(path).read_text())
    for number, block in enumerate(blocks, start=1):
        try:
            exec(compile(block, f"{path}, block {number}", "exec"), namespace)
        except BaseException:
            print(f"--- block {number} failed:\n{block}", file=sys.stderr)
            raise


if __name__ == "__main__":
    run(sys.argv[1])
