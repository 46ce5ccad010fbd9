"""``npyio bench``: npyio's readers (native and graph, side by side) against the py_function
and from_generator pipelines, the floor, and the native kernel's own bare read loop.

Every pipeline reads the same files in batches of 8. The tf.data pipelines are drained with
``Dataset.reduce`` (no Python per batch, `npyio.cli.pipelines.drain`), or with ``--drain
iterator`` by a new Python iterator each epoch, as ``model.fit`` and a JAX loop read, and as the
peers' own loops run (`npyio.cli.pipelines.iterate`: ``reduce`` redoes tf.data's graph rewrites
each epoch, an iterator pays a Python step per batch). With ``--cold``, every file is dropped
from the page cache before each epoch of each pipeline (`npyio.cli.pipelines.evict`), and the
bare loop reads with `COLD_THREADS` threads: a read then waits on the disk, and a deep queue is
what the disk gives at best. The pipelines run interleaved in
rounds after a warm-up, and the medians are reported, so that they share the machine's state
(page cache, CPU frequency, other load) as fairly as possible. All run in this process except the
``Dataset.from_generator`` ones, which run in one worker process (`Worker`), in the
same rounds: once a from_generator pipeline has run, tf.data pipelines that run later in its
process are slower, and ``gc.collect()`` does not reliably undo it (bench/README.md,
"Isolating from_generator", has the measurements). With ``--peers``, other libraries' readers
(`npyio.cli.peers`: DALI, Grain) run too, each in a worker process of its own, in the same
rounds, and `peer_table` shows npyio's ratio to each. Where the native reader is active,
`native_table` gives its ratios to the floor, the graph path, the bare loop (`BARE`: the
kernel's read loop outside tf.data, on every core) and DALI: issue 41's targets.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import tensorflow as tf

from npyio._sources.dataset import dataset
from npyio.cli import peers, pipelines, sample
from npyio.cli.args import usage_error
from npyio.errors import BackendUnavailableError

BATCH = 8
#: Generators in the interleaved from_generator pipeline. Each generator's Python (its loop,
#: np.load's header parsing, from_generator's per-element checks and conversion to tensors)
#: holds the GIL; numpy lets go of it only while reading a payload. So extra generators help
#: only by overlapping one's file reads with another's Python: a few more than the cores do
#: that, more only contend for the GIL. 4 is twice the 2 cores of the reference machine; it
#: is fixed, not taken from the machine, so that recorded figures compare across machines.
#: It does not always win (on small files, where a generator is nearly all Python, one
#: generator can beat four: bench/README.md), so the "vs best from_generator" ratio is
#: against the faster of the two in each profile.
GENERATORS = 4

NPYIO = "npyio graph"
NATIVE = "npyio native"
#: The native kernel's own read loop over the same files, outside tf.data (`native_drain`).
BARE = "native bare read loop (no tf.data)"
PY_FUNCTION = "py_function"
#: The py_function pipeline over mapped files (``np.load(mmap_mode="r")``), for crops.
MMAP = "py_function, mmap"
FLOOR = "floor (read only)"
GENERATOR = "from_generator"
GENERATOR_INTERLEAVED = f"from_generator x{GENERATORS} interleave"
NUMPY_LOOP = "np.load loop (no tf.data)"
GENERATOR_KEYS = (GENERATOR, GENERATOR_INTERLEAVED)
#: The pipelines `drains` measures beside npyio's backends and the peers (the from_generator
#: ones only with a worker).
REFERENCES = (PY_FUNCTION, *GENERATOR_KEYS, FLOOR, NUMPY_LOOP)
TUNED = "npyio graph, mallopt"
#: The bare loop's threads with ``--cold``: 32 reads in flight, the ceiling a deep queue gets
#: from the disk (issue 53's cold figures), where one thread a core would wait on each read.
COLD_THREADS = 32
#: What each reference row is, for the table's footnotes and the JSON's ``note``. The np.load
#: loop is no pipeline: it is there for scale, and must not read as a tf.data alternative.
NOTES = {
    GENERATOR: (
        "tf.data.Dataset.from_generator over np.load, batch 8, prefetch; run in a worker "
        "process (it can slow tf.data pipelines that run after it in its process), whose peak "
        "RSS is reported"
    ),
    GENERATOR_INTERLEAVED: (
        f"{GENERATORS} from_generator pipelines over np.load, each on every "
        f"{GENERATORS}th pair, interleaved with num_parallel_calls={GENERATORS} "
        "(deterministic), batch 8, prefetch; in the same worker process"
    ),
    TUNED: (
        "npyio.dataset in a worker process of its own that raised glibc's mmap and trim "
        "thresholds first (mallopt: 256 MiB mmap, 1 GiB trim, 256 MiB top pad): freed blocks "
        "stay for reuse, and the process holds more memory (its peak RSS is reported)"
    ),
    MMAP: (
        "the py_function pipeline with np.load(mmap_mode='r'): only the pages a crop touches "
        "are read (page faults), then the window is copied; local files, with --crop"
    ),
    NUMPY_LOOP: (
        "not a tf.data pipeline: np.load of each pair in a plain Python loop, no batching, "
        "no parallelism, no tensors; numpy reads straight into its own array. For scale only"
    ),
    BARE: (
        "not a tf.data pipeline: the native reader's C++ read (npy_read.cc) in the core's bench "
        "driver, outside TensorFlow, one thread per core, inputs then labels, one reused "
        "output buffer per thread; the machine's limit for this read (driver's own timing)"
    ),
}
#: `BARE`'s note with ``--cold``.
COLD_BARE_NOTE = (
    f"not a tf.data pipeline: the native reader's C++ read (npy_read.cc) in the core's bench "
    f"driver, outside TensorFlow, {COLD_THREADS} threads (reads in flight), inputs then labels; "
    f"the disk's limit for this read at a deep queue (driver's own timing)"
)
#: The rows that are no pipeline: for scale, hatched in the chart.
SCALE_ONLY = (NUMPY_LOOP, BARE)


def child_env() -> dict[str, str]:
    """This process's environment, with ``PYTHONPATH`` led by the folder that holds the npyio
    it runs: a child ``python -c`` then imports the same npyio (a work tree, say), not
    whatever else is installed."""
    import npyio

    env = dict(os.environ)
    here = os.path.dirname(os.path.dirname(os.path.abspath(npyio.__file__)))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [here, env.get("PYTHONPATH")]))
    return env


def _today() -> str:
    return time.strftime("%Y-%m-%d")


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
    vs_generator: float = 0.0  # against the faster from_generator pipeline of the profile
    npyio_over: float = 0.0  # "npyio graph"'s samples/s over this row's (0 without npyio graph)
    native_over: float = 0.0  # "npyio native"'s samples/s over this row's (0 without it)
    note: str = ""


def generator_drain(
    inputs: Sequence[str],
    labels: Sequence[str],
    input_shape: Sequence[int],
    label_shape: Sequence[int],
    batch_size: int,
    generators: int,
    by: str = "reduce",
) -> Callable[[], tuple[int, float]]:
    """The drain (``by`` one of `npyio.cli.pipelines.DRAINS`) of ``generator_pipeline(...)``:
    what a `Worker` builds for the from_generator pipelines."""
    ds = pipelines.generator_pipeline(
        inputs, labels, input_shape, label_shape, batch_size, generators
    )
    return functools.partial(pipelines.DRAINS[by], ds)


def tuned_drain(
    inputs: Sequence[str], labels: Sequence[str], batch_size: int, by: str = "reduce"
) -> Callable[[], tuple[int, float]]:
    """The drain (``by``) of ``npyio.dataset`` after `npyio.cli.peers.mallopt` (process-wide:
    a `Worker` of its own builds it)."""
    peers.mallopt()
    ds = dataset(inputs, labels, batch_size=batch_size)
    return functools.partial(pipelines.DRAINS[by], ds)


#: The tuned npyio row, run through the peers' plumbing (a worker of its own).
TUNED_PEER = peers.Peer(
    TUNED, "mallopt", "npyio", "npyio", "npyio.cli.bench:tuned_drain", "", tf_data=True
)


class BareDrain:
    """Drains the bare read loop (`BARE`: `npyio.cli.pipelines.native_loop`) once with
    ``threads`` threads (default: every core): ``() -> (samples, seconds)``, like the others.
    ``peak_rss`` is the driver's (bytes) in the last drain, as a worker's drain carries its
    worker's. The driver is built first if the cache has none.

    Raises:
        npyio.BackendUnavailableError: the driver cannot be built (saying why).
    """

    def __init__(
        self, inputs: Sequence[str], labels: Sequence[str], threads: int | None = None
    ) -> None:
        from npyio._native.library import build_driver

        self.driver = build_driver()
        self.inputs, self.labels = list(inputs), list(labels)
        self.threads = threads or os.cpu_count() or 1
        self.peak_rss = 0

    def __call__(self) -> tuple[int, float]:
        n, seconds, self.peak_rss = pipelines.native_loop(
            self.driver, self.inputs, self.labels, self.threads
        )
        return n, seconds


class Worker:
    """A worker process that builds and drains pipelines for this one, named ``name`` in its
    errors.

    The from_generator pipelines run in one: after a from_generator pipeline has run, tf.data
    pipelines that run later in the same process can be slower, and ``gc.collect()`` does not
    reliably undo it: run in this process, it could slow every pipeline after it. In a process
    of its own it can slow only itself and the other generator pipeline there, as it would in
    a user's process. Each peer (`npyio.cli.peers`) runs in one of its own, so that no
    library's threads or allocator share a process with npyio's. A worker waits idle while
    this process measures, so it takes no CPU from the other pipelines.

    The worker is ``python -c`` importing the same npyio as this process, running
    `npyio.cli.peers.serve` (which imports neither TensorFlow nor a peer until a build asks
    for it); it reads JSON lines on its stdin and answers on a copy of its stdout (stdout
    itself goes to stderr, so nothing printed can corrupt a reply), and reports each drain's
    samples, seconds and its own peak RSS. Use as a context manager (or call ``close``).
    """

    def __init__(self, name: str = GENERATOR) -> None:
        self.name = name
        env = child_env()
        env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        # Not a with-block: the file lives as long as the worker; close() closes it.
        self._stderr = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115
        self._proc = subprocess.Popen(
            [sys.executable, "-c", "from npyio.cli.peers import serve; serve()"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            env=env,
        )

    def _call(self, request: dict[str, Any]) -> dict[str, Any]:
        stdin, stdout = self._proc.stdin, self._proc.stdout
        assert stdin is not None and stdout is not None
        try:
            stdin.write(json.dumps(request) + "\n")
            stdin.flush()
            line = stdout.readline()
        except BrokenPipeError:
            line = ""
        if not line:
            self._proc.wait()
            self._stderr.seek(0)
            tail = self._stderr.read()[-2000:]
            raise RuntimeError(f"the {self.name} worker exited ({self._proc.returncode}):\n{tail}")
        reply: dict[str, Any] = json.loads(line)
        if "error" in reply:
            raise RuntimeError(f"in the {self.name} worker:\n{reply['error']}")
        return reply

    def build(self, key: str, builder: str, **kwargs: Any) -> _RemoteDrain:
        """Builds ``builder(**kwargs)`` (``"module:function"``, returning a drain) in the
        worker under ``key``; returns its drain."""
        self._call({"op": "build", "key": key, "builder": builder, "kwargs": kwargs})
        return _RemoteDrain(self, key)

    def pipeline(
        self,
        key: str,
        inputs: Sequence[str],
        labels: Sequence[str],
        input_shape: Sequence[int],
        label_shape: Sequence[int],
        generators: int,
        by: str = "reduce",
    ) -> _RemoteDrain:
        """Builds ``generator_pipeline(...)`` in the worker under ``key``, drained ``by``;
        returns its drain."""
        return self.build(
            key,
            "npyio.cli.bench:generator_drain",
            inputs=list(inputs),
            labels=list(labels),
            input_shape=list(input_shape),
            label_shape=list(label_shape),
            batch_size=BATCH,
            generators=generators,
            by=by,
        )

    def close(self) -> None:
        """Ends the worker (end of its input; killed if it has not returned within a minute)
        and closes its pipes, also when it has already exited."""
        assert self._proc.stdin is not None
        # End of input: the worker returns. A worker that has died leaves unflushed requests.
        with contextlib.suppress(BrokenPipeError):
            self._proc.stdin.close()
        try:
            self._proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        for f in (self._proc.stdout, self._stderr):
            if f is not None:
                f.close()

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _RemoteDrain:
    """Drains one pipeline in the worker: ``() -> (samples, seconds)``, like the local ones.

    ``peak_rss`` is the worker's peak resident set size (bytes) during the last drain: this
    process's own would say nothing about the pipeline.
    """

    def __init__(self, worker: Worker, key: str) -> None:
        self._worker, self._key = worker, key
        self.peak_rss = 0

    def __call__(self) -> tuple[int, float]:
        reply = self._worker._call({"op": "drain", "key": self._key})
        self.peak_rss = int(reply["peak_rss"])
        return int(reply["samples"]), float(reply["seconds"])


def drains(
    profile: sample.Profile,
    root: str,
    backends: list[str],
    worker: Worker | None = None,
    peer_workers: Mapping[peers.Peer, Worker] | None = None,
    by: str = "reduce",
    cold: bool = False,
) -> dict[str, Callable[[], tuple[int, float]]]:
    """name -> a function that drains that pipeline once and returns (samples, seconds).

    Args:
        profile: the dataset's profile.
        root: its directory, as `npyio.cli.sample.ensure` returns it.
        backends: npyio's backends to measure (``"native"``, ``"graph"``); with
            ``"native"``, the bare read loop (`BARE`) too, unless its driver cannot be built
            (then a line on stderr says why).
        worker: where the from_generator pipelines run (see `Worker`); without
            one they are left out. Their drains carry the worker's ``peak_rss``.
        peer_workers: each peer to measure (`npyio.cli.peers`), with the worker of its own
            that it runs in. Their drains carry their worker's ``peak_rss``.
        by: how the tf.data pipelines are drained, a key of `npyio.cli.pipelines.DRAINS`
            (the peers that are no tf.data pipeline run their own loops).
        cold: the bare loop reads with `COLD_THREADS` threads (`run` evicts the files).
    """
    xs, ys = sample.paths(profile, root)
    tf_drain = pipelines.DRAINS[by]
    out: dict[str, Callable[[], tuple[int, float]]] = {}
    for backend in backends:
        out[f"npyio {backend}"] = functools.partial(
            tf_drain, dataset(xs, ys, batch_size=BATCH, backend=backend)
        )
    baseline = pipelines.py_function_pipeline(
        xs, ys, profile.input_shape, profile.label_shape, BATCH
    )
    out[PY_FUNCTION] = functools.partial(tf_drain, baseline)
    if worker is not None:
        for key, generators in ((GENERATOR, 1), (GENERATOR_INTERLEAVED, GENERATORS)):
            out[key] = worker.pipeline(
                f"{profile.dirname()}/{key}",
                xs,
                ys,
                profile.input_shape,
                profile.label_shape,
                generators,
                by,
            )
    for peer, peer_worker in (peer_workers or {}).items():
        how = {"by": by} if peer.tf_data else {}
        out[peer.name] = peer_worker.build(
            f"{profile.dirname()}/{peer.name}",
            peer.builder,
            inputs=xs,
            labels=ys,
            batch_size=BATCH,
            **how,
        )
    floor = pipelines.floor_pipeline(xs, ys, BATCH)
    out[FLOOR] = functools.partial(tf_drain, floor)
    out[NUMPY_LOOP] = functools.partial(timed, pipelines.numpy_loop, xs, ys)
    if "native" in backends:
        try:
            out[BARE] = BareDrain(xs, ys, COLD_THREADS if cold else None)
        except BackendUnavailableError as e:
            print(f"npyio bench: no {BARE} line: {e}", file=sys.stderr)
    return out


def timed(load: Callable[..., int], *args: Any) -> tuple[int, float]:
    """``load(*args)``'s sample count and the seconds it took."""
    start = time.perf_counter()
    n = load(*args)
    return n, time.perf_counter() - start


def available_backends() -> list[str]:
    """``"native"`` where npyio's native reader is active (`native_off` says why not), then
    ``"graph"``."""
    return ([] if native_off() else ["native"]) + ["graph"]


def native_off() -> str | None:
    """None where npyio's native reader is active here (built, or built now, and loaded), else
    why not (``NPYIO_NATIVE=0``, no compiler, a failed build), for the line that says the bench
    measures the graph path only."""
    from npyio._native import library

    try:
        if library.ops() is not None:
            return None
    except (BackendUnavailableError, ValueError) as e:  # NPYIO_NATIVE=1 or a bad value
        return str(e)
    return library.status().reason or "it did not load"


def run(
    profiles: list[str],
    rounds: int = 5,
    root: str | None = None,
    counts: dict[str, int] | None = None,
    backends: list[str] | None = None,
    log: Callable[[str], None] = print,
    peer_names: Sequence[str] = (),
    tuned: bool = False,
    by: str = "reduce",
    cold: bool = False,
) -> list[Result]:
    """Measures every pipeline on every profile.

    Args:
        profiles: names of `npyio.cli.sample.PROFILES`.
        rounds: measured rounds, after one warm-up round.
        root: where the sample data goes (default: `npyio.cli.sample.default_cache`).
        counts: files per profile, where not the profile's own.
        backends: npyio's backends (default: `available_backends`).
        log: called with a line after each round.
        peer_names: peers to measure too (`npyio.cli.peers.PEERS`), each in a worker
            process of its own, in the same rounds.
        tuned: also measure npyio after `npyio.cli.peers.mallopt` (`TUNED`), in a worker
            process of its own.
        by: how the tf.data pipelines are drained (`npyio.cli.pipelines.DRAINS`).
        cold: drop the profile's files from the page cache before each drain (the bare loop
            then reads with `COLD_THREADS` threads).

    Returns:
        One `Result` per (profile, pipeline), in profile order.

    Raises:
        RuntimeError: a pipeline delivered another number of samples than the files, or a
            worker failed.
        SystemExit: a peer that is unknown or not installed (before anything runs).
    """
    wanted = peers.require(peer_names) + ([TUNED_PEER] if tuned else [])
    backends = backends or available_backends()
    if "native" not in backends:
        why = native_off() or "not asked for"
        print(f"npyio bench: npyio native not measured ({why}): graph path only", file=sys.stderr)
    results: list[Result] = []
    with contextlib.ExitStack() as stack:
        worker = stack.enter_context(Worker())
        peer_workers = {p: stack.enter_context(Worker(p.name)) for p in wanted}
        for name in profiles:
            profile = sample.PROFILES[name]
            if counts and name in counts:
                profile = dataclasses.replace(profile, count=counts[name])
            where = sample.ensure(profile, root)
            runs = drains(profile, where, backends, worker, peer_workers, by, cold)
            files = [p for part in sample.paths(profile, where) for p in part] if cold else []
            rows = measure_rounds(profile.name, profile.count, runs, rounds, log, files)
            if cold and BARE in rows:
                rows[BARE].note = COLD_BARE_NOTE
            set_rates(rows.values(), profile.count, profile.pair_bytes)
            results.extend(rows.values())
    return results


def measure_rounds(
    name: str,
    count: int,
    runs: dict[str, Callable[[], tuple[int, float]]],
    rounds: int,
    log: Callable[[str], None],
    evict: Sequence[str] = (),
) -> dict[str, Result]:
    """A warm-up round, then ``rounds`` rounds of every drain in turn: their seconds and peak
    RSS (the worker's for its drains, else this process's), as rows of the profile ``name``.
    The files ``evict`` are dropped from the page cache before every drain, warm-up too
    (`npyio.cli.pipelines.evict`; not timed).

    Raises:
        RuntimeError: a drain delivered another number of samples than ``count``.
    """
    notes = _notes()
    rows = {k: Result(name, k, count, note=notes.get(k, "")) for k in runs}
    for drain in runs.values():  # warm-up: traces functions, fills the page cache
        pipelines.evict(evict)
        drain()
    for r in range(rounds):
        for key, drain in runs.items():
            pipelines.evict(evict)
            with peers.PeakRss() as rss:
                n, seconds = drain()
            if n != count:
                raise RuntimeError(f"{key} delivered {n} samples, expected {count}")
            peak = getattr(drain, "peak_rss", 0) or rss.peak
            rows[key].seconds.append(seconds)
            rows[key].peak_rss_mib = max(rows[key].peak_rss_mib, peak / 2**20)
        log(f"  {name}: round {r + 1}/{rounds} done")
    return rows


def _notes() -> dict[str, str]:
    """Every reference row's note: `NOTES` and each peer's."""
    return NOTES | {p.name: p.note for p in peers.PEERS.values()}


def set_rates(rows: Iterable[Result], count: int, pair_bytes: float) -> None:
    """Each row's median rates (``count`` samples of ``pair_bytes`` each), and its ratios to
    py_function, the floor and, where they ran, the faster from_generator pipeline (the
    user's best: which wins depends on the files)."""
    by_name = {row.pipeline: row for row in rows}
    for row in by_name.values():
        median = statistics.median(row.seconds)
        row.samples_per_s = count / median
        row.mb_per_s = count * pair_bytes / median / 1e6
    generators = [by_name[k].samples_per_s for k in GENERATOR_KEYS if k in by_name]
    for row in by_name.values():
        row.vs_py_function = row.samples_per_s / by_name[PY_FUNCTION].samples_per_s
        row.vs_floor = row.samples_per_s / by_name[FLOOR].samples_per_s
        row.vs_generator = row.samples_per_s / max(generators) if generators else 0.0
        if NPYIO in by_name:
            row.npyio_over = by_name[NPYIO].samples_per_s / row.samples_per_s
        if NATIVE in by_name:
            row.native_over = by_name[NATIVE].samples_per_s / row.samples_per_s


def machine() -> str:
    """``2 cores, <CPU model>; Python 3.11.7, TensorFlow 2.21.0``: what a result ran on."""
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
    """A Markdown table of the results, then a footnote for each reference pipeline shown."""
    head = (
        "| profile | pipeline | samples/s | MB/s | vs py_function | vs best from_generator "
        "| vs floor | peak RSS MiB |\n|---|---|---:|---:|---:|---:|---:|---:|"
    )
    lines = [head]
    for r in results:
        lines.append(
            f"| {r.profile} | {r.pipeline} | {r.samples_per_s:,.0f} | {r.mb_per_s:,.0f} | "
            f"{r.vs_py_function:.2f}x | {r.vs_generator:.2f}x | {r.vs_floor:.2f}x | "
            f"{r.peak_rss_mib:,.0f} |"
        )
    shown = dict.fromkeys(r.pipeline for r in results)
    own = _own_notes(results)
    notes = [f"- {key}: {own.get(key, note)}." for key, note in _notes().items() if key in shown]
    return "\n".join(lines + (["", *notes] if notes else []))


def _own_notes(results: list[Result]) -> dict[str, str]:
    """The notes the rows carry (a run's own, such as `COLD_BARE_NOTE`), by pipeline."""
    return {r.pipeline: r.note for r in results if r.note}


#: `native_table`'s ratios: the column's name and the row native is divided by (issue 41's
#: targets: the floor, the graph path of the same run, the bare loop, DALI's CPU reader).
NATIVE_RATIOS = (
    ("native / floor", FLOOR),
    ("native / graph", NPYIO),
    ("native / bare loop", BARE),
    ("native / DALI", peers.PEERS["dali"].name),
)


def native_table(results: list[Result]) -> str:
    """npyio native beside npyio graph and the bare read loop, a row per profile: samples/s
    and native's ratio to the floor, the graph path, the bare loop and DALI (``-`` where that
    row did not run: DALI without ``--peers dali``). Empty when native did not run."""
    if not any(r.pipeline == NATIVE for r in results):
        return ""
    rates = (NATIVE, NPYIO, BARE)
    names = [n for n, _ in NATIVE_RATIOS]
    lines = [
        "| profile | " + " | ".join(f"{n} samples/s" for n in rates) + " | "
        + " | ".join(names) + " |",
        "|---|" + "---:|" * (len(rates) + len(names)),
    ]  # fmt: skip
    for profile in dict.fromkeys(r.profile for r in results):
        rows = {r.pipeline: r for r in results if r.profile == profile}
        if NATIVE not in rows:
            continue
        cells = [f"{rows[n].samples_per_s:,.0f}" if n in rows else "-" for n in rates]
        cells += [f"{rows[k].native_over:.2f}x" if k in rows else "-" for _, k in NATIVE_RATIOS]
        lines.append(f"| {profile} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def peer_table(results: list[Result]) -> str:
    """npyio beside the floor and the peers, a row per profile, with npyio's ratio to each
    peer: the table of bench/README.md's "Peers". Empty when no peer was measured."""
    shown = [p for p in peers.PEERS.values() if any(r.pipeline == p.name for r in results)]
    if not shown:
        return ""
    names = [p.name for p in shown]
    native = any(r.pipeline == NATIVE for r in results)
    columns = [*([NATIVE] if native else []), NPYIO]
    columns += [*([TUNED] if any(r.pipeline == TUNED for r in results) else []), FLOOR, *names]
    # native's ratio to each peer where it ran, then the graph path's (npyio's before it).
    ratio_of = [("native", "native_over")] if native else []
    ratio_of += [("npyio", "npyio_over")]
    heads = [f"{who} / {p.short}" for who, _ in ratio_of for p in shown]
    lines = [
        "| profile | " + " | ".join(columns + heads) + " |",
        "|---|" + "---:|" * (len(columns) + len(heads)),
    ]
    for profile in dict.fromkeys(r.profile for r in results):
        rows = {r.pipeline: r for r in results if r.profile == profile}
        rates = [f"{rows[c].samples_per_s:,.0f}" if c in rows else "-" for c in columns]
        ratios = [
            f"{getattr(rows[n], attr):.2f}x" if n in rows else "-"
            for _, attr in ratio_of
            for n in names
        ]
        lines.append(f"| {profile} | " + " | ".join(rates + ratios) + " |")
    return "\n".join(lines)


def to_json(results: list[Result], by: str = "reduce", cold: bool = False) -> str:
    """The results as ``npyio bench --json`` prints them, with the date, `machine`, how the
    tf.data pipelines were drained and whether the page cache was cold."""
    head = {"date": _today(), "machine": machine(), "drain": by, "cold": cold}
    return json.dumps(head | {"results": [asdict(r) for r in results]}, indent=2)


def conditions(by: str, cold: bool) -> str:
    """How a run read, for the line above its table."""
    how = "Dataset.reduce" if by == "reduce" else "a Python iterator each epoch"
    cache = "cold (each file evicted before every epoch)" if cold else "warm"
    return f"tf.data pipelines drained by {how}, page cache {cache}"


def _pyplot() -> Any:
    """matplotlib's pyplot on the Agg backend (no display needed).

    Raises:
        SystemExit: when matplotlib is not installed, saying how to install it.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        raise SystemExit("--plot needs matplotlib: pip install 'npyio[plot]'") from e
    return plt


def plot(results: list[Result], path: str) -> Any:
    """A bar chart of samples/s relative to the floor, one group per profile, written to
    ``path``; returns the matplotlib figure.

    The np.load loop and the bare read loop (`SCALE_ONLY`) are hatched, in grey, and
    footnoted: they are no tf.data pipeline, and a bar like the others would read as one.

    Raises:
        SystemExit: when matplotlib is not installed.
    """
    plt = _pyplot()
    profiles = list(dict.fromkeys(r.profile for r in results))
    names = list(dict.fromkeys(r.pipeline for r in results))
    fig, ax = plt.subplots(figsize=(10, 5))
    width = 0.8 / len(names)
    for j, name in enumerate(names):
        values = [
            next((r.vs_floor for r in results if r.profile == p and r.pipeline == name), 0)
            for p in profiles
        ]
        ax.bar([i + j * width for i in range(len(profiles))], values, width, **_bar_style(name))
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(profiles))], profiles)
    ax.set_ylabel("throughput / read-only floor")
    ax.set_title(f"npyio bench, batches of {BATCH} ({_today()})")
    ax.legend(fontsize=8)
    scale = [n for n in SCALE_ONLY if n in names]
    if scale:
        own = _own_notes(results)
        stars = {n: "*" * (SCALE_ONLY.index(n) + 1) for n in scale}
        text = "\n".join(f"{stars[n]} {own.get(n, NOTES[n])}." for n in scale)
        fig.text(0.01, 0.01, text, fontsize=7.5, color="0.3", wrap=True)
        fig.tight_layout(rect=(0, 0.05 * len(scale), 1, 1))
    else:
        fig.tight_layout()
    fig.savefig(path, dpi=100)
    return fig


def _bar_style(name: str) -> dict[str, Any]:
    """A pipeline's bars: the default style, but the rows that are no pipeline (`SCALE_ONLY`)
    hatched and starred (one star for the first, two for the second, as their footnotes)."""
    if name in SCALE_ONLY:
        return {
            "label": f"{name} {'*' * (SCALE_ONLY.index(name) + 1)}",
            "color": "white",
            "edgecolor": "0.4",
            "hatch": ("///", "xxx")[SCALE_ONLY.index(name)],
            "linewidth": 0.8,
        }
    return {"label": name}


def _counts(args: Sequence[str] | None) -> dict[str, int]:
    """``--count PROFILE=N`` arguments as ``{profile: N}``."""
    return {k: int(v) for k, v in (c.split("=", 1) for c in args or ())}


def command(args: argparse.Namespace) -> int:
    """``npyio bench`` without INPUTS: run the benchmarks on the sample profiles and print (or
    plot) the results."""
    given = [f"--{o}" for o in ("sample", "batch_size", "pack_dir") if getattr(args, o, None)]
    # npyio.dataset's arguments (--shape, --crop, ...) are for the user's files too.
    spec = ("dtype", "shape", "label_dtype", "label_shape", "crop", "crops_per_file")
    given += [f"--{o}" for o in spec if getattr(args, o, None) is not None]
    given += ["--label_crop"] if getattr(args, "label_crop", "same") != "same" else []
    if given:
        flags = ", ".join(g.replace("_", "-") for g in given)
        usage_error(args, f"{flags}: for your own files, give INPUTS [LABELS]")
    log = (lambda m: None) if args.json else (lambda m: print(m, file=sys.stderr))
    by = args.drain or "reduce"
    results = run(
        args.profiles or list(sample.PROFILES),
        rounds=args.rounds,
        root=args.cache,
        counts=_counts(args.count),
        log=log,
        peer_names=[p for p in (args.peers or "").split(",") if p],
        tuned=args.mallopt,
        by=by,
        cold=args.cold,
    )
    if args.json:
        print(to_json(results, by, args.cold))
    else:
        print(f"{_today()}, {machine()}, batches of {BATCH}, median of {args.rounds} rounds;")
        print(f"{conditions(by, args.cold)}\n")
        print(table(results))
        for extra in (native_table(results), peer_table(results)):
            if extra:
                print(f"\n{extra}")
    if args.plot:
        plot(results, args.plot)
        print(f"plot written to {args.plot}", file=sys.stderr)
    return 0
