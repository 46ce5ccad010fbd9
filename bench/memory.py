"""Peak memory of an npyio pipeline as the dataset grows.

Each dataset size is iterated in a fresh process (so peaks don't mix), with ``npyio.dataset``
in batches of 8, parallel map and prefetch, draining one epoch with ``Dataset.reduce``. The
child reports its resident set size after building the dataset and its peak (``ru_maxrss``).
If memory is bounded, the peak does not grow with the number of files.

    .venv/bin/python bench/memory.py                 # 24 vs 240 files of 4 MiB
    .venv/bin/python bench/memory.py --sizes 24 240 960 --json
    .venv/bin/python bench/memory.py --shape 16 16 --sizes 800 8000 --backend graph

``--backend`` is `npyio.dataset`'s (default ``native``, npyio's default; each row says which
reader read: the native reader falls back to ``graph`` where it cannot be had).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

CHILD = r"""
import os, resource, sys, json
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf
import npyio
from npyio._read.backends import usable
from npyio.cli import pipelines

def rss_mib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20

root, count, backend = sys.argv[1], int(sys.argv[2]), sys.argv[3]
xs = [f"{root}/inputs/{i:04d}.npy" for i in range(count)]
ys = [f"{root}/labels/{i:04d}.npy" for i in range(count)]
ds = npyio.dataset(xs, ys, batch_size=8, backend=backend)
pipelines.drain(ds.take(2))  # trace and warm up before the baseline reading
before = rss_mib()
n, seconds = pipelines.drain(ds)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"files": count, "backend": usable(backend), "samples": n,
                  "rss_before_mib": round(before, 1), "peak_rss_mib": round(peak, 1),
                  "seconds": round(seconds, 2)}))
"""


def make_files(root: str, count: int, shape: tuple[int, ...]) -> None:
    import numpy as np

    for side in ("inputs", "labels"):
        os.makedirs(os.path.join(root, side), exist_ok=True)
    x = np.random.default_rng(0).random(shape, dtype=np.float32)
    for i in range(count):
        path = os.path.join(root, "inputs", f"{i:04d}.npy")
        if not os.path.exists(path):
            np.save(path, x)
            np.save(os.path.join(root, "labels", f"{i:04d}.npy"), np.zeros(10, np.float32))


def measure(
    sizes: list[int], shape: tuple[int, ...], root: str, backend: str = "native"
) -> list[dict[str, float]]:
    make_files(root, max(sizes), shape)
    rows = []
    for count in sizes:
        out = subprocess.run(
            [sys.executable, "-c", CHILD, root, str(count), backend],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        rows.append(json.loads(out.strip().splitlines()[-1]))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[24, 240])
    parser.add_argument(
        "--shape",
        type=int,
        nargs="+",
        default=[256, 256, 16],
        help="input array shape (default 256 256 16: 4 MiB of float32)",
    )
    parser.add_argument("--root", default=None, help="where to write the files (a temp dir)")
    parser.add_argument("--backend", default="native", help="npyio.dataset's (default native)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        rows = measure(args.sizes, tuple(args.shape), args.root or tmp, args.backend)
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        print(
            f"{'files':>6} {'reader':>7} {'samples':>8} {'RSS before':>11} {'peak RSS':>10} "
            f"{'seconds':>8}"
        )
        for r in rows:
            print(
                f"{r['files']:>6} {r['backend']:>7} {r['samples']:>8} "
                f"{r['rss_before_mib']:>8.0f} MiB"
                f" {r['peak_rss_mib']:>6.0f} MiB {r['seconds']:>8.2f}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
