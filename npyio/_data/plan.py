"""Planning a dataset: which files, what every element loads as, and how to build the graph.

Plain Python: this module imports no TensorFlow, and its plans are plain values that tests
check without it. `npyio.dataset` is ``build(plan_dataset(...))``; ``npyio verify`` applies the
very same `derive_spec` and `Spec.reason` to every file, so that it passes exactly the files
``dataset`` delivers.

- **Spec.** Each part of an element (the inputs, the labels) has a `Spec`: a dtype and a
  (possibly partial) shape, from the arguments, else from the first file's header. Arguments
  that contradict that header are refused when the dataset is built, naming the file.
- **Check.** Every file must have the spec's dtype and a shape the spec's shape matches
  (``None`` dims match any size): `Spec.reason`, the same rule the graph parser applies.
- **Strategy.** `choose_strategy` picks one of the two graph builders of `npyio._data.dataset`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from npyio._data import paths as P
from npyio._npy import format as F
from npyio._npy.head import Checked, Hint, Limits, make_hint, read_header
from npyio._npz.format import inspect_npz_prefix, label
from npyio.errors import NpyFormatError

__all__ = [
    "AUTOTUNE",
    "BACKENDS",
    "BATCH_THEN_DECODE",
    "DECODE_THEN_BATCH",
    "DatasetPlan",
    "Spec",
    "choose_strategy",
    "derive_spec",
    "plan_dataset",
]

#: ``tf.data.AUTOTUNE``, without importing TensorFlow.
AUTOTUNE = -1
BACKENDS = ("graph", "tfio", "py_function")
#: Batch the raw bytes, then decode a whole batch with one set of ops (small files).
BATCH_THEN_DECODE = "batch-then-decode"
#: Decode file by file in the parallel map, then batch (large files, variable shapes, errors).
DECODE_THEN_BATCH = "decode-then-batch"
#: Files at least this large are decoded one by one (decode_raw of the whole file, then an
#: aligned slice that shares its buffer) rather than as a batch of raw bytes: for them copies,
#: not per-op overhead, are the cost (bench/README.md has the measurements).
LARGE_FILE = 512 * 1024


@dataclass(frozen=True)
class Spec:
    """What one part of every element loads as: a dtype (native order) and a shape whose
    ``None`` dims match any size (``shape=None``: any shape). ``hint`` is the header that
    files are expected to share, for the graph's fast path; ``member`` the ``.npz`` member."""

    dtype: np.dtype
    shape: tuple[int | None, ...] | None
    hint: Hint | None = None
    member: str | None = None

    @property
    def static(self) -> bool:
        """Whether every element has the same shape (batches need no padding)."""
        return self.shape is not None and all(d is not None for d in self.shape)

    def reason(self, header: F.NpyHeader, path: str) -> str | None:
        """Why a file with ``header`` does not load as this spec (None: it does)."""
        try:
            F.check_declared(header, self.dtype, self.shape, path)
        except NpyFormatError as e:
            return e.reason
        return None


def _cast_hint(what: str, arg: str, want: np.dtype, paired: bool) -> str:
    """How to get ``want`` from files of another dtype: read them as they are, then cast the
    part that ``what`` names (and only it) in a map over the dataset's elements."""
    cast = f"tf.cast({'x' if what == 'inputs' else 'y'}, tf.{want.name})"
    if not paired:
        fn = f"lambda x: {cast}"
    elif what == "inputs":
        fn = f"lambda x, y: ({cast}, y)"
    else:
        fn = f"lambda x, y: (x, {cast})"
    return (
        f"; to load the {what} as {want.name}, leave {arg} out (it is read from the files) "
        f"and cast: ds = ds.map({fn})"
    )


def _castable(want: np.dtype, got: np.dtype) -> bool:
    """Whether a user who asks for ``want`` from files of ``got`` plausibly wants a cast:
    numbers (and bools) to numbers, except complex to real, which drops the imaginary part."""
    numeric = want.kind in "biufc" and got.kind in "biufc"
    return numeric and not (got.kind == "c" and want.kind != "c")


def _contradiction(
    header: F.NpyHeader,
    dtype: np.dtype | None,
    shape: tuple[int | None, ...] | None,
    what: str,
    path: str,
    paired: bool,
) -> NpyFormatError | None:
    """The build-time error for a ``dtype``/``shape`` argument the first header contradicts:
    ``"{path}: dtype mismatch -- expected label_dtype=int64, got float32; ..."``."""
    prefix = "" if what == "inputs" else "label_"
    got = header.dtype.newbyteorder("=")
    if dtype is not None and got != dtype:
        reason = F.dtype_mismatch(f"{prefix}dtype={dtype.name}", got.name)
        if _castable(dtype, got):
            reason += _cast_hint(what, f"{prefix}dtype", dtype, paired)
        return NpyFormatError(path, reason)
    if shape is not None:
        mismatch = Spec(got, shape).reason(header, path)
        if mismatch is not None:
            return NpyFormatError(
                path, mismatch.replace(" -- expected ", f" -- expected {prefix}shape=", 1)
            )
    return None


def derive_spec(
    first: str,
    dtype: object = None,
    shape: object = None,
    what: str = "inputs",
    *,
    member: str | None = None,
    limits: Limits = Limits(),
    paired: bool | None = None,
) -> Spec:
    """The spec of one part: ``dtype`` and ``shape`` from the arguments, else from ``first``'s
    header, read once, in Python. When both are given no file is read (every file is checked
    against them as it is decoded); otherwise the given one is checked against the header now,
    and the header's bytes serve as the fast path's hint. ``paired`` says whether elements
    are ``(x, y)`` pairs, for the cast an error suggests (default: only for labels).

    Raises:
        NpyFormatError: naming ``first``: its header is bad, or it contradicts the ``dtype`` or
            ``shape`` given (with a hint on how to cast, for a dtype).
        TypeError: for an unsupported dtype or a bad shape.
    """
    dt = None if dtype is None else F.parse_dtype(dtype)
    dims = F.parse_shape(shape)
    if dt is not None and shape is not None:
        return Spec(dt, dims, make_hint(dt, dims), member)
    if member is None:
        checked: Checked = read_header(first, limits)
        header, prefix = checked.raise_if_bad(), checked.prefix
    else:
        header, prefix = inspect_npz_prefix(first, member)
    where = first if member is None else label(first, member)
    paired = what == "labels" if paired is None else paired
    error = _contradiction(header, dt, dims, what, where, paired)
    if error is not None:
        raise error
    dt = header.dtype.newbyteorder("=") if dt is None else dt
    dims = header.shape if shape is None else dims
    return Spec(dt, dims, make_hint(dt, dims, prefix) or make_hint(dt, dims), member)


def choose_strategy(
    specs: tuple[Spec, ...], batch_size: int | None, ignore_errors: bool, backend: str
) -> str:
    """Batch-then-decode when it is both possible and worth it: batches of static, small
    files of the graph backend, where no error is expected (an error would fail a whole
    batch, and ``ignore_errors`` skips files one by one). Decode-then-batch otherwise."""
    possible = (
        batch_size is not None
        and backend == "graph"
        and not ignore_errors
        and all(spec.static for spec in specs)
    )
    small = all(spec.hint is not None and spec.hint.size < LARGE_FILE for spec in specs)
    return BATCH_THEN_DECODE if possible and small else DECODE_THEN_BATCH


def _positive(value: object, what: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{what} must be a positive int or None, got {value!r}")
    return value


@dataclass(frozen=True)
class DatasetPlan:
    """Everything `npyio.dataset` decides before it builds a graph."""

    columns: tuple[tuple[str, ...], ...]  # the paths of each part, paired and sharded
    specs: tuple[Spec, ...]
    strategy: str
    batch_size: int | None = None
    shuffle: bool = False
    seed: int | None = None
    reshuffle_each_iteration: bool = True
    drop_remainder: bool = False
    num_parallel_calls: int | None = AUTOTUNE
    deterministic: bool | None = None
    prefetch: int | None = AUTOTUNE
    backend: str = "graph"
    ignore_errors: bool = False
    limits: Limits = field(default_factory=Limits)

    @property
    def count(self) -> int:
        """Elements in one epoch (before ``ignore_errors`` skips any)."""
        return len(self.columns[0])


def plan_dataset(
    inputs: P.PathSpec,
    labels: P.PathSpec | None = None,
    *,
    batch_size: int | None = None,
    shuffle: bool = False,
    seed: int | None = None,
    reshuffle_each_iteration: bool = True,
    drop_remainder: bool = False,
    dtype: object = None,
    shape: object = None,
    label_dtype: object = None,
    label_shape: object = None,
    num_parallel_calls: int | None = AUTOTUNE,
    deterministic: bool | None = None,
    prefetch: int | None = AUTOTUNE,
    backend: str = "graph",
    ignore_errors: bool = False,
    shard: object = None,
    key: str | None = None,
    label_key: str | None = None,
    max_file_size: int | None = None,
    max_header_size: int = F.MAX_HEADER_SIZE,
) -> DatasetPlan:
    """Resolves, pairs and shards the sources and derives the specs (see `npyio.dataset`)."""
    limits = Limits(max_header_size, max_file_size)
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r} -- expected one of {', '.join(BACKENDS)}")
    if key is not None and max_file_size is not None:
        raise ValueError("max_file_size is not supported with key (.npz archives)")
    if key is None and label_key is not None:
        raise ValueError("label_key needs key: it names a member of .npz archives")
    if key is not None and backend != "graph":
        raise ValueError(f"key (.npz archives) needs backend='graph', got {backend!r}")
    batch_size = _positive(batch_size, "batch_size")
    suffix = ".npy" if key is None else ".npz"
    xs_source = P.resolve(inputs, "inputs", suffix)
    ys_source = None if labels is None else P.resolve(labels, "labels", suffix)
    xs = xs_source.paths
    ys: list[str] | None = None
    if ys_source is not None:
        xs, ys = P.pair(xs_source, ys_source)
    elif label_key is not None:
        ys = list(xs)  # inputs and labels are members of the same archives
    where = P.parse_shard(shard)
    if where is not None:
        total = len(xs)
        xs = P.shard_list(xs, *where)
        ys = None if ys is None else P.shard_list(ys, *where)
        if not xs:
            raise ValueError(f"shard {where[1]} of {where[0]} has no files ({total} in all)")
    paired = ys is not None
    specs = [derive_spec(xs[0], dtype, shape, "inputs", member=key, limits=limits, paired=paired)]
    if ys is not None:
        member = key if label_key is None else label_key
        specs.append(
            derive_spec(
                ys[0], label_dtype, label_shape, "labels", member=member, limits=limits, paired=True
            )
        )
    columns = (tuple(xs),) if ys is None else (tuple(xs), tuple(ys))
    return DatasetPlan(
        columns=columns,
        specs=tuple(specs),
        strategy=choose_strategy(tuple(specs), batch_size, ignore_errors, backend),
        batch_size=batch_size,
        shuffle=shuffle,
        seed=seed,
        reshuffle_each_iteration=reshuffle_each_iteration,
        drop_remainder=drop_remainder,
        num_parallel_calls=num_parallel_calls,
        deterministic=deterministic,
        prefetch=prefetch,
        backend=backend,
        ignore_errors=ignore_errors,
        limits=limits,
    )


# --- npyio.rows -------------------------------------------------------------------------------
#: Bytes per decoded chunk (per side): the unit of reading and decoding.
CHUNK_BYTES = 1 << 20
#: When shuffling, files are cut into pieces of about this many bytes (per side).
BLOCK_BYTES = 8 << 20
#: Pieces read at once when shuffling, if num_parallel_reads is AUTOTUNE.
CYCLE = 8


@dataclass(frozen=True)
class RowsFile:
    path: str
    header: F.NpyHeader

    @property
    def nrows(self) -> int:
        return self.header.shape[0]

    @property
    def little_endian(self) -> bool:
        dt = self.header.dtype
        return dt.byteorder == "<" or (dt.byteorder in "|=" and F.NATIVE_ORDER == "<")


@dataclass(frozen=True)
class RowsSide:
    """One side (inputs or labels): its files, and what every one of their rows looks like."""

    files: tuple[RowsFile, ...]
    dtype: np.dtype  # native order
    row_shape: tuple[int, ...]
    #: The byte order of every file when they all agree, else None (decided per piece).
    little_endian: bool | None

    @property
    def row_bytes(self) -> int:
        return int(np.prod(self.row_shape, dtype=np.int64)) * self.dtype.itemsize


def _rows_file(path: str) -> RowsFile:
    """Reads ``path``'s header and size and checks that its rows can be streamed."""
    header = read_header(path, payload=True).raise_if_bad()
    if not header.shape:
        raise NpyFormatError(
            path, "a 0-d array has no rows -- expected an array with ndim >= 1, got shape ()"
        )
    if header.fortran_order and len(header.shape) >= 2:
        raise NpyFormatError(
            path,
            "Fortran-order arrays cannot be streamed by rows -- expected fortran_order False "
            f"for shape {F.show_shape(header.shape)}, got True; rewrite the file in C order, e.g. "
            f"np.save(path, np.ascontiguousarray(np.load(path)))",
        )
    return RowsFile(path, header)


def _rows_side(paths: list[str]) -> RowsSide:
    """Checks every file of one side and that they all have the first one's dtype and row shape."""
    files = tuple(_rows_file(p) for p in paths)
    first = files[0]
    dtype = first.header.dtype.newbyteorder("=")
    row_shape = first.header.shape[1:]
    for f in files[1:]:
        if f.header.dtype.newbyteorder("=") != dtype:
            raise NpyFormatError(
                f.path,
                F.dtype_mismatch(dtype.name, f.header.dtype.name)
                + f" (the dtype of the first file, {first.path})",
            )
        if f.header.shape[1:] != row_shape:
            raise NpyFormatError(
                f.path,
                "row shape mismatch -- expected "
                f"{F.show_shape(row_shape)}, got {F.show_shape(f.header.shape[1:])} "
                f"(the shape of a row of the first file, {first.path})",
            )
    orders = {f.little_endian for f in files}
    return RowsSide(files, dtype, row_shape, orders.pop() if len(orders) == 1 else None)


def pieces(counts: list[int], lo: int, hi: int, block: int | None) -> list[tuple[int, int, int]]:
    """(file index, first row, end row) runs covering global rows [lo, hi), cut every ``block``
    rows when ``block`` is set."""
    out: list[tuple[int, int, int]] = []
    start_of_file = 0
    for j, n in enumerate(counts):
        s, e = max(lo, start_of_file) - start_of_file, min(hi, start_of_file + n) - start_of_file
        start_of_file += n
        step = block or max(e - s, 1)
        out.extend((j, a, min(a + step, e)) for a in range(s, e, step))
    return out


@dataclass(frozen=True)
class RowsPlan:
    """Everything `npyio.rows` decides before it builds a graph: the checked sides, and the
    pieces (file index, first row, end row) this shard reads, in chunks of ``chunk`` rows."""

    sides: tuple[RowsSide, ...]
    pieces: tuple[tuple[int, int, int], ...]
    chunk: int
    cycle: int
    auto: bool  # num_parallel_reads was AUTOTUNE (or None)
    shuffle_buffer: int | None
    seed: int | None
    batch_size: int | None
    drop_remainder: bool
    num_parallel_reads: int | None

    @property
    def count(self) -> int:
        """Rows in one epoch of this shard."""
        return sum(e - a for _, a, e in self.pieces)


def plan_rows(
    inputs: P.PathSpec,
    labels: P.PathSpec | None = None,
    *,
    shuffle_buffer: int | None = None,
    seed: int | None = None,
    batch_size: int | None = None,
    drop_remainder: bool = False,
    num_parallel_reads: int | None = AUTOTUNE,
    shard: object = None,
) -> RowsPlan:
    """Resolves, pairs and checks the files, and cuts this shard's rows into pieces (see
    `npyio.rows`)."""
    shuffle_buffer = _positive(shuffle_buffer, "shuffle_buffer")
    batch_size = _positive(batch_size, "batch_size")
    if num_parallel_reads is not None and num_parallel_reads != AUTOTUNE:
        _positive(num_parallel_reads, "num_parallel_reads")
    xs_source = P.resolve(inputs, "inputs")
    xs = xs_source.paths
    ys = None
    if labels is not None:
        xs, ys = P.pair(xs_source, P.resolve(labels, "labels"))
    n, i = P.parse_shard(shard) or (1, 0)

    sides = (_rows_side(xs),) if ys is None else (_rows_side(xs), _rows_side(ys))
    if len(sides) == 2:
        for fx, fy in zip(sides[0].files, sides[1].files, strict=True):
            if fx.nrows != fy.nrows:
                raise ValueError(
                    f"inputs and labels must have the same number of rows: {fx.path} has "
                    f"{fx.nrows} rows, its labels {fy.path} have {fy.nrows}"
                )
    counts = [f.nrows for f in sides[0].files]
    total = sum(counts)
    lo, hi = total * i // n, total * (i + 1) // n

    widest = max(max(s.row_bytes for s in sides), 1)
    chunk = max(1, CHUNK_BYTES // widest)
    block = None
    auto = num_parallel_reads in (None, AUTOTUNE)
    cycle = CYCLE if auto else int(num_parallel_reads)  # type: ignore[arg-type]
    if shuffle_buffer is not None:
        # The pieces read at once should fill the buffer together, each with several chunks.
        chunk = max(1, min(chunk, shuffle_buffer // (2 * cycle)))
        block = max(chunk, BLOCK_BYTES // widest)
    return RowsPlan(
        sides=sides,
        pieces=tuple(pieces(counts, lo, hi, block)),
        chunk=chunk,
        cycle=cycle,
        auto=auto,
        shuffle_buffer=shuffle_buffer,
        seed=seed,
        batch_size=batch_size,
        drop_remainder=drop_remainder,
        num_parallel_reads=num_parallel_reads,
    )
