"""The wheel, installed outside the clone, runs the README quickstart.

Builds the wheel from a copy of the files it is made of (so the clone gets
no `build/` or `.egg-info`), installs it, not editable, into a fresh
virtual environment, and runs the README's first Python block there from
an empty folder, with no `PYTHONPATH`: `keras_recurrent` can only come from
the wheel. The fresh environment takes its dependencies (TensorFlow,
Keras, ...) from the environment running the tests, through a folder of
links that leaves out this package's own (editable) install, and pip runs
with `--no-index`: nothing is downloaded, and a dependency the wheel
declares but the environment lacks fails the install.

Run it with (about a minute):

    python -m pytest tests/test_wheel.py -m slow
"""

import os
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

from tests.docs.run_guide import python_blocks

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("setup.py", "pyproject.toml", "README.md", "LICENSE")


def _run(command, **kwargs):
    result = subprocess.run(
        command, capture_output=True, text=True, timeout=900, **kwargs
    )
    assert result.returncode == 0, (
        f"{command} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    )
    return result


def _build_wheel(tmp_path):
    source = tmp_path / "source"
    source.mkdir()
    for name in SOURCES:
        shutil.copy2(ROOT / name, source / name)
    shutil.copytree(
        ROOT / "keras_recurrent",
        source / "keras_recurrent",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    dist = tmp_path / "dist"
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--no-index",
            "--no-build-isolation",
            "--wheel-dir",
            str(dist),
            str(source),
        ]
    )
    (wheel,) = dist.glob("keras_recurrent-*.whl")
    return wheel


def _dependencies_folder(tmp_path):
    """Links to this environment's packages, except keras_recurrent's own."""
    site_packages = Path(sysconfig.get_paths()["purelib"])
    folder = tmp_path / "dependencies"
    folder.mkdir()
    for entry in site_packages.iterdir():
        name = entry.name
        if (
            name.startswith(("keras_recurrent", "__editable__"))
            or name.endswith(".pth")
            or name == "__pycache__"
        ):
            continue
        (folder / name).symlink_to(entry)
    return folder


@pytest.mark.slow
def test_installed_wheel_runs_the_readme_quickstart(tmp_path):
    wheel = _build_wheel(tmp_path)
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        licenses = [
            name
            for name in names
            if ".dist-info/" in name and name.endswith("LICENSE")
        ]
        assert licenses, names
        assert b"Apache License" in archive.read(licenses[0])
        assert b"Version 2.0, January 2004" in archive.read(licenses[0])
        (metadata,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        metadata = archive.read(metadata).decode()
    assert "keras_recurrent/layers/peephole_lstm.py" in names
    assert not [name for name in names if name.startswith("tests/")]
    assert "License-File: LICENSE" in metadata
    # The extras take a range of torch versions, not one pin.
    torch_requirements = [
        line.split(";")[0]
        for line in metadata.splitlines()
        if line.startswith("Requires-Dist: torch")
    ]
    assert "Requires-Dist: torch<3,>=2.4" in torch_requirements, metadata
    assert not [line for line in torch_requirements if "==" in line]

    environment = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(environment)
    python = environment / "bin" / "python"
    purelib = _run(
        [
            str(python),
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['purelib'])",
        ]
    ).stdout.strip()
    dependencies = _dependencies_folder(tmp_path)
    Path(purelib, "dependencies.pth").write_text(f"{dependencies}\n")
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")
    }
    env.update(KERAS_BACKEND="tensorflow", TF_CPP_MIN_LOG_LEVEL="3")
    _run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-index",
            str(wheel),
        ],
        env=env,
    )

    quickstart = python_blocks((ROOT / "README.md").read_text())[0]
    work = tmp_path / "work"
    work.mkdir()
    (work / "quickstart.py").write_text(
        quickstart
        + "\nimport keras_recurrent as _kr\n"
        + "print('imported from', _kr.__file__)\n"
        + "print('reloaded', type(reloaded.layers[1].forward_layer).__name__)\n"
    )
    result = _run([str(python), "quickstart.py"], cwd=work, env=env)
    imported = result.stdout.split("imported from ", 1)[1].splitlines()[0]
    assert Path(imported).is_relative_to(Path(purelib)), imported
    assert "reloaded PeepholeLSTM" in result.stdout
    assert (work / "adding.keras").is_file()
