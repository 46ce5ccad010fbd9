"""Other libraries' readers that ``npyio bench --peers`` measures beside npyio, and the worker
loop every out-of-process pipeline of the bench runs in.

A peer runs in a worker process of its own (``npyio.cli.bench.Worker``), started once and
drained in the same interleaved rounds as npyio and the floor, on the same files, so that it
shares the machine's state with them but not its process: no peer's threads, allocator or
libraries can touch npyio's figures, nor npyio's theirs. This module imports neither TensorFlow
nor any peer at import time: a peer's worker loads only the peer's library.

Peers (``pip install 'npyio[peers]'``; tfio: ``pip install 'npyio[tfio]'``, TensorFlow 2.16 only):

- ``dali``: NVIDIA DALI's ``fn.readers.numpy``, on the CPU (``device_id=None``), one reader
  for the inputs and one for the labels in one pipeline, ``num_threads`` = the cores.
- ``grain``: Grain's ``MapDataset`` over ``np.load`` of each pair, batched by Grain
  (``np.stack``), read by ``GRAIN_THREADS`` threads.
- ``tfio``: tensorflow-io's ``IO>NumpyRead`` op, raw (no check of the files first),
  in a tf.data parallel map, ``batch``, ``prefetch``: what a tensorflow-io user writes. Its
  last release loads only with TensorFlow 2.16.

`mallopt` raises glibc's allocator thresholds (`MALLOPT`) in a process, for the benchmarks that
measure whether they pay (``npyio bench --mallopt``, ``bench/where.py``).
"""

from __future__ import annotations

import ctypes
import importlib
import importlib.util
import json
import os
import sys
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "GRAIN_THREADS",
    "MALLOPT",
    "PEERS",
    "PeakRss",
    "Peer",
    "installed",
    "load_builder",
    "mallopt",
    "require",
    "serve",
]

Drain = Callable[[], tuple[int, float]]

#: Grain's read threads, as in bench/README.md's first peer figures: many more than the 2 cores,
#: since np.load lets go of the GIL while it reads a payload.
GRAIN_THREADS = 16


@dataclass(frozen=True)
class Peer:
    """A peer: its row in the table, its short name (in ratios), what it needs (its module,
    its package and the npyio extra that installs it), and where its worker builds it.

    ``builder`` is ``"module:function"``; the function takes ``inputs``, ``labels`` and
    ``batch_size`` and returns a drain: ``() -> (samples, seconds)`` over one epoch. A peer
    that is a tf.data pipeline (``tf_data``) also takes ``by``, how ``npyio bench --drain``
    drains it (`npyio.cli.pipelines.DRAINS`); the others run their own Python loops.
    """

    name: str
    short: str
    module: str
    package: str
    builder: str
    note: str
    extra: str = "peers"
    tf_data: bool = False


PEERS = {
    "dali": Peer(
        "DALI CPU fn.readers.numpy",
        "DALI",
        "nvidia.dali",
        "nvidia-dali-cuda120",
        "npyio.cli.peers:dali_drain",
        "NVIDIA DALI's fn.readers.numpy on the CPU (device_id=None), a reader for the inputs "
        "and one for the labels, batch 8, num_threads = the cores, its default prefetch; "
        "batches stay DALI TensorLists (no copy to numpy); a last partial batch is padded by "
        "DALI and counted as the samples left; in a worker process of its own",
    ),
    "grain": Peer(
        f"Grain, {GRAIN_THREADS} threads of np.load",
        "Grain",
        "grain",
        "grain",
        "npyio.cli.peers:grain_drain",
        f"Grain's MapDataset over np.load of each pair, batch 8 (np.stack), "
        f"to_iter_dataset with {GRAIN_THREADS} read threads; in a worker process of its own",
    ),
    "tfio": Peer(
        "tensorflow-io IO>NumpyRead",
        "tfio",
        "tensorflow_io",
        "tensorflow-io",
        "npyio.cli.peers:tfio_drain",
        "tensorflow-io 0.37's IO>NumpyRead op, raw (no guard: the sample files are numpy's own, "
        "which it reads), in a parallel map (AUTOTUNE), batch 8, prefetch (AUTOTUNE); loads "
        "only with TensorFlow 2.16; in a worker process of its own",
        extra="tfio",
        tf_data=True,
    ),
}


def installed(peer: Peer) -> bool:
    """Whether ``peer``'s library can be imported (it is not imported)."""
    try:
        return importlib.util.find_spec(peer.module) is not None
    except ModuleNotFoundError:  # a missing parent package (nvidia)
        return False


def require(names: Sequence[str]) -> list[Peer]:
    """The peers named, checked to be known and installed, without importing them.

    Raises:
        SystemExit: a name that is no peer, or a peer whose library is not installed (naming
            the package and the ``peers`` extra).
    """
    out = []
    for name in names:
        if name not in PEERS:
            raise SystemExit(f"--peers: no peer {name!r} -- expected one of {sorted(PEERS)}")
        peer = PEERS[name]
        if not installed(peer):
            raise SystemExit(
                f"--peers {name} needs {peer.package}, which is not installed: "
                f"pip install 'npyio[{peer.extra}]'"
            )
        out.append(peer)
    return out


def _windows(paths: Sequence[str], crop: Sequence[int]) -> Callable[[int], Any]:
    """Random window starts for ``crop`` (sizes along the leading axes) in each of ``paths``'
    arrays, from each file's own shape (its header, read once): ``starts(i)`` is a new start
    for file ``i`` each call (int32 ``[len(crop)]``), as a DALI or Grain user crops files of
    per-case shapes. A generator per call: Grain's threads share none."""
    import numpy as np

    shapes = [np.load(p, mmap_mode="r").shape for p in paths]

    def starts(i: int) -> Any:
        rng = np.random.default_rng()
        dims = shapes[i][: len(crop)]
        return np.array([rng.integers(0, d - c + 1) for d, c in zip(dims, crop)], np.int32)

    return starts


def dali_drain(
    inputs: Sequence[str],
    labels: Sequence[str],
    batch_size: int,
    crop: Sequence[int] | None = None,
    crops_per_file: int = 1,
) -> Drain:
    """DALI's CPU numpy reader over the pairs; its drain runs one epoch of batches.

    The pipeline is built once; a drain runs ``ceil(len / batch_size)`` iterations, one
    epoch: DALI pads a last partial batch with copies of the last sample (``pad_last_batch``),
    so that every epoch starts at the first pair, and those copies are not counted. With
    ``crop``, each file is listed ``crops_per_file`` times and read as a random window
    (DALI's ROI read: ``roi_start``, ``roi_shape``), the label the same window; the starts
    come from each file's own shape (`_windows`) through an external source, in the readers'
    order.
    """
    from nvidia.dali import fn, pipeline_def, types

    xs, ys = list(inputs) * crops_per_file, list(labels) * crops_per_file
    batches = -(-len(xs) // batch_size)
    # device_id=None: CPU only (DALI's stubs type it as an int, hence the dict)
    options: dict[str, Any] = {"device_id": None}
    roi: dict[str, Any] = {}
    if crop is not None:
        starts, calls = _windows(inputs, crop), [0]

        def batch_starts() -> list[Any]:  # the readers' next batch, the last one padded
            at = calls[0] % batches * batch_size
            calls[0] += 1
            return [starts(min(at + j, len(xs) - 1) % len(inputs)) for j in range(batch_size)]

        axes = list(range(len(crop)))
        roi = {"roi_shape": list(crop), "roi_axes": axes}

    @pipeline_def(batch_size=batch_size, num_threads=os.cpu_count() or 1, **options)
    def pipeline() -> tuple[Any, Any]:
        where = dict(roi)
        if crop is not None:
            start = fn.external_source(source=batch_starts, batch=True, dtype=types.INT32)
            where["roi_start"] = start
        x = fn.readers.numpy(files=xs, pad_last_batch=True, name="inputs", **where)
        y = fn.readers.numpy(files=ys, pad_last_batch=True, name="labels", **where)
        return x, y

    pipe = pipeline()
    pipe.build()

    def drain() -> tuple[int, float]:
        start = time.perf_counter()
        n = 0
        for _ in range(batches):
            x, _y = pipe.run()
            n += min(len(x), len(xs) - n)
        return n, time.perf_counter() - start

    return drain


def grain_drain(
    inputs: Sequence[str],
    labels: Sequence[str],
    batch_size: int,
    crop: Sequence[int] | None = None,
    crops_per_file: int = 1,
) -> Drain:
    """Grain over ``np.load`` of each pair with `GRAIN_THREADS` threads; a drain iterates a
    fresh iterator over one epoch. With ``crop``, each pair ``crops_per_file`` times, mapped
    (``np.load(mmap_mode="r")``) and cut to a random window (`_windows`), the label to the
    same one."""
    import grain
    import numpy as np

    pairs = list(zip(inputs, labels))
    starts = None if crop is None else _windows(inputs, crop)

    def load(i: int) -> tuple[Any, Any]:
        x, y = pairs[i % len(pairs)]
        if starts is None or crop is None:
            return np.load(x), np.load(y)
        where = tuple(slice(s, s + c) for s, c in zip(starts(i % len(pairs)), crop))
        x_map, y_map = np.load(x, mmap_mode="r"), np.load(y, mmap_mode="r")
        return np.ascontiguousarray(x_map[where]), np.ascontiguousarray(y_map[where])

    count = len(pairs) * crops_per_file
    ds = grain.MapDataset.range(count).map(load).batch(batch_size)
    epochs = ds.to_iter_dataset(grain.ReadOptions(num_threads=GRAIN_THREADS))

    def drain() -> tuple[int, float]:
        start = time.perf_counter()
        n = 0
        for x, _y in epochs:
            n += len(x)
        return n, time.perf_counter() - start

    return drain


def tfio_drain(
    inputs: Sequence[str], labels: Sequence[str], batch_size: int, by: str = "reduce"
) -> Drain:
    """tensorflow-io's ``IO>NumpyRead`` of each pair in a tf.data pipeline; a drain reads one
    epoch as npyio's rows are drained (``by``: `npyio.cli.pipelines.DRAINS`).

    Each part's shape and dtype come from its first file, as a user would give them.
    """
    import functools

    import numpy as np
    import tensorflow as tf
    from tensorflow_io.python.ops import core_ops

    from npyio.cli import pipelines

    zero = tf.constant(0, tf.int64)

    def reader(first: str) -> Callable[[tf.Tensor], tf.Tensor]:
        array = np.load(first, mmap_mode="r")
        shape, dtype = tuple(array.shape), tf.as_dtype(array.dtype)

        def read(path: tf.Tensor) -> tf.Tensor:
            out = core_ops.io_numpy_read(
                address=zero, filename=path, array="", shape=shape, start=zero,
                stop=tf.constant(-1, tf.int64), dtype=dtype,
            )  # fmt: skip
            return tf.reshape(out, shape)

        return read

    read_x, read_y = reader(inputs[0]), reader(labels[0])
    ds = tf.data.Dataset.from_tensor_slices((list(inputs), list(labels)))
    ds = ds.map(lambda x, y: (read_x(x), read_y(y)), num_parallel_calls=tf.data.AUTOTUNE)
    ds = ds.batch(batch_size).prefetch(tf.data.AUTOTUNE)
    return functools.partial(pipelines.DRAINS[by], ds)


#: glibc ``mallopt`` parameters (malloc.h) and the values of the environment variables
#: ``MALLOC_MMAP_THRESHOLD_=256 MiB``, ``MALLOC_TRIM_THRESHOLD_=1 GiB``, ``MALLOC_TOP_PAD_=256
#: MiB``: freed blocks up to 256 MiB stay in the heap for reuse instead of being unmapped.
MALLOPT = {"M_MMAP_THRESHOLD": (-3, 256 << 20), "M_TRIM_THRESHOLD": (-1, 1 << 30),
           "M_TOP_PAD": (-2, 256 << 20)}  # fmt: skip


def mallopt() -> None:
    """Sets `MALLOPT` in this process's glibc, through ctypes, from now on: for ``npyio bench
    --mallopt``'s row and ``bench/where.py``, which measure whether it pays on the machine at
    hand. npyio does not ship it: on the machine of bench/README.md it was slower, and it
    holds freed memory (up to 1 GiB per malloc arena) instead of returning it.

    Raises:
        OSError: the C library has no ``mallopt`` (not glibc), or refused a value.
    """
    function = getattr(ctypes.CDLL(None), "mallopt", None)
    if function is None:
        raise OSError("mallopt: the C library has no mallopt -- expected glibc")
    for name, (param, value) in MALLOPT.items():
        if function(param, value) != 1:
            raise OSError(f"mallopt: glibc refused {name} -- expected 1, got 0 for {value!r}")


class PeakRss:
    """Samples this process's resident set size in a thread; ``peak`` is the largest seen."""

    def __init__(self, interval: float = 0.005) -> None:
        self.interval = interval
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @staticmethod
    def now() -> int:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self.now())
            self._stop.wait(self.interval)

    def __enter__(self) -> PeakRss:
        self.peak = self.now()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self.now())


def load_builder(path: str) -> Callable[..., Drain]:
    """``"module:function"`` -> the function."""
    module, _, name = path.partition(":")
    function: Callable[..., Drain] = getattr(importlib.import_module(module), name)
    return function


def serve() -> None:
    """A worker's loop: a JSON request per line in, a JSON reply per line out, until EOF.

    ``{"op": "build", "key", "builder", "kwargs"}`` builds a drain with ``builder(**kwargs)``;
    ``{"op": "drain", "key"}`` runs it and replies with its samples, seconds and this process's
    peak RSS during the drain. A failure replies ``{"error": traceback}``.
    """
    # Replies go on a duplicate of stdout, and stdout itself now points at stderr, so that
    # nothing a library prints can corrupt the replies.
    replies = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    drains: dict[str, Drain] = {}
    for line in sys.stdin:
        request = json.loads(line)
        try:
            if request["op"] == "build":
                drains[request["key"]] = load_builder(request["builder"])(**request["kwargs"])
                reply: dict[str, Any] = {"ok": True}
            elif request["op"] == "drain":
                with PeakRss() as rss:
                    n, seconds = drains[request["key"]]()
                reply = {"samples": n, "seconds": seconds, "peak_rss": rss.peak}
            else:
                raise ValueError(f"unknown request {request['op']!r}")
        except Exception:
            reply = {"error": traceback.format_exc()}
        replies.write(json.dumps(reply) + "\n")
        replies.flush()
