"""Crops: random windows of big volumes, the same window from a volume and its mask (issue 44).

The data: ``--pairs`` pairs of 256^3 float32 volumes (64 MiB) and uint8 masks of the same shape
(``mask = volume > 1``), written once under ``--dir``. Every pipeline reads random 96^3 windows,
the same window from a volume and its mask, in batches of 2; an epoch is ``--samples`` windows
(the pairs' paths repeated in order), so that no pipeline's read-ahead is a large share of it.
Pipelines (``speed``):

- ``npyio crop``: ``npyio.dataset(volumes, masks, crop=(96, 96, 96), seed=0, batch_size=2)``,
  the default native reader: only each window's bytes are read (``NpyioReadWindows``);
- ``npyio whole + slice``: ``npyio.dataset(volumes, masks, batch_size=None)`` reading whole
  volumes, then a parallel map cutting the window by ``tf.slice`` at a start drawn by
  ``tf.random.stateless_uniform`` (the same on both), then ``batch(2)`` and ``prefetch``: what
  a user writes without ``crop=``;
- ``DALI ROI``: DALI's ``fn.readers.numpy`` on the CPU (``device_id=None``, ``num_threads`` =
  the cores, as ``npyio bench --peers dali``), one reader for the volumes and one for the masks,
  both with ``roi_start`` = one per-sample ``fn.random.uniform`` and ``roi_shape`` = the window;
- ``mmap py_function``: ``np.load(path, mmap_mode="r")[window]`` of both files in a
  ``tf.py_function`` map (``num_parallel_calls=AUTOTUNE``), ``batch(2)``, ``prefetch``.

All run in one process (TensorFlow imported first), each drained once as a warm-up (its first
batch checked: every window is the numpy slice of some volume at some start, and the mask's is
the same window), then in interleaved rounds (A B C D, B C D A, ...), one epoch each, drained by
a Python iterator (DALI: ``pipe.run()`` once per batch). It reports samples/s, medians, and
``npyio crop``'s ratio to each other pipeline. DALI keeps ``prefetch_queue_depth`` (2) batches in
flight: the first two batches of its next epoch are read while the next pipeline is timed.

``memory``: peak RSS (``VmHWM``) of a fresh process per case reading 3 epochs of
``npyio crop`` from 2 pairs of 256^3 volumes, and from 2 pairs of 10x larger ones
(256x256x2560, 640 MiB), the same 96^3 window; the target is less than 64 MiB added.

DALI lives in another environment (``/work/peers-venv`` here); run with this checkout's npyio::

    PYTHONPATH=. /work/peers-venv/bin/python bench/crop.py speed --rounds 5
    PYTHONPATH=. .venv/bin/python bench/crop.py memory
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)  # this checkout's npyio, not an installed one

#: A volume's shape, the window's, the batch and the pairs written.
SHAPE, WINDOW, BATCH, PAIRS = (256, 256, 256), (96, 96, 96), 2, 8
#: The 10x larger volumes of ``memory``: the last axis 10x longer.
LARGE = (256, 256, 2560)
NPYIO, WHOLE, DALI, MMAP = "npyio crop", "npyio whole + slice", "DALI ROI", "mmap py_function"
PIPELINES = (NPYIO, WHOLE, DALI, MMAP)

Drain = Callable[[], tuple[int, float]]


def dali_installed() -> bool:
    """Whether DALI can be imported here (it lives in another environment than npyio's)."""
    try:
        return importlib.util.find_spec("nvidia.dali") is not None
    except ModuleNotFoundError:  # no ``nvidia`` package at all
        return False


def ensure(root: str, pairs: int = PAIRS, shape: Sequence[int] = SHAPE) -> tuple[list, list]:
    """``pairs`` volumes (standard normal float32) and masks (``volume > 1``, uint8) of
    ``shape`` under ``root``, written once; their paths."""
    name = "x".join(map(str, shape))
    xs, ys = os.path.join(root, f"volumes-{name}"), os.path.join(root, f"masks-{name}")
    done = os.path.join(root, f".done-{name}-{pairs}")
    if not os.path.exists(done):
        os.makedirs(xs, exist_ok=True)
        os.makedirs(ys, exist_ok=True)
        rng = np.random.default_rng(0)
        for i in range(pairs):
            volume = rng.standard_normal(tuple(shape), np.float32)
            np.save(os.path.join(xs, f"{i:04d}.npy"), volume)
            np.save(os.path.join(ys, f"{i:04d}.npy"), (volume > 1).astype(np.uint8))
        open(done, "w").close()
    names = [f"{i:04d}.npy" for i in range(pairs)]
    return [os.path.join(xs, n) for n in names], [os.path.join(ys, n) for n in names]


def epoch(paths: Sequence[str], samples: int) -> list[str]:
    """``paths`` repeated in order to ``samples`` entries: one epoch's files."""
    return [paths[i % len(paths)] for i in range(samples)]


def tf_drain(ds: Any) -> Drain:
    """One epoch of ``ds`` by a Python iterator: (samples, seconds)."""

    def drain() -> tuple[int, float]:
        start = time.perf_counter()
        n = 0
        for x, _y in ds:
            n += int(x.shape[0])
        return n, time.perf_counter() - start

    return drain


def npyio_crop(xs: list[str], ys: list[str], window: Sequence[int]) -> Any:
    import npyio

    return npyio.dataset(xs, ys, crop=tuple(window), seed=0, batch_size=BATCH)


def _starts(shape: Sequence[int], window: Sequence[int]) -> Any:
    """A dataset of random window starts, one int64 [rank] vector per element."""
    import tensorflow as tf

    limit = tf.constant([s - w + 1 for s, w in zip(shape, window)], tf.int64)

    def draw(i: tf.Tensor) -> tf.Tensor:
        u = tf.random.stateless_uniform([len(shape)], seed=tf.stack([i, 0]), dtype=tf.float64)
        return tf.cast(tf.floor(u * tf.cast(limit, tf.float64)), tf.int64)

    return tf.data.Dataset.counter().map(draw)


def npyio_whole(xs: list[str], ys: list[str], shape: Sequence[int], window: Sequence[int]) -> Any:
    import tensorflow as tf

    import npyio

    whole = npyio.dataset(xs, ys, batch_size=None)

    def cut(xy: tuple[tf.Tensor, tf.Tensor], start: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
        return tf.slice(xy[0], start, window), tf.slice(xy[1], start, window)

    ds = tf.data.Dataset.zip(whole, _starts(shape, window)).map(cut, tf.data.AUTOTUNE)
    return ds.batch(BATCH).prefetch(tf.data.AUTOTUNE)


def mmap_py_function(
    xs: list[str], ys: list[str], shape: Sequence[int], window: Sequence[int]
) -> Any:
    import tensorflow as tf

    def read(x: Any, y: Any, start: Any) -> tuple[np.ndarray, np.ndarray]:
        box = tuple(slice(s, s + w) for s, w in zip(start.numpy(), window))
        volume = np.load(x.numpy().decode(), mmap_mode="r")
        mask = np.load(y.numpy().decode(), mmap_mode="r")
        return np.ascontiguousarray(volume[box]), np.ascontiguousarray(mask[box])

    def load(xy: tuple[tf.Tensor, tf.Tensor], start: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
        x, y = tf.py_function(read, [xy[0], xy[1], start], [tf.float32, tf.uint8])
        x.set_shape(window)
        y.set_shape(window)
        return x, y

    paths = tf.data.Dataset.from_tensor_slices((xs, ys))
    ds = tf.data.Dataset.zip(paths, _starts(shape, window)).map(load, tf.data.AUTOTUNE)
    return ds.batch(BATCH).prefetch(tf.data.AUTOTUNE)


def dali_pipe(xs: list[str], ys: list[str], shape: Sequence[int], window: Sequence[int]) -> Any:
    """DALI's CPU numpy readers with one random ``roi_start`` per sample shared by both; the
    pipeline's outputs are the volumes' windows, the masks' and the starts. Built."""
    from nvidia.dali import fn, pipeline_def, types

    limits = {s - w for s, w in zip(shape, window)}
    if len(limits) != 1:  # one discrete range for every axis
        raise ValueError(f"DALI ROI: the bench draws one range for all axes, not {limits}")
    (limit,) = limits
    # device_id=None: CPU only (DALI's stubs type it as an int, hence the dict)
    options: dict[str, Any] = {"device_id": None, "seed": 0}

    @pipeline_def(batch_size=BATCH, num_threads=os.cpu_count() or 1, **options)
    def pipeline() -> tuple[Any, Any, Any]:
        start = fn.random.uniform(
            values=list(range(limit + 1)), shape=[len(shape)], dtype=types.INT32
        )
        roi = {"roi_start": start, "roi_shape": list(window), "pad_last_batch": True}
        x = fn.readers.numpy(files=list(xs), name="volumes", **roi)
        y = fn.readers.numpy(files=list(ys), name="masks", **roi)
        return x, y, start

    pipe = pipeline()
    pipe.build()
    return pipe


def dali_drain(pipe: Any, samples: int) -> Drain:
    """One epoch of ``pipe``: ``ceil(samples / BATCH)`` runs."""

    def drain() -> tuple[int, float]:
        start = time.perf_counter()
        n = 0
        for _ in range(-(-samples // BATCH)):
            x, _y, _s = pipe.run()
            n += min(len(x), samples - n)
        return n, time.perf_counter() - start

    return drain


def locate(volumes: Sequence[np.ndarray], window: np.ndarray) -> tuple[int, tuple[int, ...]]:
    """Which volume and start ``window`` was cut from, by its first element (random normal
    values: unique); AssertionError where it is no slice of any."""
    for i, volume in enumerate(volumes):
        for start in np.argwhere(volume == window.flat[0]):
            box = tuple(slice(s, s + w) for s, w in zip(start, window.shape))
            if volume[box].shape == window.shape and np.array_equal(volume[box], window):
                return i, tuple(int(s) for s in start)
    raise AssertionError("a window that is no slice of any volume")


def check(xs: Sequence[str], ys: Sequence[str], x: np.ndarray, y: np.ndarray) -> list[tuple]:
    """Each window of the batch ``x`` is a numpy slice of some volume, and ``y``'s is the same
    slice of its mask; the (volume, start) of each."""
    volumes = [np.load(p, mmap_mode="r") for p in dict.fromkeys(xs)]
    masks = [np.load(p, mmap_mode="r") for p in dict.fromkeys(ys)]
    found = []
    for window, mask in zip(x, y):
        i, start = locate(volumes, np.asarray(window))
        box = tuple(slice(s, s + w) for s, w in zip(start, window.shape))
        assert np.array_equal(masks[i][box], np.asarray(mask)), (i, start)
        found.append((i, start))
    return found


def first_batch(name: str, pipeline: Any) -> tuple[np.ndarray, np.ndarray]:
    """A pipeline's first batch as numpy arrays."""
    if name == DALI:
        x, y, _ = pipeline.run()
        return np.stack([np.asarray(t) for t in x]), np.stack([np.asarray(t) for t in y])
    x, y = next(iter(pipeline))
    return x.numpy(), y.numpy()


def build(
    names: Sequence[str], xs: list[str], ys: list[str], shape: Sequence[int], window: Sequence[int]
) -> dict[str, Any]:
    """The named pipelines over one epoch's files (DALI's: its built pipeline)."""
    makers = {
        NPYIO: lambda: npyio_crop(xs, ys, window),
        WHOLE: lambda: npyio_whole(xs, ys, shape, window),
        DALI: lambda: dali_pipe(xs, ys, shape, window),
        MMAP: lambda: mmap_py_function(xs, ys, shape, window),
    }
    return {name: makers[name]() for name in names}


def speed(
    root: str,
    rounds: int,
    samples: int,
    names: Sequence[str],
    pairs: int = PAIRS,
    shape: Sequence[int] = SHAPE,
    window: Sequence[int] = WINDOW,
) -> dict[str, Any]:
    """The pipelines' samples/s over interleaved rounds, medians, and ``npyio crop``'s ratios."""
    import tensorflow as tf  # noqa: F401  (first: every pipeline shares its start-up)

    volumes, masks = ensure(root, pairs, shape)
    xs, ys = epoch(volumes, samples), epoch(masks, samples)
    pipelines = build(names, xs, ys, shape, window)
    for name, pipeline in pipelines.items():  # each checked, before it is timed
        check(volumes, masks, *first_batch(name, pipeline))
    drains = {
        name: dali_drain(p, samples) if name == DALI else tf_drain(p)
        for name, p in pipelines.items()
    }
    for drain in drains.values():  # the warm-up: one epoch each
        drain()
    rates: dict[str, list[float]] = {name: [] for name in drains}
    order = list(drains)
    for r in range(rounds):
        for name in order[r % len(order) :] + order[: r % len(order)]:
            n, s = drains[name]()
            assert n == samples, (name, n)
            rates[name].append(n / s)
    med = {name: statistics.median(v) for name, v in rates.items()}
    result: dict[str, Any] = {
        "samples per epoch": samples,
        "rounds": rounds,
        "samples/s (median)": {k: round(v, 1) for k, v in med.items()},
        "samples/s (rounds)": {k: [round(x, 1) for x in v] for k, v in rates.items()},
    }
    if NPYIO in med:
        for name in med:
            if name != NPYIO:
                result[f"npyio crop / {name}"] = round(med[NPYIO] / med[name], 2)
    return result


def vm_hwm_mib() -> float:
    """This process's peak resident set (``VmHWM``), in MiB."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("/proc/self/status: no VmHWM")


def child(
    root: str, shape: Sequence[int], samples: int, epochs: int, window: Sequence[int] = WINDOW
) -> dict[str, Any]:
    """One ``memory`` case in this (fresh) process: ``npyio crop`` over 2 pairs of ``shape``."""
    import tensorflow as tf  # noqa: F401

    volumes, masks = ensure(root, 2, shape)
    ds = npyio_crop(epoch(volumes, samples), epoch(masks, samples), window)
    before = vm_hwm_mib()
    drain = tf_drain(ds)
    for _ in range(epochs):
        n, _ = drain()
        assert n == samples, n
    return {
        "shape": list(shape),
        "file MiB": round(os.path.getsize(volumes[0]) / 2**20),
        "peak RSS before reading (MiB)": round(before, 1),
        "peak RSS (MiB)": round(vm_hwm_mib(), 1),
    }


def memory(root: str, samples: int, epochs: int, shapes: Sequence[Sequence[int]]) -> Any:
    """Each shape's case in a fresh process; the larger's added peak RSS over the first's."""
    cases = []
    for shape in shapes:
        ensure(root, 2, shape)  # written here, outside the measured process
        command = [
            sys.executable, __file__, "child", "--dir", root, "--samples", str(samples),
            "--epochs", str(epochs), "--shape", *map(str, shape),
        ]  # fmt: skip
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
        run = subprocess.run(command, capture_output=True, text=True, env=env)
        if run.returncode:
            raise RuntimeError(run.stderr[-3000:])
        cases.append(json.loads(run.stdout.strip().splitlines()[-1]))
    return {
        "cases": cases,
        "added peak RSS (MiB)": round(cases[-1]["peak RSS (MiB)"] - cases[0]["peak RSS (MiB)"], 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("what", choices=("speed", "memory", "child"))
    parser.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "npyio-bench-crop"))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--samples", type=int, default=64, help="windows per epoch")
    parser.add_argument("--epochs", type=int, default=3, help="memory: epochs per case")
    parser.add_argument("--shape", type=int, nargs="+", default=list(LARGE), help="child's")
    parser.add_argument("--pipelines", nargs="+", choices=PIPELINES, help="default: all here")
    parser.add_argument("--json", help="also write the result here")
    args = parser.parse_args(argv)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    if args.what == "child":
        print(json.dumps(child(args.dir, args.shape, args.samples, args.epochs)))
        return 0
    if args.what == "memory":
        result = memory(args.dir, args.samples, args.epochs, [SHAPE, LARGE])
    else:
        names = args.pipelines or [n for n in PIPELINES if n != DALI or dali_installed()]
        result = speed(args.dir, args.rounds, args.samples, names)
    print(json.dumps(result, indent=1))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
