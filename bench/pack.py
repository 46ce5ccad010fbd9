"""Packing (``npyio pack``): packed against loose small files, locally, in memory and on GCS.

Three measurements (bench/README.md, "Packing", records them):

- ``local``: in one process, on the small-file profile (8,000 pairs of 16x16 float32 inputs and
  int64 scalar labels), interleaved rounds drained with ``Dataset.reduce``: npyio on the loose
  files, the loose files' read-only floor (``read_file`` of both files), npyio on the pack
  (batches of 8 and of 256, and shuffled), and the pack's read-only floor (``read_file`` of
  every shard, reduced to its length); then ``npyio.pack`` itself, timed, against one epoch of
  npyio on the loose files, and against a loose dataset built from the paths and read once
  (what a pack itself does: it lists, pairs and builds before it reads).
- ``memory``: peak RSS of a fresh process that packs N pairs and drains the pack, for N and 10N
  (``--count``).
- ``gcs``: the same loose files and their pack on the GCS fake (tests/gcs) at 20 ms per request,
  drained in a worker inside its sandbox; and ``npyio.pack`` from the local files to ``gs://``.

    .venv/bin/python bench/pack.py local --rounds 5
    .venv/bin/python bench/pack.py memory --count 8000
    .venv/bin/python bench/pack.py gcs --rounds 3

- ``readers``: the two readers of row ranges (``FixedLengthRecordDataset``, the graph's; the
  native kernel's: ``NpyioReadRows`` per batch since 2026-12-06, ``NpyioReadRanges`` before) on
  the pack, and on one 32 MiB file through ``npyio.rows``, at batches of 8 and 256, by iterator
  and by ``Dataset.reduce``, against a hand-written ``FixedLengthRecordDataset`` floor and (the
  pack) against npyio's native reads of the loose files and a hand-written pipeline that reads
  each batch's rows with one ``pread`` per part (`batch_reads`), all in one process, TensorFlow
  imported first.

    .venv/bin/python bench/pack.py readers --rounds 5

- ``shuffled``: a shuffled pack against the same 4,000 files loose (8 KiB inputs), npyio's
  defaults, batches of 8 and 128, by Python iterator and by compiled loop (issue 51).

    .venv/bin/python bench/pack.py shuffled --rounds 5
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)  # this checkout's npyio (and tests.gcs), not an installed one
sys.path.insert(0, os.path.join(ROOT, "bench"))  # also when loaded by its path (tests/bench)
from pairs import PAIRS, ensure_pairs  # noqa: E402  (bench/, the script's own directory)


def drain(ds: object) -> tuple[int, float]:
    """(rows, seconds) of one epoch, with ``Dataset.reduce`` (no Python per batch)."""
    import tensorflow as tf

    def count(total: tf.Tensor, element: object) -> tf.Tensor:
        first = tf.nest.flatten(element)[0]
        return total + (tf.shape(first, tf.int64)[0] if first.shape.rank else 1)

    start = time.perf_counter()
    n = int(ds.reduce(tf.constant(0, tf.int64), count))  # type: ignore[attr-defined]
    return n, time.perf_counter() - start


def drain_iterator(ds: object) -> tuple[int, float]:
    """(rows, seconds) of one epoch as Keras's ``fit`` reads it: a new iterator, drained in a
    compiled loop (no Python per batch), until the iterator is gone. ``Dataset.reduce``
    instead rebuilds and re-optimizes the pipeline's graph at every call, a fixed cost that
    decides a short epoch's time (bench/README.md, "Packing")."""
    n, _, end = epoch_times(ds)
    return n, end


def epoch_times(ds: object) -> tuple[int, float, float]:
    """(rows, seconds to the last batch, seconds to the iterator's end) of one epoch read as
    `drain_iterator` reads it: deleting an iterator sometimes waits tens of ms, apparently for
    autotune's next tick (0-1 ms with autotune off), so the two are worth telling apart."""
    import tensorflow as tf

    # one compiled loop per pipeline, traced on its first epoch (the warm-up)
    fn = _CONSUME.get(id(ds))
    if fn is None:

        @tf.function
        def consume(iterator: object) -> tf.Tensor:
            total = tf.constant(0, tf.int64)
            for element in iterator:  # type: ignore[attr-defined]
                first = tf.nest.flatten(element)[0]
                total += tf.shape(first, tf.int64)[0] if first.shape.rank else 1
            return total

        fn = _CONSUME[id(ds)] = consume
    start = time.perf_counter()
    iterator = iter(ds)  # type: ignore[call-overload]
    n = int(fn(iterator))  # type: ignore[operator]
    last = time.perf_counter() - start
    del iterator
    return n, last, time.perf_counter() - start


_CONSUME: dict[int, object] = {}


def loose_floor(xs: str, ys: str, batch: int) -> object:
    import tensorflow as tf

    def read(x: tf.Tensor, y: tf.Tensor) -> tf.Tensor:
        return tf.strings.length(tf.io.read_file(x)) + tf.strings.length(tf.io.read_file(y))

    paths = sorted(os.path.join(xs, n) for n in os.listdir(xs))
    labels = [os.path.join(ys, os.path.basename(p)) for p in paths]
    ds = tf.data.Dataset.from_tensor_slices((paths, labels)).map(read, tf.data.AUTOTUNE)
    return ds.batch(batch).prefetch(tf.data.AUTOTUNE)


def shard_floor(out: str) -> object:
    """Every shard read whole (``read_file``), reduced to its length: the bytes, nothing else.
    Counted in rows (the rows of the shard) so that rates compare with the pipelines'."""
    import tensorflow as tf

    index = json.load(tf.io.gfile.GFile(os.path.join(out, "npyio-pack.json")))
    paths, rows = [], []
    for shard in index["shards"]:
        for f in shard["files"][:-1]:  # ``order`` is read only for paths
            paths.append(os.path.join(out, f["name"]))
            rows.append(shard["rows"] if f is shard["files"][0] else 0)

    def read(path: tf.Tensor, n: tf.Tensor) -> tf.Tensor:
        return tf.fill([n], tf.strings.length(tf.io.read_file(path)))

    ds = tf.data.Dataset.from_tensor_slices((paths, tf.constant(rows, tf.int64)))
    return ds.map(read, tf.data.AUTOTUNE).prefetch(tf.data.AUTOTUNE)


def local(root: str, rounds: int) -> dict[str, object]:
    import npyio

    xs, ys = ensure_pairs(root)
    out = os.path.join(root, "packed")
    shutil.rmtree(out, ignore_errors=True)
    loose = npyio.dataset(xs, ys, batch_size=8)
    drain(loose)  # warm the page cache and tf.data
    pack_s, unchecked_s, loose_s, fresh_s = [], [], [], []
    for _ in range(rounds):  # packing against one epoch of the loose files, alternating
        n, s = drain(loose)
        loose_s.append(n / s)
        # what a pack starts from: the paths (the listing, pairing and graph built, then read)
        start = time.perf_counter()
        n, _ = drain(npyio.dataset(xs, ys, batch_size=8))
        fresh_s.append(n / (time.perf_counter() - start))
        summary = npyio.pack(xs, ys, out=out, overwrite=True, check=False)
        unchecked_s.append(summary.rows / summary.seconds)
        summary = npyio.pack(xs, ys, out=out, overwrite=True)
        pack_s.append(summary.rows / summary.seconds)
    pipelines = {
        "loose: npyio, batch 8": loose,
        "loose: floor (read only), batch 8": loose_floor(xs, ys, 8),
        "packed: npyio, batch 8": npyio.dataset(out, batch_size=8),
        "packed: npyio, batch 256": npyio.dataset(out, batch_size=256),
        "packed: npyio, batch 256, shuffled": npyio.dataset(
            out, batch_size=256, shuffle=True, seed=1
        ),
        "packed: floor (read_file of every shard)": shard_floor(out),
    }
    for ds in pipelines.values():
        drain(ds)
        drain_iterator(ds)
    rates: dict[str, list[float]] = {name: [] for name in pipelines}
    by_iterator: dict[str, list[float]] = {name: [] for name in pipelines}
    names = list(pipelines)
    for r in range(rounds):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            n, s = drain(pipelines[name])
            assert n == PAIRS, (name, n)
            rates[name].append(n / s)
            n, s = drain_iterator(pipelines[name])
            assert n == PAIRS, (name, n)
            by_iterator[name].append(n / s)
    med = {name: statistics.median(v) for name, v in rates.items()}
    it = {name: statistics.median(v) for name, v in by_iterator.items()}
    floor = med["packed: floor (read_file of every shard)"]
    loose_rate = med["loose: npyio, batch 8"]
    return {
        "pairs/s (median)": {k: round(v) for k, v in med.items()},
        "packed batch 8 / loose": round(med["packed: npyio, batch 8"] / loose_rate, 1),
        "packed batch 256 / loose": round(med["packed: npyio, batch 256"] / loose_rate, 1),
        "packed batch 256 / shard floor": round(med["packed: npyio, batch 256"] / floor, 2),
        "packed batch 8 / shard floor": round(med["packed: npyio, batch 8"] / floor, 2),
        "iterator per epoch: pairs/s (median)": {k: round(v) for k, v in it.items()},
        "iterator per epoch: packed batch 256 / loose": round(
            it["packed: npyio, batch 256"] / it["loose: npyio, batch 8"], 1
        ),
        "iterator per epoch: packed batch 256 / shard floor": round(
            it["packed: npyio, batch 256"] / it["packed: floor (read_file of every shard)"], 2
        ),
        "pack: pairs/s (median)": round(statistics.median(pack_s)),
        "loose epoch alongside: pairs/s (median)": round(statistics.median(loose_s)),
        "pack / loose read": round(statistics.median(pack_s) / statistics.median(loose_s), 2),
        "loose dataset built and read once: pairs/s (median)": round(statistics.median(fresh_s)),
        "pack / loose built and read once": round(
            statistics.median(pack_s) / statistics.median(fresh_s), 2
        ),
        "pack --no-check: pairs/s (median)": round(statistics.median(unchecked_s)),
        "pack --no-check / loose read": round(
            statistics.median(unchecked_s) / statistics.median(loose_s), 2
        ),
    }


def python_iterator(ds: object) -> tuple[int, float]:
    """(rows, seconds) of one epoch drained by a Python ``for`` loop, as a JAX or custom
    training loop reads it."""
    start = time.perf_counter()
    n = 0
    for element in ds:  # type: ignore[attr-defined]
        n += len(element[0])
    return n, time.perf_counter() - start


def shuffled(root: str, rounds: int, count: int = 4000) -> dict[str, object]:
    """A shuffled pack against the same files loose (issue 51's check): ``count`` pairs of
    8 KiB float32 inputs and int64 labels, npyio's defaults, batches of 8 and 128, drained by a
    Python iterator and by `drain_iterator`'s compiled loop; interleaved rounds, medians."""
    import numpy as np

    import npyio

    xs, ys, out = (os.path.join(root, "shuffled", name) for name in ("x", "y", "pack"))
    if not os.path.isdir(out):
        os.makedirs(xs)
        os.makedirs(ys)
        for i in range(count):
            np.save(os.path.join(xs, f"{i:05d}.npy"), np.full(2048, i, np.float32))
            np.save(os.path.join(ys, f"{i:05d}.npy"), np.int64(i))
        npyio.pack(xs, ys, out=out)
    pipelines = {
        f"{kind}, batch {b}": npyio.dataset(*src, batch_size=b, shuffle=True, seed=1)
        for b in (8, 128)
        for kind, src in (("loose", (xs, ys)), ("pack", (out,)))
    }
    ways = {"python iterator": python_iterator, "compiled loop": drain_iterator}
    rates: dict[str, dict[str, list[float]]] = {w: {k: [] for k in pipelines} for w in ways}
    names = list(pipelines)
    for r in range(rounds + 1):  # the first round warms the page cache and each pipeline
        for name in names[r % len(names) :] + names[: r % len(names)]:
            for way, drain_with in ways.items():
                n, s = drain_with(pipelines[name])
                assert n == count, (name, n)
                if r:
                    rates[way][name].append(n / s)
    result: dict[str, object] = {"load average at start": os.getloadavg()}
    for way, by_name in rates.items():
        med = {name: statistics.median(v) for name, v in by_name.items()}
        result[f"{way}: pairs/s (median)"] = {k: round(v) for k, v in med.items()}
        for b in (8, 128):
            ratio = med[f"pack, batch {b}"] / med[f"loose, batch {b}"]
            result[f"{way}: pack / loose, batch {b}"] = round(ratio, 2)
    return result


def record_floor(paths: list[str], batch: int) -> object:
    """A hand-written ``FixedLengthRecordDataset`` pipeline over ``paths`` (one file per part,
    zipped): records of ``batch`` rows (the header cut off, the last partial batch cut off as a
    footer), decoded with ``decode_raw``. Counted in rows."""
    import numpy as np
    import tensorflow as tf

    parts, layouts = [], []
    for path in paths:
        arr = np.load(path, mmap_mode="r")
        row = arr.itemsize * int(np.prod(arr.shape[1:], dtype=np.int64))
        header = os.path.getsize(path) - arr.nbytes
        footer = (len(arr) % batch) * row
        parts.append(tf.data.FixedLengthRecordDataset(path, row * batch, header, footer))
        layouts.append((tf.as_dtype(arr.dtype.newbyteorder("=")), arr.shape[1:]))

    def decode(*raws: tf.Tensor) -> tuple:
        return tuple(
            tf.reshape(tf.io.decode_raw(raw, dtype), [-1, *shape])
            for raw, (dtype, shape) in zip(raws, layouts)
        )

    ds = tf.data.Dataset.zip(tuple(parts))
    return ds.map(decode, tf.data.AUTOTUNE).prefetch(tf.data.AUTOTUNE)


def batch_reads(paths: list[str], batch: int) -> object:
    """A hand-written pipeline of the kernel over ``paths`` (one file per part, rows in
    order): each batch's rows of every part read by one ``NpyioReadRanges`` ``pread``
    straight from its byte range, decoded with ``decode_raw``: the fewest ops and copies a
    batch of in-order rows can take (no pieces, chunks or rebatch). Counted in rows."""
    import numpy as np
    import tensorflow as tf

    from npyio._native import read_ranges

    layouts = []
    for path in paths:
        arr = np.load(path, mmap_mode="r")
        row = arr.itemsize * int(np.prod(arr.shape[1:], dtype=np.int64))
        size = os.path.getsize(path)
        dtype = tf.as_dtype(arr.dtype.newbyteorder("="))
        layouts.append((path, row, size - arr.nbytes, size, dtype, arr.shape[1:], len(arr)))
    n = layouts[0][6]
    names = tf.constant([layout[0] for layout in layouts])
    sizes = tf.constant([layout[3] for layout in layouts], tf.int64)

    def read(k: tf.Tensor) -> tuple:
        first = k * batch
        count = tf.minimum(tf.constant(batch, tf.int64), n - first)
        offsets = tf.stack([header + first * row for _, row, header, *_ in layouts])
        lengths = tf.stack([count * row for _, row, *_ in layouts])
        values, _ = read_ranges(names, offsets, lengths, sizes)
        return tuple(
            tf.reshape(tf.io.decode_raw(values[i], dtype), [-1, *shape])
            for i, (_, _, _, _, dtype, shape, _) in enumerate(layouts)
        )

    ds = tf.data.Dataset.range(-(-n // batch))
    return ds.map(read, tf.data.AUTOTUNE).prefetch(tf.data.AUTOTUNE)


def with_backend(backend: str, make: object, *args: object, **kwargs: object) -> object:
    """``make(*args, **kwargs)`` (``npyio.dataset`` on a pack, ``npyio.rows``) built to read
    its rows through ``backend``'s reader of row ranges."""
    from npyio._sources import rows

    saved, rows._BACKEND = rows._BACKEND, backend
    try:
        return make(*args, **kwargs)  # type: ignore[operator]
    finally:
        rows._BACKEND = saved


#: `readers`' profile of `npyio.rows`: one file of this many rows of 16x16 float32 (32 MiB).
ROWS = 32768


def readers(root: str, rounds: int) -> dict[str, object]:
    """The two readers of row ranges, on the pack of the small-file profile and on one 32 MiB
    file through `npyio.rows`, interleaved rounds, medians (rows/s)."""
    import numpy as np
    import tensorflow as tf  # noqa: F401  (first, as the issue's targets ask)

    import npyio

    xs, ys = ensure_pairs(root)
    out = os.path.join(root, "packed")
    if not os.path.exists(os.path.join(out, "npyio-pack.json")):
        npyio.pack(xs, ys, out=out, overwrite=True)
    with open(os.path.join(out, "npyio-pack.json")) as f:
        index = json.load(f)
    shards = [os.path.join(out, f["name"]) for f in index["shards"][0]["files"][:-1]]
    big = os.path.join(root, "rows.npy")
    if not os.path.exists(big):
        np.save(big, np.random.default_rng(0).random((ROWS, 16, 16), np.float32))
    pipelines, counts = {}, {}
    for b in (8, 256):
        for backend in ("graph", "native"):
            pipelines[f"pack, {backend}, batch {b}"] = with_backend(
                backend, npyio.dataset, out, batch_size=b
            )
            pipelines[f"rows, {backend}, batch {b}"] = with_backend(
                backend, npyio.rows, big, batch_size=b
            )
        pipelines[f"pack, FixedLengthRecordDataset floor, batch {b}"] = record_floor(shards, b)
        pipelines[f"pack, one read per batch (hand-written), batch {b}"] = batch_reads(shards, b)
        pipelines[f"rows, FixedLengthRecordDataset floor, batch {b}"] = record_floor([big], b)
        pipelines[f"loose, native, batch {b}"] = npyio.dataset(xs, ys, batch_size=b)
    for name, ds in pipelines.items():
        counts[name] = drain(ds)[0]
        drain_iterator(ds)
    names = list(pipelines)
    how = {"reduce": drain, "iterator": drain_iterator}
    rates: dict[str, dict[str, list[float]]] = {k: {n: [] for n in names} for k in how}
    for r in range(rounds):  # interleaved, each round starting one pipeline later
        for name in names[r % len(names) :] + names[: r % len(names)]:
            for kind, fn in how.items():
                n, s = fn(pipelines[name])
                assert n == counts[name], (name, n)
                rates[kind][name].append(n / s)
    result: dict[str, object] = {}
    for kind in how:
        med = {name: statistics.median(v) for name, v in rates[kind].items()}
        result[f"{kind}: rows/s (median)"] = {k: round(v) for k, v in med.items()}
        for what in ("pack", "rows"):
            for b in (8, 256):
                native = med[f"{what}, native, batch {b}"]
                ratios = {
                    "graph": med[f"{what}, graph, batch {b}"],
                    "floor": med[f"{what}, FixedLengthRecordDataset floor, batch {b}"],
                }
                if what == "pack":
                    ratios["loose native"] = med[f"loose, native, batch {b}"]
                    hand = med[f"pack, one read per batch (hand-written), batch {b}"]
                    result[f"{kind}, pack, batch {b}: one read per batch / loose native"] = round(
                        hand / ratios["loose native"], 2
                    )
                for other, rate in ratios.items():
                    result[f"{kind}, {what}, batch {b}: native / {other}"] = round(native / rate, 2)
                result[f"{kind}, {what}, batch {b}: graph / floor"] = round(
                    med[f"{what}, graph, batch {b}"] / ratios["floor"], 2
                )
    return result


MEMORY_CHILD = """
import json, resource, sys, time
sys.path.insert(0, {root!r})
import npyio, tensorflow as tf
sys.path.insert(0, {bench!r})
from pack import drain
summary = npyio.pack({xs!r}, {ys!r}, out={out!r}, overwrite=True)
after_pack = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
n, s = drain(npyio.dataset({out!r}, batch_size=256, shuffle=True, seed=1))
print(json.dumps({{"pairs": summary.rows, "pack_s": round(summary.seconds, 2),
                  "peak_rss_after_pack_mb": round(after_pack / 1024),
                  "peak_rss_after_read_mb":
                      round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}}))
"""


def memory(root: str, count: int) -> list[dict[str, object]]:
    results = []
    for n in (count, 10 * count):
        xs, ys = ensure_pairs(os.path.join(root, f"n{n}"), n)
        out = os.path.join(root, f"n{n}", "packed")
        code = MEMORY_CHILD.format(
            root=ROOT, bench=os.path.dirname(__file__), xs=xs, ys=ys, out=out
        )
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
        run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
        if run.returncode:
            raise RuntimeError(run.stderr[-3000:])
        results.append(json.loads(run.stdout.splitlines()[-1]))
    return results


GCS_CHILD = """
import json, os, sys, time
import npyio, tensorflow as tf
sys.path.insert(0, {bench!r})
from pack import drain
loose = npyio.dataset({remote!r} + "/inputs", {remote!r} + "/labels", batch_size=8)
packed = npyio.dataset({remote!r} + "/packed", batch_size=8)
rates = {{"loose": [], "packed": []}}
for _ in range({rounds}):  # interleaved epochs; the medians are recorded
    for name, ds in (("loose", loose), ("packed", packed)):
        n, s = drain(ds)
        rates[name].append(n / s)
out = {{name: round(sorted(r)[len(r) // 2], 1) for name, r in rates.items()}}
out["rounds"] = rates
start = time.perf_counter()
summary = npyio.pack({remote!r} + "/inputs", {remote!r} + "/labels",
                     out={remote!r} + "/packed-again")
out["pack gs:// -> gs://: pairs/s"] = round(summary.rows / (time.perf_counter() - start), 1)
print(json.dumps(out))
"""


def gcs(root: str, count: int, latency: float, rounds: int) -> dict[str, object]:
    import npyio
    from tests.gcs.sandbox import GcsSandbox

    xs, ys = ensure_pairs(os.path.join(root, f"n{count}"), count)
    tree = tempfile.mkdtemp(prefix="npyio-pack-gcs-")
    try:
        shutil.copytree(xs, os.path.join(tree, "inputs"))
        shutil.copytree(ys, os.path.join(tree, "labels"))
        npyio.pack(xs, ys, out=os.path.join(tree, "packed"))
        with GcsSandbox() as sandbox:
            sandbox.put_tree(tree, "bench")
            sandbox.set_latency(latency)
            code = GCS_CHILD.format(
                bench=os.path.dirname(__file__), remote=sandbox.url("bench"), rounds=rounds
            )
            run = sandbox.python(code, timeout=1800, env={"TF_CPP_MIN_LOG_LEVEL": "3"})
            if run.returncode:
                raise RuntimeError(run.stderr[-3000:])
            result = json.loads(run.stdout.splitlines()[-1])
    finally:
        shutil.rmtree(tree, ignore_errors=True)
    result["packed / loose"] = round(result["packed"] / result["loose"], 1)
    result["pairs"], result["latency_s"] = count, latency
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=("local", "memory", "gcs", "readers", "shuffled"))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--count", type=int, default=8000)
    parser.add_argument("--latency", type=float, default=0.02)
    parser.add_argument("--cache", default=os.path.join(tempfile.gettempdir(), "npyio-bench-pack"))
    args = parser.parse_args(argv)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    if args.what == "local":
        result: object = local(args.cache, args.rounds)
    elif args.what == "readers":
        result = readers(args.cache, args.rounds)
    elif args.what == "shuffled":
        result = shuffled(args.cache, args.rounds)
    elif args.what == "memory":
        result = memory(args.cache, args.count)
    else:
        result = gcs(args.cache, args.count, args.latency, args.rounds)
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
