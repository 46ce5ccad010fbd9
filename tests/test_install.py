"""README.md's install line works: ``pip install .`` from a clone, into a fresh venv.

Offline, and without downloading TensorFlow again: the venv is made without pip, pip (this
environment's) installs the clone into it with ``--no-deps --no-build-isolation --no-index``,
and the dependencies (TensorFlow, numpy, setuptools >= 77 for the build) are this
environment's, made visible to the venv by a ``.pth`` file that names their directories (never
this source tree). Then, from a directory outside the clone, the README's checks run with the
venv's own ``python`` and ``npyio`` script.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import npyio

ROOT = Path(__file__).resolve().parents[1]


def _install_section() -> str:
    text = (ROOT / "README.md").read_text()
    return text.split("\n## Install\n", 1)[1].split("\n## ", 1)[0]


def _commands(section: str) -> list[str]:
    """The lines of the section's ```sh blocks, without their comments."""
    blocks = re.findall(r"```sh\n(.*?)```", section, re.DOTALL)
    lines = [line.split("  #", 1)[0].strip() for block in blocks for line in block.splitlines()]
    return [line for line in lines if line]


def _dependency_paths() -> list[str]:
    """Where this interpreter finds its packages, but not this source tree: what the fresh
    venv may import besides what is installed into it. (make test's venv lives in the
    clone, so only the tree's root is left out: the venv's site-packages stay, and the
    editable install's .pth there is not run from a .pth-listed directory.)"""
    paths = []
    for entry in sys.path:
        path = Path(entry or ".").resolve()
        if path.is_dir() and path != ROOT:
            paths.append(str(path))
    return paths


def _clone(to: Path) -> Path:
    """The files a clone holds that the build reads (the sources, pyproject, README)."""
    to.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, to / name)
    shutil.copytree(ROOT / "npyio", to / "npyio", ignore=shutil.ignore_patterns("__pycache__"))
    return to


def _venv(path: Path) -> Path:
    """A fresh venv without pip, that sees this environment's packages after its own."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True)
    python = path / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    Path(purelib, "_npyio_test_dependencies.pth").write_text("\n".join(_dependency_paths()))
    return python


@pytest.mark.slow
def test_the_readme_install_line_installs_npyio_into_a_fresh_venv(tmp_path):
    commands = _commands(_install_section())
    assert "pip install ." in commands, commands
    checks = [c for c in commands if c.startswith(("python -c", "npyio "))]
    assert len(checks) == 3, checks

    setuptools = importlib.metadata.version("setuptools")
    assert int(setuptools.split(".")[0]) >= 77, (
        f"building npyio offline needs setuptools >= 77 (the test extra), found {setuptools}: "
        "pip install -e '.[test]'"
    )
    clone, outside = _clone(tmp_path / "clone"), tmp_path / "elsewhere"
    outside.mkdir()
    python = _venv(tmp_path / "venv")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"
    # the README's line, run by pip for the venv, offline: the dependencies are there already
    install = ["-m", "pip", "--python", str(python), "install", "."]
    offline = ["--no-deps", "--no-build-isolation", "--no-index", "--quiet"]
    done = subprocess.run(
        [sys.executable, *install, *offline], cwd=clone, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr

    script = python.parent / "npyio"
    outputs = []
    for check in checks:
        argv = shlex.split(check)
        argv[0] = str(python if argv[0] == "python" else script)
        done = subprocess.run(argv, cwd=outside, env=env, capture_output=True, text=True)
        assert done.returncode == 0, (check, done.stderr)
        outputs.append(done.stdout)
    assert outputs[0].strip() == npyio.__version__
    assert outputs[1].strip() == "tf.Tensor([1. 1. 1.], shape=(3,), dtype=float64)"
    assert "verify" in outputs[2]
    # from the venv, not from this tree (found, not imported: no TensorFlow again)
    where = subprocess.run(
        [str(python), "-c", "import importlib.util as u; print(u.find_spec('npyio').origin)"],
        cwd=outside,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert Path(where).is_relative_to(tmp_path / "venv"), where


def test_the_oldest_supported_tensorflow_is_the_one_make_test_runs():
    """pyproject's lower bound on TensorFlow is the minor version the second venv of
    ``make test`` pins, so the oldest supported version is the one tested."""
    root = Path(__file__).resolve().parent.parent
    floor = re.search(r'"tensorflow>=(\d+\.\d+)"', (root / "pyproject.toml").read_text())
    pinned = re.search(r'"tensorflow-cpu==(\d+\.\d+)\.\d+"', (root / "Makefile").read_text())
    assert floor and pinned, "pyproject's tensorflow bound or Makefile's TFIO_PINS moved"
    assert floor.group(1) == pinned.group(1)
