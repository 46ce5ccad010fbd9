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


def test_the_drivers_window_loop_reads_each_files_own_window(tmp_path):
    """``driver windows`` (bench/cases.py's C loop): each file's header parsed, a window of
    SIZES placed in it, the files of a line alike; a file the core doubts is not counted ok."""
    driver = library.build_driver()
    lines = []
    for i, depth in enumerate((9, 12, 17)):  # per-case shapes on the cropped axes
        image = np.arange(depth * 10 * 3, dtype="float32").reshape(depth, 10, 3)
        np.save(tmp_path / f"x{i}.npy", image)
        np.save(tmp_path / f"y{i}.npy", (image[..., 0] > 50).astype("uint8"))
        lines.append(f"{tmp_path / f'x{i}.npy'}\t{tmp_path / f'y{i}.npy'}\n")
    (tmp_path / "list").write_text("".join(lines))

    def run(*args: str) -> tuple[int, dict[str, str]]:
        done = subprocess.run([driver, "windows", *args], capture_output=True, text=True)
        words = done.stdout.split()
        return done.returncode, dict(zip(words[::2], words[1::2]))

    code, fields = run("2", "4,5", str(tmp_path / "list"))
    assert code == 0 and fields["windows"] == "3" and fields["ok"] == "6", fields
    # each window's rows are runs of the file, one head read each (the header in its page)
    assert 6 * 4 * 5 * (3 * 4 + 1) <= int(fields["bytes_asked"]) < 6 * 4096 + 6 * 4 * 10 * 12
    np.save(tmp_path / "x1.npy", np.zeros((12, 10), "float32"))  # another rank: doubted
    assert run("1", "4,5", str(tmp_path / "list"))[1]["ok"] == "5"
    for sizes in ("4,x", "", "4,-1", "4,,5"):
        assert run("1", sizes, str(tmp_path / "list"))[0] == 2, sizes


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
