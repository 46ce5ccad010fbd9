"""What ``npyio inspect`` and ``npyio verify`` do: find the files, check them, summarise.

Checking a file reads its first 4 KiB (more only for a header longer than that) and its size,
then applies the reference parser (`npyio._format.read_header` and `check_payload`): the same
grammar, limits and error wording as the graph decoder. Local paths are read with ``os.open``
and ``os.fstat``; any other path (``gs://``, ``ram://``, ...) through ``tf.io.gfile``. Files
whose header bytes are identical (the normal case in a dataset) are parsed once: the parsed
header is cached by those bytes. ``--full`` then reads every good file through the graph
decoder (`npyio.read_npy`), one ``tf.data`` pipeline per dtype and shape.

Nothing here imports TensorFlow unless a path needs ``tf.io.gfile``, ``--pairs`` is given or
``--full`` decodes (though ``import npyio`` itself does, today).
"""

from __future__ import annotations

import codecs
import glob
import io
import os
import posixpath
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from npyio import _format as F
from npyio.errors import NpyFormatError

#: Bytes read from the start of each file; a longer header costs one more read.
HEAD = 4096
#: Files handed to a worker thread at a time.
CHUNK = 256
_GLOB_CHARS = frozenset("*?[")

NO_SUCH_FILE = "no such file or directory"
NO_NPY_FILES = "directory has no .npy files"
NO_MATCH = "no file matches this pattern"
NOT_A_DIR = "not a directory"


def no_label(label_dir: str) -> str:
    return f"unpaired -- no file of this name in the labels directory {label_dir}"


def no_input(input_dir: str) -> str:
    return f"unpaired -- no file of this name in the inputs directory {input_dir}"


# --- finding the files ------------------------------------------------------------------------
def _is_local(path: str) -> bool:
    return "://" not in path


def _tf() -> Any:
    import tensorflow as tf

    return tf


@dataclass
class Source:
    """One PATH argument (or one side of ``--pairs``) and the files it stands for."""

    arg: str
    kind: str  # "file", "dir", "glob", or "missing"
    paths: list[str] = field(default_factory=list)
    problem: str | None = None  # why it stands for no file at all


def _list_dir(path: str) -> list[str]:
    """The directory's ``*.npy``, sorted by name. Raises OSError if it cannot be listed."""
    if _is_local(path):
        with os.scandir(path) as entries:
            names = [e.name for e in entries if e.name.endswith(".npy")]
        return [os.path.join(path, n) for n in sorted(names)]
    tf = _tf()
    try:
        found = tf.io.gfile.glob(posixpath.join(path, "*.npy"))
    except tf.errors.OpError as e:
        raise OSError(e.message) from e
    return sorted(found, key=lambda p: (posixpath.basename(p), p))


def _dir_source(arg: str) -> Source:
    try:
        paths = _list_dir(arg)
    except OSError as e:  # no permission to list it, ...
        return Source(arg, "dir", [], e.strerror.lower() if e.strerror else str(e))
    return Source(arg, "dir", paths, None if paths else NO_NPY_FILES)


def _glob(pattern: str) -> list[str]:
    if _is_local(pattern):
        return sorted(glob.glob(pattern))
    return sorted(_tf().io.gfile.glob(pattern))


def _isdir(path: str) -> bool:
    return os.path.isdir(path) if _is_local(path) else bool(_tf().io.gfile.isdir(path))


def _exists(path: str) -> bool:
    return os.path.lexists(path) if _is_local(path) else bool(_tf().io.gfile.exists(path))


def resolve(arg: str) -> Source:
    """A directory (its ``*.npy``, sorted by name, not recursive), a glob pattern (for lists
    too long for the shell, or remote paths), or a file, taken whatever its name."""
    if _isdir(arg):
        return _dir_source(arg)
    if _exists(arg):
        return Source(arg, "file", [arg])
    if _GLOB_CHARS & set(arg):
        paths = _glob(arg)
        return Source(arg, "glob", paths, None if paths else NO_MATCH)
    return Source(arg, "missing", [], NO_SUCH_FILE)


def resolve_pair_dir(arg: str) -> Source:
    """One side of ``--pairs``: it must be a directory."""
    if _isdir(arg):
        return _dir_source(arg)
    return Source(arg, "missing", [], NOT_A_DIR if _exists(arg) else NO_SUCH_FILE)


def unpaired(inputs: Source, labels: Source) -> list[tuple[str, str]]:
    """``(path, reason)`` for each file whose name is on one side only.

    The rule of ``npyio.dataset`` for two directories (``npyio._paths.pair``): files pair by
    file name.
    """
    from npyio._paths import _basename

    xs = {_basename(p) for p in inputs.paths}
    ys = {_basename(p) for p in labels.paths}
    return [(p, no_label(labels.arg)) for p in inputs.paths if _basename(p) not in ys] + [
        (p, no_input(inputs.arg)) for p in labels.paths if _basename(p) not in xs
    ]


# --- checking headers and sizes ---------------------------------------------------------------
@dataclass(frozen=True)
class Checked:
    """One file's verdict: its header and size, or why it is bad."""

    path: str
    header: F.NpyHeader | None
    size: int | None  # the file's size in bytes, None if it could not be read
    reason: str | None = None  # None for a good file

    @property
    def ok(self) -> bool:
        return self.reason is None


def _data_offset(head: bytes, max_header_size: int) -> int | None:
    """Where the payload starts, by the fixed fields alone; None if they are not valid."""
    if head[: len(F.MAGIC_PREFIX)] != F.MAGIC_PREFIX or len(head) < F.MAGIC_LEN:
        return None
    len_size = F.HEADER_LEN_SIZE.get((head[6], head[7]))
    if len_size is None or len(head) < F.MAGIC_LEN + len_size:
        return None
    hlen = int.from_bytes(head[F.MAGIC_LEN : F.MAGIC_LEN + len_size], "little")
    return F.MAGIC_LEN + len_size + hlen if hlen <= max_header_size else None


def _read_local(path: str, max_header_size: int) -> tuple[bytes, int]:
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        head = os.read(fd, HEAD)
        if len(head) == HEAD:  # a header longer than HEAD: read up to its end
            end = _data_offset(head, max_header_size)
            while end is not None and len(head) < min(end, size):
                more = os.read(fd, end - len(head))
                if not more:
                    break
                head += more
        return head, size
    finally:
        os.close(fd)


def _read_gfile(path: str, max_header_size: int) -> tuple[bytes, int]:
    tf = _tf()
    try:
        with tf.io.gfile.GFile(path, "rb") as f:
            head = f.read(HEAD)
            end = _data_offset(head, max_header_size)
            if end is not None and end > len(head) == HEAD:
                head += f.read(end - len(head))
        return head, int(tf.io.gfile.stat(path).length)
    except tf.errors.NotFoundError as e:
        raise FileNotFoundError(NO_SUCH_FILE) from e
    except tf.errors.OpError as e:
        raise OSError(e.message) from e


#: header bytes -> (parsed header, the file size it implies)
HeaderCache = dict[bytes, tuple[F.NpyHeader, int]]


def check_file(
    path: str, cache: HeaderCache, max_header_size: int = F.MAX_HEADER_SIZE
) -> Checked:
    """Checks one file's header and size.

    ``cache`` maps header bytes already parsed (by any thread) to their verdict, so a dataset
    whose files share one header is parsed once; a file's own checks are then a dict lookup and
    a size comparison.
    """
    try:
        if _is_local(path):
            head, size = _read_local(path, max_header_size)
        else:
            head, size = _read_gfile(path, max_header_size)
    except FileNotFoundError:
        return Checked(path, None, None, NO_SUCH_FILE)
    except OSError as e:  # a directory named *.npy, no permission, an I/O error, ...
        return Checked(path, None, None, e.strerror.lower() if e.strerror else str(e))
    end = _data_offset(head, max_header_size)
    key = head[:end] if end is not None and end <= len(head) else None
    known = cache.get(key) if key is not None else None
    if known is None:
        try:
            # ``head`` holds every byte read_header reads (or the whole file): same verdict.
            header = F.read_header(io.BytesIO(head), path, max_header_size=max_header_size)
        except NpyFormatError as e:
            return Checked(path, None, size, e.reason)
        known = (header, header.data_offset + header.nbytes)
        if key is not None:
            cache[key] = known
    header, expected = known
    if size != expected:
        try:
            F.check_payload(header, size, path)
        except NpyFormatError as e:
            return Checked(path, header, size, e.reason)
        raise AssertionError(f"{path}: check_payload accepted {size} bytes, not {expected}")
    return Checked(path, header, size)


def _chunks(items: Sequence[str], n: int) -> Iterator[Sequence[str]]:
    for i in range(0, len(items), n):
        yield items[i : i + n]


def check_files(
    paths: Sequence[str], jobs: int, on_chunk: Callable[[int], None] = lambda n: None
) -> list[Checked]:
    """Checks every file, ``jobs`` threads at a time; results in the order of ``paths``."""
    cache: HeaderCache = {}

    def work(chunk: Sequence[str]) -> list[Checked]:
        return [check_file(p, cache) for p in chunk]

    out: list[Checked] = []
    if jobs <= 1 or len(paths) <= CHUNK:
        for chunk in _chunks(paths, CHUNK):
            out += work(chunk)
            on_chunk(len(chunk))
        return out
    pool = ThreadPoolExecutor(jobs, thread_name_prefix="npyio-verify")
    try:
        for done in pool.map(work, _chunks(paths, CHUNK)):
            out += done
            on_chunk(len(done))
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()
    return out


# --- --full: decoding through the graph decoder -----------------------------------------------
_GRAPH_ASSERT = re.compile(r"assertion failed: \[(.*?)\]\n\t \[\[\{\{", re.DOTALL)


def op_reason(err: Exception, path: str) -> str:
    """The reason in a TensorFlow error about ``path``, without the path and TF's noise."""
    message = getattr(err, "message", str(err))
    m = _GRAPH_ASSERT.search(message)
    if m:  # npyio's own message, C-escaped by the graph runtime
        raw, _ = codecs.escape_decode(m.group(1).encode("utf-8"))
        text = raw.decode("utf-8", "replace")
        return text[len(path) + 2 :] if text.startswith(f"{path}: ") else text
    if type(err).__name__ == "NotFoundError":
        return NO_SUCH_FILE
    last = message.strip().splitlines()[-1] if message.strip() else type(err).__name__
    return re.sub(r"\{\{[^}]*\}\}\s*", "", last).strip()


def decode_files(
    files: Sequence[Checked], jobs: int, on_file: Callable[[int], None] = lambda n: None
) -> tuple[dict[str, str], dict[str, int]]:
    """Reads every file through `npyio.read_npy`: one ``tf.data`` pipeline per dtype and shape.

    Returns ``{path: reason}`` for the files the graph decoder refuses, and ``{path: count}``
    for float or complex files that hold NaN or infinite values.
    """
    tf = _tf()
    from npyio._ops import read_npy

    groups: dict[tuple[str, tuple[int, ...]], list[str]] = {}
    for c in files:
        assert c.header is not None, "only good files are decoded"
        groups.setdefault((c.header.dtype.name, c.header.shape), []).append(c.path)
    bad: dict[str, str] = {}
    nonfinite: dict[str, int] = {}
    for (dtype, shape), paths in groups.items():
        floating = dtype.startswith(("float", "complex"))

        def probe(path: Any, dtype: str = dtype, shape: tuple[int, ...] = shape,
                  floating: bool = floating) -> Any:
            x = read_npy(path, dtype, shape)
            # Outputs must depend on the values, or the decode is pruned from the graph.
            nonzero = tf.math.count_nonzero(x, dtype=tf.int64)
            if not floating:
                return nonzero, tf.zeros([], tf.int64)
            finite = tf.math.is_finite(tf.math.abs(x) if dtype.startswith("complex") else x)
            return nonzero, tf.math.count_nonzero(tf.logical_not(finite), dtype=tf.int64)

        ds = tf.data.Dataset.from_tensor_slices(paths).map(
            probe, num_parallel_calls=max(jobs, 1), deterministic=True
        )
        it = iter(ds)
        for path in paths:  # an error is that element's; the iterator goes on after it
            try:
                _, n = next(it)
                if int(n):
                    nonfinite[path] = int(n)
            except tf.errors.OpError as e:
                bad[path] = op_reason(e, path)
            on_file(1)
    return bad, nonfinite


# --- summaries --------------------------------------------------------------------------------
def dtype_label(header: F.NpyHeader) -> str:
    """``float32``; with the descr for a byte order other than the machine's: ``float32 (>f4)``."""
    dt = header.dtype
    native = dt.byteorder in "=|" or dt.byteorder == F.NATIVE_ORDER
    return dt.name if native else f"{dt.name} ({dt.str})"


@dataclass
class Summary:
    """Counts for a set of files: how many, how many bad, bytes, dtype/shape combinations."""

    files: int = 0
    bad: int = 0
    bytes: int = 0
    groups: Counter[tuple[str, tuple[int, ...]]] = field(default_factory=Counter)

    @classmethod
    def of(cls, checked: Iterable[Checked], bad_paths: set[str]) -> Summary:
        s = cls()
        headers: Counter[F.NpyHeader] = Counter()
        for c in checked:
            s.files += 1
            s.bad += c.path in bad_paths
            s.bytes += c.size or 0
            if c.header is not None and c.ok:
                headers[c.header] += 1
        for h, n in headers.items():  # (few distinct headers: name them once each)
            s.groups[(h.dtype.name, h.shape)] += n
        return s

    def to_json(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "bad": self.bad,
            "bytes": self.bytes,
            "groups": [
                {"dtype": d, "shape": list(shape), "count": n}
                for (d, shape), n in self.sorted_groups()
            ],
        }

    def sorted_groups(self) -> list[tuple[tuple[str, tuple[int, ...]], int]]:
        return sorted(self.groups.items(), key=lambda kv: (-kv[1], kv[0]))

    def lines(self, indent: str = "  ") -> list[str]:
        """The dtype/shape table, most common first."""
        rows = [(f"{n:,}", d, F.show_shape(s)) for (d, s), n in self.sorted_groups()]
        return [indent + line for line in table(rows, right=(0,))]


def human_bytes(n: int) -> str:
    """``123 B``, ``4.6 kB``, ``16.8 MB``, ... (SI units)."""
    size = float(n)
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if size < 1000 or unit == "TB":
            return f"{n} B" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1000
    raise AssertionError("unreachable")


def table(rows: Sequence[Sequence[str]], right: Sequence[int] = ()) -> list[str]:
    """Rows padded into aligned columns (two spaces apart); the last column is not padded."""
    if not rows:
        return []
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = []
    for r in rows:
        cells = [
            (cell.rjust(w) if i in right else cell.ljust(w)) if i < len(r) - 1 else cell
            for i, (cell, w) in enumerate(zip(r, widths, strict=True))
        ]
        out.append("  ".join(cells).rstrip())
    return out


def file_json(c: Checked) -> dict[str, Any]:
    """One good file as ``inspect --json`` lists it."""
    h = c.header
    assert h is not None
    return {
        "path": c.path,
        "version": f"{h.version[0]}.{h.version[1]}",
        "dtype": h.dtype.name,
        "descr": h.dtype.str,
        "shape": list(h.shape),
        "order": "F" if h.fortran_order else "C",
        "header_bytes": h.data_offset,
        "payload_bytes": h.nbytes,
        "file_bytes": c.size,
    }


def file_row(c: Checked) -> list[str]:
    """One good file as a row of ``inspect``'s table (see `FILE_COLUMNS`)."""
    h = c.header
    assert h is not None
    return [
        f"{h.version[0]}.{h.version[1]}",
        dtype_label(h),
        F.show_shape(h.shape),
        "F" if h.fortran_order else "C",
        str(h.data_offset),
        str(h.nbytes),
        c.path,
    ]


FILE_COLUMNS = ["version", "dtype", "shape", "order", "header", "payload", "path"]


# --- one run: find, check, (decode), collect the verdicts -------------------------------------
@dataclass
class Outcome:
    """Everything ``inspect`` and ``verify`` report."""

    sources: list[Source]
    checked: list[Checked]  # every file, once, in the order found
    issues: list[tuple[str, str]]  # (path or argument, reason), in the order found
    nonfinite: dict[str, int]
    seconds: float

    @property
    def bad_paths(self) -> set[str]:
        return {p for p, _ in self.issues}

    def summary(self, source: Source | None = None) -> Summary:
        """Counts for one directory or glob source, or for all files."""
        bad = self.bad_paths
        if source is None:
            return Summary.of(self.checked, bad)
        by_path = self._by_path()
        return Summary.of((by_path[p] for p in source.paths), bad)

    def _by_path(self) -> dict[str, Checked]:
        return {c.path: c for c in self.checked}


def scan(
    sources: list[Source],
    *,
    jobs: int,
    progress: bool,
    full: bool = False,
    extra: Sequence[tuple[str, str]] = (),
) -> Outcome:
    """Checks the files of ``sources`` (each once); with ``full``, decodes the good ones.

    ``extra`` holds further ``(path, reason)`` verdicts (unpaired names), merged in order.
    """
    import time

    from npyio._progress import Progress

    start = time.perf_counter()
    paths = list(dict.fromkeys(p for s in sources for p in s.paths))
    with Progress(len(paths), "checking", enabled=progress and bool(paths)) as bar:
        checked = check_files(paths, jobs, bar.update)
    reasons: dict[str, list[str]] = {}
    for c in checked:
        if c.reason is not None:
            reasons.setdefault(c.path, []).append(c.reason)
    nonfinite: dict[str, int] = {}
    if full:
        good = [c for c in checked if c.ok]
        with Progress(len(good), "decoding", enabled=progress and bool(good)) as bar:
            refused, found = decode_files(good, jobs, bar.update)
        nonfinite = {c.path: found[c.path] for c in good if c.path in found}  # in file order
        for path, reason in refused.items():
            reasons.setdefault(path, []).append(reason)
    for path, reason in extra:
        reasons.setdefault(path, []).append(reason)
    issues: list[tuple[str, str]] = []
    seen: set[str] = set()
    for s in sources:
        if s.problem is not None:
            issues.append((s.arg, s.problem))
        for p in s.paths:
            if p not in seen:
                seen.add(p)
                issues += [(p, r) for r in reasons.get(p, [])]
    return Outcome(sources, checked, issues, nonfinite, time.perf_counter() - start)
