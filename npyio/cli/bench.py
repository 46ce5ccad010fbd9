"""``npyio bench``: npyio against the py_function pipeline and the read-only floor.

Every pipeline reads the same files in batches of 8 and is drained with ``Dataset.reduce``
(a Python loop over a dataset caps out near 2,000 batches/s). All pipelines run in one process,
interleaved in rounds after a warm-up, and the medians are reported, so that they share the
machine's state (page cache, CPU frequency, other load) as fairly as possible.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import statistics
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import tensorflow as tf

from npyio._data.dataset import dataset
from npyio.cli import pipelines as _pipelines
from npyio.cli import sample as _sample

PROFILES = {
    "small": _sample.Profile("small", (16, 16), count=8000),
    "medium": _sample.Profile("medium", (64, 64, 3), count=4000),
    "large": _sample.Profile("large", (256, 256, 16), count=400),
}
BATCH = 8


class _PeakRss:
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

    def __enter__(self) -> _PeakRss:
        self.peak = self.now()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self.now())


@dataclass
class Result:
    profile: str
    pipeline: str
    samples: int
    seconds: list[float] = field(default_factory=list)
    peak_rss_mib: float = 0.0
    samples_per_s: float = 0.0
    mb_per_s: float = 0.0
    vs_py_function: float = 0.0
    vs_floor: float = 0.0


def pipelines(
    profile: _sample.Profile, root: str, backends: list[str]
) -> dict[str, Callable[[], tuple[int, float]]]:
    """name -> a function that drains that pipeline once and returns (samples, seconds)."""
    width = max(4, len(str(profile.count - 1)))
    xs = [os.path.join(root, "inputs", f"{i:0{width}d}.npy") for i in range(profile.count)]
    ys = [os.path.join(root, "labels", f"{i:0{width}d}.npy") for i in range(profile.count)]
    out: dict[str, Callable[[], tuple[int, float]]] = {}
    for backend in backends:
        out[f"npyio {backend}"] = functools.partial(
            _pipelines.drain, dataset(xs, ys, batch_size=BATCH, backend=backend)
        )
    baseline = _pipelines.py_function_pipeline(
        xs, ys, profile.input_shape, profile.label_shape, BATCH
    )
    out["py_function"] = lambda: _pipelines.drain(baseline)
    floor = _pipelines.floor_pipeline(xs, ys, BATCH)
    out["floor (read only)"] = lambda: _pipelines.drain(floor)

    def numpy_loop() -> tuple[int, float]:
        start = time.perf_counter()
        n = _pipelines.numpy_loop(xs, ys)
        return n, time.perf_counter() - start

    out["np.load loop"] = numpy_loop
    return out


def available_backends() -> list[str]:
    backends = ["graph"]
    try:
        from npyio._backends import tfio

        tfio.load_ops()
        backends.append("tfio")
    except Exception:
        pass
    return backends


def run(
    profiles: list[str],
    rounds: int = 5,
    root: str | None = None,
    counts: dict[str, int] | None = None,
    backends: list[str] | None = None,
    log: Callable[[str], None] = print,
) -> list[Result]:
    """Measures every pipeline on every profile; returns one Result per (profile, pipeline)."""
    backends = backends or available_backends()
    results: list[Result] = []
    for name in profiles:
        profile = PROFILES[name]
        if counts and name in counts:
            profile = _sample.Profile(
                profile.name, profile.input_shape, profile.label_shape, counts[name]
            )
        where = _sample.ensure(profile, root)
        runs = pipelines(profile, where, backends)
        rows = {k: Result(name, k, profile.count) for k in runs}
        for drain in runs.values():  # warm-up: traces functions, fills the page cache
            drain()
        for r in range(rounds):
            for key, drain in runs.items():
                with _PeakRss() as rss:
                    n, seconds = drain()
                if n != profile.count:
                    raise RuntimeError(f"{key} delivered {n} samples, expected {profile.count}")
                rows[key].seconds.append(seconds)
                rows[key].peak_rss_mib = max(rows[key].peak_rss_mib, rss.peak / 2**20)
            log(f"  {name}: round {r + 1}/{rounds} done")
        for row in rows.values():
            median = statistics.median(row.seconds)
            row.samples_per_s = profile.count / median
            row.mb_per_s = profile.count * profile.pair_bytes / median / 1e6
        for row in rows.values():
            row.vs_py_function = row.samples_per_s / rows["py_function"].samples_per_s
            row.vs_floor = row.samples_per_s / rows["floor (read only)"].samples_per_s
        results.extend(rows.values())
    return results


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return (
        f"{os.cpu_count()} cores, {cpu}; Python {platform.python_version()}, "
        f"TensorFlow {tf.__version__}"
    )


def table(results: list[Result]) -> str:
    head = (
        "| profile | pipeline | samples/s | MB/s | vs py_function | vs floor | "
        "peak RSS MiB |\n|---|---|---:|---:|---:|---:|---:|"
    )
    lines = [head]
    for r in results:
        lines.append(
            f"| {r.profile} | {r.pipeline} | {r.samples_per_s:,.0f} | {r.mb_per_s:,.0f} | "
            f"{r.vs_py_function:.2f}x | {r.vs_floor:.2f}x | {r.peak_rss_mib:,.0f} |"
        )
    return "\n".join(lines)


def to_json(results: list[Result]) -> str:
    return json.dumps(
        {
            "date": time.strftime("%Y-%m-%d"),
            "machine": machine(),
            "results": [asdict(r) for r in results],
        },
        indent=2,
    )


def plot(results: list[Result], path: str) -> None:
    """A bar chart of samples/s relative to the floor, one group per profile."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        raise SystemExit("--plot needs matplotlib: pip install 'npyio[plot]'") from e
    profiles = list(dict.fromkeys(r.profile for r in results))
    names = list(dict.fromkeys(r.pipeline for r in results))
    fig, ax = plt.subplots(figsize=(9, 4.5))
    width = 0.8 / len(names)
    for j, name in enumerate(names):
        values = [
            next((r.vs_floor for r in results if r.profile == p and r.pipeline == name), 0)
            for p in profiles
        ]
        ax.bar([i + j * width for i in range(len(profiles))], values, width, label=name)
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(profiles))], profiles)
    ax.set_ylabel("throughput / read-only floor")
    ax.set_title(f"npyio bench, batches of {BATCH} ({time.strftime('%Y-%m-%d')})")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def command(args: argparse.Namespace) -> int:
    """``npyio bench``: run the benchmarks and print (or plot) the results."""
    counts = dict(c.split("=", 1) for c in args.count) if args.count else {}
    log = (lambda m: None) if args.json else (lambda m: print(m, file=sys.stderr))
    results = run(
        args.profiles,
        rounds=args.rounds,
        root=args.cache,
        counts={k: int(v) for k, v in counts.items()},
        log=log,
    )
    if args.json:
        print(to_json(results))
    else:
        print(
            f"{time.strftime('%Y-%m-%d')}, {machine()}, batches of {BATCH}, "
            f"median of {args.rounds} rounds\n"
        )
        print(table(results))
    if args.plot:
        plot(results, args.plot)
        print(f"plot written to {args.plot}", file=sys.stderr)
    return 0
