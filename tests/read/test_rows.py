"""`npyio._read.rows`: the reader of row ranges reads a piece's rows as whole chunks, the rest and
an end record, with what each should hold; decodes them bit-exactly in either byte order, rows
of no bytes included; and refuses a file whose size changed since, naming it."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from npyio._read.rows import READ_BUFFER, REMOTE_READ_BUFFER, RowReader
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


def chunks(read: RowReader, ds: tf.data.Dataset) -> list[tuple[tuple, list[np.ndarray]]]:
    """(expected, decoded parts) of each record: decoded in a graph map, as pipelines do."""
    decoded = ds.map(lambda expected, raws: (expected, tuple(read.decode_chunk(expected, raws))))
    return [
        (tf.nest.map_structure(np.asarray, e), [p.numpy() for p in parts]) for e, parts in decoded
    ]


def test_a_piece_is_whole_chunks_the_rest_and_an_end_record(tmp_path):
    arr = np.arange(30, dtype=">f4").reshape(10, 3)  # big-endian: decoded to native order
    path = save(tmp_path / "a.npy", arr)
    read = RowReader([layout_of(arr)], chunk=3)
    got = chunks(read, read.read_piece([side(path, arr, 2, 9)]))
    rows = [e[0] for e, _ in got]
    before = [e[1] for e, _ in got]
    assert rows == [3, 3, 1, 0] and before == [0, 3, 6, 7]
    ((path_, offset, count, _),) = got[0][0][2]
    assert path_ == path.encode() and count == 7 and offset == os.path.getsize(path) - 120 + 24
    assert_same(np.concatenate([parts[0] for _, parts in got]), arr[2:9])
    assert got[-1][1][0].shape == (0, 3)


def test_first_marks_where_each_records_rows_begin(tmp_path):
    arr = np.arange(20, dtype="<i8").reshape(10, 2)
    path = save(tmp_path / "a.npy", arr)
    read = RowReader([layout_of(arr)], chunk=4)
    got = chunks(read, read.read_piece([side(path, arr, 0, 10)], tf.constant(100, tf.int64)))
    assert [e[3] for e, _ in got] == [100, 104, 108, 110]
    unmarked = chunks(read, read.read_piece([side(path, arr, 0, 10)]))
    assert all(len(e) == 3 for e, _ in unmarked)


@pytest.mark.parametrize("remote", [False, True], ids=["local", "remote"])
def test_two_sides_with_byte_orders_per_file(tmp_path, remote):
    """Sides read together (on object storage, each side's requests in flight at once); a side
    whose files differ in byte order takes each file's from its column."""
    x = np.arange(24, dtype=">u2").reshape(8, 3)
    y = np.arange(8, dtype="<f8")
    px, py = save(tmp_path / "x.npy", x), save(tmp_path / "y.npy", y)
    read = RowReader([layout_of(x, per_file=True), layout_of(y)], chunk=3, remote=remote)
    assert read.buffer == (REMOTE_READ_BUFFER if remote else READ_BUFFER)
    got = chunks(read, read.read_piece([side(px, x, 1, 8), side(py, y, 1, 8)]))
    assert_same(np.concatenate([parts[0] for _, parts in got]), x[1:])
    assert_same(np.concatenate([parts[1] for _, parts in got]), y[1:])


def test_rows_of_no_bytes_are_counted_not_read(tmp_path):
    arr = np.zeros((7, 0), np.float32)
    path = save(tmp_path / "a.npy", arr)
    read = RowReader([layout_of(arr)], chunk=2)
    got = chunks(read, read.read_piece([side(path, arr, 0, 7)]))
    assert [e[0] for e, _ in got] == [2, 2, 2, 1, 0]
    assert sum(len(parts[0]) for _, parts in got) == 7


@pytest.mark.parametrize(
    "rows, words", [(6, "got 6"), (15, "got more than 12")], ids=["shrunk", "grown"]
)
def test_a_file_that_changed_size_by_whole_chunks_is_refused_naming_it(tmp_path, rows, words):
    """Its end record comes early, or a record comes where the end should be. (Other changes
    fail inside FixedLengthRecordDataset: tests/data/test_rows.py has them all.)"""
    arr = np.arange(24, dtype="<f4").reshape(12, 2)
    path = save(tmp_path / "a.npy", arr)
    offset = os.path.getsize(path) - arr.nbytes
    read = RowReader([layout_of(arr)], chunk=3)
    ds = read.read_piece([side(path, arr, 0, 12)])
    np.save(path, np.arange(rows * 2, dtype="<f4").reshape(rows, 2))  # same header length
    assert os.path.getsize(path) - rows * 8 == offset
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        chunks(read, ds)
    message = tf_message(e.value)
    expected = f"{path}: file changed size since the dataset was built -- expected 12 rows"
    assert message.startswith(f"{expected} from byte {offset}, {words}"), message
