#!/usr/bin/env python3
"""Newcomers' entry point: `python3 dev.py demo` and `python3 dev.py test`.

Creates `.venv/` on first use (and again whenever setup.py changes), installs
the package in editable mode with its test, docs and export extras, then runs
the demo, the test suite (ruff, then pytest) or the documentation build
(`python3 dev.py docs`: mkdocs, strict, into `site/`) inside that
environment. Needs only Python 3.10+.
"""

import hashlib
import os
import pathlib
import subprocess
import sys
import venv

ROOT = pathlib.Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / "python"
STAMP = VENV / ".installed-setup-hash"
TORCH_VERSION = "2.13.0"


def _setup_hash():
    text = (
        (ROOT / "setup.py").read_bytes()
        + (ROOT / "pyproject.toml").read_bytes()
        + TORCH_VERSION.encode()
    )
    return hashlib.sha256(text).hexdigest()


def ensure_env():
    if not PYTHON.exists():
        print(f"Creating virtual environment in {VENV} ...", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    if not STAMP.exists() or STAMP.read_text() != _setup_hash():
        print("Installing keras_recurrent and its dependencies ...", flush=True)
        subprocess.run(
            [
                str(PYTHON),
                "-m",
                "pip",
                "install",
                "--quiet",
                "--upgrade",
                "pip",
            ],
            check=True,
        )
        subprocess.run(
            [
                str(PYTHON),
                "-m",
                "pip",
                "install",
                "--quiet",
                "-e",
                ".[test,plot,jax,torch,docs,export]",
                # The [torch] extra takes any torch 2 from 2.4; the tests
                # run on this one. Pinned here, pip keeps an installed
                # 2.13.0 (the CPU wheel) instead of fetching the newest
                # release, a CUDA build of several GB.
                f"torch=={TORCH_VERSION}",
            ],
            check=True,
            cwd=ROOT,
        )
        STAMP.write_text(_setup_hash())


def run(argv):
    env = dict(os.environ)
    env.setdefault("KERAS_BACKEND", "tensorflow")
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    env.setdefault("NO_MKDOCS_2_WARNING", "1")
    return subprocess.run(argv, cwd=ROOT, env=env).returncode


def main(args):
    usage = "usage: python3 dev.py {demo|test|docs} [extra arguments]"
    if not args or args[0] not in ("demo", "test", "docs"):
        print(usage, file=sys.stderr)
        return 2
    ensure_env()
    command, extra = args[0], args[1:]
    if command == "demo":
        return run([str(PYTHON), "examples/demo.py", *extra])
    if command == "docs":
        return run(
            [str(PYTHON), "-m", "mkdocs", "build", "--strict", "-d", "site"]
            + extra
        )
    lint = run([str(PYTHON), "-m", "ruff", "check", "."])
    if lint:
        return lint
    # pytest, two workers: the default run stays under ~15 minutes on 2 cores.
    return run([str(PYTHON), "-m", "pytest", "-n", "2", *extra])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
