"""Readers of row ranges: how a *piece* (per side, a run of rows of one ``.npy`` file) becomes
its records, and how each record (a *chunk* of rows) is checked and decoded.

`npyio.rows` and packed directories plan their pieces (`npyio._data.rows_plan`) and build the
pipeline around them in `npyio._data.rows` (the pieces' columns and order, the windows of a
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
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
import tensorflow as tf

from npyio._graph.ops import assert_verdict, decode_rows
from npyio._read import CAPABILITIES
from npyio._read.objects import BLOCK_BYPASS
from npyio._tf import fixed_length_records

__all__ = ["READ_BUFFER", "REMOTE_READ_BUFFER", "NativeRowReader", "RowLayout", "RowReader"]

#: FixedLengthRecordDataset's read buffer, per open side of a piece, on local disk.
READ_BUFFER = 256 << 10
#: The same on object storage: one byte above TensorFlow's GCS read block, so that each refill
#: is one request that goes straight into the buffer (which the op allocates without filling),
#: where a smaller one would make TensorFlow allocate and zero-fill its 64 MiB block per open
#: piece whatever the import order (`npyio._read.objects` says why; bench/README.md, "Object
#: storage whatever the import order").
REMOTE_READ_BUFFER = BLOCK_BYPASS


class RowLayout(Protocol):
    """What every row of one side of the pieces looks like (`npyio._data.rows_plan.RowsSide`
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
    message = tf.strings.join(
        [
            path,
            ": file changed size since the dataset was built -- expected ",
            tf.strings.as_string(count),
            " rows from byte ",
            tf.strings.as_string(offset),
            ", got ",
            tf.where(
                got < rows,
                tf.strings.as_string(before + got),
                tf.strings.join(["more than ", tf.strings.as_string(count)]),
            ),
        ]
    )
    (out,) = assert_verdict(ok, message, raw)
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
    """The native backend's reader of row ranges: the records `RowReader` gives, each read by
    the op ``NpyioReadRanges`` with one ``pread`` where it is decoded (`decode_chunk`), local
    files only.

    `read_piece` checks the piece's files first (one call of the op that reads nothing); where
    the op doubts one (missing, not a regular file, another size), the piece is read by
    `RowReader`'s ``FixedLengthRecordDataset`` records, so that its errors are today's, word for
    word. Each side's element is ``(record, (first byte, bytes, file size))``: the record itself
    (bytes -1) for a piece read that way, else an empty string and the range to read.
    """

    capabilities = CAPABILITIES["native"]

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
