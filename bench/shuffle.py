"""Shuffling by index against the shuffle buffer it replaced: throughput and checkpoints.

Two measurements, each run in a fresh process by the npyio on ``PYTHONPATH`` (so that two
versions of npyio can be compared, alternating, on the same files):

- ``throughput``: pairs/s of ``npyio.dataset(inputs, labels, batch_size=8, shuffle=True,
  seed=1)``, with the same pipeline unshuffled and the read-only floor beside it, in
  interleaved rounds, drained with ``Dataset.reduce``;
- ``checkpoint``: the size on disk and the write time of ``tf.train.Checkpoint(iterator=it)``
  after one batch of 32, for N pairs, shuffled and not (the dtype and shape are given, so no
  file but the first batch's is read: every pair is the same small file);
- ``gathers``: indices/s of the shuffled index stream alone (`IndexShuffle`, anchored, in
  batches of 32, by iterator) for epochs of each count, with the gather size each gets
  (`npyio._pipeline.shuffle.gather_size`: a divisor of the count), and for forced sizes beside
  them: what an awkward count costs.

``compare --before DIR`` runs both for the npyio of ``DIR`` (a checkout of an older commit)
and for this checkout's, alternating, and prints the medians, and each version's ratios to
the buffer in the same round (`paired_ratios`, when the version has the buffer pipelines)::

    git worktree add /tmp/before c456bcd
    .venv/bin/python bench/shuffle.py compare --before /tmp/before --rounds 5

bench/README.md records the results.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # also when loaded by its path
from pairs import ensure_pairs  # noqa: E402  (bench/, the script's own directory)


def throughput(root: str, rounds: int, only: str = "") -> dict[str, list[float]]:
    """Pairs/s per pipeline, ``rounds`` interleaved epochs after a warm-up, in rotating order;
    with ``only``, just the pipelines whose name holds it."""
    import tensorflow as tf

    import npyio
    import npyio._sources.dataset

    xs, ys = ensure_pairs(root)

    def floor() -> tf.data.Dataset:
        def read(x: tf.Tensor, y: tf.Tensor) -> tf.Tensor:
            return tf.strings.length(tf.io.read_file(x)) + tf.strings.length(tf.io.read_file(y))

        paths = sorted(os.path.join(xs, n) for n in os.listdir(xs))
        labels = [os.path.join(ys, os.path.basename(p)) for p in paths]
        ds = tf.data.Dataset.from_tensor_slices((paths, labels)).map(read, tf.data.AUTOTUNE)
        return ds.batch(8).prefetch(tf.data.AUTOTUNE)

    pipelines = {
        "shuffled": npyio.dataset(xs, ys, batch_size=8, shuffle=True, seed=1),
        "in order": npyio.dataset(xs, ys, batch_size=8),
        "floor (read only)": floor(),
    }
    if hasattr(npyio._sources.dataset, "row_source"):
        pipelines["shuffled (a buffer of every row)"] = buffer_shuffled(xs, ys)
    # unbatched: one element per pair, where a shuffle's cost per element shows most
    pipelines["shuffled, unbatched"] = npyio.dataset(xs, ys, shuffle=True, seed=1, batch_size=None)
    if hasattr(npyio._sources.dataset, "row_source"):
        pipelines["shuffled, unbatched (a buffer)"] = buffer_shuffled(xs, ys, batch_size=None)
    pipelines = {name: ds for name, ds in pipelines.items() if only in name}

    def drain(ds: tf.data.Dataset) -> tuple[float, float]:
        """(pairs/s, CPU microseconds per pair) of one epoch."""
        start, cpu = time.perf_counter(), time.process_time()

        def count(total: tf.Tensor, element: object) -> tf.Tensor:
            first = tf.nest.flatten(element)[0]
            # a batch counts its rows; an unbatched element (one 16x16 input) counts one
            return total + (1 if first.shape.rank == 2 else tf.shape(first, tf.int64)[0])

        n = int(ds.reduce(tf.constant(0, tf.int64), count))
        return n / (time.perf_counter() - start), (time.process_time() - cpu) / n * 1e6

    for ds in pipelines.values():
        drain(ds)
    rates: dict[str, list[float]] = {}
    names = list(pipelines)
    for r in range(rounds):
        # each round starts with another pipeline: the first of a round measures slower here
        for name in names[r % len(names) :] + names[: r % len(names)]:
            per_s, cpu_us = drain(pipelines[name])
            rates.setdefault(name, []).append(per_s)
            rates.setdefault(f"{name}: CPU us/pair", []).append(cpu_us)
    return rates


#: Each pipeline shuffled by index, and the same one through a buffer (`buffer_shuffled`).
PAIRS = {
    "batches of 8": ("shuffled", "shuffled (a buffer of every row)"),
    "unbatched": ("shuffled, unbatched", "shuffled, unbatched (a buffer)"),
}


def paired_ratios(rates: dict[str, list[float]]) -> dict[str, dict[str, float]]:
    """For each pipeline of `PAIRS` measured, its pairs/s over the buffer's in the same round:
    the median of the rounds, and a 95% bootstrap interval of that median (single rounds on
    a 2-core VM spread too widely to mean much one by one), and the same of CPU per pair."""
    import random

    def median_and_interval(values: list[float]) -> dict[str, float]:
        draw = random.Random(0)
        medians = sorted(
            statistics.median(draw.choices(values, k=len(values))) for _ in range(10_000)
        )
        return {"median": statistics.median(values), "low": medians[250], "high": medians[9749]}

    out = {}
    for label, (index, buffer) in PAIRS.items():
        if index in rates and buffer in rates:
            speed = [a / b for a, b in zip(rates[index], rates[buffer])]
            cpu_index, cpu_buffer = (rates[f"{name}: CPU us/pair"] for name in (index, buffer))
            cpu = [a / b for a, b in zip(cpu_index, cpu_buffer)]
            out[label] = {
                "rounds": len(speed),
                **{f"pairs/s {k}": v for k, v in median_and_interval(speed).items()},
                **{f"CPU/pair {k}": v for k, v in median_and_interval(cpu).items()},
            }
    return out


def buffer_shuffled(xs: str, ys: str, batch_size: int | None = 8) -> object:
    """``npyio.dataset(xs, ys, batch_size=8, shuffle=True, seed=1)`` as it was before shuffling by
    index: the rows (path strings) through a ``Dataset.shuffle`` buffer that holds all of them,
    everything else the same, so that the two compare in one process."""
    import npyio
    from npyio._sources import dataset as build

    original = build.row_source

    def buffered(plan: object) -> object:
        in_order = original(
            dataclasses.replace(plan, loader=dataclasses.replace(plan.loader, shuffle=False))
        )
        rows = in_order.dataset.shuffle(plan.count, seed=plan.loader.seed)
        return build.RowSource(rows, in_order.anchor)

    build.row_source = buffered
    try:
        return npyio.dataset(xs, ys, batch_size=batch_size, shuffle=True, seed=1)
    finally:
        build.row_source = original


def checkpoint(sizes: list[int]) -> dict[str, dict[str, float]]:
    """Checkpoint bytes and write seconds after one batch of 32, shuffled and not, by size."""
    import numpy as np
    import tensorflow as tf

    import npyio

    out: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        one = os.path.join(tmp, "one.npy")
        np.save(one, np.zeros(4, np.float32))
        for n in sizes:
            for shuffle in (False, True):
                ds = npyio.dataset(
                    [one] * n,
                    [one] * n,
                    batch_size=32,
                    shuffle=shuffle,
                    seed=1,
                    dtype="float32",
                    shape=(4,),
                    label_dtype="float32",
                    label_shape=(4,),
                )
                start = time.perf_counter()
                it = iter(ds)
                next(it)
                first = time.perf_counter() - start
                folder = os.path.join(tmp, f"ckpt-{n}-{shuffle}")
                os.makedirs(folder)
                start = time.perf_counter()
                tf.train.Checkpoint(iterator=it).write(os.path.join(folder, "ckpt"))
                seconds = time.perf_counter() - start
                size = sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder))
                out[f"{n} {'shuffled' if shuffle else 'in order'}"] = {
                    "bytes": size,
                    "write_s": seconds,
                    "first_batch_s": first,
                }
    return out


def gathers(counts: list[int], forced: list[int], rounds: int) -> dict[str, dict[str, float]]:
    """Median indices/s of one shuffled epoch of the index stream, per count (its own gather
    size) and per forced gather size (on the first count, which it must divide)."""
    from npyio._pipeline.shuffle import IndexShuffle, gather_size

    cases = [(n, gather_size(n)) for n in counts] + [(counts[0], size) for size in forced]
    out = {}
    for n, size in cases:
        shuffle = IndexShuffle(n, 1, gather_size=size)
        if shuffle.gather_size != size:
            raise ValueError(f"gather size {size} does not divide {n}")
        ds = shuffle.anchor(shuffle.indices()).batch(32)
        rates = []
        for _ in range(rounds + 1):  # the first a warm-up
            start = time.perf_counter()
            for _ in ds:
                pass
            rates.append(n / (time.perf_counter() - start))
        out[f"{n} in gathers of {size}"] = {
            "count": n,
            "gather": size,
            "indices_per_s": statistics.median(rates[1:]),
        }
    return out


def _child(npyio_root: str, *args: str) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([npyio_root, ROOT])}
    run = subprocess.run(
        [sys.executable, os.path.abspath(__file__), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=3600,
    )
    if run.returncode:
        raise RuntimeError(f"{npyio_root}: {run.stderr[-3000:]}")
    return json.loads(run.stdout.strip().splitlines()[-1])


def compare(
    before: str, root: str, rounds: int, repeats: int, sizes: list[int], only: str = ""
) -> dict:
    """Both versions, ``repeats`` times each, alternating (with ``only``, just the pipelines
    whose name holds it); medians of every rate, and each version's `paired_ratios` over
    all its rounds."""
    versions = {"before": before, "after": ROOT}
    rates: dict[str, dict[str, list[float]]] = {v: {} for v in versions}
    for _ in range(repeats):
        for version, where in versions.items():
            args = ["--root", root, "--rounds", str(rounds), "--only", only]
            for name, values in _child(where, "throughput", *args).items():
                rates[version].setdefault(name, []).extend(values)
    medians = {v: {k: statistics.median(x) for k, x in r.items()} for v, r in rates.items()}
    checkpoints = {
        v: _child(w, "checkpoint", "--sizes", *map(str, sizes)) for v, w in versions.items()
    }
    ratios = {v: paired_ratios(r) for v, r in rates.items()}
    return {"throughput": medians, "ratios": ratios, "checkpoint": checkpoints}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    one = sub.add_parser("throughput")
    one.add_argument("--root", default=os.path.expanduser("~/.cache/npyio/shuffle-bench"))
    one.add_argument("--rounds", type=int, default=5)
    one.add_argument("--only", default="", help="only the pipelines whose name holds this")
    one.add_argument(
        "--ratios", action="store_true", help="also index/buffer ratios per round (`PAIRS`)"
    )
    ck = sub.add_parser("checkpoint")
    ck.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    gath = sub.add_parser("gathers")
    gath.add_argument(
        "--counts", type=int, nargs="+", default=[102_400, 1_000, 1_009, 99_998, 100_003]
    )
    gath.add_argument("--forced", type=int, nargs="*", default=[1, 2, 8, 16])
    gath.add_argument("--rounds", type=int, default=3)
    both = sub.add_parser("compare")
    both.add_argument("--before", required=True, help="a checkout of the older npyio")
    both.add_argument("--root", default=os.path.expanduser("~/.cache/npyio/shuffle-bench"))
    both.add_argument("--rounds", type=int, default=5)
    both.add_argument("--repeats", type=int, default=2, help="processes per version")
    both.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    both.add_argument("--only", default="", help="only the pipelines whose name holds this")
    args = parser.parse_args(argv)
    if args.command == "throughput":
        result: dict = throughput(args.root, args.rounds, args.only)
        if args.ratios:
            result["ratios"] = paired_ratios(result)
    elif args.command == "checkpoint":
        result = checkpoint(args.sizes)
    elif args.command == "gathers":
        result = gathers(args.counts, args.forced, args.rounds)
    else:
        result = compare(args.before, args.root, args.rounds, args.repeats, args.sizes, args.only)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
