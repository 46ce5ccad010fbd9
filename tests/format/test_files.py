"""npyio._format.files: paths as text, local against other file systems, and what npyio sets in
the environment for TensorFlow's GCS file system."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from npyio._format.files import (
    is_local,
    is_remote,
    join,
    member_name,
    named,
    one_path,
    parent,
    short,
)

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


def test_importing_npyio_leaves_the_environment_alone():
    code = "import os; before = dict(os.environ); import npyio; print(dict(os.environ) == before)"
    env = {k: v for k, v in os.environ.items() if not k.startswith("GCS_")}
    env["PYTHONPATH"] = str(REPO)
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert got.returncode == 0, got.stderr
    assert got.stdout.strip() == "True"
