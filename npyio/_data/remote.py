"""What npyio does for a pipeline that reads object storage (``gs://``, ...): a private thread
pool big enough to keep many reads in flight, and a warning when TensorFlow's GCS file system
started with a read block that makes small objects slow (`npyio._format.files.GCS_DEFAULTS`).
README.md, "Object storage", documents both, with the figures."""

from __future__ import annotations

import warnings
from collections.abc import Iterable

import tensorflow as tf

from npyio._format.files import gcs_block_mb, gcs_too_late, is_remote

__all__ = ["BLOCK_BUDGET_MB", "REMOTE_THREADS", "for_storage", "remote_options", "remote_threads"]

#: Threads of the private pool of a pipeline that reads object storage, where each read mostly
#: waits on the network: tf.data's shared pool (one thread per core) would keep only about a
#: core count of reads in flight, whatever ``num_parallel_calls`` says.
REMOTE_THREADS = 64
#: The most MiB of read blocks a ``gs://`` pipeline's reads hold at once: TensorFlow's GCS
#: reader allocates and zero-fills one block per object read. With its default 64 MiB block
#: (npyio imported after TensorFlow), 64 reads in flight would hold 4 GiB, and so many zero
#: fills at once read small objects slower than two threads do (bench/README.md).
BLOCK_BUDGET_MB = 256
#: The fewest threads a pool over object storage gets.
MIN_THREADS = 4


def remote_threads(paths: list[str]) -> int:
    """`REMOTE_THREADS`, or for ``gs://`` as many as keep the blocks in `BLOCK_BUDGET_MB`."""
    if not any(p.startswith("gs://") for p in paths):
        return REMOTE_THREADS
    return max(min(REMOTE_THREADS, BLOCK_BUDGET_MB // gcs_block_mb()), MIN_THREADS)


def remote_options(threads: int = REMOTE_THREADS) -> tf.data.Options:
    """The options npyio gives a pipeline that reads object storage: a private pool."""
    options = tf.data.Options()
    options.threading.private_threadpool_size = threads
    return options


def for_storage(ds: tf.data.Dataset, paths: Iterable[str]) -> tf.data.Dataset:
    """``ds``, with `remote_options` when any of ``paths`` (one per part or side is enough:
    a part's files share a file system) is on object storage; warns once per call site when
    the GCS defaults came too late for this process."""
    paths = list(paths)
    if not any(is_remote(p) for p in paths):
        return ds
    message = gcs_too_late(paths)
    if message is not None:
        warnings.warn(message, RuntimeWarning, stacklevel=4)
    return ds.with_options(remote_options(remote_threads(paths)))
