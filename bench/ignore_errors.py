"""``ignore_errors=True`` on clean files: samples/s by Python iterator against the default.

Three pipelines over the same clean files (``--files`` of ``--bytes`` each, float32, with int64
labels), ``npyio.dataset(x, y, batch_size=--batch)``:

- ``default``: the native reader, as npyio reads by default;
- ``ignore_errors``: the same with ``ignore_errors=True`` (the native reader, which sends only
  the files it doubts to the graph reader's skip-and-report);
- ``ignore_errors graph``: ``ignore_errors=True, backend="graph"``, every element read by the
  graph reader's skip-and-report (what ``ignore_errors`` read before).

``--swapped N`` writes every N-th input byte-swapped (``>f4``): a file the native reader
doubts and the graph parser accepts, so that blocks with doubts are timed too (0: none).

Each round runs the three in turn (the order rotated each round), an epoch to warm up and then
``--epochs`` timed epochs each, in one process; the medians over the rounds are printed, and the
ratio of each to ``default``.

    PYTHONPATH=. .venv/bin/python bench/ignore_errors.py --rounds 5
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def make(root: str, files: int, nbytes: int, swapped: int = 0) -> tuple[str, str]:
    """``files`` pairs under ``root``: x/ of ``nbytes`` float32 each (every ``swapped``-th
    big-endian), y/ of int64."""
    x, y = os.path.join(root, "x"), os.path.join(root, "y")
    os.makedirs(x)
    os.makedirs(y)
    rng = np.random.default_rng(0)
    for i in range(files):
        values = rng.random(nbytes // 4, dtype=np.float32)
        if swapped and i % swapped == swapped - 1:  # (the first file sets the spec: kept)
            values = values.astype(">f4")
        np.save(os.path.join(x, f"{i:05d}.npy"), values)
        np.save(os.path.join(y, f"{i:05d}.npy"), np.int64(i))
    return x, y


def rate(ds: object, epochs: int) -> float:
    """Samples/s over ``epochs`` epochs read by Python iterator (after one untimed epoch)."""
    for _ in ds:  # type: ignore[attr-defined]
        pass
    n, start = 0, time.perf_counter()
    for _ in range(epochs):
        for _, y in ds:  # type: ignore[attr-defined]
            n += int(y.shape[0])
    return n / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=4000)
    parser.add_argument("--bytes", type=int, default=8192)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--swapped", type=int, default=0)
    args = parser.parse_args()

    import npyio

    with tempfile.TemporaryDirectory() as root:
        x, y = make(root, args.files, args.bytes, args.swapped)
        configs = {
            "default": {},
            "ignore_errors": {"ignore_errors": True},
            "ignore_errors graph": {"ignore_errors": True, "backend": "graph"},
        }
        rates: dict[str, list[float]] = {name: [] for name in configs}
        names = list(configs)
        for r in range(args.rounds):
            for name in names[r % len(names) :] + names[: r % len(names)]:
                ds = npyio.dataset(x, y, batch_size=args.batch, **configs[name])
                rates[name].append(rate(ds, args.epochs))
        base = statistics.median(rates["default"])
        swapped = f", every {args.swapped}th byte-swapped" if args.swapped else ""
        print(
            f"{args.files} files of {args.bytes} B{swapped}, batch {args.batch}, "
            f"{args.rounds} rounds"
        )
        for name, got in rates.items():
            median = statistics.median(got)
            runs = ", ".join(f"{v:,.0f}" for v in got)
            print(f"{name:20s} {median:10,.0f} samples/s  {median / base:5.2f}x  ({runs})")


if __name__ == "__main__":
    main()
