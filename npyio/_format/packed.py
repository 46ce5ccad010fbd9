"""The packed layout: standard ``.npy`` shards and the JSON index that describes them.

TF-free (``tf.io.gfile`` only for a path that is not local). ``npyio pack`` writes a directory
``OUT`` holding, for each *part* of an element (the inputs, the labels, each key of a dict
source, and ``order``: the position of each row's input file among the original names), shards
named ``{part}-{i:05d}-of-{k:05d}.npy``. Each is a standard ``.npy`` file (``np.lib.format``
header, C order, native byte order) of the rows stacked on axis 0; shard ``i`` of every part
holds the same rows, so reading zips them. ``OUT/npyio-pack.json`` (`INDEX`) records the
format version, the parts (dtype, row shape), every shard's rows, bytes and SHA-256, and the
original file names in order.

Safety, in the order a pack writes (`npyio._sources.pack_write`, through
`npyio._io.packed.ShardFile` and `npyio._io.packed.write_index`): the marker `INCOMPLETE` first;
every shard under a temporary name (`temporary`: hidden, with a ``.tmp`` suffix, so that neither a
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

import json
import os
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from npyio._format import npy
from npyio._format.files import NO_SUCH_FILE, join, parent
from npyio._format.header import Checked
from npyio.errors import IncompletePackError, PackIndexError

__all__ = [
    "FORMAT",
    "INCOMPLETE",
    "INCOMPLETE_REASON",
    "INDEX",
    "OURS",
    "SHARD",
    "TMP",
    "VERSION",
    "IncompletePackError",
    "PackIndex",
    "PackIndexError",
    "PackPart",
    "PackShard",
    "bad_index",
    "header_problem",
    "incomplete",
    "join",
    "npy_header",
    "parse_index",
    "plain_name",
    "shard_name",
    "structure_from_json",
    "structure_to_json",
    "temporary",
]

FORMAT = "npyio-pack"
VERSION = 1
INDEX = "npyio-pack.json"
INCOMPLETE = "npyio-pack.incomplete"
TMP = ".tmp"
_SHARD_END = r"-\d{5}-of-\d{5}\.npy"
#: How a shard's name (`shard_name`) ends: what the resolver looks for among a source's files.
SHARD = re.compile(_SHARD_END + "$")
#: The files a pack writes (what a rerun or ``--overwrite`` may remove, and nothing else);
#: temporary names begin with "." (older versions wrote them without).
OURS = re.compile(rf"^[A-Za-z0-9_.]+{_SHARD_END}(\.tmp)?$|^\.?npyio-pack\.json(\.tmp)?$")


def shard_name(stem: str, i: int, k: int) -> str:
    return f"{stem}-{i:05d}-of-{k:05d}.npy"


def temporary(path: str) -> str:
    """The name ``path`` is written under before it is renamed: ``OUT/.inputs-00000-of-00002.npy
    .tmp``, hidden and not ending in ``.npy``."""
    return join(parent(path), "." + os.path.basename(path) + TMP)


#: Why a directory with the marker or temporary shards but no index is refused (`incomplete`,
#: and the resolver's problem for a source among such a directory's shards).
INCOMPLETE_REASON = (
    f"the directory holds part of a pack but no {INDEX} (the pack was interrupted or failed); "
    "rerun the same npyio pack command to complete it"
)


def incomplete(directory: str) -> IncompletePackError:
    return IncompletePackError(f"{directory}: incomplete pack -- {INCOMPLETE_REASON}")


# --- structures of parts as JSON -------------------------------------------------------------
def structure_to_json(tmpl: object) -> Any:
    """A structure template (`npyio._pipeline.structure`: LEAF, dicts, tuples) as JSON."""
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


def bad_index(path: str, what: str) -> PackIndexError:
    return PackIndexError(path, f"not a valid npyio pack index -- {what}")


#: A SHA-256 as the index records it.
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


class _Doc:
    """Typed access to the index's JSON: each getter names the entry (``shards[0].rows``) in
    the `PackIndexError` for a key that is missing or of the wrong type."""

    def __init__(self, path: str) -> None:
        self.path = path

    def bad(self, where: str, what: str) -> PackIndexError:
        return bad_index(self.path, f"{where}: {what}")

    def get(self, obj: dict[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
        if key not in obj:
            raise self.bad(where, "missing")
        value = obj[key]
        # bool is an int to Python, never to the index
        if not isinstance(value, kind) or (isinstance(value, bool) and bool not in _kinds(kind)):
            raise self.bad(where, f"expected {_kind_names(kind)}, got {_shown(value)}")
        return value

    def count(self, obj: dict[str, Any], key: str, where: str, least: int = 0) -> int:
        value: int = self.get(obj, key, int, where)
        if value < least:
            raise self.bad(where, f"expected an int >= {least}, got {value}")
        return value

    def strings(self, value: Any, where: str) -> tuple[str, ...]:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.bad(where, f"expected a list of strings, got {_shown(value)}")
        return tuple(value)


def _kinds(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def _kind_names(kind: type | tuple[type, ...]) -> str:
    names = {dict: "an object", list: "a list", str: "a string", int: "an int", bool: "a bool"}
    return " or ".join("null" if k is type(None) else names[k] for k in _kinds(kind))


def _shown(value: Any) -> str:
    return f"{json.dumps(value)[:60]!s}"


def plain_name(name: str) -> bool:
    """Whether ``name`` is a plain file name inside the pack's directory: not empty, no
    separator (``/`` or ``\\``), no scheme or drive (``:``), not ``.`` or ``..``, no NUL."""
    return name not in ("", ".", "..") and not any(c in name for c in "/\\:\0")


def _structure_parts(doc: _Doc, value: Any, where: str, depth: int = 0) -> int:
    """The number of parts of a structure (`structure_to_json`), checked."""
    if value == "part":
        return 1
    if depth < 32 and isinstance(value, dict) and len(value) == 1:
        inner = value.get("dict", value.get("tuple"))
        if isinstance(inner, dict) and "dict" in value:
            return sum(_structure_parts(doc, v, where, depth + 1) for v in inner.values())
        if isinstance(inner, list) and "tuple" in value:
            return sum(_structure_parts(doc, v, where, depth + 1) for v in inner)
    raise doc.bad(where, f"not a structure of parts, got {_shown(value)}")


def _dtype(doc: _Doc, text: str, where: str) -> np.dtype:
    code = text[1:] if text[:1] in "<>|=" else text
    if code not in npy.CODES:
        raise doc.bad(where, f"unsupported dtype {text!r} -- expected one of {npy.SUPPORTED}")
    return np.dtype(text)


def _part(doc: _Doc, p: Any, where: str) -> PackPart:
    if not isinstance(p, dict):
        raise doc.bad(where, f"expected an object, got {_shown(p)}")
    dtype = _dtype(doc, doc.get(p, "dtype", str, f"{where}.dtype"), f"{where}.dtype")
    shape = doc.get(p, "shape", list, f"{where}.shape")
    if not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape):
        raise doc.bad(f"{where}.shape", f"expected a list of ints >= 0, got {_shown(shape)}")
    if np.prod(shape, dtype=object) * dtype.itemsize >= npy.MAX_NBYTES:
        raise doc.bad(f"{where}.shape", f"a row of {_shown(shape)} is too large")
    return PackPart(
        doc.get(p, "name", str, f"{where}.name"),
        doc.get(p, "stem", str, f"{where}.stem"),
        dtype,
        tuple(shape),
    )


def _shard(doc: _Doc, s: Any, parts: int, where: str) -> PackShard:
    if not isinstance(s, dict):
        raise doc.bad(where, f"expected an object, got {_shown(s)}")
    rows = doc.count(s, "rows", f"{where}.rows", least=1)
    files = doc.get(s, "files", list, f"{where}.files")
    if len(files) != parts:
        raise doc.bad(
            f"{where}.files", f"expected a file for each of {parts} parts, got {len(files)}"
        )
    names, sizes, hashes = [], [], []
    for j, f in enumerate(files):
        at = f"{where}.files[{j}]"
        if not isinstance(f, dict):
            raise doc.bad(at, f"expected an object, got {_shown(f)}")
        name = doc.get(f, "name", str, f"{at}.name")
        if not plain_name(name):
            raise doc.bad(
                f"{at}.name",
                f"a shard is a plain file name in the pack (no separator, no '..', no scheme, "
                f"not absolute), got {name!r:.80}",
            )
        digest = doc.get(f, "sha256", str, f"{at}.sha256")
        if not _SHA256.match(digest):
            raise doc.bad(f"{at}.sha256", f"expected 64 hex digits, got {digest!r:.80}")
        names.append(name)
        sizes.append(doc.count(f, "bytes", f"{at}.bytes"))
        hashes.append(digest)
    return PackShard(rows, tuple(names), tuple(sizes), tuple(hashes))


def _order_part(doc: _Doc, part: PackPart, where: str) -> None:
    want = PackPart("order", "order", np.dtype(np.int64), ())
    if (part.name, part.stem, part.dtype, part.shape) != (want.name, want.stem, want.dtype, ()):
        raise doc.bad(
            where, f"the last part is not order -- expected {want.to_json()}, got {part.to_json()}"
        )


def _check_shard_names(
    doc: _Doc, shards: tuple[PackShard, ...], parts: tuple[PackPart, ...]
) -> None:
    """Every shard file is listed once, under the name a pack gives it: shards out of order or
    parts swapped would read other rows without any header disagreeing."""
    seen: set[str] = set()
    for i, shard in enumerate(shards):
        for j, name in enumerate(shard.files):
            if name in seen:
                raise doc.bad(f"shards[{i}].files[{j}].name", f"{name!r} is listed twice")
            seen.add(name)
            want = shard_name(parts[j].stem, i, len(shards))
            if name != want:
                raise doc.bad(
                    f"shards[{i}].files[{j}].name", f"expected {want!r}, got {name!r:.80}"
                )


def parse_index(directory: str, text: str) -> PackIndex:
    """The index of ``directory`` from its JSON text, checked on its own (`check_shards`
    compares it with the shards): every field's type and range, the parts against the
    structures (the last one ``order``), one file per part in every shard, plain and distinct
    shard names, the total against the shards, and one name per row.

    Raises:
        PackIndexError: naming the index and the entry, for JSON that is not a pack index of
            this version.
    """
    path = join(directory, INDEX)
    doc = _Doc(path)
    try:
        top = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as e:
        raise bad_index(path, f"bad JSON ({str(e)[:100]})") from None
    if not isinstance(top, dict) or top.get("format") != FORMAT:
        raise bad_index(path, f"expected format {FORMAT!r}")
    version = top.get("version")
    if type(version) is not int or version != VERSION:
        raise bad_index(path, f"expected version {VERSION}, got {_shown(version)}")
    inputs, labels = top.get("inputs"), top.get("labels")
    if "inputs" not in top or "labels" not in top:
        raise doc.bad("inputs" if "inputs" not in top else "labels", "missing")
    want_parts = _structure_parts(doc, inputs, "inputs") + (
        0 if labels is None else _structure_parts(doc, labels, "labels")
    )
    parts = tuple(
        _part(doc, p, f"parts[{i}]") for i, p in enumerate(doc.get(top, "parts", list, "parts"))
    )
    if len(parts) != want_parts + 1:
        raise doc.bad(
            "parts",
            f"expected {want_parts + 1} (the structures' parts and order), got {len(parts)}",
        )
    _order_part(doc, parts[-1], f"parts[{len(parts) - 1}]")
    listed = doc.get(top, "shards", list, "shards")
    if not listed:
        raise doc.bad("shards", "expected at least one shard, got none")
    shards = tuple(_shard(doc, s, len(parts), f"shards[{i}]") for i, s in enumerate(listed))
    _check_shard_names(doc, shards, parts)
    total = doc.count(top, "rows", "rows")
    count = sum(s.rows for s in shards)
    if total != count:
        raise doc.bad("rows", f"expected the sum of the shards' rows, {count}, got {total}")
    names = doc.strings(doc.get(top, "names", list, "names"), "names")
    if len(names) != count:
        raise doc.bad("names", f"expected one per row, {count}, got {len(names)}")
    seed = doc.get(top, "seed", (int, type(None)), "seed") if "seed" in top else None
    class_names = top.get("class_names")
    return PackIndex(
        directory,
        inputs,
        labels,
        parts,
        shards,
        names,
        doc.get(top, "shuffled", bool, "shuffled") if "shuffled" in top else False,
        seed,
        None if class_names is None else doc.strings(class_names, "class_names"),
    )


def header_problem(index: PackIndex, i: int, j: int, checked: Checked) -> str | None:
    """Why shard ``i``'s file of part ``j`` contradicts the index (None if it does not)."""
    shard, part = index.shards[i], index.parts[j]
    at = f"shards[{i}].files[{j}]"
    if checked.reason == NO_SUCH_FILE:
        return "missing shard (no such file)"
    if checked.size is not None and checked.size != shard.sizes[j]:
        return f"damaged shard -- expected {shard.sizes[j]} bytes ({at}.bytes), got {checked.size}"
    if checked.header is None:
        return f"damaged shard -- {checked.reason}"
    header = checked.header
    for field, expected, got in (
        (f"parts[{j}].dtype", part.dtype.str, header.dtype.str),
        (f"parts[{j}].shape", npy.show_shape(part.shape), npy.show_shape(header.shape[1:])),
        (f"shards[{i}].rows", shard.rows, header.shape[0] if header.shape else None),
        ("fortran_order", False, header.fortran_order and len(header.shape) > 1),
    ):
        if expected != got:
            return (
                f"the shard and the index disagree -- {field}: expected {expected!r} (the "
                f"index), got {got!r} (the shard's header)"
            )
    if checked.reason is not None:
        return f"damaged shard -- {checked.reason}"
    return None


# --- writing ---------------------------------------------------------------------------------
def npy_header(dtype: np.dtype, shape: tuple[int, ...]) -> bytes:
    """The header ``np.save`` writes for a C-order array of ``dtype`` and ``shape``."""
    import io

    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buf, {"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False, "shape": shape}
    )
    return buf.getvalue()
