"""``npyio.pack``: many small ``.npy`` files into a few standard ``.npy`` shards and an index.

The sources are planned by `npyio.dataset`'s own `plan_dataset` (pairing, splits, the order), so
a pack holds exactly the elements, in exactly the order, that `npyio.dataset` of the same
sources yields. Local ``.npy`` files are then read in Python (`LocalReader`: each through
`check_file`, the reader and checks of ``npyio verify``, and `npy.payload_array`), a few
times faster for small files than through tf.data (bench/README.md, "Packing"); other sources
(object storage, ``.npz`` members) are read by `npyio.dataset`'s graph (`build`). The
reader is held to the backends' conformance cases, and tests keep the two writing the same
bytes. TensorFlow is imported only for those, for class folders and for a
shuffled order (`npyio.dataset`'s permutation): packing local ``.npy`` files in their order
imports none. Rows are written with numpy's header and plain writes
(`npyio._format.packed`), a batch of about `WRITE_BATCH_BYTES` at a time, so memory is bounded
by a few batches whatever the dataset's size. Reading a pack back is `npyio._sources.pack_plan`.

Before anything is written every file's header is checked against its part's spec, the check
`npyio verify` makes (`check_files`, and the spec's verdict through `LocalReader.reason`): a
part that mixes shapes or dtypes is refused naming the first odd file. ``None`` dims are
refused: a shard stacks rows of one shape, and `npyio.dataset` pads variable shapes per batch,
which a pack cannot store.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from npyio._format import npy
from npyio._format.files import is_local, is_remote, join, one_path, parent
from npyio._format.header import CHUNK
from npyio._format.packed import (
    INCOMPLETE,
    INDEX,
    PackIndex,
    PackPart,
    PackShard,
    shard_name,
    structure_to_json,
)
from npyio._io.files import makedirs, open_write, remove
from npyio._io.header import check_files
from npyio._io.packed import ShardFile, ours, state, write_index
from npyio._pipeline.options import (
    SHARD_SIZE,
    DatasetOptions,
    LoaderOptions,
    PackOptions,
    ReadOptions,
    SplitOptions,
    entry_point,
)
from npyio._pipeline.paths import PathSpec
from npyio._pipeline.structure import LEAF, flatten, leaf_names
from npyio._read.local import LocalReader
from npyio._sources.plan import DatasetPlan, plan_dataset
from npyio.errors import NpyFormatError

__all__ = ["WRITE_BATCH_BYTES", "PackSummary", "pack"]

#: Rows are read from the sources (and written) in batches of about this many bytes.
WRITE_BATCH_BYTES = 4 << 20
#: Files whose headers are checked at a time, before a pack.
_CHECK_SLICE = 1 << 14


@dataclass(frozen=True)
class PackSummary:
    """What `pack` wrote: the directory, rows, shards, the bytes of every shard, the parts
    (name, dtype, row shape) and the seconds it took."""

    out: str
    rows: int
    shards: int
    bytes: int
    parts: tuple[tuple[str, str, tuple[int, ...]], ...]
    seconds: float

    def to_json(self) -> dict[str, Any]:
        return {
            "out": self.out,
            "rows": self.rows,
            "shards": self.shards,
            "bytes": self.bytes,
            "parts": [{"name": n, "dtype": d, "shape": list(s)} for n, d, s in self.parts],
            "seconds": round(self.seconds, 3),
            "rows_per_second": round(self.rows / max(self.seconds, 1e-9), 1),
        }


def _stems(names: list[str]) -> list[str]:
    """A file-name stem per part: ``inputs``, ``inputs.image``, ``labels.1``; distinct."""
    out: list[str] = []
    for name in names:
        stem = re.sub(r"[^A-Za-z0-9_]+", ".", name).strip(".")
        while stem in out or stem == "order":
            stem += "_"
        out.append(stem)
    return out


def _part_names(plan: DatasetPlan) -> list[str]:
    names = leaf_names(plan.inputs, "inputs")
    if plan.labels is not None:
        names += leaf_names(plan.labels, "labels")
    elif plan.label_values is not None:
        names.append("labels")
    return names


def _refuse_variable(plan: DatasetPlan, names: list[str]) -> None:
    for spec, name in zip(plan.specs, names):
        if not spec.output.static:
            output = spec.output
            shape = "any shape" if output.shape is None else npy.show_shape(output.shape)
            raise ValueError(
                f"{name}: a pack stores rows of one shape, got {shape} (None dims) -- pass a "
                f"fixed shape= if every file has it, or pad the files to one shape first "
                f"(npyio.dataset pads per batch, which a pack cannot store)"
            )


def _check_headers(plan: DatasetPlan, names: list[str]) -> None:
    """Every file of every part against its spec, before anything is written.

    Raises:
        NpyFormatError: naming the first bad or odd file (the first element's, then the
            first part's).
    """
    first: tuple[int, int, NpyFormatError] | None = None
    for p, (column, spec) in enumerate(zip(plan.columns, plan.specs)):
        if spec.member is not None:  # .npz members: checked as they are decoded
            continue
        remote = bool(column) and is_remote(column[0])
        if remote:
            from npyio._pipeline.remote import REMOTE_THREADS
        # Locally one thread: a check is Python under the GIL (a read of a file's first bytes
        # and a dict lookup), and threads only contend for it: six threads were slower than one
        # (bench/README.md, "Packing"). On object storage each
        # check mostly waits on a request, so `REMOTE_THREADS` wait at once.
        jobs = REMOTE_THREADS if remote else 1
        read = LocalReader(spec, names[p])  # its verdicts: one per distinct header
        # a slice of files at a time, so that the verdicts held do not grow with the dataset
        for start in range(0, len(column), _CHECK_SLICE):
            files = column[start : start + _CHECK_SLICE]
            # on object storage a task per few files, so that every thread has requests to wait on
            chunk = max(1, len(files) // (4 * jobs)) if remote else CHUNK
            checks = check_files(files, jobs, limits=spec.limits, per_task=chunk)
            bad = next(
                (
                    (start + i, checked, reason)
                    for i, checked in enumerate(checks)
                    if (reason := read.reason(checked)) is not None
                ),
                None,
            )
            if bad is not None:
                i, checked, reason = bad
                if first is None or (i, p) < first[:2]:
                    first = (i, p, read.error(checked, reason))
                break
    if first is not None:
        raise first[2]


#: A batch of rows to write: each part's arrays, and the element index of each row.
Rows = tuple[list[np.ndarray], np.ndarray]


def _order(plan: DatasetPlan) -> np.ndarray:
    """The element indices in the order a pack writes them: `npyio.dataset`'s first epoch."""
    if not plan.loader.shuffle or plan.count <= 1:
        return np.arange(plan.count, dtype=np.int64)
    from npyio._pipeline.shuffle import shuffled_indices

    indices = shuffled_indices(plan.count, plan.loader.seed, reshuffle_each_iteration=False)
    return next(iter(indices.batch(plan.count))).numpy()


def _from_graph(plan: DatasetPlan, names: list[str]) -> Iterator[Rows]:
    """The rows as `npyio.dataset` of the sources yields them (with paths, mapped back to
    element indices)."""
    from npyio._sources.dataset import build

    position = {os.fsencode(p): i for i, p in enumerate(plan.file_paths)}
    for element in build(plan).as_numpy_iterator():
        leaves = flatten(plan.inputs, element[0])
        if plan.labels is not None:
            leaves += flatten(plan.labels, element[1])
        elif plan.label_values is not None:
            leaves.append(element[1])
        order = np.fromiter((position[p] for p in element[-1]), np.int64, len(element[-1]))
        yield [np.asarray(x) for x in leaves], order


def _local(plan: DatasetPlan) -> bool:
    """Whether every part is plain ``.npy`` files on the local file system."""
    return all(
        spec.member is None and all(map(is_local, column[:1]))
        for column, spec in zip(plan.columns, plan.specs)
    )


def _from_local_files(plan: DatasetPlan, names: list[str]) -> Iterator[Rows]:
    """The rows of `_from_graph`, read in Python by `LocalReader` (a bad or odd file fails
    the pack naming it, as the decoder would): on local files a pair of small files costs a
    fraction of tf.data's per-file path, and a pack is about reading every file once."""
    order = _order(plan)
    readers = [LocalReader(spec, name) for spec, name in zip(plan.specs, names)]
    batch = plan.loader.batch_size or 1
    for at in range(0, plan.count, batch):
        rows = order[at : at + batch]
        arrays = []
        for column, spec, read in zip(plan.columns, plan.specs, readers):
            out = np.empty(
                (len(rows), *(int(d or 0) for d in spec.output.shape or ())), spec.output.dtype
            )
            for j, i in enumerate(rows):
                out[j] = read.read(column[i])
            arrays.append(out)
        if plan.label_values is not None:
            arrays.append(plan.label_values[rows])
        yield arrays, rows


class _Shards:
    """The shards being written: shard ``i`` of every part open together, rolled over every
    ``per_shard`` rows."""

    def __init__(self, out: str, parts: list[PackPart], count: int, per_shard: int) -> None:
        self.out, self.parts, self.count, self.per_shard = out, parts, count, per_shard
        self.k = max(1, -(-count // per_shard))
        self.done: list[PackShard] = []
        self.open: list[ShardFile] = []
        self.left = 0

    def _start(self) -> None:
        i = len(self.done)
        rows = min(self.per_shard, self.count - i * self.per_shard)
        for part in self.parts:
            name = shard_name(part.stem, i, self.k)
            self.open.append(ShardFile(self.out, name, part.dtype, rows, part.shape))
        self.left = rows

    def _commit(self) -> None:
        committed = [f.commit() for f in self.open]
        rows = self.open[0].rows
        self.open = []
        self.done.append(
            PackShard(
                rows,
                tuple(c[0] for c in committed),
                tuple(c[1] for c in committed),
                tuple(c[2] for c in committed),
            )
        )

    def write(self, arrays: list[np.ndarray]) -> None:
        n, at = len(arrays[0]), 0
        while at < n:
            if not self.open:
                self._start()
            take = min(self.left, n - at)
            for f, a in zip(self.open, arrays):
                f.append(a[at : at + take])
            at += take
            self.left -= take
            if self.left == 0:
                self._commit()

    def abort(self) -> None:
        for f in self.open:
            f.abort()
        self.open = []


def _start(out: str, overwrite: bool) -> None:
    """Makes ``out`` ready: the marker first, then whatever an earlier pack left there
    removed (an interrupted one's files, or with ``overwrite`` a complete one's)."""
    found = state(out)
    if found == "complete" and not overwrite:
        raise FileExistsError(
            f"{out}: already holds a pack ({INDEX}); pass overwrite=True (npyio pack "
            f"--overwrite) to replace it"
        )
    makedirs(out)
    with open_write(join(out, INCOMPLETE)) as f:
        f.write(b"npyio pack in progress: this directory is not a complete pack\n")
    remove(join(out, INDEX))  # the old pack stops being one before its shards go
    for name in ours(out):
        remove(join(out, name))


def _where(path: str) -> str:
    """``path`` made comparable: a local one absolute, links resolved; a URL as given."""
    return os.path.realpath(path) if is_local(path) else path.rstrip("/")


def _refuse_overlap(out: str, files: list[str], root: str | None) -> None:
    """Refuses an ``out`` among the source files (its shards would be read with them on the
    next run) or inside the class folders' ``root`` (it would be listed as one more class),
    before anything is written."""
    where = _where(out)
    if root is not None and where.startswith(_where(root).rstrip("/") + "/"):
        raise ValueError(
            f"{out}: is inside {root}, whose next listing would take it for a class "
            f"folder; write the pack outside {root}"
        )
    # one path per directory: a dataset has many files in few. Paths with the same text up to
    # their last "/" have the same parent (dirname reads only that), so that text groups them
    # without a dirname per file, a few times faster on many paths.
    heads: dict[str, str] = {}
    for path in files:
        heads.setdefault(path[: path.rfind("/") + 1], path)
    for path in heads.values():
        if _where(parent(path) or ".") == where:
            raise ValueError(
                f"{out}: holds source files ({path}), which its shards would join; write "
                f"the pack to a directory of its own"
            )


def _clean_after_failure(out: str) -> None:
    """After a failed write: no index, no shard (the marker stays: the pack is incomplete)."""
    for name in ours(out):
        # best effort: the disk may be in a bad state; the marker says it all
        with contextlib.suppress(Exception):
            remove(join(out, name))


class _Sources(NamedTuple):
    """What `pack` packs: the sources of `npyio.dataset`; for class folders, the class names
    and the folders' root."""

    inputs: PathSpec
    labels: PathSpec | None
    class_names: list[str] | None = None
    root: str | None = None


def _sources(inputs: PathSpec, labels: PathSpec | None, from_directory: bool) -> _Sources:
    """The sources as given, or (``from_directory``) the class folders' files and indices."""
    if not from_directory:
        return _Sources(inputs, labels)
    from npyio._sources.directory import index_directory

    if labels is not None:
        raise ValueError("from_directory: the labels are the class folders; give no labels")
    root = one_path(inputs, "inputs")
    listed = index_directory(root)
    return _Sources(listed.paths, listed.labels, listed.class_names, root)


def _plan_pack(
    sources: _Sources, read: ReadOptions, options: PackOptions
) -> tuple[DatasetPlan, list[str], list[PackPart]]:
    """`npyio.dataset`'s plan of the sources (in batches of about `WRITE_BATCH_BYTES`), the
    parts' names, and the parts a shard holds (the last: each row's place in the sources)."""
    loader = LoaderOptions(
        batch_size=1,  # replaced below, once the row size is known
        shuffle=options.shuffle,
        seed=options.seed,
        reshuffle_each_iteration=False,
        with_paths=True,
    )
    planned = plan_dataset(
        sources.inputs, sources.labels, DatasetOptions(read, loader, SplitOptions())
    )
    assert isinstance(planned, DatasetPlan)
    names = _part_names(planned)
    _refuse_variable(planned, names)
    dtypes = [spec.output.dtype for spec in planned.specs]
    shapes = [tuple(int(d or 0) for d in spec.output.shape or ()) for spec in planned.specs]
    if planned.label_values is not None:
        dtypes.append(planned.label_values.dtype.newbyteorder("="))
        shapes.append(tuple(planned.label_values.shape[1:]))
    parts = [PackPart(n, s, d, sh) for n, s, d, sh in zip(names, _stems(names), dtypes, shapes)] + [
        PackPart("order", "order", np.dtype(np.int64), ())
    ]
    batch = max(1, min(planned.count, WRITE_BATCH_BYTES // sum(p.row_bytes for p in parts)))
    plan = dataclasses.replace(planned, loader=dataclasses.replace(loader, batch_size=batch))
    return plan, names, parts


def _write_pack(
    out: str,
    plan: DatasetPlan,
    names: list[str],
    parts: list[PackPart],
    options: PackOptions,
    class_names: list[str] | None,
    progress: Callable[[int, int], None] | None,
) -> PackIndex:
    """Writes the shards, then the index. On any failure the shards written so far are
    removed (the marker stays), and a failed write is an `OSError` naming ``out``."""
    widest = max(max(p.row_bytes for p in parts), 1)
    shards = _Shards(out, parts, plan.count, max(1, options.shard_size // widest))
    rows_of = _from_local_files if _local(plan) else _from_graph
    try:
        for arrays, order in rows_of(plan, names):
            shards.write([*arrays, order])
            if progress is not None:
                progress(len(order), plan.count)
        index = PackIndex(
            out,
            structure_to_json(plan.inputs),
            None
            if plan.labels is None and plan.label_values is None
            else structure_to_json(LEAF if plan.labels is None else plan.labels),
            tuple(parts),
            tuple(shards.done),
            tuple(plan.file_paths),
            options.shuffle,
            options.seed,
            None if class_names is None else tuple(class_names),
        )
        write_index(index)
    except BaseException as e:
        shards.abort()
        _clean_after_failure(out)
        if isinstance(e, OSError) or type(e).__name__ in ("ResourceExhaustedError", "UnknownError"):
            raise OSError(
                getattr(e, "errno", None),
                f"{out}: npyio pack failed while writing -- {e}; no index was written and the "
                f"shards written so far were removed",
            ) from e
        raise
    return index


@entry_point
def pack(
    inputs: PathSpec,
    labels: PathSpec | None = None,
    *,
    out: str,
    shard_size: int = SHARD_SIZE,
    shuffle: bool = False,
    seed: int | None = None,
    overwrite: bool = False,
    from_directory: bool = False,
    check: bool = True,
    dtype: object = None,
    shape: object = None,
    label_dtype: object = None,
    label_shape: object = None,
    key: str | None = None,
    label_key: str | None = None,
    max_file_size: int | None = None,
    max_header_size: int = npy.MAX_HEADER_SIZE,
    progress: Callable[[int, int], None] | None = None,
) -> PackSummary:
    """Packs the sources of `npyio.dataset` into standard ``.npy`` shards and an index in ``out``.

    ``npyio.dataset(out)`` then yields exactly what ``npyio.dataset(inputs, labels)`` yields
    (the same ``element_spec``, and the same order unless ``shuffle``), reading a few large
    files instead of many small ones. Every shard is an ordinary ``.npy`` file (``np.load``,
    ``np.memmap``); ``npyio verify out`` checks them against the index.

    Args:
        inputs, labels: As for `npyio.dataset`: directories, globs, lists, dict or tuple
            sources, label values, ``.npz`` members (``key``, ``label_key``). With
            ``from_directory``, ``inputs`` is a directory of class folders and the labels are
            the class indices (int32), as ``npyio.dataset_from_directory(label_mode="int")``.
        out: The directory to write (local or any TensorFlow file system: ``gs://``, ...).
        shard_size: Bytes per shard file, about (256 MB); shard ``i`` of every part holds
            the same rows.
        shuffle, seed: Write the rows in a shuffled order (once, with ``seed``).
        overwrite: Replace a pack already in ``out`` (refused otherwise).
        check: Check every file's header before writing (a part that mixes dtypes or shapes
            is refused, naming the first odd file). Without, an odd file still fails the pack
            when it is read (naming it; the partial pack is removed, its marker left), in
            less time (bench/README.md, "Packing").
        dtype, shape, label_dtype, label_shape, key, label_key, max_file_size,
            max_header_size: As for `npyio.dataset`. Shapes must be fixed (no ``None`` dims).
        progress: Called after each batch with the rows it wrote and the rows in all.

    Returns:
        A `PackSummary`.

    Raises:
        ValueError: for bad sources or arguments (as `npyio.dataset`), ``None`` dims, an
            ``out`` that holds source files or lies inside the class folders.
        NpyFormatError: for a bad file, or one whose dtype or shape differs from its part's.
        TypeError: for a keyword ``pack`` has not (the message names the nearest one, or
            which entry point has it).
        FileExistsError: when ``out`` holds a pack and not ``overwrite``.
        OSError: when writing fails (a full disk): no index is written, and the shards
            written so far are removed.

    Example:
        >>> import numpy as np, npyio, tensorflow as tf
        >>> for i in range(5):
        ...     with tf.io.gfile.GFile(f"ram://doc/pack/x/{i}.npy", "wb") as f:
        ...         np.save(f, np.full((2,), i, "float32"))
        >>> summary = npyio.pack("ram://doc/pack/x", [0, 1, 0, 1, 1], out="ram://doc/packed")
        >>> summary.rows, summary.shards
        (5, 1)
        >>> ds = npyio.dataset("ram://doc/packed", batch_size=2)
        >>> [spec.shape.as_list() for spec in ds.element_spec]
        [[None, 2], [None]]
        >>> [y.numpy().tolist() for _, y in ds]
        [[0, 1], [0, 1], [1]]
    """
    started = time.perf_counter()
    options = PackOptions(
        shard_size=shard_size,
        shuffle=shuffle,
        seed=seed,
        overwrite=overwrite,
        check=check,
        from_directory=from_directory,
    )
    out = one_path(out, "out")
    read = ReadOptions(  # what each part loads as
        dtype=dtype,
        shape=shape,
        label_dtype=label_dtype,
        label_shape=label_shape,
        key=key,
        label_key=label_key,
        max_file_size=max_file_size,
        max_header_size=max_header_size,
    )
    if options.shuffle and options.seed is None:  # recorded in the index, so the order can be
        from npyio._pipeline.shuffle import resolve_seed  # written again

        options = dataclasses.replace(options, seed=resolve_seed(None))
    sources = _sources(inputs, labels, options.from_directory)
    plan, names, parts = _plan_pack(sources, read, options)
    if options.check:
        _check_headers(plan, names)
    _refuse_overlap(out, [path for column in plan.columns for path in column], sources.root)
    _start(out, options.overwrite)
    index = _write_pack(out, plan, names, parts, options, sources.class_names, progress)
    remove(join(out, INCOMPLETE))
    return PackSummary(
        out,
        index.count,
        len(index.shards),
        sum(sum(s.sizes) for s in index.shards),
        tuple((p.name, p.dtype.name, p.shape) for p in parts[:-1]),
        time.perf_counter() - started,
    )
