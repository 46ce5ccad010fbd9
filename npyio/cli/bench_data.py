"""``npyio bench INPUTS [LABELS]``: will npyio help on these files, and would a pack?

The sources are listed and paired as `npyio.dataset` lists and pairs them (`npyio._pipeline.paths`:
names only, no header is read), and a bounded **sample** of the pairs is taken, evenly across
the listing (`take_sample`), so that a million files cost their listing and seconds more. On
the sample, in interleaved rounds after a warm-up (`npyio.cli.bench.measure_rounds`, as the
profile bench measures), run: ``npyio.dataset``, the py_function pipeline, the read-only floor
and the np.load loop (the builders of `npyio.cli.pipelines`), then ``npyio.dataset`` of a pack of
the sample (`npyio.pack` into a temporary directory, removed afterwards) and the read-only floor
over that pack's shards. ``npyio.dataset`` of the loose files and of the pack also run with
``shuffle=True``, the way training reads: a pack's rows read in order are one long read, but
shuffled they are not, and only the shuffled figures decide whether a pack is advised. Each
round reads each pipeline through a new Python iterator (`npyio.cli.pipelines.iterate`), as
``model.fit`` reads an epoch and as the peers (``--peers dali,grain``, in workers of their own,
with the same crop) run their own loops; ``Dataset.reduce``, which the profile bench drains
with, redoes tf.data's graph rewrites each time, tens of ms that a short sample's round would
be mostly.

The dataset's own arguments (``dtype``, ``shape``, ``label_dtype``, ``label_shape``, ``crop``,
``label_crop``: the command's ``--shape``, ``--crop``, ...) go to every npyio pipeline, so that
files of per-case shapes can be measured (``--crop 64,64,64``, whose axes each file sizes); the
py_function pipeline crops in numpy as a user's would, also over mapped files. With a crop,
each file is read `crops_per_file` times a round. A pack holds rows of one shape, read
whole: with a crop or ``None`` dims none is made, and `pack_unavailable` says why.

**Files or bytes.** The two floors read the same bytes, loose and packed in a few shards; what
the loose floor spends beyond the packed one is per-file cost (opening, a request per object).
`files_share` is that share of the loose floor's time, both less the fixed cost of an epoch (a
new iterator's start: the floor over one sample measures it),
which would otherwise hide the per-file cost of a short sample's epoch; at `FILES_BOUND` or
more the pipeline is files-bound (a pack can help), below it bytes-bound (a pack will not
help much). `suggest` turns the ratios into advice; it is
a pure function of the numbers, as are its thresholds.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import os
import shlex
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import tensorflow as tf

import npyio
from npyio._format.files import is_local
from npyio._io.packed import load_index
from npyio._pipeline.paths import pair, resolve
from npyio.cli import bench, peers, pipelines, sample
from npyio.cli.args import crop_arguments, print_json, spec_arguments, usage_error
from npyio.errors import NpyioError

__all__ = [
    "FILES_BOUND",
    "PACK_WORTH",
    "USE_NPYIO",
    "Measurement",
    "Sample",
    "command",
    "dataset_arguments",
    "evenly",
    "files_share",
    "measure",
    "pack_unavailable",
    "report",
    "suggest",
    "suggest_pack",
    "take_sample",
]

#: npyio over py_function from which npyio is advised for speed (below its inverse, against).
USE_NPYIO = 1.2
#: A pack read this many times faster than the loose files is worth making.
PACK_WORTH = 1.5
#: The share of per-file cost in the loose floor's time from which it is files-bound.
FILES_BOUND = 0.5

PACKED = "npyio on a pack of the sample"
PACKED_FLOOR = "floor over the pack's shards"
#: ``npyio.dataset(shuffle=True)``, the way training reads: of the loose files and of the pack.
SHUFFLED = f"{bench.NATIVE}, shuffled"
PACKED_SHUFFLED = f"{PACKED}, shuffled"
#: The shuffles' seed: every round reads a new order (``reshuffle_each_iteration``), the same
#: orders in every run.
SEED = 0
#: The floor over the sample's first pair alone: the fixed cost of an epoch (not a row).
FIXED = "floor over one sample"
#: With a crop, the windows a round reads at least: each sampled file is read
#: ``ceil(CROP_WINDOWS / files)`` times a round (`crops_per_file`), so that the round of a few
#: volumes is not the pipelines' start-up alone, as a training epoch of patches is not.
CROP_WINDOWS = 256
#: The profile bench's options, refused with sources (and this mode's, refused without).
PROFILE_OPTIONS = ("profiles", "count", "cache", "plot", "mallopt", "cold")
#: The peers that read a user's files (``--peers`` with INPUTS and LABELS): those whose
#: builders take a crop (`npyio.cli.peers`).
CROPPING_PEERS = ("dali", "grain")


@dataclass
class Sample:
    """The pairs measured: ``inputs`` (and ``labels``, None without), taken evenly from
    ``total`` pairs that took ``list_seconds`` to list and pair."""

    inputs: list[str]
    labels: list[str] | None
    total: int
    list_seconds: float

    @property
    def files_per_sample(self) -> int:
        return 1 if self.labels is None else 2


def evenly(total: int, size: int) -> list[int]:
    """``size`` indices spread evenly over ``range(total)`` (all of them if ``size >= total``),
    ascending, the first 0.

    Example:
        >>> evenly(10, 4), evenly(3, 8)
        ([0, 2, 5, 7], [0, 1, 2])
    """
    size = min(size, total)
    return [i * total // size for i in range(size)]


def take_sample(inputs: str, labels: str | None, size: int) -> Sample:
    """Lists and pairs the sources as `npyio.dataset` does, and takes ``size`` pairs evenly.

    Raises:
        ValueError: a source that names no file, or sources that do not pair up (named).
    """
    start = time.perf_counter()
    source = resolve(inputs, "inputs")
    xs, ys = source.paths, None
    if labels is not None:
        xs, ys = pair(source, resolve(labels, "labels"))
    seconds = time.perf_counter() - start
    chosen = evenly(len(xs), size)
    return Sample(
        [xs[i] for i in chosen], None if ys is None else [ys[i] for i in chosen], len(xs), seconds
    )


def files_share(loose: float, packed: float, fixed: float) -> float:
    """The share of per-file cost in the loose floor's time: what it spends beyond the packed
    floor, over its own time, both without the fixed cost of an epoch (seconds each: the floor
    over the loose sample, over the pack's shards, and over one sample). Between 0 and 1.

    Example:
        >>> files_share(0.05, 0.02, 0.01), files_share(0.05, 0.06, 0.01)
        (0.75, 0.0)
    """
    if loose <= fixed:
        return 0.0
    return min(1.0, max(0.0, 1.0 - max(0.0, packed - fixed) / (loose - fixed)))


def suggest(
    npyio_vs_py: float,
    pack_in_order: float,
    pack_shuffled: float,
    share: float,
    pack_command: str,
    unavailable: str | None = None,
) -> list[str]:
    """The advice of a measurement: whether to use npyio (`USE_NPYIO`), and whether a pack
    is worth making (`suggest_pack`).

    Example:
        >>> suggest(5.14, 9.0, 8.0, 0.9, "npyio pack x y --out DIR")[0]
        'npyio reads 5.1x py_function: use it'
    """
    if npyio_vs_py >= USE_NPYIO:
        first = f"npyio reads {npyio_vs_py:.1f}x py_function: use it"
    elif npyio_vs_py > 1 / USE_NPYIO:
        first = f"npyio reads {npyio_vs_py:.2f}x py_function: no clear gain in speed on these files"
    else:
        first = f"npyio reads slower than py_function here ({npyio_vs_py:.2f}x): keep py_function"
    return [first, suggest_pack(pack_in_order, pack_shuffled, share, pack_command, unavailable)]


def suggest_pack(
    in_order: float,
    shuffled: float,
    share: float,
    pack_command: str,
    unavailable: str | None = None,
) -> str:
    """Whether a pack is worth making, from npyio's samples/s on the pack over the loose
    files', read in order (``in_order``) and shuffled (``shuffled``), and the per-file
    share of the loose floor (`files_share`, which explains the bound: `FILES_BOUND`).

    Training reads shuffled, so only ``shuffled`` decides: a pack is advised from
    `PACK_WORTH` there, whatever ``in_order`` says. ``unavailable``: why no pack was made
    (`pack_unavailable`); the figures are then not read.

    Example:
        >>> suggest_pack(2.06, 0.18, 0.6, "npyio pack x --out DIR")  # doctest: +ELLIPSIS
        'a pack reads 2.1x faster in order, but 0.18x as fast shuffled, ...: keep the loose files'
    """
    if unavailable is not None:
        return f"no pack measured: {unavailable}"
    if shuffled >= PACK_WORTH:
        why = "files are small and per-file cost dominates: " if share >= FILES_BOUND else ""
        return (
            f"{why}a pack reads {shuffled:.1f}x faster shuffled, the way training reads "
            f"({in_order:.1f}x in order): `{pack_command}`"
        )
    if in_order >= PACK_WORTH:
        return (
            f"a pack reads {in_order:.1f}x faster in order, but {shuffled:.2f}x as fast "
            "shuffled, the way training reads: keep the loose files"
        )
    measured = f"{in_order:.2f}x in order, {shuffled:.2f}x shuffled"
    if share >= FILES_BOUND:
        return (
            f"per-file cost dominates the read-only floor, but npyio read a pack only "
            f"{measured}: a pack will not help much"
        )
    return f"bytes-bound: a pack will not help much ({measured} measured)"


def pack_unavailable(
    arguments: Mapping[str, Any], shapes: list[tuple[int | None, ...]]
) -> str | None:
    """Why no pack of the sample can be read as the loose files are (None: one can): a pack
    holds whole rows of one shape, so not with a crop (``arguments``: `npyio.dataset`'s) or
    with ``None`` dims in the elements' ``shapes`` (files of per-case shapes).

    Example:
        >>> pack_unavailable({}, [(4,), ()]) is None
        True
        >>> pack_unavailable({}, [(None, 3)])
        "a pack holds rows of one shape, and the elements' shapes vary ((None, 3))"
    """
    crops = arguments.get("crop") is not None or arguments.get("label_crop", "same") not in (
        None,
        "same",
    )
    if crops:
        return "a pack's rows are read whole, and --crop reads a window of each loose file"
    varying = [shape for shape in shapes if None in shape]
    if varying:
        shown = ", ".join(str(shape) for shape in varying)
        return f"a pack holds rows of one shape, and the elements' shapes vary ({shown})"
    return None


@dataclass
class Measurement:
    """What `measure` found: the rows (`npyio.cli.bench.Result`, the sample as their profile),
    the bytes one round reads, the pack's shard files (of its parts), and the verdicts.
    ``arguments`` are the `npyio.dataset` arguments given (``crop``, ``shape``, ...);
    ``unavailable`` says why no pack was made (`pack_unavailable`), and the pack's figures
    are then 0."""

    sample: Sample
    batch_size: int
    rounds: int
    rows: list[bench.Result]
    bytes_per_sample: float
    pack_shards: int
    pack_where: str
    arguments: dict[str, Any] = field(default_factory=dict)
    unavailable: str | None = None
    share: float = 0.0
    fixed_seconds: float = 0.0
    pack_vs_loose: float = 0.0
    pack_vs_loose_shuffled: float = 0.0
    suggestions: list[str] = field(default_factory=list)

    def row(self, name: str) -> bench.Result:
        return next(r for r in self.rows if r.pipeline == name)


@contextlib.contextmanager
def _temporary_pack_dir(under: str | None) -> Iterator[str]:
    """A directory for the pack that does not exist yet, under ``under`` (any TensorFlow file
    system) or the local temporary folder; removed with what is in it on exit."""
    if under is None or is_local(under):
        parent = tempfile.mkdtemp(prefix="npyio-bench-", dir=under)
        try:
            yield os.path.join(parent, "pack")
        finally:
            shutil.rmtree(parent, ignore_errors=True)
        return
    where = f"{under.rstrip('/')}/npyio-bench-{uuid.uuid4().hex[:12]}"
    try:
        yield where
    finally:
        if tf.io.gfile.exists(where):
            tf.io.gfile.rmtree(where)


def _bytes_read(floor: tf.data.Dataset) -> int:
    """The bytes the floor pipeline reads in one pass (which also warms the page cache)."""
    total = floor.reduce(
        tf.constant(0, tf.int64), lambda t, b: t + tf.reduce_sum(tf.cast(b, tf.int64))
    )
    return int(total.numpy())


def _as_sample(drain: Callable[[], tuple[int, float]], count: int) -> tuple[int, float]:
    """A drain of the pack's shards, counted as the ``count`` samples they hold."""
    return count, drain()[1]


def crops_per_file(arguments: Mapping[str, Any], files: int) -> int:
    """How many times a round reads each sampled file: with a crop, ``--crops-per-file`` or
    enough for `CROP_WINDOWS` windows; else once."""
    if arguments.get("crop") is None:
        return 1
    return int(arguments.get("crops_per_file") or max(1, -(-CROP_WINDOWS // max(files, 1))))


def _loose_runs(
    xs: list[str], ys: list[str] | None, batch_size: int, arguments: Mapping[str, Any]
) -> tuple[dict[str, Callable[[], tuple[int, float]]], list[tf.TensorSpec], tf.data.Dataset]:
    """The drains of the loose files (npyio in order on each backend and shuffled, the
    py_function pipeline, mapped too with a crop of local files, the read-only floor, the
    np.load loop), the elements' specs, and the floor's dataset. npyio reads each file
    ``crops_per_file`` times (its argument), the others each file of the list repeated."""
    repeat = int(arguments.get("crops_per_file", 1))
    rx, ry = xs * repeat, None if ys is None else ys * repeat
    loose = npyio.dataset(xs, ys, batch_size=batch_size, backend="graph", **arguments)
    assert isinstance(loose, tf.data.Dataset), "no validation_split: one dataset"
    default = npyio.dataset(xs, ys, batch_size=batch_size, **arguments)  # native where it serves
    shuffled = npyio.dataset(xs, ys, batch_size=batch_size, shuffle=True, seed=SEED, **arguments)
    specs = tf.nest.flatten(loose.element_spec)
    shapes = [s.shape[1:] for s in specs]
    py_function = functools.partial(
        pipelines.py_function_pipeline,
        rx,
        ry,
        shapes[0],
        shapes[-1] if ys else None,
        batch_size,
        [s.dtype for s in specs],
        crop=arguments.get("crop"),
        label_crop=arguments.get("label_crop", "same"),
    )
    floor = pipelines.floor_pipeline(rx, ry, batch_size)
    runs: dict[str, Callable[[], tuple[int, float]]] = {
        bench.NPYIO: functools.partial(pipelines.iterate, loose),
        bench.NATIVE: functools.partial(pipelines.iterate, default),
        SHUFFLED: functools.partial(pipelines.iterate, shuffled),
        bench.PY_FUNCTION: functools.partial(pipelines.iterate, py_function()),
    }
    if arguments.get("crop") is not None and all(is_local(p) for p in xs + (ys or [])):
        runs[bench.MMAP] = functools.partial(pipelines.iterate, py_function(mmap=True))
    runs[bench.FLOOR] = functools.partial(pipelines.iterate, floor)
    runs[bench.NUMPY_LOOP] = functools.partial(bench.timed, pipelines.numpy_loop, rx, ry)
    return runs, specs, floor


def _pack_runs(
    xs: list[str],
    ys: list[str] | None,
    where: str,
    batch_size: int,
    arguments: Mapping[str, Any],
) -> tuple[dict[str, Callable[[], tuple[int, float]]], int]:
    """Packs the sample into ``where``: the drains of npyio on the pack in order and
    shuffled, of the floor over its shards and over one sample (`FIXED`); and its shard
    count."""
    spec = ("dtype", "shape", "label_dtype", "label_shape")
    npyio.pack(xs, ys, out=where, **{k: v for k, v in arguments.items() if k in spec})
    index = load_index(where)
    # The parts' shards, not the last part's (``order``, which npyio.dataset does not read).
    shards = [path for i in range(len(index.parts) - 1) for path in index.paths(i)]
    packed = npyio.dataset(where, batch_size=batch_size)
    shuffled = npyio.dataset(where, batch_size=batch_size, shuffle=True, seed=SEED)
    shard_floor = functools.partial(pipelines.iterate, pipelines.floor_pipeline(shards, None, 1))
    one = pipelines.floor_pipeline(xs[:1], None if ys is None else ys[:1], batch_size)
    count = len(xs)
    runs: dict[str, Callable[[], tuple[int, float]]] = {
        PACKED: functools.partial(pipelines.iterate, packed),
        PACKED_SHUFFLED: functools.partial(pipelines.iterate, shuffled),
        PACKED_FLOOR: functools.partial(_as_sample, shard_floor, count),
        FIXED: functools.partial(_as_sample, functools.partial(pipelines.iterate, one), count),
    }
    return runs, len(shards)


def measure(
    smp: Sample,
    batch_size: int = bench.BATCH,
    rounds: int = 5,
    pack_dir: str | None = None,
    log: Callable[[str], None] = print,
    arguments: Mapping[str, Any] | None = None,
    peer_names: Sequence[str] = (),
) -> Measurement:
    """Measures every pipeline on the sample, and a pack of it, in order and shuffled (see
    the module docstring). ``arguments``: `npyio.dataset`'s (``shape``, ``crop``, ...), for
    every npyio pipeline; with a crop or ``None`` dims no pack is made (`pack_unavailable`).
    ``peer_names``: peers that read the same pairs, with the same crop (`CROPPING_PEERS`),
    each in a worker process of its own.

    Raises:
        npyio.NpyioError, ValueError, OSError: what ``npyio.dataset`` or ``npyio.pack``
            raises for the sample's files (a bad file, mixed shapes).
        RuntimeError: a pipeline delivered another number of samples.
    """
    xs, ys = smp.inputs, smp.labels
    given = dict(arguments or {})
    repeat = crops_per_file(given, len(xs))
    if repeat > 1:
        given["crops_per_file"] = repeat
    runs, specs, floor = _loose_runs(xs, ys, batch_size, given)
    unavailable = pack_unavailable(given, [tuple(s.shape[1:]) for s in specs])
    total_bytes = _bytes_read(floor)
    count = len(xs) * repeat
    shards = 0
    with _temporary_pack_dir(pack_dir) as where, contextlib.ExitStack() as stack:
        for peer in peers.require(peer_names):
            worker = stack.enter_context(bench.Worker(peer.name))
            crop = given.get("crop")
            runs[peer.name] = worker.build(
                f"sample/{peer.name}",
                peer.builder,
                inputs=xs,
                labels=ys,
                batch_size=batch_size,
                crop=None if crop is None else list(crop),
                crops_per_file=repeat,
            )
        if unavailable is None:
            packed, shards = _pack_runs(xs, ys, where, batch_size, given)
            runs.update(packed)
        rows = bench.measure_rounds("sample", count, runs, rounds, log)
    fixed = statistics.median(rows.pop(FIXED).seconds) if FIXED in rows else 0.0
    bench.set_rates(rows.values(), count, total_bytes / count)
    where_said = "local temporary folder" if pack_dir is None else pack_dir
    m = Measurement(
        smp, batch_size, rounds, list(rows.values()), total_bytes / count, shards, where_said
    )
    m.arguments, m.unavailable, m.fixed_seconds = given, unavailable, fixed
    if unavailable is None:
        loose, packed_floor = (
            statistics.median(rows[k].seconds) for k in (bench.FLOOR, PACKED_FLOOR)
        )
        m.share = files_share(loose, packed_floor, fixed)
        m.pack_vs_loose = rows[PACKED].samples_per_s / rows[bench.NATIVE].samples_per_s
        m.pack_vs_loose_shuffled = (
            rows[PACKED_SHUFFLED].samples_per_s / rows[SHUFFLED].samples_per_s
        )
    return m


def pack_command(
    inputs: str, labels: str | None, arguments: Mapping[str, Any] | None = None
) -> str:
    """The ``npyio pack`` command of the user's sources (with the ``--dtype``/``--shape``
    options of ``arguments`` that ``npyio pack`` takes).

    Example:
        >>> pack_command("x", "y", {"shape": (4, None)})
        'npyio pack x y --shape 4,None --out DIR'
    """
    sources = [inputs] + ([] if labels is None else [labels])
    options = []
    for name in ("dtype", "shape", "label_dtype", "label_shape"):
        value = (arguments or {}).get(name)
        if value is not None:
            text = ",".join(map(str, value)) if isinstance(value, tuple) else str(value)
            options += [f"--{name.replace('_', '-')}", shlex.quote(text)]
    return " ".join(["npyio pack", *map(shlex.quote, sources), *options, "--out DIR"])


def dataset_arguments(args: argparse.Namespace) -> dict[str, Any]:
    """The `npyio.dataset` arguments the command was given (``--shape``, ``--crop``, ...),
    those left at `npyio.dataset`'s defaults left out."""
    given: dict[str, Any] = {**spec_arguments(args), **crop_arguments(args)}
    given["crops_per_file"] = getattr(args, "crops_per_file", None)
    defaults = {"label_crop": "same"}
    return {k: v for k, v in given.items() if v != defaults.get(k)}


def report(m: Measurement) -> str:
    """The measurement as text: the sample and the arguments, a table of the pipelines, the
    bound, the pack and the suggestions."""
    s = m.sample
    per_file = m.bytes_per_sample / s.files_per_sample
    files = f"{s.files_per_sample} files per sample" if s.labels else "1 file per sample"
    lines = [
        f"{bench.machine()}; batches of {m.batch_size}, median of {m.rounds} rounds",
        f"sample: {len(s.inputs):,} of {s.total:,} samples, taken evenly (listed and paired "
        f"in {s.list_seconds:.2f} s); {files}, mean file {_size(per_file)}",
        *([f"npyio.dataset arguments: {_arguments_text(m.arguments)}"] if m.arguments else []),
        "",
        "| pipeline | samples/s | MB/s | vs py_function | vs floor |",
        "|---|---:|---:|---:|---:|",
    ]
    for r in m.rows:
        lines.append(
            f"| {r.pipeline} | {r.samples_per_s:,.0f} | {r.mb_per_s:,.1f} | "
            f"{r.vs_py_function:.2f}x | {r.vs_floor:.2f}x |"
        )
    lines += ["", *_pack_lines(m)]
    lines += ["", "suggestion:", *(f"  - {line}" for line in m.suggestions)]
    return "\n".join(lines)


def _pack_lines(m: Measurement) -> list[str]:
    """The report's bound and pack: what the floors and npyio measured of the pack, in order
    and shuffled; or why no pack was made."""
    if m.unavailable is not None:
        return [
            "bound: not measured (it compares the read-only floor over the loose files and "
            "over a pack)",
            f"pack: none made -- {m.unavailable}",
        ]
    s, floor, packed_floor = m.sample, m.row(bench.FLOOR), m.row(PACKED_FLOOR)
    bound = "files" if m.share >= FILES_BOUND else "bytes"
    lines = [
        f"bound: {bound} -- the read-only floor reads "
        f"{floor.samples_per_s * s.files_per_sample:,.0f} files/s ({floor.mb_per_s:,.1f} MB/s) "
        f"loose, {packed_floor.samples_per_s / floor.samples_per_s:.2f}x that from the pack's "
        f"{m.pack_shards} shard file{'s' * (m.pack_shards != 1)}: per-file cost is "
        f"{m.share:.0%} of its time beyond the fixed {m.fixed_seconds * 1e3:.0f} ms of an epoch "
        f"(files-bound from {FILES_BOUND:.0%})",
        f"pack: npyio reads the packed sample {m.pack_vs_loose:.2f}x as fast as the loose files "
        f"in order, {m.pack_vs_loose_shuffled:.2f}x shuffled (shuffle=True, the way training "
        f"reads, which decides; packed in the {m.pack_where}, removed)",
    ]
    if not is_local(s.inputs[0]) and m.pack_where == "local temporary folder":
        lines.append(
            "  (the loose files are remote, the pack local: --pack-dir puts it beside them)"
        )
    return lines


def _arguments_text(arguments: Mapping[str, Any]) -> str:
    """``crop=(64, 64, 64), shape=(None, None, None, 1)``: the arguments as code would pass
    them (a dtype by its name).

    Example:
        >>> import numpy as np
        >>> _arguments_text({"crop": (8, 8), "dtype": np.dtype("float16"), "label_crop": None})
        "crop=(8, 8), dtype='float16', label_crop=None"
    """
    shown = {k: str(v) if isinstance(v, np.dtype) else v for k, v in arguments.items()}
    return ", ".join(f"{k}={v!r}" for k, v in shown.items())


def _size(n: float) -> str:
    """``1.1 kB``, ``4.2 MB``: a byte count for the report.

    Example:
        >>> _size(900), _size(4194432)
        ('900 B', '4.2 MB')
    """
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n:.0f} B"


def to_json(m: Measurement) -> dict[str, object]:
    """The measurement as ``--json`` prints it."""
    return {
        "date": time.strftime("%Y-%m-%d"),
        "machine": bench.machine(),
        "sample": len(m.sample.inputs),
        "total": m.sample.total,
        "batch_size": m.batch_size,
        "rounds": m.rounds,
        "bytes_per_sample": m.bytes_per_sample,
        "files_share": m.share,
        "fixed_seconds": m.fixed_seconds,
        "bound": None if m.unavailable else "files" if m.share >= FILES_BOUND else "bytes",
        "arguments": {k: str(v) if isinstance(v, np.dtype) else v for k, v in m.arguments.items()},
        "pack": m.unavailable or "measured",
        "pack_vs_loose": m.pack_vs_loose,
        "pack_vs_loose_shuffled": m.pack_vs_loose_shuffled,
        "suggestions": m.suggestions,
        "results": [asdict(r) for r in m.rows],
    }


def command(args: argparse.Namespace) -> int:
    """``npyio bench INPUTS [LABELS]``: 0 when measured, 1 when the files cannot be read (the
    reason on stderr), 2 on a usage error."""
    if len(args.sources) > 2:
        usage_error(args, f"expected INPUTS [LABELS], got {len(args.sources)} paths")
    given = [f"--{o}" for o in PROFILE_OPTIONS if getattr(args, o, None) not in (None, False)]
    if given:
        usage_error(args, f"{', '.join(given)}: for the sample profiles, not with INPUTS")
    if args.drain == "reduce":
        usage_error(args, "--drain reduce: INPUTS are drained by a Python iterator, as fit reads")
    inputs, labels = args.sources[0], (args.sources[1:] or [None])[0]
    log = (lambda m: None) if args.json else (lambda m: print(m, file=sys.stderr))
    arguments = dataset_arguments(args)
    peer_names = [p for p in (args.peers or "").split(",") if p]
    if peer_names and (labels is None or any(p not in CROPPING_PEERS for p in peer_names)):
        usage_error(
            args,
            f"--peers with INPUTS: {', '.join(CROPPING_PEERS)}, which read pairs (give LABELS)",
        )
    try:
        smp = take_sample(inputs, labels, args.sample or sample.USER_SAMPLE)
        batch = args.batch_size or bench.BATCH
        m = measure(smp, batch, args.rounds, args.pack_dir, log, arguments, peer_names)
    except (NpyioError, ValueError, TypeError, OSError, tf.errors.OpError) as e:
        print(f"npyio bench: {e}", file=sys.stderr)
        return 1
    m.suggestions = suggest(
        m.row(bench.NATIVE).vs_py_function,
        m.pack_vs_loose,
        m.pack_vs_loose_shuffled,
        m.share,
        pack_command(inputs, labels, arguments),
        m.unavailable,
    )
    if args.json:
        print_json(to_json(m))
    else:
        print(report(m))
    return 0
