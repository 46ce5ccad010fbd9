"""Crops of per-case shapes (issue 52): the 3-D segmentation user's layout, read by random 64^3
windows, against the same windows of volumes of one shape and the py_function pipelines.

The data (written once under ``--dir``): ``--cases`` cases, each an image (D, H, W, 1) float32
with D in 80-160 and H, W in 96-192 (random, seeded) and a mask (D, H, W) uint8; and as many
cases of one shape, (120, 144, 144, 1), about the same bytes. An epoch is ``--samples`` windows
(the cases repeated in order, shuffled by each pipeline), batches of 2. Pipelines:

- ``npyio cases``: ``npyio.dataset(images, masks, crop=(64, 64, 64), batch_size=2)``, the plain
  form: each file's shape from its header, only the window read (``NpyioReadWindows``);
- ``npyio one shape``: the same call on the cases of one shape (the bar: issue 52 asks for
  at least 0.8x of it);
- ``npyio graph``: the per-case call with ``backend="graph"``: whole files parsed in the graph
  and cut there (what per-case crops were before);
- ``py_function whole``: ``np.load`` of both files whole in a ``tf.py_function``, the window cut
  in numpy at a random start in the case's own extent (``num_parallel_calls=AUTOTUNE``,
  ``batch(2)``, ``prefetch``);
- ``mmap py_function``: the same with ``np.load(mmap_mode="r")``;
- ``C window loop``: no pipeline, the machine's limit for these reads: the core's own window read
  (``read_window_placed``, what ``NpyioReadWindows`` calls) in the bench driver
  (``driver windows``), outside TensorFlow, the image's and the mask's window of each patch
  with the same draws, ``--loop-threads`` threads (by default one a core warm, 32 cold: the
  reads in flight that ``npyio bench --cold``'s bare loop keeps), timed by the driver.

All in one process, each drained once as a warm-up, then in interleaved rounds (A B C ..., B C
... A, ...), one epoch each, by a Python iterator. With ``--cold`` every file is evicted from
the page cache (``posix_fadvise(DONTNEED)``) before each epoch. Reports patches/s (medians),
``npyio cases``' ratio to each other pipeline, and the bytes each pipeline asked of read
syscalls per patch (``/proc/self/io`` ``rchar``, the driver's own count for the C loop;
py_function's mmap reads are page faults, which ``rchar`` does not count)::

    PYTHONPATH=. .venv/bin/python bench/cases.py --rounds 5
    PYTHONPATH=. .venv/bin/python bench/cases.py --rounds 3 --cold

``--memory 1 2`` measures instead the peak RSS of one epoch of the per-case crop call
(``crops_per_file=4``, shuffled) in a fresh process over 8 cases, then over 8 cases whose D, H
and W are twice as large (8x the bytes): the window is the same, so the peak should be too.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)  # this checkout's npyio, not an installed one

WINDOW, BATCH, CASES, SAME = (64, 64, 64), 2, 24, (120, 144, 144)
CASES_NPYIO, ONE_SHAPE, GRAPH = "npyio cases", "npyio one shape", "npyio graph"
WHOLE, MMAP, LOOP = "py_function whole", "mmap py_function", "C window loop"
PIPELINES = (CASES_NPYIO, ONE_SHAPE, GRAPH, WHOLE, MMAP, LOOP)
#: The C loop's threads with --cold: as many reads in flight as `npyio bench --cold`'s bare loop.
COLD_THREADS = 32


def ensure(root: str, cases: int = CASES, scale: int = 1) -> dict[str, tuple[list[str], list[str]]]:
    """The per-case and the one-shape layouts under ``root``, written once: their paths. With
    ``scale``, each case's D, H and W are that many times larger (`memory`)."""
    out = {}
    for kind in ("cases", "same"):
        images, masks = os.path.join(root, kind, "images"), os.path.join(root, kind, "masks")
        done = os.path.join(root, kind, f".done-{cases}" + (f"-x{scale}" if scale > 1 else ""))
        if not os.path.exists(done):
            os.makedirs(images, exist_ok=True)
            os.makedirs(masks, exist_ok=True)
            rng = np.random.default_rng(0)
            for i in range(cases):
                d, h, w = (int(rng.integers(80, 161)), *map(int, rng.integers(96, 193, 2)))
                shape = tuple(scale * n for n in (SAME if kind == "same" else (d, h, w)))
                image = rng.standard_normal((*shape, 1), np.float32)
                np.save(os.path.join(images, f"case_{i}.npy"), image)
                np.save(os.path.join(masks, f"case_{i}.npy"), (image[..., 0] > 1).astype(np.uint8))
            open(done, "w").close()
        names = [f"case_{i}.npy" for i in range(cases)]
        out[kind] = (
            [os.path.join(images, n) for n in names],
            [os.path.join(masks, n) for n in names],
        )
    return out


def epoch(paths: Sequence[str], samples: int) -> list[str]:
    return [paths[i % len(paths)] for i in range(samples)]


def npyio_pipeline(xs: list[str], ys: list[str], backend: str = "native") -> Any:
    import npyio

    return npyio.dataset(xs, ys, crop=WINDOW, batch_size=BATCH, seed=0, backend=backend)


def py_function(xs: list[str], ys: list[str], mmap: bool) -> Any:
    import tensorflow as tf

    def read(x: Any, y: Any, u: Any) -> tuple[np.ndarray, np.ndarray]:
        mode = "r" if mmap else None
        image = np.load(x.numpy().decode(), mmap_mode=mode)
        mask = np.load(y.numpy().decode(), mmap_mode=mode)
        start = [int(f * (s - w + 1)) for f, s, w in zip(u.numpy(), image.shape, WINDOW)]
        box = tuple(slice(s, s + w) for s, w in zip(start, WINDOW))
        return np.ascontiguousarray(image[box]), np.ascontiguousarray(mask[box])

    def load(x: tf.Tensor, y: tf.Tensor, i: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
        u = tf.random.stateless_uniform([3], seed=tf.stack([i, 0]), dtype=tf.float64)
        image, mask = tf.py_function(read, [x, y, u], [tf.float32, tf.uint8])
        image.set_shape((*WINDOW, 1))
        mask.set_shape(WINDOW)
        return image, mask

    paths = tf.data.Dataset.from_tensor_slices((xs, ys)).shuffle(len(xs))
    ds = tf.data.Dataset.zip(paths, tf.data.Dataset.counter()).map(
        lambda xy, i: load(xy[0], xy[1], i), num_parallel_calls=tf.data.AUTOTUNE
    )
    return ds.batch(BATCH).prefetch(tf.data.AUTOTUNE)


def rchar() -> int:
    with open("/proc/self/io") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("rchar:"))


def drainer(ds: Any, files: Sequence[str], cold: bool) -> Callable[[], tuple[int, float, int]]:
    """One epoch by a Python iterator: (patches, seconds, bytes asked of read syscalls)."""
    from npyio.cli import pipelines

    def drain() -> tuple[int, float, int]:
        if cold:
            pipelines.evict(files)
        before, start = rchar(), time.perf_counter()
        n = sum(int(x.shape[0]) for x, _ in ds)
        return n, time.perf_counter() - start, rchar() - before

    return drain


def window_loop(
    xs: Sequence[str], ys: Sequence[str], threads: int, cold: bool
) -> Callable[[], tuple[int, float, int]]:
    """The core's own window read (``driver windows``) over the epoch's patches: one run of
    the driver, (patches, the driver's seconds, the bytes it asked)."""
    import subprocess

    from npyio._native.library import build_driver
    from npyio.cli import pipelines

    driver = build_driver()
    listing = os.path.join(tempfile.mkdtemp(prefix="npyio-cases-"), "patches")
    with open(listing, "w") as f:
        f.write("".join(f"{x}\t{y}\n" for x, y in zip(xs, ys)))
    size = ",".join(map(str, WINDOW))

    def drain() -> tuple[int, float, int]:
        if cold:
            pipelines.evict([*xs, *ys])
        args = [driver, "windows", str(threads), size, listing]
        text = subprocess.run(args, capture_output=True, text=True).stdout
        words = text.split()
        fields = dict(zip(words[::2], words[1::2]))
        if fields.get("ok") != str(2 * len(xs)):  # a doubted file: no read of every window
            raise RuntimeError(f"{LOOP}: {' '.join(args)} read {text.strip() or 'nothing'}")
        return len(xs), float(fields["seconds"]), int(fields["bytes_asked"])

    return drain


def speed(
    root: str,
    rounds: int,
    samples: int,
    names: Sequence[str],
    cold: bool,
    loop_threads: int | None = None,
) -> dict:
    import tensorflow as tf  # noqa: F401  (first: every pipeline shares its start-up)

    data = ensure(root)
    xs, ys = (epoch(p, samples) for p in data["cases"])
    same = [epoch(p, samples) for p in data["same"]]
    makers = {
        CASES_NPYIO: lambda: npyio_pipeline(xs, ys),
        ONE_SHAPE: lambda: npyio_pipeline(*same),
        GRAPH: lambda: npyio_pipeline(xs, ys, backend="graph"),
        WHOLE: lambda: py_function(xs, ys, mmap=False),
        MMAP: lambda: py_function(xs, ys, mmap=True),
    }
    threads = loop_threads or (COLD_THREADS if cold else os.cpu_count() or 1)
    files = {name: (same[0] + same[1]) if name == ONE_SHAPE else xs + ys for name in names}
    drains = {
        name: window_loop(xs, ys, threads, cold)
        if name == LOOP
        else drainer(makers[name](), files[name], cold)
        for name in names
    }
    for drain in drains.values():  # the warm-up
        drain()
    rates: dict[str, list[float]] = {name: [] for name in names}
    asked: dict[str, list[float]] = {name: [] for name in names}
    order = list(names)
    for r in range(rounds):
        for name in order[r % len(order) :] + order[: r % len(order)]:
            n, s, b = drains[name]()
            assert n == samples, (name, n)
            rates[name].append(n / s)
            asked[name].append(b / n)
    med = {name: statistics.median(v) for name, v in rates.items()}
    result: dict[str, Any] = {
        "cold": cold,
        "patches per epoch": samples,
        "rounds": rounds,
        "patches/s (median)": {k: round(v, 1) for k, v in med.items()},
        "patches/s (rounds)": {k: [round(x, 1) for x in v] for k, v in rates.items()},
        "MB asked per patch (median)": {
            k: round(statistics.median(v) / 1e6, 2) for k, v in asked.items()
        },
        "window MB": round(np.prod(WINDOW) * 5 / 1e6, 2),
    }
    if LOOP in names:
        result["C window loop threads"] = threads
    for name in med:
        if name != CASES_NPYIO and CASES_NPYIO in med:
            result[f"npyio cases / {name}"] = round(med[CASES_NPYIO] / med[name], 2)
    return result


#: `memory`'s child: one epoch of the plain per-case crop call, 4 windows a case, shuffled, by
#: a Python iterator; its RSS after two batches and its peak (JSON on its last line).
MEMORY_CHILD = r"""
import json, os, sys
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf
import npyio
xs, ys = json.loads(sys.argv[1])
ds = npyio.dataset(xs, ys, crop=tuple(json.loads(sys.argv[2])), batch_size=int(sys.argv[3]),
                   crops_per_file=4, shuffle=True, seed=0)
for _ in ds.take(2):
    pass
with open("/proc/self/statm") as f:
    before = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
def rchar():
    with open("/proc/self/io") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("rchar:"))
start = rchar()
n = sum(int(x.shape[0]) for x, _ in ds)
asked = (rchar() - start) / n / 1e6
# VmHWM, not ru_maxrss: Linux counts in that the parent's memory at the fork (it may hold a
# whole volume just written)
with open("/proc/self/status") as f:
    peak = next(int(line.split()[1]) for line in f if line.startswith("VmHWM:")) / 1024
print(json.dumps({"patches": n, "MB asked per patch": round(asked, 2),
                  "rss_before_mib": round(before, 1), "peak_rss_mib": round(peak, 1)}))
"""


def memory(root: str, scales: Sequence[int], cases: int = 8) -> list[dict[str, Any]]:
    """Peak RSS of an epoch of per-case crops (`MEMORY_CHILD`, a fresh process each) over
    ``cases`` cases at each scale of their D, H and W: a row per scale with the volumes' mean
    MB. The window is the same, so the peak should not grow with the volumes."""
    import subprocess

    rows = []
    for scale in scales:
        xs, ys = ensure(os.path.join(root, f"memory-x{scale}"), cases, scale)["cases"]
        args = [json.dumps([xs, ys]), json.dumps(WINDOW), str(BATCH)]
        done = subprocess.run(
            [sys.executable, "-c", MEMORY_CHILD, *args], capture_output=True, text=True
        )
        if done.returncode != 0:
            raise RuntimeError(f"memory, scale {scale}: {done.stderr.strip()[-2000:]}")
        row = json.loads(done.stdout.strip().splitlines()[-1])
        mean = statistics.mean(os.path.getsize(p) for p in xs + ys) * 2 / 1e6
        rows.append({"scale": scale, "case MB (image and mask)": round(mean, 1), **row})
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "npyio-bench-cases"))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--samples", type=int, default=96, help="patches per epoch")
    parser.add_argument("--cold", action="store_true", help="evict the files before each epoch")
    parser.add_argument("--pipelines", nargs="+", choices=PIPELINES, default=list(PIPELINES))
    parser.add_argument(
        "--loop-threads", type=int, help=f"the C loop's threads (a core each; {COLD_THREADS} cold)"
    )
    parser.add_argument(
        "--memory",
        type=int,
        nargs="+",
        metavar="SCALE",
        help="instead: peak RSS of per-case crops over 8 cases at each scale of their volumes",
    )
    parser.add_argument("--json", help="also write the result here")
    args = parser.parse_args(argv)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    if args.memory:
        result: Any = memory(args.dir, args.memory)
    else:
        result = speed(
            args.dir, args.rounds, args.samples, args.pipelines, args.cold, args.loop_threads
        )
    print(json.dumps(result, indent=1))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
