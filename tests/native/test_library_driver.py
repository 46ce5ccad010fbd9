"""`npyio._native.library.build_driver`: the core's bench driver (``npyio bench``'s bare read
loop), built on demand into the op's cache directory, under its key, once."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from npyio._native import library
from npyio.errors import BackendUnavailableError


def test_the_driver_is_built_once_beside_the_library_and_reads_files(tmp_path, monkeypatch):
    monkeypatch.setenv("NPYIO_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("CXX", raising=False)
    driver = Path(library.build_driver())
    assert driver.name == library.DRIVER and driver.parent.name == library.status().key
    built = driver.stat().st_mtime_ns
    assert library.build_driver() == str(driver) and driver.stat().st_mtime_ns == built
    for i in range(3):
        np.save(tmp_path / f"{i}.npy", np.full((4, 4), i, "float32"))
    (tmp_path / "list").write_text("".join(f"{tmp_path / f'{i}.npy'}\n" for i in range(3)))
    done = subprocess.run(
        [driver, "bench", "2", str(tmp_path / "list")], capture_output=True, text=True
    )
    assert done.returncode == 0 and "files 3 ok 3 " in done.stdout


def test_a_driver_that_cannot_be_built_says_why(tmp_path, monkeypatch):
    monkeypatch.setenv("NPYIO_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("CXX", str(tmp_path / "no-such-compiler"))
    with pytest.raises(BackendUnavailableError, match=r"bench driver: \$CXX names .*not an exec"):
        library.build_driver()


def test_a_change_to_the_drivers_source_changes_the_key(tmp_path, monkeypatch):
    shutil.copytree(library.SOURCE_DIR, tmp_path / "src")
    monkeypatch.setattr(library, "SOURCE_DIR", tmp_path / "src")
    before = library.sources_hash()
    with open(tmp_path / "src" / "driver.cc", "a") as f:
        f.write("// changed\n")
    assert library.sources_hash() != before
