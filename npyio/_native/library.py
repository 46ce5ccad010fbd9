"""Builds, caches and loads npyio's native reader: the ops ``NpyioReadFiles``,
``NpyioReadFile``, ``NpyioReadWindows``, ``NpyioReadRanges``, ``NpyioReadRows`` and
``NpyioRemoteStats`` of ``src/``.

The library is compiled against the TensorFlow that is installed, with its own
``tf.sysconfig`` flags, at first use or ahead of time (`build`), into a cache directory per
`cache_key` (a library built for one TensorFlow does not load on another). Many processes may
start at once: the one that builds holds an ``flock`` (which dies with it, so a killed builder
leaves no stale lock), compiles into a temporary file and moves it into place; the others wait
for it, up to `LOCK_TIMEOUT_S`, and readers of a finished library take no lock. A fresh library
is loaded first in a child process (`probe`), so that a bad build cannot crash the caller's;
a marker beside it records that it loaded, and later processes skip the probe. The compiler runs
under a time limit (`COMPILE_TIMEOUT_S`, ``NPYIO_COMPILE_TIMEOUT_S``): one that hangs is killed,
its partial output removed, and the lock released, rather than holding every waiter for
`LOCK_TIMEOUT_S`.

Finding the cache key runs no process: the compiler is known by its resolved path, size and
modification time (`Toolchain.compiler_id`), so that ``import npyio`` after TensorFlow (which
loads a built library, `preload`) starts no subprocess. Whether the compiler runs at all is
found at the first build.

The same cache directory holds the core's bench driver (`build_driver`: ``src/driver.cc``'s
``bench`` mode, the kernel's own read loop outside TensorFlow, for ``npyio bench``), built on
demand under the same lock and keyed with the op: one cache, one key.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from npyio._io.cache import cache_root, locked
from npyio.errors import BackendUnavailableError

__all__ = [
    "COMPILE_TIMEOUT_ENV",
    "COMPILE_TIMEOUT_S",
    "LIBRARY",
    "LOCK_TIMEOUT_S",
    "MODE_ENV",
    "REMOTE_STATS",
    "NativeStatus",
    "Toolchain",
    "build",
    "build_driver",
    "cache_key",
    "cache_root",
    "headers_read",
    "mode",
    "ops",
    "preload",
    "probe",
    "read_files",
    "read_ranges",
    "read_rows",
    "read_windows",
    "remote_stats",
    "sources_hash",
    "status",
    "toolchain",
    "windows_advised",
]

#: ``NPYIO_NATIVE``: unset (or empty) = use the native reader where it builds; ``0`` = never;
#: ``1`` = required (an error if it cannot be built or loaded).
MODE_ENV = "NPYIO_NATIVE"
_MODES = {"": "auto", "0": "off", "1": "required"}
SOURCE_DIR = Path(__file__).with_name("src")
#: What the library is compiled from (the header is hashed too: it changes what compiles).
SOURCES = (
    "npy_header.h",
    "npy_header.cc",
    "npy_read.h",
    "npy_read.cc",
    "budget.h",
    "read_pool.h",
    "read_pool.cc",
    "remote.h",
    "remote.cc",
    "op.cc",
    "batch_dataset.cc",
)
#: The bench driver's sources beside the core (TensorFlow-free; hashed into the key too).
DRIVER_SOURCES = ("driver.cc",)
LIBRARY = "npyio_native.so"
#: The TensorFlow-free core the driver links (the op's sources but the op and remote reads).
_CORE = ("npy_read.cc", "npy_header.cc", "read_pool.cc")
#: The core's bench driver, built beside the library (`build_driver`).
DRIVER = "npyio_driver"
#: Written beside the library once it loaded in a child process.
PROBED = "probed"
#: Written instead when the build or the probe failed, with why, so that later processes of
#: the same key do not compile again in vain (`build` itself retries).
FAILED = "failed"
#: How long a process waits for another one's build (a cold build takes seconds, not minutes).
LOCK_TIMEOUT_S = 600.0
#: How long one compiler run may take before it is killed (a cold build of the op takes under a
#: minute on two cores); `COMPILE_TIMEOUT_ENV` overrides it, in seconds.
COMPILE_TIMEOUT_S = 300.0
COMPILE_TIMEOUT_ENV = "NPYIO_COMPILE_TIMEOUT_S"
_EXTRA_FLAGS = ("-shared", "-fPIC", "-O2", "-DNDEBUG")
#: The driver's flags: the core optimized as in the op, and threads (it links no TensorFlow).
_DRIVER_FLAGS = ("-std=c++17", "-O2", "-DNDEBUG", "-pthread")
_HOW = "run `npyio native --build` to see the whole error"


@dataclass(frozen=True)
class NativeStatus:
    """Where the native reader stands in this process, found without building it.

    ``available`` is whether `ops` would load it without compiling (built, loaded once in a
    child process, and not off); ``reason`` says why not; ``built`` is whether the library
    exists in the cache; ``library`` is its path and ``key`` its cache key (None and "" where
    the toolchain could not be found)."""

    mode: str
    available: bool
    library: str | None
    reason: str | None
    key: str
    built: bool


@dataclass(frozen=True)
class Toolchain:
    """What a library is built with: TensorFlow (version, install path, flags) and the
    compiler (its command, and ``compiler_id``: its executable's resolved path, size and
    modification time, which change when it is replaced or upgraded)."""

    tf_version: str
    tf_path: str
    compile_flags: tuple[str, ...]
    link_flags: tuple[str, ...]
    compiler: str
    compiler_id: str

    def command(self, out: str) -> list[str]:
        """The compiler's command line that builds the library into ``out``."""
        sources = [str(SOURCE_DIR / s) for s in SOURCES if s.endswith(".cc")]
        mac = ["-undefined", "dynamic_lookup"] if sys.platform == "darwin" else []
        flags = [*self.compile_flags, *self.link_flags, *_EXTRA_FLAGS, *mac]
        return [*shlex.split(self.compiler), *sources, "-o", out, *flags]

    def driver_command(self, out: str) -> list[str]:
        """The compiler's command line that builds the core's bench driver into ``out``."""
        sources = [str(SOURCE_DIR / s) for s in (*DRIVER_SOURCES, *_CORE)]
        return [*shlex.split(self.compiler), *sources, "-o", out, *_DRIVER_FLAGS]


class _Unavailable(Exception):
    """The native reader cannot be had here; the message says why (and how to get it)."""


def mode() -> str:
    """``"auto"``, ``"off"`` or ``"required"``, from `MODE_ENV`.

    Raises:
        ValueError: for another value, naming the variable.
    """
    value = os.environ.get(MODE_ENV, "").strip()
    if value not in _MODES:
        raise ValueError(f"{MODE_ENV} must be 0, 1 or unset, got {value!r}")
    return _MODES[value]


def sources_hash() -> str:
    """The SHA-256 of the sources (the op's and the driver's), each with its name."""
    h = hashlib.sha256()
    for name in (*SOURCES, *DRIVER_SOURCES):
        h.update(name.encode() + b"\0" + (SOURCE_DIR / name).read_bytes() + b"\0")
    return h.hexdigest()


def cache_key(tools: Toolchain, sources: str, version: str) -> str:
    """The cache directory's name for a library built with ``tools`` from ``sources`` (their
    hash) for npyio ``version``: a library is never reused when any of them differs.

    Example:
        >>> t = Toolchain("2.21.0", "/tf", ("-I/tf",), ("-L/tf",), "g++", "/usr/bin/g++-12 1 2")
        >>> cache_key(t, "abc", "0.1.0") != cache_key(t, "abd", "0.1.0")
        True
    """
    fields = [tools.tf_version, tools.tf_path, tools.compile_flags, tools.link_flags]
    fields += [tools.compiler, tools.compiler_id, sources, version, _EXTRA_FLAGS]
    fields += [_DRIVER_FLAGS]
    digest = hashlib.sha256(json.dumps(fields).encode()).hexdigest()[:20]
    return f"tf{tools.tf_version}-{digest}"


def _compiler_id(compiler: str) -> str:
    """The compiler's files as "resolved path, size, mtime in ns", found by stat alone: the
    command's first word, and each later word that names an executable on ``PATH`` or an
    existing file (``ccache g++``: g++ too; ``python cc.py``: the script)."""
    words = shlex.split(compiler)
    ids = []
    for i, word in enumerate(words):
        found = shutil.which(word) if "/" not in word else word
        if i > 0 and (found is None or not os.path.isfile(found)):
            continue  # a flag or an argument, not a file
        real = os.path.realpath(found or word)
        try:
            st = os.stat(real)
        except OSError as e:
            raise _Unavailable(f"the C++ compiler {compiler!r} cannot be found: {e}") from None
        ids.append(f"{real} {st.st_size} {st.st_mtime_ns}")
    return "; ".join(ids)


def _find_compiler() -> str:
    cxx = os.environ.get("CXX", "").strip()
    if cxx:
        first = shlex.split(cxx)[0]
        if shutil.which(first) is None:
            raise _Unavailable(f"$CXX names {first!r}, which is not an executable")
        return cxx
    for name in ("c++", "g++"):
        found = shutil.which(name)
        if found is not None:
            return found
    raise _Unavailable("no C++ compiler on PATH: install g++ and run `npyio native --build`")


def toolchain() -> Toolchain:
    """The installed TensorFlow's flags and the compiler (``$CXX``, else ``c++`` or ``g++`` on
    ``PATH``). Imports TensorFlow; runs no process (the compiler is found on ``PATH``, not run).

    Raises:
        BackendUnavailableError: on Windows, or with no compiler, saying which.
    """
    try:
        return _toolchain()
    except _Unavailable as e:
        raise BackendUnavailableError(str(e)) from None


def _toolchain() -> Toolchain:
    if sys.platform == "win32":
        raise _Unavailable("the native reader is not built on Windows")
    compiler = _find_compiler()
    compiler_id = _compiler_id(compiler)
    import tensorflow as tf

    return Toolchain(
        tf_version=tf.__version__,
        tf_path=os.path.dirname(tf.__file__),
        compile_flags=tuple(tf.sysconfig.get_compile_flags()),
        link_flags=tuple(tf.sysconfig.get_link_flags()),
        compiler=compiler,
        compiler_id=compiler_id,
    )


def _npyio_version() -> str:
    try:
        return metadata.version("npyio")
    except metadata.PackageNotFoundError:
        return "unknown"


def _key_dir(tools: Toolchain) -> Path:
    return cache_root() / "native" / cache_key(tools, sources_hash(), _npyio_version())


# --- building ---------------------------------------------------------------------------------
@contextlib.contextmanager
def _locked(path: Path, timeout_s: float) -> Iterator[None]:
    """`npyio._io.cache.locked`, its timeout an unavailable library."""
    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(locked(path, timeout_s))
        except TimeoutError as e:
            raise _Unavailable(str(e)) from None
        yield


def _last_lines(text: str, n: int = 3) -> str:
    lines = [line for line in text.strip().splitlines() if "error" in line.lower()] or [
        line for line in text.strip().splitlines() if line.strip()
    ]
    return " / ".join(lines[-n:]) if lines else "no output"


def _compile_timeout_s() -> float:
    """`COMPILE_TIMEOUT_ENV` if set (seconds, above 0), else `COMPILE_TIMEOUT_S`.

    Raises:
        _Unavailable: for a value that is not a positive number, naming the variable.
    """
    value = os.environ.get(COMPILE_TIMEOUT_ENV, "").strip()
    if not value:
        return COMPILE_TIMEOUT_S
    try:
        seconds = float(value)
    except ValueError:
        seconds = 0.0
    if not seconds > 0:
        raise _Unavailable(
            f"{COMPILE_TIMEOUT_ENV} must be a number of seconds above 0, got {value!r}"
        )
    return seconds


def _run_compiler(argv: list[str], timeout_s: float) -> subprocess.CompletedProcess[str]:
    """Runs the compiler in a process group of its own and, after ``timeout_s``, kills the
    whole group (``g++`` and the ``cc1plus`` and ``as`` it started): a compiler that hangs
    cannot hold the lock."""
    try:
        proc = subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
        )
    except OSError as e:
        raise _Unavailable(f"the C++ compiler {argv[0]!r} does not run: {e}") from None
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def _compile(command: Callable[[str], list[str]], out: Path) -> None:
    """Runs ``command(tmp)`` (a compiler's command line writing ``tmp``) for at most
    `_compile_timeout_s`, then moves ``tmp`` to ``out``: ``out`` is whole or absent, whether
    the compiler failed, hung and was killed, or this process was interrupted."""
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    timeout_s = _compile_timeout_s()
    try:
        try:
            done = _run_compiler(command(str(tmp)), timeout_s)
        except subprocess.TimeoutExpired:
            raise _Unavailable(
                f"the compiler did not finish in {timeout_s:g} s and was killed "
                f"({COMPILE_TIMEOUT_ENV} sets the limit)"
            ) from None
        if done.returncode != 0:
            raise _Unavailable(
                f"the build failed (exit {done.returncode}): {_last_lines(done.stderr)}"
            )
        os.replace(tmp, out)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def probe(library: str) -> str | None:
    """Loads ``library`` in a child process; None if it loaded, else why not."""
    code = "import sys, tensorflow as tf; tf.load_op_library(sys.argv[1])"
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}
    try:
        done = subprocess.run(
            [sys.executable, "-c", code, library],
            capture_output=True,
            text=True,
            env=env,
            timeout=600,
        )
    except subprocess.TimeoutExpired:
        return "loading it in a child process did not finish in 600 s"
    if done.returncode == 0:
        return None
    return f"it does not load (exit {done.returncode}): {_last_lines(done.stderr, 1)}"


def _write(path: Path, text: str) -> None:
    """Writes ``path`` whole or not at all."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def build(retry: bool = True) -> str:
    """Builds the library for the installed TensorFlow if the cache has none, loads it once in
    a child process, and returns its path. Never loads it into this process.

    With ``retry=False``, a build or probe that failed before for this key is not tried again
    (what `ops` does, so that each process does not compile in vain).

    Raises:
        BackendUnavailableError: with why it cannot be built or loaded.
    """
    try:
        return str(_build(_toolchain(), retry))
    except _Unavailable as e:
        raise BackendUnavailableError(f"npyio's native reader: {e}") from None


def _build(tools: Toolchain, retry: bool) -> Path:
    directory = _key_dir(tools)
    lib, probed, failed = directory / LIBRARY, directory / PROBED, directory / FAILED
    if lib.is_file() and probed.is_file():
        return lib  # finished: no lock
    if failed.is_file() and not retry:
        raise _Unavailable(f"{failed.read_text().strip()} ({_HOW})")
    _make(directory)
    with _locked(directory / "lock", LOCK_TIMEOUT_S):
        if lib.is_file() and probed.is_file():
            return lib  # another process built it while this one waited
        _sweep(directory)
        try:
            if not lib.is_file():
                _compile(tools.command, lib)
            why = probe(str(lib))
            if why is not None:
                lib.unlink()
                raise _Unavailable(f"the library built, but {why}")
        except _Unavailable as e:
            _write(failed, str(e))
            raise
        with contextlib.suppress(FileNotFoundError):
            failed.unlink()
        _write(probed, f"{tools.tf_version}\n")
    return lib


def _sweep(directory: Path) -> None:
    """Removes the temporary outputs (``.NAME.PID.tmp``) of builders that died before they
    could, so that a killed build leaves nothing behind for long. Called under the lock."""
    for tmp in directory.glob(".*.tmp"):
        pid = tmp.name.rsplit(".", 2)[-2]
        if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process holds that id
    return True


def _make(directory: Path) -> None:
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise _Unavailable(f"cannot create the cache directory {directory}: {e}") from None


def build_driver() -> str:
    """Builds the core's bench driver (``src/driver.cc``, TensorFlow-free) into the cache
    directory of the installed TensorFlow's key if it is not there, and returns its path.
    ``DRIVER bench THREADS LIST`` reads the files listed in LIST, all of one header, with
    THREADS threads through the op's own read (``npy_read.cc``), and prints its rate.

    Raises:
        BackendUnavailableError: with why it cannot be built (no compiler, Windows, a failed
            build).
    """
    try:
        tools = _toolchain()
        directory = _key_dir(tools)
        exe = directory / DRIVER
        if not exe.is_file():
            _make(directory)
            with _locked(directory / "lock", LOCK_TIMEOUT_S):
                if not exe.is_file():  # or another process built it while this one waited
                    _sweep(directory)
                    _compile(tools.driver_command, exe)
        return str(exe)
    except _Unavailable as e:
        raise BackendUnavailableError(f"npyio's native bench driver: {e}") from None


# --- loading ----------------------------------------------------------------------------------
class _State:
    """This process's one load: the op module, or the reason it is not to be had."""

    module: Any = None
    library: str | None = None  # the path the module was loaded from (its key's)
    failure: str | None = None
    told = False


def _load(library: str) -> Any:
    """The op module of ``library``, loaded into this process at most once (TensorFlow refuses
    to register an op twice)."""
    if _State.module is None:
        import tensorflow as tf

        _State.module = tf.load_op_library(library)
        _State.library = library
    return _State.module


def ops() -> Any:
    """The loaded op module, building the library first if needed; None where the native
    reader is off or cannot be had (auto mode: after one line on stderr, once per process,
    that says why and how to get it).

    Raises:
        BackendUnavailableError: with ``NPYIO_NATIVE=1``, where it cannot be built or loaded.
        ValueError: ``NPYIO_NATIVE`` is neither 0, 1 nor unset.
    """
    wanted = mode()
    if wanted == "off":
        return None
    if _State.module is None and _State.failure is None:
        try:
            _load(build(retry=wanted == "required"))
        except (BackendUnavailableError, OSError, RuntimeError) as e:
            _State.failure = str(e).removeprefix("npyio's native reader: ")
    if _State.module is not None:
        return _State.module
    if wanted == "required":
        raise BackendUnavailableError(
            f"npyio's native reader ({MODE_ENV}=1) is not available: {_State.failure}"
        )
    if not _State.told:
        _State.told = True
        print(
            f"npyio: native reader off ({_State.failure}); reading through the graph path "
            f"({MODE_ENV}=0 silences this)",
            file=sys.stderr,
        )
    return None


def preload() -> None:
    """Loads the op if its library is already built and probed for this toolchain and the
    native reader is not off: never builds, never prints (for a process, such as a tf.data
    service worker, that must know the op before a graph that uses it arrives)."""
    with contextlib.suppress(ValueError):
        if mode() == "off" or _State.module is not None:
            return
    try:
        directory = _key_dir(_toolchain())
    except (_Unavailable, OSError):
        return
    if (directory / LIBRARY).is_file() and (directory / PROBED).is_file():
        with contextlib.suppress(OSError, RuntimeError):
            _load(str(directory / LIBRARY))


def status() -> NativeStatus:
    """Where the native reader stands, without building it (imports TensorFlow to find the
    key)."""
    wanted = mode()
    try:
        directory = _key_dir(_toolchain())
    except (_Unavailable, OSError) as e:
        return NativeStatus(wanted, False, None, str(e), "", False)
    lib = directory / LIBRARY
    built, probed = lib.is_file(), (directory / PROBED).is_file()
    if wanted == "off":
        reason: str | None = f"{MODE_ENV}=0"
    elif _State.library == str(lib) or (built and probed):
        reason = None
    elif (directory / FAILED).is_file():
        reason = f"{(directory / FAILED).read_text().strip()} ({_HOW})"
    else:
        reason = "not built yet: it builds at first use, or run `npyio native --build`"
    return NativeStatus(wanted, reason is None, str(lib), reason, directory.name, built)


def read_files(paths: Any, dtype: Any, shape: Sequence[int], header: bytes) -> tuple[Any, Any]:
    """The op over a [B] string tensor of ``paths``: ``values`` ([B, *shape] of ``dtype``,
    each file's payload) and ``ok`` ([B] bool: false where the file is doubted and its slice is
    zeros; send that file through the graph path). ``header`` is the bytes every file must
    start with; ``shape`` is static.

    Raises:
        BackendUnavailableError: where the native reader cannot be had (or is off).
    """
    values, ok = _module().npyio_read_files(
        paths=paths, dtype=dtype, shape=list(shape), header=header
    )
    return values, ok


def _parsed(
    dtype: Any, shape: Sequence[int | None] | None, max_header_size: int, max_file_size: int | None
) -> dict[str, Any]:
    """The attrs of the ops that parse each file's header: what the file must hold, and the
    limits it is read under (``max_file_size`` None: none)."""
    import tensorflow as tf

    return {
        "dtype": dtype,
        "shape": tf.TensorShape(shape),
        "max_header_size": max_header_size,
        "max_file_size": -1 if max_file_size is None else max_file_size,
    }


def read_file(
    path: Any,
    dtype: Any,
    shape: Sequence[int | None] | None,
    max_header_size: int,
    max_file_size: int | None,
) -> tuple[Any, Any]:
    """The op ``NpyioReadFile`` over a scalar string ``path``: the file whatever its shape,
    its header parsed by the core. Gives ``value`` (the file's array, of ``dtype`` in native
    order and C order) and ``ok`` (a bool scalar: false where the kernel doubts the file, and
    ``value`` is empty; send it through the graph path). ``shape`` is what the file must hold:
    ``None`` for any rank, ``None`` dims for any size.

    Raises:
        BackendUnavailableError: where the native reader cannot be had (or is off).
    """
    limits = _parsed(dtype, shape, max_header_size, max_file_size)
    value, ok = _module().npyio_read_file(path=path, **limits)
    return value, ok


def read_windows(
    paths: Any,
    draws: Any,
    dtype: Any,
    shape: Sequence[int | None],
    window: Sequence[int],
    axes: Sequence[int],
    start: str | Sequence[int],
    policy: str,
    max_header_size: int,
    max_file_size: int | None,
    fill: bytes = b"",
) -> tuple[Any, Any, Any, Any]:
    """The op ``NpyioReadWindows`` over a [B] string tensor of ``paths``: a window of each
    file's C-order array, placed by the file's own shape from its header (parsed once, checked
    to hold ``dtype`` and fit ``shape``: ``None`` dims for any size, within the limits), and
    only the window's bytes read. The window is ``window`` (the output's shape, every axis);
    on ``axes`` (the cropped ones, any order) it starts by npyio's rule
    (`npyio._format.window.Window.starts`): ``start`` ``"random"`` by ``draws`` ([B, k] or
    [B, 2k] float64, as `npyio._graph.window.draws` makes them), ``"center"``, or fixed starts
    (one per axis); the other axes from 0. ``policy`` (``"error"``, ``"trim"``, ``"pad"``)
    says what a window past the edge does: doubted, moved inside from below, or filled with
    ``fill`` (one element's bytes; ``b""``: zeros). Gives ``values`` ([B, *window] of
    ``dtype``), ``dims`` ([B, rank] int64: each file's shape, 0 where its header was doubted),
    ``ok`` ([B] bool: false where the file, its draws or its window are doubted, and its slice
    is zeros; send that file through the graph path) and ``nbytes`` ([B] int64: the bytes
    asked of the file system for each file, the header's included).

    Raises:
        BackendUnavailableError: where the native reader cannot be had (or is off).
    """
    limits = _parsed(dtype, shape, max_header_size, max_file_size)
    fixed = [] if isinstance(start, str) else [int(s) for s in start]
    return _module().npyio_read_windows(
        paths=paths,
        draws=draws,
        window=list(window),
        axes=[int(a) for a in axes],
        start=start if isinstance(start, str) else "fixed",
        fixed=fixed,
        policy=policy,
        fill=fill,
        **limits,
    )


def _module() -> Any:
    """The loaded op module, or BackendUnavailableError saying why not."""
    module = ops()
    if module is None:
        raise BackendUnavailableError(
            f"npyio's native reader is not available: {_State.failure or MODE_ENV + '=0'}"
        )
    return module


def read_ranges(
    paths: Any, offsets: Any, lengths: Any, sizes: Any, given: Any = None
) -> tuple[Any, Any]:
    """The op ``NpyioReadRanges`` over [N] vectors: ``values`` ([N] string: ``lengths[i]``
    bytes at byte ``offsets[i]`` of ``paths[i]``) and ``ok`` ([N] bool: false where the file is
    not a regular file of exactly ``sizes[i]`` bytes holding the range, or changed while it was
    read; its value is then empty). A length of 0 only checks the file; a length of -1 reads
    nothing and gives ``given[i]`` (bytes already read; empty strings when ``given`` is None).

    Raises:
        BackendUnavailableError: where the native reader cannot be had (or is off).
    """
    if given is None:
        import tensorflow as tf

        given = tf.fill(tf.shape(paths), tf.constant(b""))
    return _module().npyio_read_ranges(
        paths=paths, offsets=offsets, lengths=lengths, sizes=sizes, given=given
    )


def read_rows(
    rows: Any, starts: Any, paths: Any, offsets: Any, little: Any, dtype: Any, shape: Any
) -> tuple[Any, Any]:
    """The op ``NpyioReadRows``: rows ``rows`` ([B] int64) of files numbered as one sequence
    (file ``f`` holds rows ``starts[f]`` to ``starts[f + 1] - 1``; its rows start at byte
    ``offsets[f]``, in the byte order ``little[f]`` says), as ``values`` ([B, *shape] of
    ``dtype``, in the machine's byte order) and ``ok`` ([B] bool: false where the row's file is
    missing, not of its size, changed while read, or the row is in no file; its slice is then
    zeros: send the batch through the graph path). Neighbouring rows of a file are one
    ``pread``, and each file is opened once per call.

    Raises:
        BackendUnavailableError: where the native reader cannot be had (or is off).
    """
    return _module().npyio_read_rows(
        rows=rows,
        starts=starts,
        paths=paths,
        offsets=offsets,
        little=little,
        dtype=dtype,
        shape=list(shape),
    )


#: `remote_stats`'s keys, in the order of the op's output.
REMOTE_STATS = ("reads", "waits", "bypass_failed", "unallocated", "peak_bytes", "budget_bytes")


def remote_stats() -> dict[str, int]:
    """What this process's reads of paths with a scheme (``gs://``, ``ram://``, ...) did: the
    ``reads`` made; the reads that ``waits``-ed for room in the budget of read buffers
    (``budget_bytes``: ``$NPYIO_REMOTE_BUFFER_MIB``, else 1 GiB on a host with strict
    overcommit, else room for every remote thread); ``bypass_failed``, the 64 MiB buffers that
    could not be allocated (the object was read with a buffer of its own size instead: slower
    on GCS, never wrong); ``unallocated``, objects doubted because no buffer could be had; and
    ``peak_bytes``, the most bytes of buffers held at once.

    Raises:
        BackendUnavailableError: where the native reader cannot be had (or is off).
    """
    values = _module().npyio_remote_stats().numpy().tolist()
    return dict(zip(REMOTE_STATS, values[: len(REMOTE_STATS)], strict=True))


def windows_advised() -> int:
    """How many local windows this process found cold (not in the page cache) and advised
    the ranges of before reading them (``npy_read.h``'s ``kAdviseGap``).

    Raises:
        BackendUnavailableError: where the native reader cannot be had (or is off).
    """
    return int(_module().npyio_remote_stats().numpy()[len(REMOTE_STATS)])


def headers_read() -> int:
    """How many local headers this process's kernel read from their files (the rest came from
    its cache of parsed headers: ``npy_read.h``'s ``kHeaderCacheEntries``).

    Raises:
        BackendUnavailableError: where the native reader cannot be had (or is off).
    """
    return int(_module().npyio_remote_stats().numpy()[len(REMOTE_STATS) + 1])


def batch_dataset(
    ds: Any,
    batch_size: int,
    drop_remainder: bool,
    parts: Sequence[tuple[int, Any, Sequence[int], bytes]],
    reads_in_flight: int,
    batches_ahead: int,
    deterministic: bool,
    fallback: Any,
    element: Sequence[int],
    structure: Any,
) -> Any:
    """The dataset op ``NpyioBatchDataset`` over ``ds``, whose elements are the loader's units
    (flat tuples of tensors), in batches of ``batch_size`` units.

    Each batch is first a flat list: every component batched, then per part ``(component,
    dtype, shape, header)`` (its paths' component, and what every file holds) a [B, *shape]
    ``values`` and a [B] bool ``ok`` (false where the file is doubted, its slice zeros), as
    `read_files` gives. Where some file is doubted, ``fallback`` (a concrete function of that
    list) gives each part's values in their place. The element is then ``structure`` (of
    ``tf.TensorSpec``), whose flat entries are the entries ``element`` names of the batched
    components followed by the parts' values. ``reads_in_flight`` files are read at once, on
    the op's own threads, up to ``batches_ahead`` batches ahead (0: 2, and more while reads
    wait on storage, as many as keep twice ``reads_in_flight`` reads going, up to 32 MiB, within
    the pipeline's RAM budget), delivered in order; not
    ``deterministic``, a full batch read before those ahead of it goes first (never the short
    last batch, nor under ``experimental_symbolic_checkpoint``).

    Raises:
        BackendUnavailableError: where the native reader cannot be had (or is off).
    """
    import tensorflow as tf

    from npyio._tf import dataset_from_variant, dataset_variant

    specs = tf.nest.flatten(structure)
    variant = _module().npyio_batch_dataset(
        input_dataset=dataset_variant(ds),
        other_arguments=fallback.captured_inputs,
        fallback=fallback,
        element=list(element),
        batch_size=batch_size,
        drop_remainder=drop_remainder,
        read_components=[p[0] for p in parts],
        read_dtypes=[p[1] for p in parts],
        read_shapes=[tf.TensorShape(p[2]) for p in parts],
        read_headers=[p[3] for p in parts],
        reads_in_flight=reads_in_flight,
        batches_ahead=batches_ahead,
        deterministic=deterministic,
        output_types=[s.dtype for s in specs],
        output_shapes=[s.shape for s in specs],
    )
    return dataset_from_variant(variant, structure)
