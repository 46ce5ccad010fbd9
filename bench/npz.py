"""One member of a big ``.npz`` against one of a small one: the member lookup's cost.

Writes two archives of about the same size with ``np.savez`` (one of 7,488 members of 8
float32 each, as many members as an archive of PyWavelets' test data, and one of 4 members as
big on disk), then times ``npyio.read_npz`` of the last member in a
``tf.function`` (warm: traced once, called ``--calls`` times, median) and ``np.load(...)[key]``
beside it. The archive is in the page cache: this is the lookup and decode, not the disk.

Usage::

    .venv/bin/python bench/npz.py --json

bench/README.md records the results.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time

import numpy as np

MEMBERS = 7488


def write_archives(root: str) -> dict[str, tuple[str, str, tuple[int, ...]]]:
    """name -> (path, key of the last member, its shape)."""
    big = os.path.join(root, f"members-{MEMBERS}.npz")
    np.savez(big, **{f"m{i:05d}": np.full((8,), i, np.float32) for i in range(MEMBERS)})
    small = os.path.join(root, "members-4.npz")
    per = os.path.getsize(big) // 4 // 4  # float32s per member: the same size on disk
    np.savez(small, **{f"m{i}": np.full((per,), i, np.float32) for i in range(4)})
    return {
        f"{MEMBERS} members": (big, f"m{MEMBERS - 1:05d}", (8,)),
        "4 members": (small, "m3", (per,)),
    }


def median_ms(call: object, calls: int) -> float:
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        call()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    import tensorflow as tf

    import npyio

    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, (path, key, shape) in write_archives(tmp).items():
            f = tf.function(lambda p=path, k=key, s=shape: npyio.read_npz(p, k, "float32", s))
            expected = np.load(path)[key]
            np.testing.assert_array_equal(f().numpy(), expected)  # traced, and right
            out[name] = {
                "bytes": os.path.getsize(path),
                "npyio_ms": median_ms(lambda f=f: f().numpy(), args.calls),
                "np_load_ms": median_ms(lambda p=path, k=key: np.load(p)[k], args.calls),
            }
    big, small = out[f"{MEMBERS} members"], out["4 members"]
    out["ratio"] = {"npyio": big["npyio_ms"] / small["npyio_ms"]}
    if args.json:
        print(json.dumps(out))
    else:
        for name, row in out.items():
            print(name, {k: round(v, 2) for k, v in row.items()})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
