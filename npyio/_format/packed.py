"""The packed layout: standard ``.npy`` shards and the JSON index that describes them.

TF-free (``tf.io.gfile`` only for a path that is not local). ``npyio pack`` writes a directory
``OUT`` holding, for each *part* of an element (the inputs, the labels, each key of a dict
source, and ``order``: the position of each row's input file among the original names), shards
named ``{part}-{i:05d}-of-{k:05d}.npy``. Each is a standard ``.npy`` file (``np.lib.format``
header, C order, native byte order) of the rows stacked on axis 0; shard ``i`` of every part
holds the same rows, so reading zips them. ``OUT/npyio-pack.json`` (`INDEX`) records the
format version, the parts (dtype, row shape), every shard's rows, bytes and SHA-256, and the
original file names in order.

Safety, in the order a pack writes (`Writer`): the marker `INCOMPLETE` first; every shard
under a temporary name (`temporary`: hidden, with a ``.tmp`` suffix, so that neither a
directory's listing nor a glob such as ``inputs-*.npy`` finds it), renamed when complete; the
index (also via a temporary name) last; then the marker is removed. The index is the commit
point: a directory with the index is a complete pack; one with the marker, temporary files or
shards but no index is an incomplete pack (`state`), which `read_index` refuses rather than
read as a smaller dataset.

SHA-256, not CRC32C: it is in the standard library (CRC32C is not), every system can check a
shard by hand (``sha256sum``), and hashing while writing costs a small fraction of a pack's
time (bench/README.md, "Packing").
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from npyio._format import npy
from npyio._format.files import gfile, is_local, join, parent
from npyio.errors import NpyioError

__all__ = [
    "FORMAT",
    "INCOMPLETE",
    "INDEX",
    "VERSION",
    "IncompletePackError",
    "PackIndex",
    "PackPart",
    "PackShard",
    "join",
    "read_index",
    "shard_name",
    "state",
    "structure_from_json",
    "structure_to_json",
    "temporary",
    "verify_pack",
]

FORMAT = "npyio-pack"
VERSION = 1
INDEX = "npyio-pack.json"
INCOMPLETE = "npyio-pack.incomplete"
TMP = ".tmp"
#: The files a pack writes (what a rerun or ``--overwrite`` may remove, and nothing else);
#: temporary names begin with "." (older versions wrote them without).
_OURS = re.compile(r"^[A-Za-z0-9_.]+-\d{5}-of-\d{5}\.npy(\.tmp)?$|^\.?npyio-pack\.json(\.tmp)?$")
#: Bytes hashed (and read by verify) at a time.
_BLOCK = 4 << 20


class IncompletePackError(NpyioError, ValueError):
    """A directory holds part of a pack but no index: the pack was interrupted."""


def shard_name(stem: str, i: int, k: int) -> str:
    return f"{stem}-{i:05d}-of-{k:05d}.npy"


def temporary(path: str) -> str:
    """The name ``path`` is written under before it is renamed: ``OUT/.inputs-00000-of-00002.npy
    .tmp``, hidden and not ending in ``.npy``."""
    return join(parent(path), "." + os.path.basename(path) + TMP)


def _listdir(directory: str) -> list[str]:
    if is_local(directory):
        return os.listdir(directory) if os.path.isdir(directory) else []
    fs = gfile(directory)
    return [n.rstrip("/") for n in fs.listdir(directory)] if fs.isdir(directory) else []


def _exists(path: str) -> bool:
    return os.path.exists(path) if is_local(path) else bool(gfile(path).exists(path))


def ours(directory: str) -> list[str]:
    """The files of ``directory`` that a pack writes (the marker aside)."""
    return sorted(n for n in _listdir(directory) if _OURS.match(n))


def state(directory: str) -> str | None:
    """``"complete"`` (the index is there), ``"incomplete"`` (the marker, a temporary file or
    a shard without the index), or None (nothing of a pack)."""
    if _exists(join(directory, INDEX)):
        return "complete"
    names = _listdir(directory)
    if INCOMPLETE in names or any(_OURS.match(n) and n.endswith(TMP) for n in names):
        return "incomplete"
    return None


def incomplete(directory: str) -> IncompletePackError:
    return IncompletePackError(
        f"{directory}: incomplete pack -- the directory holds part of a pack but no "
        f"{INDEX} (the pack was interrupted or failed); rerun the same npyio pack command "
        f"to complete it"
    )


# --- structures of parts as JSON -------------------------------------------------------------
def structure_to_json(tmpl: object) -> Any:
    """A structure template (`npyio._data.structure`: LEAF, dicts, tuples) as JSON."""
    if isinstance(tmpl, dict):
        return {"dict": {k: structure_to_json(v) for k, v in tmpl.items()}}
    if isinstance(tmpl, tuple):
        return {"tuple": [structure_to_json(v) for v in tmpl]}
    return "part"


def structure_from_json(value: Any, leaf: object) -> object:
    """The inverse of `structure_to_json`, with ``leaf`` for each part."""
    if isinstance(value, dict) and "dict" in value:
        return {k: structure_from_json(v, leaf) for k, v in value["dict"].items()}
    if isinstance(value, dict) and "tuple" in value:
        return tuple(structure_from_json(v, leaf) for v in value["tuple"])
    if value != "part":
        raise ValueError(f"not a structure of parts: {value!r:.100}")
    return leaf


# --- the index -------------------------------------------------------------------------------
@dataclass(frozen=True)
class PackPart:
    """One part: how errors name it, its file stem, dtype and row shape."""

    name: str
    stem: str
    dtype: np.dtype
    shape: tuple[int, ...]

    @property
    def row_bytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "stem": self.stem, "dtype": self.dtype.str, "shape": self.shape}


@dataclass(frozen=True)
class PackShard:
    """One shard: its rows, and per part its file name, bytes and SHA-256."""

    rows: int
    files: tuple[str, ...]
    sizes: tuple[int, ...]
    sha256: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "rows": self.rows,
            "files": [
                {"name": n, "bytes": b, "sha256": h}
                for n, b, h in zip(self.files, self.sizes, self.sha256)
            ],
        }


@dataclass(frozen=True)
class PackIndex:
    """What ``npyio-pack.json`` holds. ``inputs`` and ``labels`` are the structures of the
    elements (JSON, `structure_to_json`; ``labels`` None without labels); ``parts`` are their
    leaves in order, then ``order``; ``names`` the original input files in order."""

    directory: str
    inputs: Any
    labels: Any
    parts: tuple[PackPart, ...]
    shards: tuple[PackShard, ...]
    names: tuple[str, ...]
    shuffled: bool = False
    seed: int | None = None
    class_names: tuple[str, ...] | None = None  # packed from class folders

    @property
    def count(self) -> int:
        return sum(s.rows for s in self.shards)

    def paths(self, part: int) -> list[str]:
        """The shard files of one part, in order."""
        return [join(self.directory, s.files[part]) for s in self.shards]

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": VERSION,
            "rows": self.count,
            "inputs": self.inputs,
            "labels": self.labels,
            "parts": [p.to_json() for p in self.parts],
            "shards": [s.to_json() for s in self.shards],
            "shuffled": self.shuffled,
            "seed": self.seed,
            "class_names": None if self.class_names is None else list(self.class_names),
            "names": list(self.names),
        }


def _bad(path: str, what: str) -> NpyioError:
    return NpyioError(f"{path}: not a valid npyio pack index -- {what}")


def parse_index(directory: str, text: str) -> PackIndex:
    """The index of ``directory`` from its JSON text, checked.

    Raises:
        NpyioError: naming the index, for JSON that is not a pack index of this version.
    """
    path = join(directory, INDEX)
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise _bad(path, f"bad JSON ({e})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise _bad(path, f"expected format {FORMAT!r}")
    if doc.get("version") != VERSION:
        raise _bad(path, f"expected version {VERSION}, got {doc.get('version')!r}")
    try:
        parts = tuple(
            PackPart(p["name"], p["stem"], np.dtype(p["dtype"]), tuple(int(d) for d in p["shape"]))
            for p in doc["parts"]
        )
        shards = tuple(
            PackShard(
                int(s["rows"]),
                tuple(f["name"] for f in s["files"]),
                tuple(int(f["bytes"]) for f in s["files"]),
                tuple(f["sha256"] for f in s["files"]),
            )
            for s in doc["shards"]
        )
        index = PackIndex(
            directory,
            doc["inputs"],
            doc["labels"],
            parts,
            shards,
            tuple(doc["names"]),
            bool(doc.get("shuffled", False)),
            doc.get("seed"),
            None if doc.get("class_names") is None else tuple(doc["class_names"]),
        )
    except (KeyError, TypeError, ValueError) as e:
        raise _bad(path, f"missing or bad field ({e!r})") from None
    if any(len(s.files) != len(parts) for s in shards):
        raise _bad(path, "a shard without a file for every part")
    if index.count != doc.get("rows"):
        raise _bad(path, f"rows {doc.get('rows')!r} is not the sum of the shards' rows")
    return index


def read_text(path: str) -> str:
    if is_local(path):
        with open(path, encoding="utf-8") as f:
            return f.read()
    with gfile(path).GFile(path, "r") as f:
        return str(f.read())


def read_index(directory: str) -> PackIndex:
    """The index of the packed ``directory``.

    Raises:
        IncompletePackError: for an interrupted pack (no index, but the marker, temporary
            files or shards).
        NpyioError: for an index that is not valid.
        FileNotFoundError: for a directory with nothing of a pack.
    """
    found = state(directory)
    if found == "incomplete":
        raise incomplete(directory)
    if found is None:
        raise FileNotFoundError(f"{directory}: not a packed directory (no {INDEX})")
    return parse_index(directory, read_text(join(directory, INDEX)))


# --- writing ---------------------------------------------------------------------------------
def npy_header(dtype: np.dtype, shape: tuple[int, ...]) -> bytes:
    """The header ``np.save`` writes for a C-order array of ``dtype`` and ``shape``."""
    import io

    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buf, {"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False, "shape": shape}
    )
    return buf.getvalue()


def open_write(path: str) -> Any:
    if is_local(path):
        return open(path, "wb")
    return gfile(path).GFile(path, "wb")


def rename(src: str, dst: str) -> None:
    if is_local(src):
        os.replace(src, dst)
    else:
        gfile(src).rename(src, dst, overwrite=True)


def remove(path: str) -> None:
    if is_local(path):
        with contextlib.suppress(FileNotFoundError):
            os.remove(path)
    elif gfile(path).exists(path):
        gfile(path).remove(path)


def makedirs(path: str) -> None:
    if is_local(path):
        os.makedirs(path, exist_ok=True)
    else:
        gfile(path).makedirs(path)


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
        block = np.ascontiguousarray(rows, dtype=self.dtype)
        self._write(block.reshape(-1).view(np.uint8).data)
        self.written += len(block)

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
    with open(path, "rb") if is_local(path) else gfile(path).GFile(path, "rb") as f:
        while True:
            block = f.read(_BLOCK)
            if not block:
                return
            yield block


def _size(path: str) -> int:
    return os.path.getsize(path) if is_local(path) else int(gfile(path).stat(path).length)


def verify_pack(directory: str) -> tuple[PackIndex | None, list[tuple[str, str]]]:
    """Every shard of the pack checked: present, of the size and SHA-256 the index records,
    and with the header its part and rows call for. Returns the index (None if it cannot be
    read) and the problems as (path, reason), in the index's order."""
    try:
        index = read_index(directory)
    except (NpyioError, OSError) as e:
        return None, [(join(directory, INDEX), str(e).removeprefix(directory + ": "))]
    problems: list[tuple[str, str]] = []
    for shard in index.shards:
        for part, name, size, digest in zip(index.parts, shard.files, shard.sizes, shard.sha256):
            path = join(directory, name)
            if not _exists(path):
                problems.append((path, "missing shard (no such file)"))
                continue
            got = _size(path)
            if got != size:
                problems.append((path, f"damaged shard -- expected {size} bytes, got {got}"))
                continue
            h = hashlib.sha256()
            first = b""
            for block in _hash_file(path):
                first = first or block
                h.update(block)
            if h.hexdigest() != digest:
                problems.append((path, "damaged shard -- its SHA-256 differs from the index's"))
                continue
            header = npy_header(part.dtype, (shard.rows, *part.shape))
            if not first.startswith(header):
                problems.append(
                    (
                        path,
                        f"damaged shard -- expected the header of {shard.rows} rows of "
                        f"{part.dtype.name} {npy.show_shape(part.shape)}",
                    )
                )
    return index, problems
