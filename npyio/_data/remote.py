"""What npyio does for a pipeline that reads object storage (``gs://``, ...): a private thread
pool big enough to keep many reads in flight, and a warning when TensorFlow's GCS file system
started with a read block that makes small objects slow (`npyio._format.files.GCS_DEFAULTS`).
README.md, "Object storage", documents both, with the figures."""

from __future__ import annotations

import warnings
from collections.abc import Iterable

import tensorflow as tf

from npyio._format.files import gcs_too_late, is_remote

__all__ = ["REMOTE_THREADS", "for_storage", "remote_options"]

#: Threads of the private pool of a pipeline that reads object storage, where each read mostly
#: waits on the network: tf.data's shared pool (one thread per core) would keep only about a
#: core count of reads in flight, whatever ``num_parallel_calls`` says.
REMOTE_THREADS = 64


def remote_options() -> tf.data.Options:
    """The options npyio gives a pipeline that reads object storage (`REMOTE_THREADS`)."""
    options = tf.data.Options()
    options.threading.private_threadpool_size = REMOTE_THREADS
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
    return ds.with_options(remote_options())
