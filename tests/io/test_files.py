"""npyio._io.files: files on every file system (local, ``ram://``, ``gs://``), and the scheme
check: a scheme with no file system is named when a pipeline is built, and by the CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import tensorflow as tf

import npyio
from npyio._format.files import UnknownSchemeError
from npyio._io.files import exists, gfile

REPO = Path(__file__).resolve().parents[2]


def test_exists_on_both_sides(tmp_path):
    (tmp_path / "a").write_bytes(b"")
    assert exists(str(tmp_path / "a")) and not exists(str(tmp_path / "b"))
    with tf.io.gfile.GFile("ram://files/a", "wb") as f:
        f.write(b"x")
    assert exists("ram://files/a") and not exists("ram://files/b")


@pytest.mark.parametrize("scheme", ["nope", "s3"])
def test_a_scheme_without_a_file_system_is_named_when_built(scheme):
    if scheme in tf.io.gfile.get_registered_schemes():
        pytest.skip(f"{scheme}:// is registered here (tensorflow_io was imported)")
    path = f"{scheme}://bucket/inputs"
    with pytest.raises(UnknownSchemeError, match=f"no file system for {scheme}://") as caught:
        gfile(path)
    if scheme == "s3":
        assert "tensorflow-io" in str(caught.value) and "2.16" in str(caught.value)
    for build in (
        lambda: npyio.dataset(path, f"{scheme}://bucket/labels", batch_size=None),
        lambda: npyio.rows(path, batch_size=None),
        lambda: npyio.dataset_from_directory(path),
    ):
        with pytest.raises(ValueError, match=f"{path}: TensorFlow .* no file system for"):
            build()
    with pytest.raises(ValueError, match="no file system for"):
        npyio.inspect(f"{scheme}://bucket/a.npy")


def test_the_cli_reports_the_scheme_as_a_bad_path():
    run = subprocess.run(
        [sys.executable, "-m", "npyio", "verify", "nope://bucket/x"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert run.returncode == 1, run.stderr
    assert "no file system for nope://" in run.stdout + run.stderr
