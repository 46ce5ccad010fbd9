"""Reading an object of known size from object storage in one request, whatever TensorFlow's
GCS settings.

TensorFlow builds its ``gs://`` file system when it is imported, with a read block of 64 MiB
unless ``GCS_READ_CACHE_BLOCK_SIZE_MB`` was set before. ``tf.io.read_file`` reads through a
1 MiB stream, so every object it reads fills a fresh block: 64 MiB allocated and zero-filled
for a 1 KiB object. A read that asks for more than the block bypasses it,
and the ``FixedLengthRecordDataset`` op's buffer is allocated without being filled: one record
of the object's size, read with a buffer above the block, costs a stat (its size) and one GET
of just the object (bench/README.md, "Object storage", has the figures).

A part of static dtype and shape knows its files' size from the first header
(`npyio._format.spec.Spec.hint`): numpy writes the same header for the same dtype and shape. An
object of another size is never cut: one whose size is a multiple of the expected one (none at
all, two records...) is read whole by ``tf.io.read_file`` and decoded as any file; any other size
is refused by the op, with an error that names the object, its size and the expected one.
"""

from __future__ import annotations

import tensorflow as tf

from npyio._tf import fixed_length_records

__all__ = ["BLOCK_BYPASS", "read_sized"]

#: The read buffer of `read_sized`: above TensorFlow's largest usual GCS block (64 MiB, its
#: default), so that a read goes straight to the object. Allocated, not filled: an object of
#: 1 KiB touches one page of it.
BLOCK_BYPASS = (64 << 20) + 1


def read_sized(path: tf.Tensor, size: int) -> tf.Tensor:
    """The bytes of the object ``path`` (a scalar string), expected to be ``size`` bytes long:
    one record of a ``FixedLengthRecordDatasetV2`` op, or, when the object holds another
    whole number of such records, ``tf.io.read_file`` (see the module docstring).

    The record is taken from its dataset by ``get_single_element``, whose op runs on one
    background thread of its own, one call after the other: inside a parallel map, a single
    op would keep one read in flight. So there are `LANES` of them, and the path's hash picks
    one.
    """
    lane = tf.strings.to_hash_bucket_fast(path, LANES)
    branches = [lambda: _first_records(path, size)] * LANES
    got = tf.switch_case(tf.cast(lane, tf.int32), branches)
    return tf.cond(tf.equal(tf.size(got), 2), lambda: got[1], lambda: tf.io.read_file(path))


#: The reads in flight at most per part (`read_sized`): npyio's thread pool over object storage.
LANES = 64


def _first_records(path: tf.Tensor, size: int) -> tf.Tensor:
    """An empty string, then up to two records of ``size`` bytes of ``path`` (one element,
    even for an object of no record)."""
    records = fixed_length_records(
        path,
        tf.constant(0, tf.int64),
        tf.constant(size, tf.int64),
        tf.constant(0, tf.int64),
        tf.constant(max(size, BLOCK_BYPASS), tf.int64),
    )
    empty = tf.data.Dataset.from_tensors(tf.constant(b""))
    return empty.concatenate(records.take(2)).batch(3).get_single_element()
