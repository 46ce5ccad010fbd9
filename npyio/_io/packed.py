"""A pack's files: its state (`state`), its index read (`load_index`, `read_index`) and checked
against the shards (`check_shards`, `verify_pack`), and the shards and index written
(`ShardFile`, `write_index`). The layout, the index's grammar and the words are
`npyio._format.packed`'s.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Iterator

import numpy as np

from npyio._format.files import is_local, join
from npyio._format.packed import (
    INCOMPLETE,
    INDEX,
    OURS,
    TMP,
    PackIndex,
    bad_index,
    header_problem,
    incomplete,
    npy_header,
    parse_index,
    temporary,
)
from npyio._io.files import exists, listdir, open_read, open_write, read_text, remove, rename
from npyio._io.header import check_files
from npyio.errors import NpyioError, PackIndexError

__all__ = [
    "ShardFile",
    "check_shards",
    "load_index",
    "ours",
    "read_index",
    "state",
    "verify_pack",
    "write_index",
]


#: Bytes hashed (and read by verify) at a time.
_HASH_BYTES = 4 << 20


def ours(directory: str) -> list[str]:
    """The files of ``directory`` that a pack writes (the marker aside)."""
    return sorted(n for n in listdir(directory) if OURS.match(n))


def state(directory: str, *, listing: bool = True) -> str | None:
    """The one rule of what a pack is, which everyone asks (`npyio.dataset`, the resolver,
    `npyio.pack`, ``npyio verify`` and ``npyio inspect``): ``"complete"`` (the index is
    there), ``"incomplete"`` (no index, but the marker a pack writes first or a temporary
    shard), or None (neither: shards alone, their index and marker gone, are not a pack).

    With ``listing`` the directory is listed once for the marker and the temporary shards;
    without, the index and the marker are looked up by name (two look-ups, nothing listed:
    what `npyio.dataset` asks of every source before the resolver lists it, which finds the
    temporary shards then).

    Raises:
        OSError: for a directory that cannot be listed or looked in.
        UnknownSchemeError: for a path whose scheme TensorFlow has no file system for.
    """
    if exists(join(directory, INDEX)):
        return "complete"
    if not listing:
        return "incomplete" if exists(join(directory, INCOMPLETE)) else None
    names = listdir(directory)
    if INCOMPLETE in names or any(OURS.match(n) and n.endswith(TMP) for n in names):
        return "incomplete"
    return None


def load_index(directory: str) -> PackIndex:
    """The index of the packed ``directory``, checked on its own (`parse_index`), its shards
    not read.

    Raises:
        IncompletePackError: for an interrupted pack (no index, but the marker or temporary
            files).
        PackIndexError: for an index that is not valid.
        FileNotFoundError: for a directory with neither index nor marker nor temporary files.
    """
    found = state(directory)
    if found == "incomplete":
        raise incomplete(directory)
    if found is None:
        raise FileNotFoundError(f"{directory}: not a packed directory (no {INDEX})")
    try:
        text = read_text(join(directory, INDEX))
    except UnicodeDecodeError as e:
        raise bad_index(join(directory, INDEX), f"not UTF-8 ({e.reason})") from None
    return parse_index(directory, text)


def check_shards(index: PackIndex) -> list[tuple[str, str]]:
    """Every shard file's header and size read (one small read each, in parallel off the
    local disk) and compared with the index: dtype, row shape, rows and bytes per part
    (``order`` included). Returns the problems as (shard path, reason), in the index's order;
    nothing is read beyond the headers."""
    paths = [join(index.directory, n) for s in index.shards for n in s.files]
    remote = not is_local(index.directory)
    checked = check_files(
        paths, jobs=min(16, len(paths)) if remote else 1, per_task=1 if remote else 256
    )
    k = len(index.parts)
    problems = []
    for n, c in enumerate(checked):
        reason = header_problem(index, n // k, n % k, c)
        if reason is not None:
            problems.append((c.path, reason))
    return problems


def read_index(directory: str) -> PackIndex:
    """The index of the packed ``directory``, checked on its own and against every shard's
    header (`check_shards`): what `npyio.dataset`, ``npyio verify`` and ``npyio inspect``
    read.

    Raises:
        IncompletePackError: for an interrupted pack (no index, but the marker, temporary
            files or shards).
        PackIndexError: naming the index, for an index that is not valid or that a shard
            contradicts (then naming the shard and the field too).
        FileNotFoundError: for a directory with nothing of a pack.
    """
    index = load_index(directory)
    problems = check_shards(index)
    if problems:
        shard, reason = problems[0]
        more = f" (and {len(problems) - 1} more shard files)" if len(problems) > 1 else ""
        raise PackIndexError(join(directory, INDEX), f"{shard}: {reason}{more}")
    return index


class ShardFile:
    """One shard being written under its temporary name: the header, then rows appended,
    hashed as they go; `commit` checks the row count and renames it."""

    def __init__(self, directory: str, name: str, dtype: np.dtype, rows: int, row: tuple) -> None:
        self.path = join(directory, name)
        self.tmp = temporary(self.path)
        self.name, self.dtype, self.rows, self.row = name, dtype, rows, row
        self.hash = hashlib.sha256()
        self.size = 0
        self.written = 0
        self.file = open_write(self.tmp)
        self._write(npy_header(dtype, (rows, *row)))

    def _write(self, data: bytes | memoryview) -> None:
        self.file.write(data if is_local(self.path) else bytes(data))
        self.hash.update(data)
        self.size += len(data)

    def append(self, rows: np.ndarray) -> None:
        values = np.ascontiguousarray(rows, dtype=self.dtype)
        self._write(values.reshape(-1).view(np.uint8).data)
        self.written += len(values)

    def commit(self) -> tuple[str, int, str]:
        """Closes and renames the shard; returns its name, bytes and SHA-256."""
        if self.written != self.rows:
            raise AssertionError(f"{self.tmp}: wrote {self.written} rows, expected {self.rows}")
        self.file.close()
        rename(self.tmp, self.path)
        return self.name, self.size, self.hash.hexdigest()

    def abort(self) -> None:
        # closing a file whose write failed may fail again; it is removed anyway
        with contextlib.suppress(Exception):
            self.file.close()
        remove(self.tmp)


def write_index(index: PackIndex) -> None:
    """The index, via a temporary name: the commit point of a pack."""
    path = join(index.directory, INDEX)
    with open_write(temporary(path)) as f:
        f.write(json.dumps(index.to_json(), indent=1).encode())
    rename(temporary(path), path)


# --- verifying -------------------------------------------------------------------------------
def _hash_file(path: str) -> Iterator[bytes]:
    with open_read(path) as f:
        while True:
            data = f.read(_HASH_BYTES)
            if not data:
                return
            yield data


def verify_pack(directory: str) -> tuple[PackIndex | None, list[tuple[str, str]]]:
    """Every shard of the pack checked: what `read_index` checks (present, of the size, dtype,
    shape and rows the index records), then its SHA-256. Returns the index (None if it cannot
    be read) and the problems as (path, reason), in the index's order, in `read_index`'s
    words."""
    try:
        index = load_index(directory)
    except (NpyioError, OSError) as e:
        return None, [
            (
                join(directory, INDEX),
                str(e).removeprefix(join(directory, INDEX) + ": ").removeprefix(directory + ": "),
            )
        ]
    problems = check_shards(index)
    bad = {p for p, _ in problems}
    for shard in index.shards:
        for name, digest in zip(shard.files, shard.sha256):
            path = join(directory, name)
            if path in bad:
                continue
            h = hashlib.sha256()
            for data in _hash_file(path):
                h.update(data)
            if h.hexdigest() != digest:
                problems.append((path, "damaged shard -- its SHA-256 differs from the index's"))
    order = {join(directory, n): k for k, n in enumerate(n for s in index.shards for n in s.files)}
    return index, sorted(problems, key=lambda p: order[p[0]])
