"""The foreground index of segmentation masks: where each class lies in each case, for patch
sampling (`npyio.Foreground`, ``foreground=`` of `npyio.dataset`).

For every mask (a label file), the index keeps, per class present, at most
`npyio.Foreground.samples` voxel locations drawn uniformly without replacement (nnU-Net keeps
10,000 per class and case, for the same reason: a centre drawn from them is a voxel drawn
uniformly from the class, without holding every voxel). The graph picks a class among those
present, then a location (`npyio._graph.window.foreground_centres`).

Building it reads every mask whole, once: each mask's entry is cached under the cache directory
(`npyio._io.cache.cache_root`, ``foreground/``), never beside the data (which may be read-only,
or on ``gs://``), keyed by the mask's path, size and modification time and by the classes and
samples asked, so that a mask that changes is indexed again. Several processes starting at once
(hosts, tf.data service workers, a test runner's) build under one ``flock``, as the native
reader is built: the first builds, the others wait and then find the entries. Each entry is
written to a temporary file and moved into place, so a reader never sees half of one. TF-free.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import sys
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from npyio._format import npy
from npyio._format.files import is_local
from npyio._format.header import Limits
from npyio._format.window import Foreground
from npyio._io.cache import cache_root, locked
from npyio._io.files import gfile, open_read
from npyio._io.header import check_file
from npyio.errors import NpyFormatError

__all__ = ["LOCK_TIMEOUT_S", "ForegroundIndex", "build_index", "index_dir"]

#: Bumped when an entry's layout or sampling changes, so that old entries are not read.
VERSION = 1
#: How long a process waits for another one's build before building the rest itself (correct
#: either way: entries are written whole).
LOCK_TIMEOUT_S = 600.0
#: The sampling's seed: the same mask gives the same entry on every host.
SEED = 1234


@dataclass(frozen=True, eq=False)
class ForegroundIndex:
    """The foreground locations of a plan's cases, as flat arrays the graph gathers from.

    Case ``i`` has ``classes[i]`` classes present, whose ranges are ``first[i]`` onwards; range
    ``r`` (class ``labels[r]``) holds ``counts[r]`` locations from ``starts[r]`` in ``coords``
    (int32 ``[T, rank]``: each voxel's index on every axis of the mask). Never empty: a dummy
    range and location pad arrays that would be, so that a gather never reads past an end.
    """

    first: np.ndarray  # int64 [cases]
    classes: np.ndarray  # int64 [cases]
    labels: np.ndarray  # int64 [ranges]
    starts: np.ndarray  # int64 [ranges]
    counts: np.ndarray  # int64 [ranges]
    coords: np.ndarray  # int32 [locations, rank]

    def locations(self, case: int) -> dict[int, np.ndarray]:
        """Case ``case``'s locations by class (for the tests and ``npyio verify``)."""
        out = {}
        for r in range(self.first[case], self.first[case] + self.classes[case]):
            out[int(self.labels[r])] = self.coords[self.starts[r] : self.starts[r] + self.counts[r]]
        return out


def index_dir() -> Path:
    """Where the entries go: ``foreground/`` under the cache directory."""
    return cache_root() / "foreground"


def _stat(path: str) -> tuple[int, int]:
    """``path``'s size and modification time (ns), what an entry is keyed by."""
    if is_local(path):
        st = os.stat(path)
        return st.st_size, st.st_mtime_ns
    st = gfile(path).stat(path)
    return int(st.length), int(st.mtime_nsec)


def _entry_name(path: str, member: str | None, foreground: Foreground) -> str:
    """The cache file of ``path``'s entry, from everything that decides it."""
    where = os.path.realpath(path) if is_local(path) else path
    size, mtime = _stat(path)
    key = [VERSION, where, member, size, mtime, foreground.classes, foreground.samples]
    return hashlib.sha256(json.dumps(key).encode()).hexdigest()[:32] + ".npz"


def _mask(path: str, member: str | None, limits: Limits) -> np.ndarray:
    """The whole mask, decoded as npyio decodes it (`npy.payload_array`).

    Raises:
        NpyFormatError: naming the file, for one npyio would refuse.
    """
    if member is None:
        checked = check_file(path, None, limits, data=True)
        return npy.payload_array(checked.raise_if_bad(), checked.data)
    try:
        with open_read(path) as f, zipfile.ZipFile(f) as z:
            data = z.read(member + ".npy")
    except (OSError, KeyError, zipfile.BadZipFile) as e:
        raise NpyFormatError(
            path, f"cannot read member {member!r} for the foreground: {e}"
        ) from None
    header = npy.read_header(io.BytesIO(data), f"{path}[{member}]")
    npy.check_payload(header, len(data), f"{path}[{member}]")
    return npy.payload_array(header, data[header.data_offset :])


def _locate(mask: np.ndarray, foreground: Foreground) -> dict[int, np.ndarray]:
    """The sampled locations of each class present in ``mask``: int32 ``[n, rank]``."""
    if mask.dtype.kind not in "biu":
        raise ValueError(f"a mask holds integer class labels, not {mask.dtype.name}")
    flat = np.ravel(mask)  # C order: the coordinates below are the array's own indices
    present = np.unique(flat)
    wanted = [int(c) for c in present if c != 0] if foreground.classes is None else []
    if foreground.classes is not None:
        wanted = [c for c in foreground.classes if np.any(present == c)]
    rng = np.random.default_rng(SEED)
    out = {}
    for c in wanted:
        where = np.flatnonzero(flat == c)
        if len(where) > foreground.samples:
            where = np.sort(rng.choice(where, foreground.samples, replace=False))
        out[c] = np.stack(np.unravel_index(where, mask.shape), axis=-1).astype(np.int32)
    return out


def _entry(path: str, member: str | None, foreground: Foreground) -> dict[int, np.ndarray] | None:
    """``path``'s entry, read from the cache, else None (none yet, or unreadable: built
    again)."""
    try:
        with np.load(index_dir() / _entry_name(path, member, foreground)) as z:
            return {int(c): z[f"c{c}"] for c in z["labels"]}
    except (OSError, KeyError, ValueError, zipfile.BadZipFile):
        return None


def _write(name: str, located: dict[int, np.ndarray]) -> None:
    """One entry, written whole: a temporary file moved into place."""
    directory = index_dir()
    tmp = directory / f".{name}.{os.getpid()}.tmp"
    arrays: dict[str, np.ndarray] = {f"c{c}": v for c, v in located.items()}
    arrays["labels"] = np.array(sorted(located), np.int64)
    with open(tmp, "wb") as f:
        np.savez(f, **arrays)  # type: ignore[arg-type]  # (numpy's stub types allow_pickle)
    os.replace(tmp, directory / name)


def build_index(
    paths: Sequence[str],
    member: str | None,
    foreground: Foreground,
    rank: int,
    limits: Limits = Limits(),
    *,
    skip_bad: bool = False,
) -> ForegroundIndex:
    """The foreground index of the masks ``paths`` (``.npz`` members ``member``) of ``rank``
    dims, from the cache, building what it lacks under its lock (module docstring).

    Raises:
        NpyFormatError: naming a mask npyio cannot read, or one of floats (not ``skip_bad``:
            then that case has no foreground, and the reader skips its file as it would).
    """
    located = [_entry(p, member, foreground) for p in paths]
    missing = [i for i, e in enumerate(located) if e is None]
    if missing:
        directory = index_dir()
        try:
            directory.mkdir(parents=True, exist_ok=True)
            with locked(directory / "lock", LOCK_TIMEOUT_S):
                _build(paths, member, foreground, limits, located, missing, skip_bad)
        except (TimeoutError, OSError) as e:
            # another process is slow, or the cache cannot be written (a read-only home): build
            # what is still missing here, cached where it can be
            if not isinstance(e, TimeoutError):
                print(
                    f"npyio: cannot cache the foreground index in {directory}: {e}", file=sys.stderr
                )
            missing = [i for i, entry in enumerate(located) if entry is None]
            cached = isinstance(e, TimeoutError)
            _build(paths, member, foreground, limits, located, missing, skip_bad, cached)
    return _flat([e or {} for e in located], rank)


def _build(
    paths: Sequence[str],
    member: str | None,
    foreground: Foreground,
    limits: Limits,
    located: list[dict[int, np.ndarray] | None],
    missing: list[int],
    skip_bad: bool,
    cached: bool = True,
) -> None:
    """Fills ``located`` at ``missing``: from entries another process wrote while this one
    waited, else read from the masks (and written, unless ``cached`` is False: the cache
    could not be made, as the caller said)."""
    todo = []
    for i in missing:
        located[i] = _entry(paths[i], member, foreground)
        if located[i] is None:
            todo.append(i)
    if todo:
        where = f", once (cached in {index_dir()})" if cached else " (not cached)"
        print(f"npyio: indexing the foreground of {len(todo)} masks{where}", file=sys.stderr)
    for i in todo:
        try:
            found = _locate(_mask(paths[i], member, limits), foreground)
        except NpyFormatError:
            if skip_bad:
                located[i] = {}
                continue
            raise
        except ValueError as e:
            if skip_bad:
                located[i] = {}
                continue
            raise NpyFormatError(paths[i], f"foreground: {e}") from None
        located[i] = found
        if cached:
            with contextlib.suppress(OSError):  # a full disk: uncached, as the masks say
                _write(_entry_name(paths[i], member, foreground), found)


def _flat(located: Sequence[dict[int, np.ndarray]], rank: int) -> ForegroundIndex:
    """The cases' locations as `ForegroundIndex`'s flat arrays."""
    first: list[int] = []
    classes: list[int] = []
    labels: list[int] = []
    starts: list[int] = []
    counts: list[int] = []
    coords: list[np.ndarray] = []
    at = 0
    for entry in located:
        first.append(len(labels))
        classes.append(len(entry))
        for c in sorted(entry):
            labels.append(c)
            starts.append(at)
            counts.append(len(entry[c]))
            coords.append(entry[c])
            at += len(entry[c])
    if not labels:  # no foreground anywhere: one dummy range, never chosen (classes are 0)
        labels, starts, counts = [0], [0], [1]
    if at == 0:
        coords = [np.zeros((1, rank), np.int32)]

    def ints(values: list[int]) -> np.ndarray:
        return np.asarray(values, np.int64)

    return ForegroundIndex(
        ints(first), ints(classes), ints(labels), ints(starts), ints(counts), np.concatenate(coords)
    )
