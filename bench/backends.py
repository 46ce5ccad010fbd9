"""npyio's backends side by side, each in a fresh process: ``native`` and ``graph`` (until
tensorflow-io's op was made a peer of ``npyio bench``, ``tfio`` too: bench/README.md,
"tensorflow-io against graph and native").

Each (backend, profile) runs in a process of its own: ``npyio.dataset(inputs, labels,
batch_size=8, backend=...)`` over ``npyio bench``'s sample files (`npyio.cli.sample`), one
warm-up epoch, then ``--epochs`` epochs drained by ``Dataset.reduce`` (`npyio.cli.pipelines`'
``drain``, as ``npyio bench``). ``native+on`` (asked for by name) is the native
reader with tf.data's autotune on (npyio's native pipelines turn it off). ``floor`` is
``npyio bench``'s read-only floor (``read_file`` of both files, nothing decoded) in the same
conditions. Backends alternate, their order rotated each round (``bench/fresh.py``), over
``--rounds`` rounds; the table gives the median samples/s and the median CPU time (user +
system, this process) per sample.

    PYTHONPATH=. .venv/bin/python bench/backends.py --rounds 3
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # also when loaded by its path
from fresh import interleaved

BATCH = 8
#: Files per profile: fewer than ``npyio bench``'s, as issue 41's runs, so that a fresh process
#: per backend stays short on a shared machine.
COUNTS = {"small": 4000, "medium": 2000, "large": 200}
BACKENDS = ("native", "graph", "floor")
#: Also measurable, not by default: the native reader with tf.data's autotune on (the dataset's
#: options; npyio's native pipelines turn it off), to check that a short epoch's fix costs no
#: throughput (bench/epochs.py).
EXTRA = ("native+on",)


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def build(backend: str, xs: list[str], ys: list[str]) -> Any:
    """The pipeline ``backend`` names (a `BACKENDS` or `EXTRA` name)."""
    import tensorflow as tf

    import npyio
    from npyio.cli import pipelines

    if backend == "floor":
        return pipelines.floor_pipeline(xs, ys, BATCH)
    ds = npyio.dataset(xs, ys, batch_size=BATCH, backend=backend.removesuffix("+on"))
    if backend.endswith("+on"):
        options = tf.data.Options()
        options.autotune.enabled = True
        ds = ds.with_options(options)
    return ds


def child(backend: str, profile_name: str, root: str | None, epochs: int) -> dict[str, Any]:
    """One process: samples/s and CPU seconds per sample of each timed epoch."""
    import dataclasses

    from npyio.cli import pipelines, sample

    profile = dataclasses.replace(sample.PROFILES[profile_name], count=COUNTS[profile_name])
    xs, ys = sample.paths(profile, sample.ensure(profile, root, quiet=True))
    ds = build(backend, xs, ys)
    pipelines.drain(ds)  # warm-up: tracing, first iterator, page cache
    rates, cpus = [], []
    for _ in range(epochs):
        before = cpu()
        n, seconds = pipelines.drain(ds)
        rates.append(n / seconds)
        cpus.append((cpu() - before) / n)
    return {"backend": backend, "profile": profile_name, "rates": rates, "cpu": cpus}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--child", nargs=2, metavar=("BACKEND", "PROFILE"))
    parser.add_argument("--root", help="where the sample data goes (npyio bench's cache)")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--profiles", nargs="+", default=list(COUNTS), choices=COUNTS)
    parser.add_argument("--backends", nargs="+", default=list(BACKENDS), choices=BACKENDS + EXTRA)
    parser.add_argument("--json", help="also write the raw epochs here")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(*args.child, args.root, args.epochs)))
        return
    variants = [(backend, profile) for profile in args.profiles for backend in args.backends]
    runs = interleaved(
        __file__,
        variants,
        args.rounds,
        ["--epochs", str(args.epochs)] + (["--root", args.root] * bool(args.root)),
    )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(runs, f)
    print(f"batch {BATCH}, {args.epochs} epochs x {args.rounds} rounds, fresh process each")
    print("| profile | backend | samples/s (median) | range | CPU us/sample | / graph |")
    print("|---|---|---:|---:|---:|---:|")
    for profile in args.profiles:
        sel = {
            b: [x for x in runs if x["backend"] == b and x["profile"] == profile]
            for b in args.backends
        }
        rates = {b: [v for x in sel[b] for v in x["rates"]] for b in args.backends}
        med = {b: statistics.median(rates[b]) for b in args.backends}
        for b in args.backends:
            us = statistics.median([v for x in sel[b] for v in x["cpu"]]) * 1e6
            ratio = f"{med[b] / med['graph']:.2f}x" if "graph" in med and b != "graph" else ""
            print(
                f"| {profile} | {b} | {med[b]:,.0f} | {min(rates[b]):,.0f}-{max(rates[b]):,.0f} "
                f"| {us:.0f} | {ratio} |"
            )


if __name__ == "__main__":
    main()
