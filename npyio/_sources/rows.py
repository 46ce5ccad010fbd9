"""``npyio.rows``: stream the rows (axis 0) of large ``.npy`` files, with bounded memory.

This module makes a plan of rows (`npyio._sources.rows_plan`; a packed directory's too) the loader's
`RowsSource` (`npyio._pipeline.loader`); the reading is the reader layer's (`npyio._read.rows`,
chosen through `npyio._read.backends.row_reader`: the native backend's reader,
`npyio._read.rows.NativeRowReader`, on local files where it can be built, else the graph's,
`npyio._read.rows.RowReader`). No file is ever read into one tensor, so memory stays bounded
whatever its size.

Plan of the pipeline, decided in Python when the dataset is built (every header is read, and
every file's size is checked against it, through ``tf.io.gfile``):

1. The files' rows are numbered globally, shard after shard. ``shard=(n, i)`` keeps the
   contiguous range ``[total * i // n, total * (i + 1) // n)`` of that numbering (of the
   subset's rows, under a split): the plan's *runs* (`RowsPlan.runs`).
2. Those rows are the *units* of one index stream, as files are for `npyio.dataset`
   (`RowsSource`, through `npyio._pipeline.loader`): positions in order, or shuffled by index,
   batched, and each batch read at once in a parallel map (`RowReader.read_rows`): through the
   native reader, one op call per side that finds each row's file and reads its runs of
   neighbouring rows (a ``pread`` each) straight into the batch's tensor; through the graph's,
   ``FixedLengthRecordDataset`` records of a row from its first byte, checked and decoded (a
   file whose size changed after the dataset was built fails, naming the file). tf.data service
   splits that stream: each row once per epoch, whichever worker reads it.
3. A shuffle *by cycles* (``shuffle_buffer``, or files on object storage: `RowsPlan.by_cycles`; or
   a reader that reads a row at the cost of a dataset: ``RowReader.random_rows``) cuts the rows
   into *pieces* (runs of one file of at most about `npyio._sources.rows_plan.MAX_PIECE_BYTES`; a
   split's subset is read as spans, the other rows dropped where chunks are decoded:
   `npyio._sources.rows_plan.subset_pieces`, ``RowsPlan.keep``). Pieces come in a shuffled order,
   ``cycle_length`` at a time as a *cycle*: a ``flat_map`` whose function reads the cycle's
   pieces at once (``interleave``), decodes them into one tensor per part, and slices its rows
   off in a permuted order; then batched. No buffer of rows: an iterator checkpoint holds
   positions (`_shuffled_cycles`).
"""

from __future__ import annotations

import os
from collections.abc import Callable

import numpy as np
import tensorflow as tf

from npyio._format.files import is_remote
from npyio._graph.ops import require_tf2
from npyio._pipeline.capabilities import Column
from npyio._pipeline.loader import Anchor, Source, load
from npyio._pipeline.map import flat_map, interleave, parallel_map
from npyio._pipeline.options import (
    AUTOTUNE,
    DatasetOptions,
    LoaderOptions,
    SplitOptions,
    entry_point,
)
from npyio._pipeline.paths import PathSpec
from npyio._pipeline.shuffle import MAX_GATHER, IndexShuffle, gather_size
from npyio._read.backends import row_reader, usable
from npyio._read.rows import FileTable, RowReader
from npyio._sources.rows_plan import ROWS_COLUMN, RowsPlan, plan_rows
from npyio._tf import ignore_external_state

__all__ = ["rows"]

#: The backend whose reader of row ranges `rows_source` reads local files through, where it can
#: be had (`npyio._read.backends.usable`; other file systems read through the graph's reader):
#: rows and packs take no ``backend=`` (the capability table refuses it for packs).
_BACKEND = "native"


def _unbatch(ds: tf.data.Dataset, empty_rows: bool) -> tf.data.Dataset:
    """Dataset.unbatch, except for rows of zero elements, on which TensorFlow's unbatch
    crashes the process (TF 2.21): rebatch into ones and drop the batch dim instead."""
    if not empty_rows:
        return ds.unbatch()
    return ds.rebatch(1).map(
        lambda *t: tf.nest.map_structure(lambda x: x[0], t if len(t) > 1 else t[0])
    )


@entry_point
def rows(
    inputs: PathSpec,
    labels: PathSpec | None = None,
    *,
    shuffle: bool = False,
    shuffle_buffer: int | None = None,
    seed: int | None = None,
    reshuffle_each_iteration: bool = True,
    batch_size: int | None = 32,
    drop_remainder: bool = False,
    num_parallel_reads: int | None = AUTOTUNE,
    shard: object = None,
    validation_split: float | None = None,
    subset: str | None = None,
) -> tf.data.Dataset | tuple[tf.data.Dataset, tf.data.Dataset]:
    """A ``tf.data.Dataset`` of the rows of large ``.npy`` files, streamed with graph ops.

    Where `npyio.dataset` yields one element per file, ``rows`` yields one element per *row*
    (index along axis 0): ``x[i]``, or ``(x[i], y[i])`` with labels, for the rows of each file
    in turn, shard after shard. Files are read in chunks of about 1 MiB with
    ``tf.data.FixedLengthRecordDataset`` and decoded with ``tf.io.decode_raw``: no file is
    ever read whole, so memory stays bounded whatever the files' sizes, and no Python runs per
    element. Big-endian files decode to native order, and shards may differ in byte order and
    in header length.

    Shuffling: ``shuffle=True`` shuffles the rows by index, as `npyio.dataset` shuffles files:
    a full uniform shuffle, anew each epoch, with nothing in a buffer (an iterator checkpoint
    holds a position and the epoch's key). Each batch of rows is read at once, one read per run
    of neighbours (a ``pread`` per row, shuffled, through npyio's native reader on local files).
    For files larger than the page cache, where a read per row goes to the disk, pass
    ``shuffle_buffer`` for a shuffle *by cycles*: the files are cut into pieces of
    ``shuffle_buffer / num_parallel_reads`` rows (kept within 4 to 8 MiB), the order of the
    pieces is shuffled anew each epoch (by index), and ``num_parallel_reads`` pieces (8 by
    default) at a time form a *cycle*, whose rows are read together and come out in a
    uniformly random order. A row's neighbours in time then come from the pieces of its cycle;
    it costs a cycle's memory and reads files in long sequential runs. Files on object storage
    (``gs://``) are always shuffled by cycles, a request per piece rather than per row (and
    read by pieces in order too), and so are all files where npyio's native reader cannot be
    built (no compiler). Read by pieces, an epoch's length is unknown to tf.data; tf.data
    service reads an epoch by cycles on one worker (docs/shuffling.md, "Which shuffle each kind
    gets"). Without ``shuffle``, rows come
    strictly in order, and a ``shuffle_buffer`` is refused (it would do nothing).

    Sharding: ``shard=(n, i)`` splits the rows, not the files: the rows of all files,
    numbered in order, are cut into ``n`` contiguous ranges that differ in length by at most
    one row, and worker ``i`` reads only the range ``[total * i // n, total * (i + 1) // n)``.
    Together the workers see every row exactly once, even with a single file. Shuffled, each
    worker's order draws from keys of its own (the seed folded with ``(n, i)``), not from
    another's. With ``drop_remainder``, every worker reads ``total // n`` rows per epoch (its
    range's first ones, or a shuffled choice of them), so that all yield the same number of
    batches and a collective step never waits on a worker that ran out.

    Args:
        inputs: One ``.npy`` path, a directory (its ``*.npy`` files, sorted by name), a glob
            pattern (sorted by name), or a sequence of shard paths in order. Any TensorFlow
            filesystem works (``gs://``, ``ram://``, ...).
        labels: Like ``inputs``, or ``None`` to yield inputs alone. Files pair by file name
            when either side is a directory or a glob, by position otherwise (as in
            `npyio.dataset`). Paired files must have the same number of rows.
        shuffle: Shuffle the rows anew each epoch (see above).
        shuffle_buffer: With ``shuffle``, shuffle by cycles of about this many rows instead
            (see above); ``None``: by row (on object storage, by cycles of
            ``num_parallel_reads`` pieces, 8 by default, of 4 MiB).
        seed: Seed of the shuffles (piece order and cycles) and of the split. The same seed
            gives the same sequence of epoch orders.
        reshuffle_each_iteration: Give each epoch a new order (when shuffling).
        batch_size: Yield batches of this many rows: 32 by default, as `npyio.dataset`
            batches (what Keras's ``fit`` takes); ``None`` yields single rows.
        drop_remainder: Drop the last, smaller batch, which makes the batch dim static.
        num_parallel_reads: How many batches of rows are read at once (AUTOTUNE, the
            default, lets tf.data choose); shuffled by cycles, how many pieces a cycle holds
            (8 for AUTOTUNE) and are read at once.
        shard: ``(num_shards, index)`` or a ``tf.distribute.InputContext``: keep only this
            worker's range of rows (see above).
        validation_split, subset: Hold out ``int(validation_split * n)`` of the ``n`` rows,
            drawn with ``seed`` (which a split needs), as `npyio.dataset` holds out files and
            as a pack holds out rows: which rows depends only on the rows,
            ``validation_split`` and ``seed``, never on the shuffle or another option;
            ``subset`` is ``"training"``, ``"validation"`` or ``"both"`` (a tuple of the two
            datasets). Each subset is then sharded by row.

    Returns:
        A dataset of batches of rows ``x[i]`` (or of pairs ``(x[i], y[i])``), or of single
        rows with ``batch_size=None``, with the static row shape and dtype of the files; two
        for ``subset="both"``.

    Raises:
        NpyFormatError: When the dataset is built (every header is read then, and every size
            checked): a missing file, a bad header, a 0-d array, a Fortran-order array of
            ndim >= 2, a file shorter or longer than its header says, or a shard whose dtype
            or row shape differs from the first file's. The message starts with the path.
        ValueError: When the dataset is built: no files found; inputs and labels that do not
            pair up, or a pair whose row counts differ (both files named); a bad ``shard``,
            ``shuffle_buffer`` (or one without ``shuffle``), ``batch_size``,
            ``num_parallel_reads``, ``validation_split`` or ``subset``.
        TypeError: When the dataset is built: an argument of the wrong type (a ``seed`` that
            is not an int, a ``drop_remainder`` that is not a bool), or a keyword ``rows`` has
            not (the message names the nearest one, or what ``rows`` calls that option).
        tf.errors.OpError: When iterated, if a file changed size after the dataset was built:
            ``InvalidArgumentError`` (from npyio's row count, naming the file, or from
            ``FixedLengthRecordDataset`` for a partial row, naming the file), or rarely an
            ``InternalError`` from ``FixedLengthRecordDataset`` when the file was cut before
            the rows being read. ``tf.errors.NotFoundError`` if a file has disappeared.
            Files must not change while a dataset reads them.

    Example:
        >>> import numpy as np, npyio, tensorflow as tf
        >>> for i, n in enumerate((3, 2)):
        ...     with tf.io.gfile.GFile(f"ram://doc/rows/x{i}.npy", "wb") as f:
        ...         np.save(f, np.arange(n * 2, dtype=">f8").reshape(n, 2) + 10 * i)
        >>> ds = npyio.rows(["ram://doc/rows/x0.npy", "ram://doc/rows/x1.npy"], batch_size=2)
        >>> ds.element_spec
        TensorSpec(shape=(None, 2), dtype=tf.float64, name=None)
        >>> [b.numpy().tolist() for b in ds]
        [[[0.0, 1.0], [2.0, 3.0]], [[4.0, 5.0], [10.0, 11.0]], [[12.0, 13.0]]]
        >>> one = npyio.rows("ram://doc/rows/x1.npy", shard=(2, 1), batch_size=None)
        >>> [x.numpy().tolist() for x in one]
        [[12.0, 13.0]]
    """
    require_tf2()
    # each argument passed to its field by its own name, or by the name npyio.dataset gives
    # the same idea (`npyio._pipeline.options.SAME_IDEA`), and checked there in rows' words
    loader = LoaderOptions(
        shuffle=shuffle,
        shuffle_buffer=shuffle_buffer,
        seed=seed,
        reshuffle_each_iteration=reshuffle_each_iteration,
        batch_size=batch_size,
        drop_remainder=drop_remainder,
        num_parallel_calls=num_parallel_reads,
        shard=shard,
        function="rows",
    )
    split = SplitOptions(validation_split=validation_split, subset=subset)
    plans = plan_rows(inputs, labels, DatasetOptions(loader=loader, split=split))
    if isinstance(plans, tuple):
        return build_rows(plans[0]), build_rows(plans[1])
    return build_rows(plans)


def _piece_columns(plan: RowsPlan, order: tuple[IndexShuffle, tf.Tensor] | None) -> tf.data.Dataset:
    """One element per piece: per side, (path, first byte, rows, bytes after, little_endian),
    then, when the plan keeps some rows only (`RowsPlan.keep`), where the piece's rows begin
    in ``keep``; with ``order`` (a shuffle and this epoch's value of its key generator), in
    that epoch's order (by index: no buffer of pieces)."""
    columns: list[object] = []
    for side in plan.sides:
        rb = side.row_bytes
        files = [side.files[j] for j, _, _ in plan.pieces]
        starts = [f.header.data_offset + a * rb for f, (_, a, _) in zip(files, plan.pieces)]
        tails = [(f.nrows - e) * rb for f, (_, _, e) in zip(files, plan.pieces)]
        columns.append(
            (
                # bytes: a file name that is not UTF-8 (os.fsdecode gave it surrogate
                # escapes) has no str form that tf.constant could encode
                tf.constant([os.fsencode(f.path) for f in files], tf.string),
                tf.constant(starts, tf.int64),
                tf.constant([e - a for _, a, e in plan.pieces], tf.int64),
                tf.constant(tails, tf.int64),
                tf.constant([f.little_endian for f in files], tf.bool),
            )
        )
    if plan.keep is not None:
        columns.append(tf.constant(np.cumsum([0] + [e - a for _, a, e in plan.pieces[:-1]])))
    table = tuple(columns)
    if order is None:
        return tf.data.Dataset.from_tensor_slices(table)
    shuffle, r = order

    def gather(i: tf.Tensor) -> tuple:
        return tf.nest.map_structure(lambda column: tf.gather(column, i), table)

    return parallel_map(shuffle.indices_of(r), gather, None)


def _read_pieces(ds: tf.data.Dataset, plan: RowsPlan, read: RowReader) -> tf.data.Dataset:
    """The chunks of every piece, as ``read`` gives them (`RowReader.read_piece`): in order, or
    pieces in a shuffled order, ``plan.cycle`` at a time with their chunks interleaved."""

    @tf.autograph.experimental.do_not_convert
    def read_piece(*args: tuple[tf.Tensor, ...]) -> tf.data.Dataset:
        first = None
        if plan.keep is not None:
            *args, first = args  # type: ignore[assignment]
        return read.read_piece(args, first)

    if not plan.loader.shuffle:
        return flat_map(ds, read_piece)
    cycle = plan.cycle
    return interleave(ds, read_piece, cycle, tf.data.AUTOTUNE if plan.loader.auto else cycle)


def _decode_chunks(
    ds: tf.data.Dataset,
    plan: RowsPlan,
    read: RowReader,
    finish: Callable[..., object] | None,
    keep: tf.Tensor | None,
) -> tf.data.Dataset:
    """Chunks decoded in parallel by ``read`` (`RowReader.decode_chunk`), in order, with only
    the rows ``keep`` (`RowsPlan.keep`, a bool tensor) keeps when it is set; ``finish`` makes
    the elements of each decoded chunk's rows in the same function (a stage of its own per row
    or batch would cost a function call each, and its own start-up every epoch)."""

    @tf.autograph.experimental.do_not_convert
    def decode(expected: tuple, raws: tuple[tf.Tensor, ...]) -> object:
        parts = read.decode_chunk(expected, raws)
        if keep is not None:  # one mask per chunk, whatever its runs of rows
            rows, _, _, mark = expected  # the record's rows, and where they begin in ``keep``
            mask = tf.slice(keep, tf.reshape(mark, [1]), tf.reshape(rows, [1]))
            parts = [tf.boolean_mask(part, mask) for part in parts]
        if finish is not None:
            return finish(*parts)
        return parts[0] if len(parts) == 1 else tuple(parts)

    return parallel_map(ds, decode, plan.loader.num_parallel_calls, deterministic=True)


def _permuted(cycle: object, r: tf.Tensor, index: tf.Tensor) -> object:
    """The rows of ``cycle`` (a structure of tensors, rows first) in a uniformly random order,
    drawn from the epoch's value ``r`` and the cycle's ``index``."""
    count = tf.shape(tf.nest.flatten(cycle)[0], out_type=tf.int64)[0]
    order = tf.random.experimental.stateless_shuffle(tf.range(count), seed=tf.stack([r, index]))
    return tf.nest.map_structure(lambda part: tf.gather(part, order), cycle)


def _shuffled_cycles(
    plan: RowsPlan,
    read: RowReader,
    shuffle: IndexShuffle,
    r: tf.Tensor,
    finish: Callable[..., object] | None,
    keep: tf.Tensor | None,
) -> tf.data.Dataset:
    """One shuffled epoch's rows: the pieces in the order ``r`` gives (`_piece_columns`),
    ``plan.cycle`` at a time as a *cycle*, whose rows come in a random order (`_permuted`).

    A cycle is read whole inside the ``flat_map``'s function (its pieces read at once and
    decoded in parallel, as unshuffled pieces are, into one tensor per part) and its rows
    sliced off in that order. No buffer of rows: an iterator checkpoint holds the cycle's
    pieces (their paths and offsets) and the position in it, and a restore calls the function
    again, which reads the cycle again and permutes it alike."""
    most = plan.cycle * max((e - a for _, a, e in plan.pieces), default=1)
    cycles = _piece_columns(plan, (shuffle, r)).batch(plan.cycle).enumerate()

    def cycle(index: tf.Tensor, columns: tuple) -> tf.data.Dataset:
        chunks = _read_pieces(tf.data.Dataset.from_tensor_slices(columns), plan, read)
        rows = _decode_chunks(chunks, plan, read, finish, keep).rebatch(most).get_single_element()
        return tf.data.Dataset.from_tensor_slices(_permuted(rows, r, index))

    return flat_map(cycles, cycle)


def _cycle_options() -> tf.data.Options:
    """The options of a shuffled pipeline: its checkpoints leave out what its cycles' reads
    hold (`npyio._tf.ignore_external_state`).

    A cycle is read whole by a dataset run to its end inside the ``flat_map``'s function
    (``get_single_element``), an op TensorFlow marks as stateful: under the default policy
    (FAIL) a checkpoint refuses any function that holds one. That op keeps nothing across
    calls: the function reads the same rows again for the same arguments, which is all a
    restore needs (files must not change while a dataset reads them)."""
    return ignore_external_state(tf.data.Options())


def _length(plan: RowsPlan) -> int:
    """Elements in one epoch of ``plan``: its rows, or its batches of them. Every count is known
    in Python, but the flat_map and rebatch steps hide it from tf.data; asserting it lets
    ``len(ds)`` and Keras count an epoch. (No tf.data service worker reads a part of these
    pipelines: they are not split dynamically, so each worker yields the whole count.)"""
    count, size = plan.epoch_count, plan.loader.batch_size
    if size is None:
        return count
    return count // size if plan.loader.drop_remainder else -(-count // size)


def _equal(ds: tf.data.Dataset, plan: RowsPlan) -> tf.data.Dataset:
    """One epoch's elements, as many as every shard yields (`RowsPlan.shard_count`: ``shard=``
    with ``drop_remainder``), so that no host runs out before another; else all of them."""
    return ds if plan.shard_count is None else ds.take(_length(plan))


def _file_table(plan: RowsPlan) -> FileTable:
    """The plan's files as `FileTable` constants (paths as bytes: a name that is not UTF-8 has
    no str form that tf.constant could encode)."""
    files = plan.sides[0].files
    starts = np.concatenate([[0], np.cumsum([f.nrows for f in files])]).astype(np.int64)
    return FileTable(
        tuple(tf.constant([os.fsencode(f.path) for f in side.files]) for side in plan.sides),
        tuple(
            tf.constant([f.header.data_offset for f in side.files], tf.int64) for side in plan.sides
        ),
        tuple(tf.constant([f.little_endian for f in side.files], tf.bool) for side in plan.sides),
        tf.constant(starts),
    )


def _row_numbers(plan: RowsPlan) -> Callable[[tf.Tensor], tf.Tensor]:
    """The function of positions in this shard's rows (``0 .. count - 1``) to the rows' numbers
    (`RowsPlan.runs`)."""
    runs = plan.runs
    if len(runs) == 1:
        first = tf.constant(runs[0][0], tf.int64)
        return lambda positions: positions + first
    starts = tf.constant([a for a, _ in runs], tf.int64)
    before = tf.constant(np.cumsum([0] + [e - a for a, e in runs[:-1]]), tf.int64)

    def numbers(positions: tf.Tensor) -> tf.Tensor:
        run = tf.searchsorted(before, positions, side="right") - 1
        return tf.gather(starts, run) + positions - tf.gather(before, run)

    return numbers


class RowsSource(Source):
    """The rows of a `RowsPlan` as units of the loader's index stream, as `npyio.dataset` reads
    loose files: positions in order or shuffled by index, batched, then each batch of rows read
    at once (`RowReader.read_rows`: a ``pread`` per run of neighbours) in a parallel map.
    tf.data service's dynamic sharding splits that stream, so each row comes once whichever
    worker reads it. Without ``batch_size``, a gather of rows (at most 64) is read at once,
    inside the index stream (`gather`), and unbatched: the epoch's length stays known. Read by
    pieces (`own_epoch`), the rows do not come from that stream."""

    def __init__(
        self,
        plan: RowsPlan,
        read: RowReader,
        finish: Callable[..., object] | None,
        column: Column = ROWS_COLUMN,
    ) -> None:
        self.plan, self.reader, self.finish, self.column = plan, read, finish, column
        self.loader, self.count, self.epoch_count = plan.loader, plan.count, plan.epoch_count
        self.autotune = read.capabilities.autotune
        self.paths = [side.files[0].path for side in plan.sides if side.files]
        self.table, self.numbers = _file_table(plan), _row_numbers(plan)
        empty = any(side.row_bytes == 0 for side in plan.sides)
        # a gather of rows read at once, unbatched, where the gather is one of at most
        # MAX_GATHER (an awkward count's gathers can be larger, `gather_size`)
        self.gathered = (
            plan.loader.batch_size is None
            and not empty
            and gather_size(plan.epoch_count) <= MAX_GATHER
        )

    @tf.autograph.experimental.do_not_convert
    def read_batch(self, positions: tf.Tensor) -> object:
        """The elements of the rows at ``positions`` of this shard's rows, read at once."""
        parts = self.reader.read_rows(self.numbers(positions), self.table)
        if self.finish is not None:
            return self.finish(*parts)
        return parts[0] if len(parts) == 1 else tuple(parts)

    def gather(self, indices: tf.Tensor, *key: tf.Tensor) -> object:
        return self.read_batch(indices) if self.gathered else indices

    def gather_parallelism(self) -> int | None:
        return self.loader.num_parallel_calls if self.gathered else None

    def in_order(self) -> tf.data.Dataset | None:
        if self.loader.batch_size is None:  # gathers: `gather`
            return None
        return tf.data.Dataset.range(self.count)

    def read(self, units: tf.data.Dataset) -> tf.data.Dataset:
        loader = self.loader
        if self.gathered:
            return units
        if loader.batch_size is None:
            # one row a call: Dataset.unbatch crashes the process on rows of zero elements (TF 2.21)
            def one(position: tf.Tensor) -> object:
                row = self.read_batch(position[None])
                return tf.nest.map_structure(lambda part: part[0], row)

            return parallel_map(units, one, loader.num_parallel_calls, deterministic=True)
        return super().read(units)

    def own_epoch(self) -> tuple[tf.data.Dataset, Anchor | None] | None:
        # By pieces on object storage, where each read of a run would be a request of its own
        # (of TensorFlow's 64 MiB read-ahead), in order too; shuffled by cycles where asked, or
        # where rows in a random order would cost a dataset each.
        plan, read, loader = self.plan, self.reader, self.loader
        remote = any(is_remote(path) for path in self.paths)
        if not (plan.by_cycles or (loader.shuffle and not read.random_rows)) and not remote:
            return None
        keep = None
        if plan.keep is not None:  # made once: the functions that use it capture it
            keep = tf.constant(np.frombuffer(plan.keep, np.uint8).astype(bool))
        if not loader.shuffle:
            return _pieces_in_order(plan, read, self.finish, keep), None
        return _by_cycles(plan, read, self.finish, keep)

    def options(self) -> tf.data.Options:
        return _cycle_options()


def _pieces_in_order(
    plan: RowsPlan, read: RowReader, finish: Callable[..., object] | None, keep: tf.Tensor | None
) -> tf.data.Dataset:
    """The rows by pieces, in order. tf.data service splits the pieces (each once, whichever
    worker reads it): their rows' count is then a worker's, so the length is not asserted."""
    pieces = _read_pieces(_piece_columns(plan, None), plan, read)
    ds = _decode_chunks(pieces, plan, read, finish, keep)
    if plan.loader.batch_size is not None:
        ds = ds.rebatch(plan.loader.batch_size, drop_remainder=plan.loader.drop_remainder)
    else:
        ds = _unbatch(ds, any(side.row_bytes == 0 for side in plan.sides))
    return _equal(ds, plan)


def _by_cycles(
    plan: RowsPlan, read: RowReader, finish: Callable[..., object] | None, keep: tf.Tensor | None
) -> tuple[tf.data.Dataset, Callable[[tf.data.Dataset], tf.data.Dataset]]:
    """The rows shuffled by cycles, and the anchor of their shuffle: the shard's own keys
    (`npyio._pipeline.shuffle.shard_seed`), so its pieces' order and cycles are not another
    shard's."""
    loader = plan.loader
    shuffle = IndexShuffle(
        len(plan.pieces), loader.seed, loader.reshuffle_each_iteration, shard=loader.shard
    )

    def epoch(r: tf.Tensor) -> tf.data.Dataset:
        # The piece order and the rows' order in each cycle both draw from the epoch's
        # value ``r``: no random op has a seed generator of its own (IndexShuffle.epochs).
        ds = _shuffled_cycles(plan, read, shuffle, r, finish, keep)
        if loader.batch_size is not None:
            ds = ds.batch(loader.batch_size, drop_remainder=loader.drop_remainder)
        return _equal(ds, plan)

    return shuffle.epochs(epoch), shuffle.anchor


def rows_source(
    plan: RowsPlan, *, finish: Callable[..., object] | None = None, column: Column = ROWS_COLUMN
) -> RowsSource:
    """The `RowsSource` of a `RowsPlan` (of ``column``'s kind: `npyio.rows`, or a pack), with
    the reader of row ranges that reads its files; ``finish`` makes the elements from the
    sides' decoded rows, a chunk at a time (a packed directory makes its structure and paths
    there)."""
    firsts = [side.files[0].path for side in plan.sides if side.files]
    read = row_reader(usable(_BACKEND), plan.sides, plan.chunk, firsts)
    return RowsSource(plan, read, finish, column)


def build_rows(plan: RowsPlan) -> tf.data.Dataset:
    """The pipeline a `RowsPlan` describes: the loader's `load` of its `rows_source`."""
    return load(rows_source(plan))
