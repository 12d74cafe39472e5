"""Every Python code block of the guides and of the README runs, in order,
one process per page, so that a page that drifts from the code fails the
tests."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.docs.run_guide import python_blocks

ROOT = Path(__file__).resolve().parents[2]
GUIDES = sorted((ROOT / "docs" / "guides").glob("*.md"))
README = ROOT / "README.md"


def test_blocks_are_found():
    text = "a\n```python\nx = 1\n```\n```bash\nls\n```\n```python\ny = 2\n```\n"
    assert python_blocks(text) == ["x = 1\n", "y = 2\n"]


def test_every_guide_has_code():
    assert len(GUIDES) >= 8
    for guide in GUIDES:
        assert python_blocks(guide.read_text()), guide.name


def test_the_readme_has_its_snippets():
    # The quickstart and one snippet per family.
    assert len(python_blocks(README.read_text())) >= 6


@pytest.mark.parametrize("guide", [*GUIDES, README], ids=lambda path: path.stem)
def test_guide_runs(guide, tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "tests.docs.run_guide", str(guide)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={
            **os.environ,
            "KERAS_BACKEND": "tensorflow",
            "PYTHONPATH": str(ROOT),
            "TF_CPP_MIN_LOG_LEVEL": "3",
        },
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-4000:]


@pytest.mark.slow
def test_porting_weights_runs_on_torch(tmp_path):
    # `np.asarray(layer(x))` fails there: the output requires grad.
    pytest.importorskip("torch")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.docs.run_guide",
            str(ROOT / "docs" / "guides" / "porting_weights.md"),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={
            **os.environ,
            "KERAS_BACKEND": "torch",
            "PYTHONPATH": str(ROOT),
            "TF_CPP_MIN_LOG_LEVEL": "3",
        },
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-4000:]


def test_guides_read_tensors_on_every_backend():
    # The fast check of the one above, for every guide: NumPy cannot read
    # a PyTorch output that requires grad.
    for guide in [*GUIDES, README]:
        for block in python_blocks(guide.read_text()):
            assert "np.asarray(layer(" not in block, guide.name
    porting = (ROOT / "docs" / "guides" / "porting_weights.md").read_text()
    assert "np.asarray(" not in porting
