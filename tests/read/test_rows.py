"""`npyio._read.rows`: the reader of row ranges reads a piece's rows as whole chunks, the rest and
an end record, with what each should hold; decodes them bit-exactly in either byte order, rows
of no bytes included; and refuses a file whose size changed since, naming it. The graph's reader
(`RowReader`) and the native one (`NativeRowReader`) alike, word for word."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from npyio._read.rows import READ_BUFFER, REMOTE_READ_BUFFER, NativeRowReader, RowReader
from tests._npy_testing import assert_same, tf_message


@dataclass(frozen=True)
class Layout:
    """A `npyio._read.rows.RowLayout` of its own: the reader needs nothing of the plan's."""

    dtype: np.dtype
    row_shape: tuple[int, ...]
    little_endian: bool | None

    @property
    def row_bytes(self) -> int:
        return int(np.prod(self.row_shape, dtype=np.int64)) * self.dtype.itemsize


def layout_of(arr: np.ndarray, per_file: bool = False) -> Layout:
    dt = arr.dtype
    little = dt.byteorder == "<" or (dt.byteorder in "|=" and np.little_endian)
    return Layout(dt.newbyteorder("="), arr.shape[1:], None if per_file else little)


def save(path: Path, arr: np.ndarray) -> str:
    np.save(path, arr)
    return str(path)


def side(path: str, arr: np.ndarray, start: int, end: int) -> tuple[tf.Tensor, ...]:
    """The piece's column of one side: rows ``[start, end)`` of ``arr`` saved at ``path``."""
    rb = arr.itemsize * int(np.prod(arr.shape[1:], dtype=np.int64))
    offset = os.path.getsize(path) - arr.nbytes  # the header's length
    little = arr.dtype.byteorder == "<" or (arr.dtype.byteorder in "|=" and np.little_endian)
    return (
        tf.constant(path),
        tf.constant(offset + start * rb, tf.int64),
        tf.constant(end - start, tf.int64),
        tf.constant((len(arr) - end) * rb, tf.int64),
        tf.constant(little),
    )


@pytest.fixture(params=[RowReader, NativeRowReader], ids=["graph", "native"])
def reader(request):
    """Each reader of local row ranges: the same records, values and errors."""
    return request.param


def chunks(read: RowReader, ds: tf.data.Dataset) -> list[tuple[tuple, list[np.ndarray]]]:
    """(expected, decoded parts) of each record: decoded in a graph map, as pipelines do."""
    # not converted by autograph, as npyio's own functions are not: a conversion here once
    # took another function's from autograph's cache in a full run (`tf__run`, 3 arguments)
    decode = tf.autograph.experimental.do_not_convert(
        lambda expected, raws: (expected, tuple(read.decode_chunk(expected, raws)))
    )
    decoded = ds.map(decode)
    return [
        (tf.nest.map_structure(np.asarray, e), [p.numpy() for p in parts]) for e, parts in decoded
    ]


def test_a_piece_is_whole_chunks_the_rest_and_an_end_record(tmp_path, reader):
    arr = np.arange(30, dtype=">f4").reshape(10, 3)  # big-endian: decoded to native order
    path = save(tmp_path / "a.npy", arr)
    read = reader([layout_of(arr)], chunk=3)
    got = chunks(read, read.read_piece([side(path, arr, 2, 9)]))
    rows = [e[0] for e, _ in got]
    before = [e[1] for e, _ in got]
    assert rows == [3, 3, 1, 0] and before == [0, 3, 6, 7]
    ((path_, offset, count, _),) = got[0][0][2]
    assert path_ == path.encode() and count == 7 and offset == os.path.getsize(path) - 120 + 24
    assert_same(np.concatenate([parts[0] for _, parts in got]), arr[2:9])
    assert got[-1][1][0].shape == (0, 3)


def test_first_marks_where_each_records_rows_begin(tmp_path, reader):
    arr = np.arange(20, dtype="<i8").reshape(10, 2)
    path = save(tmp_path / "a.npy", arr)
    read = reader([layout_of(arr)], chunk=4)
    got = chunks(read, read.read_piece([side(path, arr, 0, 10)], tf.constant(100, tf.int64)))
    assert [e[3] for e, _ in got] == [100, 104, 108, 110]
    unmarked = chunks(read, read.read_piece([side(path, arr, 0, 10)]))
    assert all(len(e) == 3 for e, _ in unmarked)


@pytest.mark.parametrize("remote", [False, True, None], ids=["local", "remote", "native"])
def test_two_sides_with_byte_orders_per_file(tmp_path, remote):
    """Sides read together (on object storage, each side's requests in flight at once; with the
    native reader, in one call of its op); a side whose files differ in byte order takes each
    file's from its column."""
    x = np.arange(24, dtype=">u2").reshape(8, 3)
    y = np.arange(8, dtype="<f8")
    px, py = save(tmp_path / "x.npy", x), save(tmp_path / "y.npy", y)
    layouts = [layout_of(x, per_file=True), layout_of(y)]
    if remote is None:
        read: RowReader = NativeRowReader(layouts, chunk=3)
    else:
        read = RowReader(layouts, chunk=3, remote=remote)
    assert read.buffer == (REMOTE_READ_BUFFER if remote else READ_BUFFER)
    got = chunks(read, read.read_piece([side(px, x, 1, 8), side(py, y, 1, 8)]))
    assert_same(np.concatenate([parts[0] for _, parts in got]), x[1:])
    assert_same(np.concatenate([parts[1] for _, parts in got]), y[1:])


def test_rows_of_no_bytes_are_counted_not_read(tmp_path, reader):
    arr = np.zeros((7, 0), np.float32)
    path = save(tmp_path / "a.npy", arr)
    read = reader([layout_of(arr)], chunk=2)
    got = chunks(read, read.read_piece([side(path, arr, 0, 7)]))
    assert [e[0] for e, _ in got] == [2, 2, 2, 1, 0]
    assert sum(len(parts[0]) for _, parts in got) == 7


@pytest.mark.parametrize(
    "rows, words", [(6, "got 6"), (15, "got more than 12")], ids=["shrunk", "grown"]
)
def test_a_file_that_changed_size_by_whole_chunks_is_refused_naming_it(
    tmp_path, rows, words, reader
):
    """Its end record comes early, or a record comes where the end should be. (Other changes
    fail inside FixedLengthRecordDataset: tests/sources/test_rows.py has them all.) The native
    reader checks the piece's files where it is read (in a pipeline, when its piece comes) and
    reads a changed one as the graph's reader does."""
    arr = np.arange(24, dtype="<f4").reshape(12, 2)
    path = save(tmp_path / "a.npy", arr)
    offset = os.path.getsize(path) - arr.nbytes
    read = reader([layout_of(arr)], chunk=3)
    column = side(path, arr, 0, 12)  # the plan, made before the change
    np.save(path, np.arange(rows * 2, dtype="<f4").reshape(rows, 2))  # same header length
    assert os.path.getsize(path) - rows * 8 == offset
    ds = read.read_piece([column])
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        chunks(read, ds)
    message = tf_message(e.value)
    expected = f"{path}: file changed size since the dataset was built -- expected 12 rows"
    assert message.startswith(f"{expected} from byte {offset}, {words}"), message


def test_a_file_that_changed_after_its_piece_was_checked_is_refused_naming_it(tmp_path):
    """The native reader's chunk read finds the size the plan recorded no longer there: it reads
    no bytes, which the check refuses with the graph's words, naming the file."""
    arr = np.arange(24, dtype="<f4").reshape(12, 2)
    path = save(tmp_path / "a.npy", arr)
    read = NativeRowReader([layout_of(arr)], chunk=3)
    ds = read.read_piece([side(path, arr, 0, 12)])  # checked here, eagerly: the file was whole
    np.save(path, np.arange(6 * 2, dtype="<f4").reshape(6, 2))
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        chunks(read, ds)
    expected = f"{path}: file changed size since the dataset was built -- expected 12 rows"
    assert tf_message(e.value).startswith(f"{expected} from byte"), tf_message(e.value)


def test_a_missing_file_reads_as_the_graphs_reader_says(tmp_path):
    """A file the native reader's check doubts is read by the graph's reader: the same error."""
    arr = np.arange(8, dtype="<i4").reshape(4, 2)
    path = save(tmp_path / "a.npy", arr)
    column = side(path, arr, 0, 4)
    os.remove(path)
    errors = []
    for reader in (RowReader, NativeRowReader):
        read = reader([layout_of(arr)], chunk=3)
        with pytest.raises(tf.errors.OpError) as e:
            chunks(read, read.read_piece([column]))
        errors.append((type(e.value), tf_message(e.value)))
    assert errors[0] == errors[1] and path in errors[0][1]
