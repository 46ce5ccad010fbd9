"""Planning `npyio.rows`: every file's header, the rows each shard reads, cut into pieces.

TF-free; `npyio._sources.rows` builds the graph.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from npyio._format import npy
from npyio._format.files import is_remote
from npyio._io.header import read_checked
from npyio._pipeline.capabilities import LOADER, OPTIONS, Column, absent, honoured
from npyio._pipeline.options import DatasetOptions, LoaderOptions, split
from npyio._pipeline.paths import PathSpec, pair, resolve
from npyio.errors import NpyFormatError

#: Bytes per decoded chunk (per side): the unit of reading and decoding.
CHUNK_BYTES = 1 << 20
#: When shuffling, files are cut into pieces of at most about this many bytes (per side)...
MAX_PIECE_BYTES = 8 << 20
#: ... and at least this many, when ``shuffle_buffer`` asks for smaller ones (``cycle`` of
#: them are the cycle of ``shuffle=True`` without a ``shuffle_buffer``): a piece read at
#: an offset reads the bytes before it too (FixedLengthRecordDataset skips its header by
#: reading it), so that small pieces of a large file cost far more than their rows.
MIN_PIECE_BYTES = 4 << 20
#: Pieces read at once when shuffling, if num_parallel_reads is AUTOTUNE.
CYCLE = 8
#: A subset's runs of rows (a split's rows are a random subset: runs of a few rows) closer
#: than this many bytes (per side) are read as one span, and the rows between them dropped
#: in the graph: a piece costs about as much as reading a few hundred KiB (its own
#: FixedLengthRecordDatasets, a request on object storage), and a row dropped costs nothing
#: per row (one mask per chunk). Rows wider than this are never read to be dropped.
GAP_BYTES = 256 << 10


__all__ = [
    "CHUNK_BYTES",
    "CYCLE",
    "GAP_BYTES",
    "MAX_PIECE_BYTES",
    "MIN_PIECE_BYTES",
    "ROWS",
    "ROWS_COLUMN",
    "RowsFile",
    "RowsPlan",
    "RowsSide",
    "equal_count",
    "pieces",
    "plan_rows",
    "plan_runs",
    "row_runs",
    "rows_side",
    "shard_runs",
    "subset_pieces",
]

ROWS = "rows"
#: What each option means for `npyio.rows`: the capability table's column
#: (`npyio._pipeline.capabilities`). Most options of `npyio.dataset` are not its arguments.
ROWS_COLUMN = Column(
    ROWS,
    "rows (`npyio.rows`)",
    {
        **{name: absent("`npyio.rows`") for name in OPTIONS},
        **LOADER,
        "shuffle": honoured(
            "rows in a full uniform shuffle, anew each epoch; with `shuffle_buffer` (and on "
            "object storage) a shuffle by cycles of pieces"
        ),
        "shard": honoured("by row (contiguous ranges of rows)"),
        "shuffle_buffer": honoured("with `shuffle`: shuffle by cycles of these rows"),
        "num_parallel_reads": honoured("batches read at once (a cycle's pieces)"),
    },
)


@dataclass(frozen=True)
class RowsFile:
    path: str
    header: npy.NpyHeader

    @property
    def nrows(self) -> int:
        return self.header.shape[0]

    @property
    def little_endian(self) -> bool:
        dt = self.header.dtype
        return dt.byteorder == "<" or (dt.byteorder in "|=" and npy.NATIVE_ORDER == "<")


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
    header = read_checked(path, payload=True).header
    assert header is not None
    if not header.shape:
        raise NpyFormatError(
            path, "a 0-d array has no rows -- expected an array with ndim >= 1, got shape ()"
        )
    if header.fortran_order and len(header.shape) >= 2:
        raise NpyFormatError(
            path,
            "Fortran-order arrays cannot be streamed by rows -- expected fortran_order False "
            f"for shape {npy.show_shape(header.shape)}, got True; rewrite the file in C order, "
            f"e.g. np.save(path, np.ascontiguousarray(np.load(path)))",
        )
    return RowsFile(path, header)


def rows_side(paths: list[str]) -> RowsSide:
    """Checks every file of one side and that they all have the first one's dtype and row shape
    (`npyio.rows`, and the shards of a packed directory)."""
    files = tuple(_rows_file(p) for p in paths)
    first = files[0]
    dtype = first.header.dtype.newbyteorder("=")
    row_shape = first.header.shape[1:]
    for f in files[1:]:
        if f.header.dtype.newbyteorder("=") != dtype:
            raise NpyFormatError(
                f.path,
                npy.dtype_mismatch(dtype.name, f.header.dtype.name)
                + f" (the dtype of the first file, {first.path})",
            )
        if f.header.shape[1:] != row_shape:
            raise NpyFormatError(
                f.path,
                "row shape mismatch -- expected "
                f"{npy.show_shape(row_shape)}, got {npy.show_shape(f.header.shape[1:])} "
                f"(the shape of a row of the first file, {first.path})",
            )
    orders = {f.little_endian for f in files}
    return RowsSide(files, dtype, row_shape, orders.pop() if len(orders) == 1 else None)


def row_runs(indices: np.ndarray) -> list[tuple[int, int]]:
    """Sorted indices as runs [a, e) of consecutive rows."""
    if len(indices) == 0:
        return []
    rows = np.sort(indices)
    breaks = np.flatnonzero(np.diff(rows) != 1) + 1
    starts = np.concatenate([[0], breaks])
    ends = np.concatenate([breaks, [len(rows)]])
    return [(int(rows[a]), int(rows[e - 1]) + 1) for a, e in zip(starts, ends)]


def shard_runs(runs: list[tuple[int, int]], shard: tuple[int, int] | None) -> list[tuple[int, int]]:
    """The rows of ``runs`` that shard ``(n, i)`` reads: by row, the contiguous range
    ``[total * i // n, total * (i + 1) // n)`` of their rows (empty when it holds none)."""
    if shard is None:
        return runs
    n, i = shard
    total = sum(e - a for a, e in runs)
    lo, hi = total * i // n, total * (i + 1) // n
    kept, seen = [], 0
    for a, e in runs:
        s, t = max(a, a + lo - seen), min(e, a + hi - seen)
        if s < t:
            kept.append((s, t))
        seen += e - a
    return kept


def equal_count(
    runs: list[tuple[int, int]], shard: tuple[int, int] | None, drop_remainder: bool
) -> int | None:
    """The rows every shard of ``runs`` reads per epoch where the shards must yield the same
    batches (``shard=`` with ``drop_remainder``): ``rows // num_shards``, the smallest shard's
    (`shard_runs`' ranges differ by a row at most); None otherwise."""
    if shard is None or not drop_remainder:
        return None
    return sum(e - a for a, e in runs) // shard[0]


def pieces(
    counts: list[int], lo: int, hi: int, piece_rows: int | None
) -> list[tuple[int, int, int]]:
    """(file index, first row, end row) runs covering global rows [lo, hi), cut every
    ``piece_rows`` rows when it is set."""
    out: list[tuple[int, int, int]] = []
    start_of_file = 0
    for j, n in enumerate(counts):
        s, e = max(lo, start_of_file) - start_of_file, min(hi, start_of_file + n) - start_of_file
        start_of_file += n
        step = piece_rows or max(e - s, 1)
        out.extend((j, a, min(a + step, e)) for a in range(s, e, step))
    return out


def _spans(runs: list[tuple[int, int]], gap: int) -> list[tuple[int, int]]:
    """``runs`` (ascending, disjoint) with those at most ``gap`` rows apart merged."""
    if not runs:
        return []
    starts, ends = np.array(runs, dtype=np.int64).T
    breaks = np.flatnonzero(starts[1:] - ends[:-1] > gap) + 1
    firsts, lasts = np.concatenate([[0], breaks]), np.concatenate([breaks, [len(runs)]]) - 1
    return [(int(starts[a]), int(ends[e])) for a, e in zip(firsts, lasts)]


def _kept(runs: list[tuple[int, int]], spans: list[tuple[int, int]]) -> np.ndarray:
    """Which rows of ``spans`` (concatenated) are rows of ``runs``, each inside one span."""
    starts, ends = np.array(runs, dtype=np.int64).T
    span_starts, span_ends = np.array(spans, dtype=np.int64).T
    # where each span's rows begin in the concatenation, and which span holds each run
    offsets = np.concatenate([[0], np.cumsum(span_ends - span_starts)])
    shift = offsets[:-1] - span_starts
    holder = np.searchsorted(span_starts, starts, side="right") - 1
    edges = np.zeros(offsets[-1] + 1, np.int64)
    np.add.at(edges, starts + shift[holder], 1)
    np.add.at(edges, ends + shift[holder], -1)
    return np.cumsum(edges[:-1]) > 0


def subset_pieces(
    counts: list[int],
    runs: list[tuple[int, int]],
    shard: tuple[int, int] | None,
    piece_rows: int | None,
    row_bytes: int,
) -> tuple[list[tuple[int, int, int]], bytes | None]:
    """The pieces (`pieces`) of the rows of ``runs`` that ``shard`` reads (`shard_runs`), and
    which of their rows to keep (`RowsPlan.keep`; None: all).

    Runs fewer than `GAP_BYTES` apart (rows of ``row_bytes``, the widest side's) are read as
    one span: a split's subset is random, runs of a few rows each, and a piece per run made
    a split pack several times slower to read than its loose files (bench/README.md, "A
    split of a pack"). A span is cut into pieces as a run is, and a piece that keeps no row
    is left out."""
    runs = shard_runs(runs, shard)
    spans = _spans(runs, (GAP_BYTES - 1) // max(row_bytes, 1))
    cut = [p for a, e in spans for p in pieces(counts, a, e, piece_rows)]
    if len(spans) == len(runs):  # nothing between them read: every row is kept
        return cut, None
    kept = _kept(runs, spans)
    ends = np.cumsum([e - a for _, a, e in cut])
    masks = np.split(kept, ends[:-1])
    chosen = [(p, m) for p, m in zip(cut, masks) if m.any()]
    keep = np.concatenate([m for _, m in chosen]).astype(np.uint8).tobytes()
    return [p for p, _ in chosen], keep


@dataclass(frozen=True)
class RowsPlan:
    """Everything `npyio.rows` decides before it builds a graph: the checked sides, and the
    pieces (file index, first row, end row) this shard reads, in chunks of ``chunk`` rows,
    ``cycle`` pieces at a time when shuffling; ``keep``, when the pieces hold rows of no
    subset between those of a split (`subset_pieces`), says which of their rows are
    yielded: a byte 1 or 0 per row of the pieces, in their order."""

    sides: tuple[RowsSide, ...]
    pieces: tuple[tuple[int, int, int], ...]
    chunk: int
    cycle: int
    loader: LoaderOptions
    keep: bytes | None = None
    #: Under ``shard=`` with ``drop_remainder``: the rows every shard reads each epoch,
    #: ``rows // num_shards`` (`equal_count`); None: all of this shard's.
    shard_count: int | None = None
    #: This shard's rows, as runs [a, e) of the one numbering of every file's rows, ascending:
    #: the units that the loader orders and the reader reads a batch of at a time.
    runs: tuple[tuple[int, int], ...] = ()
    #: Whether a shuffle is by cycles of pieces rather than by rows, as every other source
    #: kind is shuffled: ``npyio.rows`` with a ``shuffle_buffer``, and files on object storage,
    #: where a request per row would cost far more than a request per piece.
    by_cycles: bool = False

    @property
    def kind(self) -> str:
        """The source kind (its column of the capability table: `ROWS_COLUMN`)."""
        return ROWS

    @property
    def column(self) -> Column:
        """Its kind's column of the capability table."""
        return ROWS_COLUMN

    @property
    def auto(self) -> bool:
        """Whether tf.data tunes the parallelism of the reads (``num_parallel_reads``)."""
        return self.loader.auto

    @property
    def count(self) -> int:
        """Rows in one epoch of this shard."""
        return sum(e - a for a, e in self.runs)

    @property
    def epoch_count(self) -> int:
        """Rows read in one epoch: `count`, or `shard_count` of them, so that every shard yields
        the same batches."""
        return self.count if self.shard_count is None else self.shard_count


def _paired_sides(inputs: PathSpec, labels: PathSpec | None) -> tuple[RowsSide, ...]:
    """The checked sides, paired; paired files must have the same number of rows."""
    xs_source = resolve(inputs, "inputs")
    if labels is None:
        return (rows_side(xs_source.paths),)
    xs, ys = pair(xs_source, resolve(labels, "labels"))
    sides = (rows_side(xs), rows_side(ys))
    for fx, fy in zip(sides[0].files, sides[1].files, strict=True):
        if fx.nrows != fy.nrows:
            raise ValueError(
                f"inputs and labels must have the same number of rows: {fx.path} has "
                f"{fx.nrows} rows, its labels {fy.path} have {fy.nrows}"
            )
    return sides


def plan_rows(
    inputs: PathSpec, labels: PathSpec | None = None, options: DatasetOptions = DatasetOptions()
) -> RowsPlan | tuple[RowsPlan, RowsPlan]:
    """Resolves, pairs and checks the files, splits the rows (``validation_split``), and cuts
    this shard's rows of each subset into pieces (see `npyio.rows`). Two plans for
    ``subset="both"``: training, validation."""
    sides = _paired_sides(inputs, labels)
    counts = [f.nrows for f in sides[0].files]
    loader = options.loader
    subsets = split(sum(counts), options.split, loader.seed, "rows")
    plans = [plan_runs(sides, counts, row_runs(rows), loader) for rows in subsets]
    return plans[0] if len(plans) == 1 else (plans[0], plans[1])


def plan_runs(
    sides: tuple[RowsSide, ...],
    counts: list[int],
    runs: list[tuple[int, int]],
    loader: LoaderOptions,
) -> RowsPlan:
    """The plan of the rows ``runs`` (of the one numbering of the files' rows, whose counts are
    ``counts``) of ``sides``: this shard's, cut into chunks and pieces by the one rule of
    every kind that reads rows (`npyio.rows`, a pack)."""
    widest = max(max(s.row_bytes for s in sides), 1)
    chunk = max(1, CHUNK_BYTES // widest)
    piece_rows = None
    cycle = CYCLE if loader.auto else int(loader.num_parallel_calls)  # type: ignore[arg-type]
    if loader.shuffle:
        # A cycle's ``cycle`` pieces hold about ``shuffle_buffer`` rows (or more, for pieces
        # of at least MIN_PIECE_BYTES), each piece several chunks. Without a shuffle_buffer,
        # the smallest cycle that reads well: ``cycle`` pieces of MIN_PIECE_BYTES.
        buffer = loader.shuffle_buffer or cycle * max(1, MIN_PIECE_BYTES // widest)
        chunk = max(1, min(chunk, buffer // (2 * cycle)))
        wanted = max(-(-buffer // cycle), MIN_PIECE_BYTES // widest)
        piece_rows = max(chunk, min(MAX_PIECE_BYTES // widest, wanted))
    cut, keep = subset_pieces(counts, runs, loader.shard, piece_rows, widest)
    equal = equal_count(runs, loader.shard, loader.drop_remainder)
    mine = tuple(shard_runs(runs, loader.shard))
    by_cycles = loader.shuffle and (
        loader.shuffle_buffer is not None or is_remote(sides[0].files[0].path)
    )
    return RowsPlan(sides, tuple(cut), chunk, cycle, loader, keep, equal, mine, by_cycles)
