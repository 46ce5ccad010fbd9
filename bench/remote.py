"""Reading from object storage: pairs/s against the GCS fake at a latency per request.

Runs TensorFlow's own GCS client against the fake of ``tests/gcs`` (in a sealed network
namespace, loopback only). For each latency (0, 5, 20, 50 ms per request by default) and each
object size (pairs of 1 KiB, 64 KiB and 4 MiB inputs, with scalar labels), every pipeline runs in a
process of its own, so that no environment setting leaks from one to another, and drains one
epoch after a short warm-up:

- **npyio**: ``npyio.dataset(gs://.../inputs, gs://.../labels, batch_size=8)``, defaults,
  npyio imported before TensorFlow: the native reader's kernel, one GET per object past the
  64 MiB block and no stat, a batch's reads in flight together;
- **npyio, TF first**: the same with TensorFlow imported first (as most training scripts do);
  neither sets a ``GCS_*`` variable, so TensorFlow's GCS file system keeps its 64 MiB block;
- **npyio graph, TF first**: the same with ``backend="graph"``: each object one record of a
  ``FixedLengthRecordDataset`` above the block (`npyio._read.objects`: a stat and a GET);
- **npyio, shape None, TF first**: the same with ``shape=(None,)`` for the inputs, whose size is
  not known in advance: each object is read by ``tf.io.read_file`` through the 64 MiB block;
- **npyio pack, TF first**: the same pairs packed (``npyio.pack``, default shards), read by
  ``npyio.dataset(gs://.../pack, batch_size=8)``, TensorFlow imported first;
- **plain tf.data**: what a user writes: ``tf.io.gfile.glob`` of both directories,
  ``map(read_file)`` of both files with AUTOTUNE, ``batch(8)``, ``prefetch``; no decoding, no
  ``GCS_*`` variable;
- **py_function**: ``np.load`` of ``tf.io.gfile.GFile`` in a ``tf.py_function`` map, AUTOTUNE,
  as users write it for ``gs://``;
- **hand-tuned, TF defaults**: the best read-only pipeline found without a ``GCS_*`` variable,
  TensorFlow imported first: each object read as one record of a ``FixedLengthRecordDataset``
  whose buffer is above the 64 MiB block (no zero-filled block: a stat and a GET per object),
  64 reads in flight; what npyio's own route can reach at most;
- **hand-tuned read only**: ``read_file`` of both files, 64 reads in flight
  (``num_parallel_calls=64``, ``private_threadpool_size=64``) and
  ``GCS_READ_CACHE_BLOCK_SIZE_MB=1``: what the store can serve, for the ratio.

Each row also gives the requests the fake received per object read, by kind (stat, read), over
the timed run and its warm-up.

Also ``startup``: building ``npyio.dataset`` over N objects per side against a bare
``tf.io.gfile.glob`` of both directories plus ``from_tensor_slices``, each in a fresh process
(imports outside the timing), at one latency: the whole build, and its plan alone (listing,
pairing and the first headers; the rest is the graph, the same for any N), with the requests
each made by kind (the fake, like GCS, answers listings 1,000 names a page).

And ``shards``: a pack of 4 MiB rows in shards of 256 MiB, TensorFlow imported first, read by
``npyio.dataset`` and by a plain ``FixedLengthRecordDataset`` over the same shard objects (rows as
records, the header skipped, TF's default buffer), in bytes per second, with the bytes each
pipeline fetched from the store.

And ``pack-startup``: building ``npyio.dataset`` of a pack on ``gs://`` (N rows in 8 shards of
inputs, labels and order), and, in another fresh process, its two checks alone: reading the
index, then every shard file's header and size (``check_shards``, issue 35).

Usage::

    .venv/bin/python bench/remote.py --latencies 0 5 20 50 --json
    .venv/bin/python bench/remote.py startup --objects 10000 --latency 0.02
    .venv/bin/python bench/remote.py shards --latency 0.02
    .venv/bin/python bench/remote.py pack-startup --objects 2000 --latency 0.02 --before DIR

bench/README.md records the results.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pairs import write_pairs  # noqa: E402  (bench/, the script's own directory)

from tests.gcs.sandbox import GcsSandbox  # noqa: E402

#: name -> (input shape of float32, pairs)
SIZES = {"1KiB": ((256,), 200), "64KiB": ((16384,), 200), "4MiB": ((1024, 1024), 32)}

COMMON = """
import json, sys, time
import numpy as np
import tensorflow as tf
xs, ys = sys.argv[1], sys.argv[2]

def count(total, element):
    first = tf.nest.flatten(element)[0]
    return total + tf.cast(tf.shape(first)[0], tf.int64)

def drain(ds):
    start, cpu = time.perf_counter(), time.process_time()
    n = int(ds.reduce(tf.constant(0, tf.int64), count))
    drain.cpu = time.process_time() - cpu
    return n, time.perf_counter() - start

def report(ds):
    warm_up, _ = drain(ds.take(2))  # connections opened, functions traced
    if len(sys.argv) > 3:  # the most batches to time (a slow pipeline's rate needs few)
        ds = ds.take(int(sys.argv[3]))
    n, seconds = drain(ds)
    print(json.dumps({"pairs": n, "warm_up": warm_up, "seconds": seconds,
                      "pairs_per_s": n / seconds, "cpu_ms_per_pair": 1000 * drain.cpu / n}))
"""

PIPELINES = {
    "npyio": """
report(npyio.dataset(xs, ys, batch_size=8))
""",
    "npyio, TF first": """
import npyio
report(npyio.dataset(xs, ys, batch_size=8))
""",
    "npyio graph, TF first": """
import npyio
report(npyio.dataset(xs, ys, batch_size=8, backend="graph"))
""",
    "npyio, shape None, TF first": """
import npyio
report(npyio.dataset(xs, ys, batch_size=8, shape=(None,)))
""",
    "npyio pack, TF first": """
import npyio
report(npyio.dataset(xs.rsplit("/", 1)[0] + "/pack", batch_size=8))
""",
    "plain tf.data": """
x_paths = sorted(tf.io.gfile.glob(xs + "/*.npy"))
y_paths = sorted(tf.io.gfile.glob(ys + "/*.npy"))
ds = tf.data.Dataset.from_tensor_slices((x_paths, y_paths))
ds = ds.map(lambda x, y: (tf.io.read_file(x), tf.io.read_file(y)),
            num_parallel_calls=tf.data.AUTOTUNE)
report(ds.batch(8).prefetch(tf.data.AUTOTUNE))
""",
    "py_function": """
x_paths = sorted(tf.io.gfile.glob(xs + "/*.npy"))
y_paths = sorted(tf.io.gfile.glob(ys + "/*.npy"))

def load(x, y):
    arrays = []
    for p in (x, y):
        with tf.io.gfile.GFile(p.numpy().decode(), "rb") as f:
            arrays.append(np.load(f))
    return arrays

ds = tf.data.Dataset.from_tensor_slices((x_paths, y_paths))
ds = ds.map(lambda x, y: tf.py_function(load, [x, y], [tf.float32, tf.int64]),
            num_parallel_calls=tf.data.AUTOTUNE)
report(ds.batch(8).prefetch(tf.data.AUTOTUNE))
""",
    "hand-tuned, TF defaults": """
x_paths = sorted(tf.io.gfile.glob(xs + "/*.npy"))
y_paths = sorted(tf.io.gfile.glob(ys + "/*.npy"))
sizes = [tf.io.gfile.stat(p[0]).length for p in (x_paths, y_paths)]

def side(paths, size):  # each object one record, a buffer above the 64 MiB block
    return tf.data.Dataset.from_tensor_slices(paths).interleave(
        lambda p: tf.data.FixedLengthRecordDataset(p, size, buffer_size=(64 << 20) + 1),
        cycle_length=64, num_parallel_calls=64, deterministic=True)

ds = tf.data.Dataset.zip((side(x_paths, sizes[0]), side(y_paths, sizes[1])))
ds = ds.map(lambda x, y: tf.strings.length(x) + tf.strings.length(y))
options = tf.data.Options()
options.threading.private_threadpool_size = 64
report(ds.batch(8).prefetch(tf.data.AUTOTUNE).with_options(options))
""",
    "hand-tuned read only": """
x_paths = sorted(tf.io.gfile.glob(xs + "/*.npy"))
y_paths = sorted(tf.io.gfile.glob(ys + "/*.npy"))
ds = tf.data.Dataset.from_tensor_slices((x_paths, y_paths))
ds = ds.map(lambda x, y: tf.strings.length(tf.io.read_file(x)) + tf.strings.length(
    tf.io.read_file(y)), num_parallel_calls=64)
options = tf.data.Options()
options.threading.private_threadpool_size = 64
report(ds.batch(8).prefetch(tf.data.AUTOTUNE).with_options(options))
""",
}
#: What runs before ``COMMON`` (which imports TensorFlow), by pipeline.
FIRST = {"npyio": "import npyio\n"}
#: Batches timed, for the pipelines that read a 64 MiB block per object (TensorFlow's default,
#: allocated and zeroed for each read: a few objects per second), else the whole epoch.
SLOW = {"npyio, shape None, TF first": 6, "plain tf.data": 6, "py_function": 6}
#: The environment each pipeline's process gets besides the sandbox's (no GCS_* otherwise).
TUNED = {"hand-tuned read only": {"GCS_READ_CACHE_BLOCK_SIZE_MB": "1"}}


def throughput(
    gcs: GcsSandbox,
    latencies: list[float],
    pipelines: list[str],
    sizes: list[str],
    repeats: int = 1,
    pairs: int | None = None,
) -> list[dict]:
    """One row per (size, latency, pipeline): the median pairs/s of ``repeats`` processes (the
    pipelines alternating) and the most reads in flight."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for size in sizes:
            shape, default = SIZES[size]
            write_pairs(Path(tmp) / size, pairs or default, shape)
            if "npyio pack, TF first" in pipelines:  # the same pairs, packed
                _pack(Path(tmp) / size)
            gcs.put_tree(Path(tmp) / size, f"bench/{size}")
            xs, ys = gcs.url(f"bench/{size}/inputs"), gcs.url(f"bench/{size}/labels")
            for latency in latencies:
                rates: dict[str, list[float]] = {name: [] for name in pipelines}
                in_flight: dict[str, int] = dict.fromkeys(pipelines, 0)
                per_object: dict[str, dict[str, float]] = {}
                for _ in range(repeats):
                    for name in pipelines:
                        rate, objects = _one(gcs, name, xs, ys, latency)
                        rates[name].append(rate)
                        stats = gcs.stats()
                        got = stats["max_in_flight"].get("read", 0)
                        in_flight[name] = max(in_flight[name], got)
                        per_object[name] = {
                            kind: round(n / objects, 2)
                            for kind, n in stats["by_kind"].items()
                            if kind in ("stat", "read")
                        }
                for name in pipelines:
                    rows.append(
                        {
                            "size": size,
                            "latency_ms": round(latency * 1000),
                            "pipeline": name,
                            "pairs_per_s": statistics.median(rates[name]),
                            "runs": [round(r, 1) for r in rates[name]],
                            "max_reads_in_flight": in_flight[name],
                            "requests_per_object": per_object[name],
                        }
                    )
                    print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    return rows


def _pack(root: Path) -> None:
    """``root/pack``: the pairs of ``root/inputs`` and ``root/labels``, packed."""
    import npyio

    npyio.pack(str(root / "inputs"), str(root / "labels"), out=str(root / "pack"))


def _one(gcs: GcsSandbox, name: str, xs: str, ys: str, latency: float) -> tuple[float, int]:
    """Pairs/s of one pipeline in a process of its own, and the objects it read (two a pair,
    warm-up included)."""
    gcs.reset()
    gcs.set_latency(latency)
    code = FIRST.get(name, "") + COMMON + textwrap.dedent(PIPELINES[name])
    limit = [str(SLOW[name])] if name in SLOW else []
    run = gcs.python(code, xs, ys, *limit, env=TUNED.get(name, {}), timeout=1800)
    if run.returncode:
        raise RuntimeError(f"{name} at {latency}: {run.stderr[-3000:]}")
    got = json.loads(run.stdout.strip().splitlines()[-1])
    print(f"{name}: {got['cpu_ms_per_pair']:.2f} ms of CPU a pair", file=sys.stderr, flush=True)
    return float(got["pairs_per_s"]), 2 * (got["pairs"] + got["warm_up"])


STARTUP = """
import json, sys, time
import tensorflow as tf
xs, ys, how = sys.argv[1], sys.argv[2], sys.argv[3]
if how == "npyio":
    import npyio
    from npyio._sources.dataset import build_all
    from npyio._pipeline.options import DatasetOptions
    from npyio._sources.pack_plan import is_packed
    from npyio._sources.plan import plan_dataset
    options = DatasetOptions.from_arguments({"batch_size": 8})
start = time.perf_counter()
if how == "npyio":  # what npyio.dataset(xs, ys, batch_size=8) does, in its two steps
    assert is_packed(xs) is None
    plan = plan_dataset(xs, ys, options)  # listing, pairing, the first headers
    planned = time.perf_counter()
    ds = build_all(plan)  # the graph: the same for any number of objects
else:
    x_paths = tf.io.gfile.glob(xs + "/*.npy")
    y_paths = tf.io.gfile.glob(ys + "/*.npy")
    ds = tf.data.Dataset.from_tensor_slices((x_paths, y_paths))
    planned = time.perf_counter()
end = time.perf_counter()
print(json.dumps({"seconds": end - start, "plan": planned - start}))
"""


def _timed(
    gcs: GcsSandbox, code: str, *args: str, env: dict[str, str | None] | None = None
) -> tuple[dict, dict[str, int]]:
    """What a fresh process running ``code`` printed last, and the requests it made by kind."""
    gcs.reset_stats()
    run = gcs.python(code, *args, timeout=1800, env=env)
    if run.returncode:
        raise RuntimeError(run.stderr[-3000:])
    return json.loads(run.stdout.strip().splitlines()[-1]), gcs.stats()["by_kind"]


def startup(gcs: GcsSandbox, objects: int, latency: float, rounds: int) -> dict:
    """Seconds to build, for npyio and the bare listing, alternating fresh processes."""
    with tempfile.TemporaryDirectory() as tmp:
        write_pairs(Path(tmp), objects, (4,))
        gcs.put_tree(tmp, f"startup-{objects}")
    xs, ys = gcs.url(f"startup-{objects}/inputs"), gcs.url(f"startup-{objects}/labels")
    gcs.set_latency(latency)
    seconds: dict[str, list[float]] = {"npyio": [], "npyio plan": [], "bare glob": []}
    requests: dict[str, dict[str, int]] = {}
    for _ in range(rounds):
        for how in ("npyio", "bare glob"):
            got, requests[how] = _timed(gcs, STARTUP, xs, ys, how)
            seconds[how].append(got["seconds"])
            if how == "npyio":
                seconds["npyio plan"].append(got["plan"])
    medians = {k: statistics.median(v) for k, v in seconds.items()}
    return {
        "objects_per_side": objects,
        "latency_ms": round(latency * 1000),
        **medians,
        "ratio": medians["npyio"] / medians["bare glob"],
        "plan_ratio": medians["npyio plan"] / medians["bare glob"],
        "requests": requests,  # by kind, in the last round (listings come 1,000 names a page)
    }


PACK_STARTUP = """
import json, sys, time
import tensorflow as tf
import npyio
url, how = sys.argv[1], sys.argv[2]
npyio.dataset  # imported outside the timing, as in startup
if how == "index":
    from npyio._io.packed import check_shards, load_index
start = time.perf_counter()
if how == "index":  # the index alone, then its shards' headers and sizes against it
    index = load_index(url)
    loaded = time.perf_counter()
    assert not check_shards(index)
else:  # what npyio.dataset does: read_index (both steps), then the rows' plan and graph
    npyio.dataset(url, batch_size=8)
    loaded = start
end = time.perf_counter()
print(json.dumps({"seconds": end - start, "index": loaded - start}))
"""


def pack_startup(
    gcs: GcsSandbox, objects: int, latency: float, rounds: int, before: str | None
) -> dict:
    """Seconds to build `npyio.dataset` of a pack on ``gs://``, and what the index check costs
    in it: the index read, then every shard file's header and size (`check_shards`); with
    ``before`` (a directory holding another version's ``npyio``), its build too."""
    import npyio
    from npyio._format.packed import INDEX

    with tempfile.TemporaryDirectory() as tmp:
        write_pairs(Path(tmp), objects, (4,))
        out = f"{tmp}/pack"
        # 8 shards: 8 x (inputs, labels, order) files, one header read each
        npyio.pack(f"{tmp}/inputs", f"{tmp}/labels", out=out, shard_size=objects * 16 // 8)
        shard_files = sum(
            len(s["files"]) for s in json.loads(Path(out, INDEX).read_text())["shards"]
        )
        gcs.put_tree(out, f"pack-{objects}")
    url = gcs.url(f"pack-{objects}")
    gcs.set_latency(latency)
    seconds: dict[str, list[float]] = {"dataset": [], "index": [], "headers": []}
    if before:
        seconds["dataset before"] = []
    requests: dict[str, dict[str, int]] = {}
    for _ in range(rounds):
        for how in ("dataset", "index", *(["dataset before"] if before else [])):
            env = {"PYTHONPATH": before} if how == "dataset before" else None
            got, requests[how] = _timed(gcs, PACK_STARTUP, url, how.split()[0], env=env)
            if how.startswith("dataset"):
                seconds[how].append(got["seconds"])
            else:
                seconds["index"].append(got["index"])
                seconds["headers"].append(got["seconds"] - got["index"])
    medians = {k: statistics.median(v) for k, v in seconds.items()}
    return {
        "rows": objects,
        "shard_files": shard_files,
        "latency_ms": round(latency * 1000),
        **medians,
        "headers_share": medians["headers"] / medians["dataset"],
        "runs": {k: [round(x, 3) for x in v] for k, v in seconds.items()},
        "requests": requests,
    }


SHARDS = """
import json, sys, time
import tensorflow as tf
url, how = sys.argv[1], sys.argv[2]
if how == "npyio":
    import npyio
    ds = npyio.dataset(url, batch_size=1)
else:  # every shard's rows as records: the header skipped, TF's default buffer
    import numpy as np
    paths = sorted(tf.io.gfile.glob(url + "/inputs-*.npy"))
    with tf.io.gfile.GFile(paths[0], "rb") as f:
        version = np.lib.format.read_magic(f)
        read = getattr(np.lib.format, f"read_array_header_{version[0]}_{version[1]}")
        shape, _, dtype = read(f)
        header = f.tell()
    row = int(np.prod(shape[1:])) * dtype.itemsize
    ds = tf.data.FixedLengthRecordDataset(paths, row, header_bytes=header)
total = tf.constant(0, tf.int64)
start = time.perf_counter()
for element in ds:
    total += tf.size(tf.nest.flatten(element)[0], tf.int64)
seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "elements": int(total)}))
"""


def _fetched(gcs: GcsSandbox, ranges: list[tuple[str | None, str]]) -> int:
    """The bytes the store sent for ``ranges`` ((object, Range header) per request), each range
    cut at its object's end."""
    sizes: dict[str, int] = {}
    total = 0
    for name, header in ranges:
        if name is None or not header:
            continue
        if name not in sizes:
            sizes[name] = gcs.size(name)
        first, last = header.removeprefix("bytes=").split("-")
        total += max(0, min(int(last), sizes[name] - 1) - int(first) + 1)
    return total


def shards(gcs: GcsSandbox, latency: float, rounds: int, rows: int = 128) -> dict:
    """Bytes per second of a pack of ``rows`` 4 MiB rows in 256 MiB shards, TensorFlow imported
    first: `npyio.dataset` against a plain ``FixedLengthRecordDataset`` over the same shard
    objects, each in fresh processes, alternating, with the bytes each fetched from the store."""
    import numpy as np

    import npyio

    shape = (1024, 1024)
    with tempfile.TemporaryDirectory() as tmp:
        write_pairs(Path(tmp), rows, shape)
        npyio.pack(f"{tmp}/inputs", f"{tmp}/labels", out=f"{tmp}/pack", shard_size=256 << 20)
        gcs.put_tree(f"{tmp}/pack", "shards")
    url = gcs.url("shards")
    payload = rows * int(np.prod(shape)) * 4
    gcs.set_latency(latency)
    rates: dict[str, list[float]] = {"npyio": [], "FixedLengthRecordDataset": []}
    fetched: dict[str, float] = {}
    for _ in range(rounds):
        for how in rates:
            gcs.reset_stats()
            run = gcs.python(SHARDS, url, how.split()[0], timeout=1800)
            if run.returncode:
                raise RuntimeError(run.stderr[-3000:])
            got = json.loads(run.stdout.strip().splitlines()[-1])
            rates[how].append(payload / got["seconds"] / 2**20)
            fetched[how] = _fetched(gcs, gcs.stats()["ranges"]) / payload
    return {
        "rows": rows,
        "latency_ms": round(latency * 1000),
        "MiB_per_s": {k: statistics.median(v) for k, v in rates.items()},
        "runs": {k: [round(x, 1) for x in v] for k, v in rates.items()},
        "fetched_per_payload_byte": fetched,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "mode",
        nargs="?",
        default="throughput",
        choices=["throughput", "startup", "shards", "pack-startup"],
    )
    parser.add_argument(
        "--latencies",
        type=float,
        nargs="+",
        default=[0, 5, 20, 50],
        help="milliseconds per request",
    )
    parser.add_argument("--pipelines", nargs="+", default=list(PIPELINES), choices=PIPELINES)
    parser.add_argument("--sizes", nargs="+", default=list(SIZES), choices=SIZES)
    parser.add_argument("--repeats", type=int, default=1, help="throughput: processes each")
    parser.add_argument("--pairs", type=int, help="throughput: pairs of each size (else SIZES)")
    parser.add_argument("--objects", type=int, default=10_000, help="startup: per side")
    parser.add_argument("--latency", type=float, default=0.02, help="startup: seconds")
    parser.add_argument("--rounds", type=int, default=3, help="startup: processes each")
    parser.add_argument("--before", help="pack-startup: a directory with another npyio, built too")
    parser.add_argument("--json", action="store_true", help="print JSON only")
    args = parser.parse_args(argv)
    with GcsSandbox() as gcs:
        if args.mode == "startup":
            result: object = startup(gcs, args.objects, args.latency, args.rounds)
        elif args.mode == "shards":
            result = shards(gcs, args.latency, args.rounds)
        elif args.mode == "pack-startup":
            result = pack_startup(gcs, args.objects, args.latency, args.rounds, args.before)
        else:
            result = throughput(
                gcs,
                [ms / 1000 for ms in args.latencies],
                args.pipelines,
                args.sizes,
                args.repeats,
                args.pairs,
            )
    if args.json:
        print(json.dumps(result))
    else:
        rows = result if isinstance(result, list) else [result]
        for row in rows:
            print(
                "  ".join(
                    f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()
                )
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
