"""`npyio._native.library`: the cache key, builds under a lock that no killed builder can
leave behind, the child-process probe and its marker, and the fallback when no compiler is
there (one line on stderr, once; an error with ``NPYIO_NATIVE=1``; silence with ``0``)."""

from __future__ import annotations

import dataclasses
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from npyio._native import library
from npyio.errors import BackendUnavailableError
from tests._npy_testing import run_python

REPO = Path(__file__).resolve().parents[2]
TOOLS = library.Toolchain(
    "2.21.0", "/tf", ("-I/tf",), ("-L/tf",), "/usr/bin/g++", "/usr/bin/g++-12 100 1"
)


@pytest.mark.parametrize(
    "change",
    [
        {"tf_version": "2.16.2"},
        {"tf_path": "/other/tf"},
        {"compile_flags": ("-I/tf", "-D_GLIBCXX_USE_CXX11_ABI=0")},
        {"link_flags": ("-L/other",)},
        {"compiler": "/usr/bin/clang++"},
        {"compiler_id": "/usr/bin/g++-12 100 2"},
    ],
    ids=lambda c: next(iter(c)),
)
def test_the_cache_key_differs_when_any_input_differs(change):
    key = library.cache_key(TOOLS, "src", "0.1.0")
    assert library.cache_key(dataclasses.replace(TOOLS, **change), "src", "0.1.0") != key
    assert library.cache_key(TOOLS, "src2", "0.1.0") != key
    assert library.cache_key(TOOLS, "src", "0.1.1") != key
    assert library.cache_key(TOOLS, "src", "0.1.0") == key


def test_the_mode_comes_from_the_environment(monkeypatch):
    for value, mode in (("", "auto"), ("0", "off"), ("1", "required")):
        monkeypatch.setenv("NPYIO_NATIVE", value)
        assert library.mode() == mode
    monkeypatch.setenv("NPYIO_NATIVE", "yes")
    with pytest.raises(ValueError, match="NPYIO_NATIVE must be 0, 1 or unset, got 'yes'"):
        library.mode()


def _npyio_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("npyio:")]


def test_two_processes_building_at_once_make_one_library(tmp_path):
    code = """
        import os
        from npyio._native import library
        path = library.build()
        print(path, os.stat(path).st_ino)
    """
    env = {"NPYIO_CACHE": str(tmp_path)}
    both = [
        subprocess.Popen(
            [sys.executable, "-c", textwrap.dedent(code)],
            env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONPATH": str(REPO), **env},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outs = [p.communicate(timeout=600) for p in both]
    assert [p.returncode for p in both] == [0, 0], [o[1][-2000:] for o in outs]
    (path, inode), (path2, inode2) = (o[0].split() for o in outs)
    # one library, never replaced: the second process found the first one's
    assert path == path2 and inode == inode2 == str(os.stat(path).st_ino)
    assert sorted(os.listdir(Path(path).parent)) == ["lock", "npyio_native.so", "probed"]


def test_a_killed_lock_holder_does_not_hang_the_next_build(tmp_path, monkeypatch, native_ops):
    monkeypatch.setenv("NPYIO_CACHE", str(tmp_path))
    directory = Path(library.status().library or "").parent
    directory.mkdir(parents=True)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, sys, time\n"
            "f = open(sys.argv[1], 'w'); fcntl.flock(f, fcntl.LOCK_EX)\n"
            "print('held', flush=True); time.sleep(600)",
            str(directory / "lock"),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        monkeypatch.setattr(library, "LOCK_TIMEOUT_S", 0.5)
        with pytest.raises(BackendUnavailableError, match=r"another process held .*lock"):
            library.build()
    finally:
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait()
        if holder.stdout is not None:
            holder.stdout.close()
    monkeypatch.setattr(library, "LOCK_TIMEOUT_S", 600.0)
    # The session's library, not yet probed here: the build still takes the lock (to probe it)
    # but skips the compile, which test_two_processes_building_at_once_... covers
    from tests.native.conftest import CACHE

    built = CACHE / directory.relative_to(tmp_path) / library.LIBRARY  # the same key's
    shutil.copy(built, directory / library.LIBRARY)
    path = library.build()
    assert library.status().available and path == library.status().library


def _fake_compiler(tmp_path: Path, writes: bytes | None) -> str:
    """A ``$CXX`` that answers ``--version``, counts its builds in ``calls``, and fails (with
    ``error: boom``) or writes ``writes`` as the library."""
    script = tmp_path / "cc.py"
    script.write_text(
        textwrap.dedent(f"""
        import sys
        if "--version" in sys.argv:
            print("fake-cc 1.0"); sys.exit(0)
        open({str(tmp_path / "calls")!r}, "a").write("x")
        if {writes!r} is None:
            print("cc.cc:1: error: boom", file=sys.stderr); sys.exit(1)
        open(sys.argv[sys.argv.index("-o") + 1], "wb").write({writes!r})
    """)
    )
    return f"{sys.executable} {script}"


def test_a_failed_build_says_why_and_is_not_retried_by_readers(tmp_path, monkeypatch):
    monkeypatch.setenv("NPYIO_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("CXX", _fake_compiler(tmp_path, None))
    with pytest.raises(
        BackendUnavailableError, match=r"the build failed \(exit 1\): .*error: boom"
    ):
        library.build()
    with pytest.raises(BackendUnavailableError, match="error: boom"):
        library.build(retry=False)  # what ops() does: the failure is read back, not redone
    assert (tmp_path / "calls").read_text() == "x"
    status = library.status()
    assert not status.available and not status.built and "error: boom" in (status.reason or "")


def test_a_library_that_does_not_load_is_refused_in_a_child_process(tmp_path, monkeypatch):
    monkeypatch.setenv("NPYIO_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("CXX", _fake_compiler(tmp_path, b"not a shared library"))
    with pytest.raises(BackendUnavailableError, match="the library built, but it does not load"):
        library.build()
    assert not library.status().built  # removed: no later process loads it


def test_without_a_compiler_ops_falls_back_and_says_why_once(tmp_path):
    code = """
        import contextlib, io, os
        from npyio._native import library
        from npyio.errors import BackendUnavailableError
        os.environ["NPYIO_NATIVE"] = "0"
        quiet = io.StringIO()
        with contextlib.redirect_stderr(quiet):
            assert library.ops() is None
        assert quiet.getvalue() == "", quiet.getvalue()
        os.environ["NPYIO_NATIVE"] = "1"
        try:
            library.ops()
            raise SystemExit("NPYIO_NATIVE=1 did not raise")
        except BackendUnavailableError as e:
            print("required:", e)
        del os.environ["NPYIO_NATIVE"]
        print("status:", library.status().reason)
        assert library.ops() is None and library.ops() is None
    """
    empty = tmp_path / "bin"
    empty.mkdir()
    env = {"PATH": str(empty), "CXX": "", "NPYIO_CACHE": str(tmp_path / "cache")}
    env.pop("NPYIO_NATIVE", None)
    done = run_python(code, {**env, "NPYIO_NATIVE": ""})
    assert done.returncode == 0, done.stderr[-3000:]
    why = "no C++ compiler on PATH: install g++ and run `npyio native --build`"
    assert (
        f"required: npyio's native reader (NPYIO_NATIVE=1) is not available: {why}" in done.stdout
    )
    assert f"status: {why}" in done.stdout
    assert _npyio_lines(done.stderr) == [
        f"npyio: native reader off ({why}); reading through the graph path "
        "(NPYIO_NATIVE=0 silences this)"
    ]
    assert not (tmp_path / "cache").exists()


def test_preload_never_builds_and_loads_a_built_library(tmp_path, native_ops):
    code = """
        from tensorflow.python.framework import op_def_registry
        from npyio._native import library
        library.preload()
        print(op_def_registry.get("NpyioReadFiles") is not None)
    """
    from tests.native.conftest import CACHE

    envs = [
        {"NPYIO_CACHE": str(tmp_path), "NPYIO_NATIVE": ""},
        {"NPYIO_CACHE": str(CACHE), "NPYIO_NATIVE": ""},
        {"NPYIO_CACHE": str(CACHE), "NPYIO_NATIVE": "0"},
    ]
    # The three children share nothing they write (preload never builds): they run at once
    with ThreadPoolExecutor(len(envs)) as pool:
        fresh, built, off = pool.map(lambda env: run_python(code, env), envs)
    assert (fresh.returncode, fresh.stdout.strip()) == (0, "False"), fresh.stderr[-2000:]
    assert _npyio_lines(fresh.stderr) == [] and list(tmp_path.iterdir()) == []
    assert (built.returncode, built.stdout.strip()) == (0, "True"), built.stderr[-2000:]
    assert (off.returncode, off.stdout.strip()) == (0, "False"), off.stderr[-2000:]


def test_the_compiler_is_known_by_its_files_and_a_changed_one_changes_the_key(tmp_path):
    script = tmp_path / "cc.py"
    script.write_text("pass\n")
    first = library._compiler_id(f"{sys.executable} {script} -O2")
    assert first.count(";") == 1 and str(script) in first  # python and the script; not -O2
    script.write_text("pass  # a newer compiler\n")
    assert library._compiler_id(f"{sys.executable} {script} -O2") != first


def test_import_after_tensorflow_runs_no_process(tmp_path, native_ops):
    """``import npyio`` after TensorFlow loads the built op (`library.preload`) and finds its
    cache key without running the compiler, or any other process."""
    code = """
        import subprocess
        import tensorflow as tf
        from tensorflow.python.framework import op_def_registry
        started = []
        real = subprocess.Popen.__init__
        def record(self, args, *a, **k):
            started.append(args)
            real(self, args, *a, **k)
        subprocess.Popen.__init__ = record
        import npyio
        print(started, op_def_registry.get("NpyioReadFiles") is not None)
    """
    from tests.native.conftest import CACHE

    done = run_python(code, {"NPYIO_CACHE": str(CACHE), "NPYIO_NATIVE": ""})
    assert (done.returncode, done.stdout.strip()) == (0, "[] True"), done.stderr[-2000:]


def _hanging_compiler(tmp_path: Path) -> str:
    """A ``$CXX`` that writes part of its output, starts a child that sleeps (as ``g++``
    starts ``cc1plus``), records both process ids in ``pids``, and waits for it."""
    script = tmp_path / "hang.py"
    script.write_text(
        textwrap.dedent(f"""
        import os, subprocess, sys
        open(sys.argv[sys.argv.index("-o") + 1], "wb").write(b"half a library")
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        open({str(tmp_path / "pids")!r}, "w").write(f"{{os.getpid()}} {{child.pid}}")
        child.wait()
    """)
    )
    return f"{sys.executable} {script}"


def _gone(pid: int, within_s: float = 10.0) -> bool:
    """Whether process ``pid`` ends within ``within_s``: a SIGKILL is delivered when the
    process next runs, which on a loaded machine (CI's) can be after ``killpg`` has returned."""
    deadline = time.monotonic() + within_s
    while not _gone_now(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _gone_now(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    # a zombie (killed, not yet reaped by its parent) is gone too
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:  # reaped since
        return True


def test_a_hanging_compiler_is_killed_and_leaves_no_lock_or_partial_library(tmp_path, monkeypatch):
    import fcntl

    monkeypatch.setenv("NPYIO_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("CXX", _hanging_compiler(tmp_path))
    monkeypatch.setenv(library.COMPILE_TIMEOUT_ENV, "2")
    with pytest.raises(
        BackendUnavailableError,
        match=r"the compiler did not finish in 2 s and was killed \(NPYIO_COMPILE_TIMEOUT_S",
    ):
        library.build()
    for pid in map(int, (tmp_path / "pids").read_text().split()):
        assert _gone(pid), pid  # the compiler and the child it started
    directory = Path(library.status().library or "").parent
    assert sorted(os.listdir(directory)) == ["failed", "lock"]  # no library, no temporary
    assert "did not finish" in (directory / "failed").read_text()
    with open(directory / "lock", "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)  # free: no BlockingIOError


def test_a_bad_compile_timeout_is_refused_by_name(tmp_path, monkeypatch):
    monkeypatch.setenv("NPYIO_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv(library.COMPILE_TIMEOUT_ENV, "soon")
    with pytest.raises(
        BackendUnavailableError, match="NPYIO_COMPILE_TIMEOUT_S must be a number of seconds"
    ):
        library.build()


def test_a_dead_builders_temporary_output_is_swept(tmp_path, monkeypatch):
    """A builder killed mid-compile leaves ``.NAME.PID.tmp``; the next build removes it."""
    monkeypatch.setenv("NPYIO_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("CXX", _fake_compiler(tmp_path, None))
    directory = Path(library.status().library or "").parent
    directory.mkdir(parents=True)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = directory / f".{library.LIBRARY}.{dead.pid}.tmp"
    stale.write_bytes(b"half")
    with pytest.raises(BackendUnavailableError, match="error: boom"):
        library.build()
    assert not stale.exists()
