"""npyio._format.files: paths as text, local against other file systems, the scheme check, and
what npyio sets in the environment for TensorFlow's GCS file system."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import tensorflow as tf

import npyio
from npyio._format.files import (
    UnknownSchemeError,
    is_local,
    is_remote,
    join,
    member_name,
    named,
    one_path,
    parent,
    short,
)
from npyio._io.files import exists, gfile

REPO = Path(__file__).resolve().parents[2]


def test_local_remote_and_in_memory_paths():
    assert is_local("/data/x.npy") and is_local("data/x.npy")
    assert not is_local("gs://b/x.npy") and not is_local("ram://x.npy")
    assert is_remote("gs://b/x.npy") and is_remote("s3://b/x.npy")
    assert not is_remote("ram://x.npy") and not is_remote("file:///x.npy")
    assert not is_remote("/data/x.npy")


def test_join_and_parent_on_both_sides():
    assert join("data", "x.npy") == os.path.join("data", "x.npy")
    assert join("gs://b/data", "x.npy") == "gs://b/data/x.npy"
    assert join("gs://b/data/", "x.npy") == "gs://b/data/x.npy"
    for directory in ("data", "/data", "gs://b/data", "ram://a/b"):
        assert parent(join(directory, "x.npy")) == directory
    assert parent("x.npy") == ""
    assert parent("gs://b/x.npy") == "gs://b"


def test_names_and_short_reprs():
    assert member_name("a.npz", "x") == "a.npz[x]"
    assert named(["a", "b"]) == "a, b"
    assert named([str(i) for i in range(12)]) == "0, 1, 2, 3, 4, 5, 6, 7, 8, 9 and 2 more"
    assert short("x" * 200) == repr("x" * 200)[:77] + "..."
    assert one_path(Path("a/b.npy")) == "a/b.npy"


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
        lambda: npyio.dataset(path, f"{scheme}://bucket/labels"),
        lambda: npyio.rows(path),
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


def test_importing_npyio_leaves_the_environment_alone():
    code = "import os; before = dict(os.environ); import npyio; print(dict(os.environ) == before)"
    env = {k: v for k, v in os.environ.items() if not k.startswith("GCS_")}
    env["PYTHONPATH"] = str(REPO)
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert got.returncode == 0, got.stderr
    assert got.stdout.strip() == "True"
