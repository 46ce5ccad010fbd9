"""What npyio does for a pipeline that reads object storage (``gs://``, ...): a private thread
pool big enough to keep many reads in flight. docs/object-storage.md documents it, with
the figures.

On ``gs://``, the native reader's op and the graph reader read files of known size in one
request that bypasses TensorFlow's GCS read block (`npyio._read.native`, `npyio._read.objects`);
other reads (``None`` dims, ``.npz``
members, ``ignore_errors``, other backends) go through ``tf.io.read_file``, which allocates and
fills a whole block per object: their pool is sized to keep those blocks in `BLOCK_BUDGET_MB`.
"""

from __future__ import annotations

from collections.abc import Iterable

import tensorflow as tf

from npyio._format.files import is_remote
from npyio._io.files import gcs_block_mb

__all__ = [
    "BLOCK_BUDGET_MB",
    "REMOTE_THREADS",
    "for_storage",
    "on_gcs",
    "remote_options",
    "remote_threads",
]

#: Threads of the private pool of a pipeline that reads object storage, where each read mostly
#: waits on the network: tf.data's shared pool (one thread per core) would keep only about a
#: core count of reads in flight, whatever ``num_parallel_calls`` says.
REMOTE_THREADS = 64
#: The most MiB of read blocks a ``gs://`` pipeline's ``tf.io.read_file`` reads hold at once:
#: TensorFlow's GCS reader allocates and zero-fills one block per object read. With its default
#: 64 MiB block, 64 reads in flight would hold 4 GiB, and so many zero fills at once read small
#: objects slower than two threads do (bench/README.md).
BLOCK_BUDGET_MB = 256
#: The fewest threads a pool over object storage gets.
MIN_THREADS = 4


def on_gcs(paths: Iterable[str]) -> bool:
    """Whether any of ``paths`` is on ``gs://``."""
    return any(p.startswith("gs://") for p in paths)


def remote_threads(paths: list[str], blocks: bool = True) -> int:
    """`REMOTE_THREADS`, or for ``gs://`` reads through TensorFlow's read block (``blocks``)
    as many as keep the blocks in `BLOCK_BUDGET_MB`."""
    if not blocks or not on_gcs(paths):
        return REMOTE_THREADS
    return max(min(REMOTE_THREADS, BLOCK_BUDGET_MB // gcs_block_mb()), MIN_THREADS)


def remote_options(threads: int = REMOTE_THREADS) -> tf.data.Options:
    """The options npyio gives a pipeline that reads object storage: a private pool."""
    options = tf.data.Options()
    options.threading.private_threadpool_size = threads
    return options


def for_storage(ds: tf.data.Dataset, paths: Iterable[str], blocks: bool = True) -> tf.data.Dataset:
    """``ds``, with `remote_options` when any of ``paths`` (one per part or side is enough:
    a part's files share a file system) is on object storage; ``blocks``: whether some of its
    reads fill TensorFlow's GCS read block (`remote_threads`)."""
    paths = list(paths)
    if not any(is_remote(p) for p in paths):
        return ds
    return ds.with_options(remote_options(remote_threads(paths, blocks)))
