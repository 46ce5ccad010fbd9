"""Start-up at scale: how long ``npyio.dataset`` takes to build on N pairs of small files.

Compared, in one process and in alternating rounds, with the bare cost of the same job done by
hand: listing both directories (``os.scandir``), sorting them and handing the paths to
``tf.data`` as one string tensor each (then ``shuffle``, as the dataset does). Also measured:
the time to the first batch, and the peak RSS of a fresh process that builds the dataset and
takes one batch (``ru_maxrss``).

Usage (writes the files once, under ``--root``)::

    .venv/bin/python bench/scale.py --pairs 200000
    .venv/bin/python bench/scale.py --pairs 1000000 --rounds 3

Results are printed as JSON; bench/README.md records them.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _header(arr: np.ndarray) -> bytes:
    import io

    buf = io.BytesIO()
    np.save(buf, arr)
    return buf.getvalue()


def ensure(root: str, pairs: int) -> tuple[str, str]:
    """``root/inputs/0000000.npy`` (float32 (4,)) and ``root/labels/...`` (int64 ()), once."""
    xs, ys = os.path.join(root, "inputs"), os.path.join(root, "labels")
    done = os.path.join(root, f".done-{pairs}")
    if os.path.exists(done):
        return xs, ys
    os.makedirs(xs, exist_ok=True)
    os.makedirs(ys, exist_ok=True)
    x_bytes = _header(np.zeros(4, np.float32))
    y_bytes = _header(np.int64(0))
    for i in range(pairs):
        name = f"{i:07d}.npy"
        # A distinct payload per file is not needed for start-up; the bytes are numpy's own.
        with open(os.path.join(xs, name), "wb") as f:
            f.write(x_bytes)
        with open(os.path.join(ys, name), "wb") as f:
            f.write(y_bytes)
        if i and i % 100_000 == 0:
            print(f"wrote {i:,} pairs", file=sys.stderr)
    open(done, "w").close()
    return xs, ys


def bare(xs: str, ys: str) -> object:  # a tf.data.Dataset
    import tensorflow as tf

    def listing(d: str) -> list[str]:
        with os.scandir(d) as entries:
            names = sorted(e.name for e in entries if e.name.endswith(".npy"))
        return [os.path.join(d, n) for n in names]

    x, y = listing(xs), listing(ys)
    ds = tf.data.Dataset.from_tensor_slices((tf.constant(x), tf.constant(y)))
    return ds.shuffle(len(x))


def build(xs: str, ys: str) -> object:  # a tf.data.Dataset
    import npyio

    return npyio.dataset(xs, ys, batch_size=32, shuffle=True, seed=0)


_RSS = """
import resource, sys, time
sys.path.insert(0, {root!r})
import npyio
start = time.perf_counter()
ds = npyio.dataset({xs!r}, {ys!r}, batch_size=32, shuffle=True, seed=0)
built = time.perf_counter()
next(iter(ds))
first = time.perf_counter()
print(built - start, first - built, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--root", default=None, help="where the files go (default: /tmp)")
    args = parser.parse_args()
    root = args.root or f"/tmp/npyio-scale-{args.pairs}"
    xs, ys = ensure(root, args.pairs)

    import tensorflow as tf

    bare(xs, ys), build(xs, ys)  # warm-up: imports, the directory listing in the page cache
    times: dict[str, list[float]] = {"bare": [], "npyio": []}
    for _ in range(args.rounds):
        for name, fn in (("bare", bare), ("npyio", build)):
            start = time.perf_counter()
            fn(xs, ys)
            times[name].append(time.perf_counter() - start)
    ds = build(xs, ys)
    start = time.perf_counter()
    next(iter(ds))
    first_batch = time.perf_counter() - start
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}
    out = subprocess.run(
        [sys.executable, "-c", _RSS.format(root=ROOT, xs=xs, ys=ys)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    ).stdout.split()
    medians = {k: statistics.median(v) for k, v in times.items()}
    print(
        json.dumps(
            {
                "date": time.strftime("%Y-%m-%d"),
                "tensorflow": tf.__version__,
                "pairs": args.pairs,
                "rounds": args.rounds,
                "build_seconds": medians,
                "ratio": medians["npyio"] / medians["bare"],
                "first_batch_seconds": first_batch,
                "fresh_process": {
                    "build_seconds": float(out[-3]),
                    "first_batch_seconds": float(out[-2]),
                    "peak_rss_mib": int(out[-1]) / 2**20,
                },
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
