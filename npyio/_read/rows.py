"""Readers of row ranges: how a *piece* (per side, a run of rows of one ``.npy`` file) becomes
its records, and how each record (a *chunk* of rows) is checked and decoded.

`npyio.rows` and packed directories plan their pieces (`npyio._sources.rows_plan`) and build the
pipeline around them in `npyio._sources.rows` (the pieces' columns and order, the cycles of a
shuffle, batches, the cardinality). What reads a piece's bytes and decodes its chunks is a
reader of this layer, chosen through its backend (`npyio._read.backends.row_reader`, for a
backend whose capabilities say ``rows``): another way to read a row range is another reader,
not a second pipeline.

The graph's reader (`RowReader`) reads each side of a piece with the ``FixedLengthRecordDataset``
op (`npyio._tf.fixed_length_records`), its ``header_bytes`` and ``footer_bytes`` set to cut out
exactly the piece's rows: whole chunks of ``chunk`` rows, then one record for the rest, then an
empty record that marks the end; zipped with what each record should hold
(`RowReader.read_piece`). A piece runs no function: it is made anew for every piece, and each
function in it would be started again with it. Each record is checked where it is decoded
(`RowReader.decode_chunk`): a file whose size changed after the dataset was built gives its end
early or a record where the end should be, and fails with an error naming the file.

The native backend's reader (`NativeRowReader`) reads the same records with npyio's op
``NpyioReadRanges`` (`npyio._native.read_ranges`): one ``pread`` per chunk per side, straight
into the record, in the parallel map that decodes it, with no dataset per side. A piece is
first checked (each side's file still the size the plan recorded); a piece the op doubts is
read by the graph's reader instead, whose errors name the file, word for word.

A batch of rows by number (`RowReader.read_rows`: the units of one index stream, in order or
shuffled) is read by the graph's reader as records of each run of neighbours, joined and
decoded; by the native one with the op ``NpyioReadRows`` (`npyio._native.read_rows`), straight
into the batch's tensor of each side: the rows' files found in the kernel, one ``pread`` per
run of neighbours, each file opened once per batch, byte-swapped there. A batch it doubts is
read by the graph's reader, whose errors name the file.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple, Protocol

import numpy as np
import tensorflow as tf

from npyio._graph.ops import TF_DTYPES, assert_verdict, decode_rows
from npyio._read import CAPABILITIES
from npyio._read.objects import BLOCK_BYPASS
from npyio._tf import fixed_length_records

__all__ = [
    "READ_BUFFER",
    "REMOTE_READ_BUFFER",
    "FileTable",
    "NativeRowReader",
    "RowLayout",
    "RowReader",
]

#: FixedLengthRecordDataset's read buffer, per open side of a piece, on local disk.
READ_BUFFER = 256 << 10
#: The same on object storage: one byte above TensorFlow's GCS read block, so that each refill
#: is one request that goes straight into the buffer (which the op allocates without filling),
#: where a smaller one would make TensorFlow allocate and zero-fill its 64 MiB block per open
#: piece whatever the import order (`npyio._read.objects` says why; bench/README.md, "Object
#: storage whatever the import order").
REMOTE_READ_BUFFER = BLOCK_BYPASS


class RowLayout(Protocol):
    """What every row of one side of the pieces looks like (`npyio._sources.rows_plan.RowsSide`
    is one)."""

    @property
    def dtype(self) -> np.dtype:
        """The rows' dtype, in native byte order."""

    @property
    def row_shape(self) -> tuple[int, ...]:
        """The shape of one row."""

    @property
    def little_endian(self) -> bool | None:
        """The byte order of every file, or None when they differ (each piece's column says)."""

    @property
    def row_bytes(self) -> int:
        """The bytes of one row."""


def _records(
    path: tf.Tensor, record: tf.Tensor, header: tf.Tensor, footer: tf.Tensor, buffer: int
) -> tf.data.Dataset:
    """The records of ``path`` (a scalar) between ``header`` and ``footer`` bytes: the
    ``FixedLengthRecordDatasetV2`` op itself (`npyio._tf.fixed_length_records` says why not
    ``tf.data.FixedLengthRecordDataset``)."""
    return fixed_length_records(
        path,
        tf.cast(header, tf.int64),
        tf.cast(record, tf.int64),
        tf.cast(footer, tf.int64),
        tf.constant(buffer, tf.int64),
    )


def _side_records(
    path: tf.Tensor,
    offset: tf.Tensor,
    count: tf.Tensor,
    tail: tf.Tensor,
    row_bytes: int,
    chunk: int,
    buffer: int = READ_BUFFER,
) -> tf.data.Dataset:
    """The raw chunks of ``count`` rows of ``path`` that start ``offset`` bytes into the file
    and end ``tail`` bytes before its end: whole chunks of ``chunk`` rows, then the rest, then
    an empty record that marks the end (`_expected` says what each should hold).

    No function runs here: this dataset is made anew for every piece, and each function in it
    would be started again with it. The records are checked where they are decoded.
    """
    chunks = count // chunk
    rest = count - chunks * chunk
    end = tf.data.Dataset.from_tensors(tf.constant(b""))
    if row_bytes == 0:  # rows of no bytes: nothing to read, only to count
        return end.repeat(chunks + tf.minimum(rest, 1) + 1)
    rb = tf.constant(row_bytes, tf.int64)
    whole = _records(path, chunk * rb, offset, tail + rest * rb, buffer)
    last = _records(path, tf.maximum(rest, 1) * rb, offset + chunks * chunk * rb, tail, buffer)
    # An empty part is never opened: its FixedLengthRecordDataset, whose body length is
    # computed from the file's current size, would fail oddly on a file that has shrunk.
    whole = whole.take(tf.where(chunks > 0, tf.constant(-1, tf.int64), 0))
    last = last.take(tf.where(rest > 0, tf.constant(-1, tf.int64), 0))
    return whole.concatenate(last).concatenate(end)


def _changed_size(
    path: tf.Tensor, count: tf.Tensor, start: tf.Tensor, fewer: tf.Tensor, got: tf.Tensor
) -> tf.Tensor:
    """The error of a file whose size changed since the dataset was built: ``count`` rows were
    expected from byte ``start``, and ``got`` came (``fewer``), or more than ``count``."""
    return tf.strings.join(
        [
            path,
            ": file changed size since the dataset was built -- expected ",
            tf.strings.as_string(count),
            " rows from byte ",
            tf.strings.as_string(start),
            ", got ",
            tf.where(
                fewer,
                tf.strings.as_string(got),
                tf.strings.join(["more than ", tf.strings.as_string(count)]),
            ),
        ]
    )


def _run_bytes(
    path: tf.Tensor,
    start: tf.Tensor,
    count: tf.Tensor,
    tail: tf.Tensor,
    row_bytes: int,
    buffer: int,
) -> tf.Tensor:
    """The bytes of ``count`` rows of ``path`` from byte ``start`` on, once checked: records of a
    row from ``start`` to the file's end, of which the first ``count`` are taken (one more when
    the rows should end the file: ``tail`` 0), so that a file that has lost rows gives too few
    and one that has gained rows at its end too many, and fails with an InvalidArgumentError
    that names it. (A footer would cut the records exactly, but a file cut before it makes
    ``FixedLengthRecordDataset`` fail with a body length of nearly 2**64.)"""
    take = count + tf.cast(tf.equal(tail, 0), tf.int64)
    records = _records(
        path, tf.constant(row_bytes, tf.int64), start, tf.constant(0, tf.int64), buffer
    )
    got = (
        records.take(take)
        .batch(tf.maximum(take, 1))
        .reduce(tf.zeros([0], tf.string), lambda rows, batch: tf.concat([rows, batch], 0))
    )
    n = tf.size(got, out_type=tf.int64)
    message = _changed_size(path, count, start, n < count, n)
    (raw,) = assert_verdict(tf.equal(n, count), message, tf.strings.reduce_join(got[:count]))
    return raw


def _expected(count: tf.Tensor, chunk: int) -> tuple[tf.Tensor, tf.Tensor]:
    """(rows, rows before it) of each record `_side_records` gives for ``count`` rows: ``chunk``
    rows a record, then the rest, then 0 rows for the end record."""
    chunks = count // chunk
    rest = count - chunks * chunk
    rows = tf.concat(
        [
            tf.fill([chunks], tf.constant(chunk, tf.int64)),
            tf.fill([tf.minimum(rest, 1)], rest),
            tf.zeros([1], tf.int64),
        ],
        0,
    )
    return rows, tf.cumsum(rows, exclusive=True)


def _checked(
    raw: tf.Tensor,
    rows: tf.Tensor,
    before: tf.Tensor,
    meta: tuple[tf.Tensor, ...],
    row_bytes: int,
) -> tf.Tensor:
    """``raw``, once it holds the ``rows`` rows its record should: a side whose file has
    changed size since the dataset was built gives its end record early (fewer rows) or a
    record where the end should be (more), and fails here with an InvalidArgumentError that
    names the file. (A change by a partial row fails in FixedLengthRecordDataset, which names
    it too.)"""
    path, offset, count, _ = meta
    got = tf.cast(tf.strings.length(raw), tf.int64) // max(row_bytes, 1)
    ok = tf.equal(got, rows) if row_bytes else tf.constant(True)
    message = _changed_size(path, count, offset, got < rows, before + got)
    (out,) = assert_verdict(ok, message, raw)
    return out


class FileTable(NamedTuple):
    """The files that rows are numbered over, as constants for `RowReader.read_rows`: per side,
    each file's ``paths``, the byte its rows start at (``offsets``), and its byte order
    (``little``); ``starts`` is the number of each file's first row in the one numbering of
    every side (the files of every side hold the same rows), then the total."""

    paths: tuple[tf.Tensor, ...]
    offsets: tuple[tf.Tensor, ...]
    little: tuple[tf.Tensor, ...]
    starts: tf.Tensor


def _runs(rows: tf.Tensor, starts: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
    """``rows`` (int64 [b], in the order to deliver) as runs of consecutive rows of one file:
    each run's file, its first row in that file, and its rows."""
    file = tf.searchsorted(starts, rows, side="right") - 1
    follows = tf.logical_and(tf.equal(file[1:], file[:-1]), tf.equal(rows[1:], rows[:-1] + 1))
    new = tf.concat([tf.ones([1], tf.bool), tf.logical_not(follows)], 0)
    run_file = tf.boolean_mask(file, new)
    first = tf.boolean_mask(rows, new) - tf.gather(starts, run_file)
    run = tf.cumsum(tf.cast(new, tf.int64)) - 1
    count = tf.math.unsorted_segment_sum(tf.ones_like(rows), run, tf.size(run_file))
    return run_file, first, count


def _decode_side(
    raw: tf.Tensor, count: tf.Tensor, layout: RowLayout, little: tf.Tensor, runs: tf.Tensor
) -> tf.Tensor:
    """One side's ``count`` rows from their bytes, joined in order: in its files' byte order, or,
    where they differ (``layout.little_endian`` None), each run of rows as its file's
    ``little`` says (both decodes made, each row taken from its own)."""
    if layout.little_endian is not None:
        return decode_rows(raw, count, layout.row_shape, layout.dtype, layout.little_endian)
    both = [decode_rows(raw, count, layout.row_shape, layout.dtype, o) for o in (True, False)]
    pick = tf.reshape(tf.repeat(little, runs), [-1] + [1] * len(layout.row_shape))
    return tf.where(pick, both[0], both[1])


def _shaped(
    parts: Sequence[tf.Tensor], rows: tf.Tensor, layouts: Sequence[RowLayout]
) -> list[tf.Tensor]:
    """``parts`` with their static shapes: as many rows as ``rows`` has (a batch of static size
    keeps it), each of its side's row shape."""
    out = []
    for part, layout in zip(parts, layouts, strict=True):
        part.set_shape(rows.shape[:1].concatenate(layout.row_shape))
        out.append(part)
    return out


class RowReader:
    """The graph backend's reader of row ranges: a piece's records with
    ``FixedLengthRecordDataset``, each chunk checked and decoded with ``tf.io.decode_raw``.

    ``layouts``: what the rows of each side look like, in the order of a piece's sides;
    ``chunk``: the rows of a whole record; ``remote``: the files are on object storage (each
    open side then reads past TensorFlow's GCS block, `REMOTE_READ_BUFFER`, and the sides'
    records are fetched together).
    """

    capabilities = CAPABILITIES["graph"]
    #: Whether rows in a random order read at about the cost of a run of them, so that a
    #: shuffle by row costs no more than one by cycles of pieces (`npyio._sources.rows`): not
    #: here, where each run is a dataset of its own, made and run inside the read.
    random_rows = False

    def __init__(self, layouts: Sequence[RowLayout], chunk: int, remote: bool = False) -> None:
        self.layouts = tuple(layouts)
        self.chunk = chunk
        self.remote = remote
        self.buffer = REMOTE_READ_BUFFER if remote else READ_BUFFER

    def read_piece(
        self, sides: Sequence[Sequence[tf.Tensor]], first: tf.Tensor | None = None
    ) -> tf.data.Dataset:
        """The records of one piece, one element per chunk: ``(expected, raws)``.

        Args:
            sides: Per side, scalars ``(path, first byte, rows, bytes after them,
                little_endian)``: the same number of rows of each side's file.
            first: Where the piece's first row stands in a numbering of the caller's (for
                rows kept by a mask); None for none.

        Returns:
            A dataset whose ``expected`` is ``(rows, rows before it in the piece, metas)``,
            then, with ``first``, ``first`` plus the rows before it (where its rows stand in
            that numbering); ``metas`` is per side ``(path, first byte, rows, little_endian)``;
            ``raws`` is one record per side, unchecked (`decode_chunk` checks it). The last
            element is the end record: 0 rows.
        """
        per_side = self._side_records(sides)
        if self.remote and len(per_side) > 1:
            # each part's requests in flight together: the zip alone would wait on each in turn
            per_side = [records.prefetch(2) for records in per_side]
        expected = tf.data.Dataset.from_tensor_slices(self._expected(sides, first))
        return tf.data.Dataset.zip((expected, tuple(per_side)))

    def _side_records(self, sides: Sequence[Sequence[tf.Tensor]]) -> list[tf.data.Dataset]:
        """Per side, its records (`_side_records`)."""
        return [
            _side_records(path, offset, count, tail, layout.row_bytes, self.chunk, self.buffer)
            for (path, offset, count, tail, _), layout in zip(sides, self.layouts, strict=True)
        ]

    def _expected(self, sides: Sequence[Sequence[tf.Tensor]], first: tf.Tensor | None) -> tuple:
        """What each record should hold, and which file it comes from (`read_piece`'s
        ``expected``), as columns."""
        rows, before = _expected(sides[0][2], self.chunk)
        metas = tuple(
            tuple(tf.fill(tf.shape(rows), column) for column in (path, offset, count, little))
            for path, offset, count, _, little in sides
        )
        marks = () if first is None else (first + before,)
        return (rows, before, metas, *marks)

    def run_sides(self, rows: tf.Tensor, table: FileTable) -> list[tuple[tf.Tensor, ...]]:
        """Per side, the runs of ``rows`` (`_runs`) as `read_piece`'s columns: ``(path, first
        byte, rows, bytes after them, little_endian)``, a [runs] vector each."""
        file, first, count = _runs(rows, table.starts)
        nrows = tf.gather(table.starts, file + 1) - tf.gather(table.starts, file)
        out = []
        for layout, paths, offsets, little in zip(
            self.layouts, table.paths, table.offsets, table.little, strict=True
        ):
            rb = tf.constant(layout.row_bytes, tf.int64)
            out.append(
                (
                    tf.gather(paths, file),
                    tf.gather(offsets, file) + first * rb,
                    count,
                    (nrows - first - count) * rb,
                    tf.gather(little, file),
                )
            )
        return out

    def read_rows(self, rows: tf.Tensor, table: FileTable) -> list[tf.Tensor]:
        """Per side, the rows ``rows`` (int64 [b], numbered as ``table.starts`` says) as one
        ``[b, *row_shape]`` tensor: each run of neighbours read as records of a row from its
        first byte on (`_run_bytes`), checked, joined and decoded once per side.

        The records are a dataset made and run inside the caller's function (``reduce``): the
        pipeline's checkpoints must ignore external state (`npyio._tf.ignore_external_state`);
        it reads the same rows again for the same arguments, which is all a restore needs.

        Raises:
            tf.errors.InvalidArgumentError: When run, for a file that changed size since the
                dataset was built (by whole rows: npyio's words; by a partial row:
                ``FixedLengthRecordDataset``'s), naming it.
        """
        count = tf.size(rows, out_type=tf.int64)
        out = []
        for side, layout in zip(self.run_sides(rows, table), self.layouts, strict=True):
            path, start, runs, tail, little = side
            if layout.row_bytes == 0:  # nothing to read, only to count
                out.append(decode_rows(tf.constant(b""), count, layout.row_shape, layout.dtype))
                continue

            def run(args: tuple, rb: int = layout.row_bytes) -> tf.Tensor:
                path, start, count, tail = args
                return _run_bytes(path, start, count, tail, rb, self.buffer)

            raws = tf.map_fn(run, (path, start, runs, tail), fn_output_signature=tf.string)
            out.append(_decode_side(tf.strings.reduce_join(raws), count, layout, little, runs))
        return _shaped(out, rows, self.layouts)

    def decode_chunk(self, expected: tuple, raws: Sequence[tf.Tensor]) -> list[tf.Tensor]:
        """One element of `read_piece`'s, checked and decoded: per side, a ``[rows,
        *row_shape]`` tensor of its dtype, in native byte order.

        Raises:
            tf.errors.InvalidArgumentError: When run, if a side's record does not hold the rows
                it should (its file changed size since the dataset was built), naming the file.
        """
        rows, before, metas = expected[:3]
        parts = []
        for layout, raw, meta in zip(self.layouts, raws, metas, strict=True):
            raw = _checked(raw, rows, before, meta, layout.row_bytes)
            little = meta[3] if layout.little_endian is None else layout.little_endian
            parts.append(decode_rows(raw, rows, layout.row_shape, layout.dtype, little))
        return parts


def _side_ranges(
    offset: tf.Tensor, count: tf.Tensor, tail: tf.Tensor, row_bytes: int, chunk: int
) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
    """(first byte, bytes) of each record `_side_records` gives for the same side, and the
    file's size the plan recorded, broadcast to each record."""
    rows, before = _expected(count, chunk)
    size = offset + count * row_bytes + tail
    return offset + before * row_bytes, rows * row_bytes, tf.fill(tf.shape(rows), size)


class NativeRowReader(RowReader):
    """The native backend's reader of row ranges, local files only: the records `RowReader`
    gives, each read by the op ``NpyioReadRanges`` with one ``pread`` where it is decoded
    (`decode_chunk`); a batch of rows by number read by the op ``NpyioReadRows`` into its
    tensor (`read_rows`).

    `read_piece` checks the piece's files first (one call of the op that reads nothing); where
    the op doubts one (missing, not a regular file, another size), the piece is read by
    `RowReader`'s ``FixedLengthRecordDataset`` records, so that its errors are today's, word for
    word. Each side's element is ``(record, (first byte, bytes, file size))``: the record itself
    (bytes -1) for a piece read that way, else an empty string and the range to read.
    """

    capabilities = CAPABILITIES["native"]
    random_rows = True  # a pread per row

    def __init__(self, layouts: Sequence[RowLayout], chunk: int) -> None:
        super().__init__(layouts, chunk, remote=False)

    def read_piece(
        self, sides: Sequence[Sequence[tf.Tensor]], first: tf.Tensor | None = None
    ) -> tf.data.Dataset:
        """`RowReader.read_piece`'s records, with each side's raw record replaced by
        ``(record, first byte, bytes, file size)`` (see the class)."""
        from npyio._native import read_ranges  # lazily: it loads the op

        ranges = [
            _side_ranges(offset, count, tail, layout.row_bytes, self.chunk)
            for (_, offset, count, tail, _), layout in zip(sides, self.layouts, strict=True)
        ]
        # one check of every side's file: regular, and still the size the plan recorded
        _, ok = read_ranges(
            tf.stack([path for path, *_ in sides]),
            tf.stack([starts[0] for starts, _, _ in ranges]),
            tf.zeros([len(sides)], tf.int64),
            tf.stack([sizes[0] for _, _, sizes in ranges]),
        )
        good = tf.reduce_all(ok)
        expected = self._expected(sides, first)
        empty = tf.fill(tf.shape(expected[0]), tf.constant(b""))
        native = tf.data.Dataset.from_tensor_slices((expected, tuple((empty, r) for r in ranges)))
        # a piece the check doubts: the graph's records, each a range already read (bytes -1);
        # zipped with constants, not mapped: a function would start anew for every piece
        never = tf.constant(-1, tf.int64)
        zero = tf.constant(0, tf.int64)
        read = tf.data.Dataset.from_tensors((zero, never, zero)).repeat()
        fallback = tf.data.Dataset.zip(
            (
                tf.data.Dataset.from_tensor_slices(expected),
                tuple(tf.data.Dataset.zip((rec, read)) for rec in self._side_records(sides)),
            )
        )
        # an empty part is never opened (`_side_records` says why)
        return native.take(tf.where(good, never, zero)).concatenate(
            fallback.take(tf.where(good, zero, never))
        )

    def read_rows(self, rows: tf.Tensor, table: FileTable) -> list[tf.Tensor]:
        """`RowReader.read_rows`, each side read by one call of the op ``NpyioReadRows``
        straight into its ``[b, *row_shape]`` tensor: a ``pread`` per run of neighbours, each
        file opened once per batch, swapped into the machine's byte order there. Where the op
        doubts a row (its file missing, not regular, of another size), the batch is read by
        `RowReader.read_rows`, whose errors name the file."""
        from npyio._native import read_rows  # lazily: it loads the op

        graph = RowReader(self.layouts, self.chunk)
        parts, oks = [], []
        for layout, paths, offsets, little in zip(
            self.layouts, table.paths, table.offsets, table.little, strict=True
        ):
            dtype, shape = TF_DTYPES[layout.dtype.name], layout.row_shape
            part, ok = read_rows(rows, table.starts, paths, offsets, little, dtype, shape)
            parts.append(part)
            oks.append(ok)
        good = tf.reduce_all(tf.concat(oks, 0))
        parts = tf.cond(good, lambda: parts, lambda: graph.read_rows(rows, table))
        return _shaped(parts, rows, self.layouts)

    def decode_chunk(self, expected: tuple, raws: Sequence[tf.Tensor]) -> list[tf.Tensor]:
        """`RowReader.decode_chunk`, once each side's range is read (one call of the op for all
        sides; a record of a piece read by the graph's reader passes through it): a range the
        op doubts reads as no bytes, which the check refuses with the graph's words, naming the
        file (it changed after `read_piece` checked it)."""
        from npyio._native import read_ranges  # lazily: it loads the op

        metas = expected[2]
        values, _ = read_ranges(
            tf.stack([meta[0] for meta in metas]),
            tf.stack([start for _, (start, _, _) in raws]),
            tf.stack([length for _, (_, length, _) in raws]),
            tf.stack([size for _, (_, _, size) in raws]),
            tf.stack([raw for raw, _ in raws]),
        )
        return super().decode_chunk(expected, tf.unstack(values, len(metas)))
