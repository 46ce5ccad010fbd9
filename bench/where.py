"""Where the time goes, per profile: each stage of npyio's read and each candidate pipeline,
in a fresh process, with its page faults and peak RSS (issue 34).

Each variant runs in a process of its own (after a warm-up epoch that also fills the page
cache), drains ``--epochs`` epochs, and reports samples/s, the minor page faults it took per
pair (``getrusage``'s ``ru_minflt``, as ``/usr/bin/time -v`` counts them, but over the measured
epochs only, not TensorFlow's import) and its peak RSS (``ru_maxrss``, /usr/bin/time's "Maximum
resident set size"). Faults x 4 KiB / the pair's bytes is how many freshly mapped buffers the
size of the pair each pair costs: a zero-filled page is faulted in once per fresh buffer.
Variants alternate across ``--rounds`` rounds; medians are reported.

The stages, each a hand-written pure-TF pipeline that adds one step to the one before (the
differences are the stages' costs):

- ``read``: ``tf.io.read_file`` of both files, reduced to their lengths (npyio bench's floor);
- ``parse``: + the check npyio's fast path makes (header bytes and file size);
- ``decode``: + ``decode_raw`` of the whole file and the aligned slice past the header
  (npyio's decode of one large file), in the parallel map;
- ``batch``: + ``batch(8)``, then prefetch: npyio's decode-then-batch by hand (the
  "fastest unchecked pure-TF decode" of issue 34, with npyio's fast-path check);

(``read``, ``parse`` and ``decode`` batch a scalar per pair, to count in batches as the rest.)

and the candidates of issue 34:

- ``npyio``: ``npyio.dataset`` as it is;
- ``npyio+mallopt``: the same, after `npyio.cli.peers.mallopt` has raised glibc's mmap and
  trim thresholds and its top pad (issue 34's values) through ctypes, before TensorFlow's
  import;
- ``fixed``: ``FixedLengthRecordDataset`` with ``header_bytes``, one per file, interleaved in
  parallel: the payload arrives without header and without a slice, then ``decode_raw``;
- ``batch-strings``: payloads (``substr``) batched as strings, then one ``decode_raw``;
- ``dali``, ``grain``: the peers, where installed.

    PYTHONPATH=. .venv/bin/python bench/where.py --profiles large --count large=200
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

STAGES = ("read", "parse", "decode", "batch")
CANDIDATES = ("npyio", "npyio+mallopt", "fixed", "batch-strings", "dali", "grain")

CHILD = r"""
import dataclasses, json, os, resource, sys, time
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
variant, name, count, epochs, root = sys.argv[1:6]
count, epochs = int(count), int(epochs)
from npyio.cli import sample, peers
if variant.endswith("+mallopt"):
    peers.mallopt()
import numpy as np
profile = dataclasses.replace(sample.PROFILES[name], count=count)
xs, ys = sample.paths(profile, os.path.join(root, profile.dirname()))

def header(path):
    with open(path, "rb") as f:
        np.lib.format.read_magic(f)
        np.lib.format.read_array_header_1_0(f)
        return f.tell(), os.path.getsize(path)

if variant in ("dali", "grain"):
    drain = peers.load_builder(peers.PEERS[variant].builder)(xs, ys, 8)
else:
    import tensorflow as tf
    import npyio
    from npyio.cli import pipelines
    (hx, sx), (hy, sy) = header(xs[0]), header(ys[0])
    files = tf.data.Dataset.from_tensor_slices((xs, ys))
    AUTO = tf.data.AUTOTUNE

    def check(c, h, s):
        head = tf.strings.substr(c, 0, h)
        return tf.logical_and(tf.strings.length(c) == s, tf.strings.length(head) == h)

    def dec(c, h):
        return tf.io.decode_raw(c, tf.float32)[h // 4:]

    def stage(x, y):
        cx, cy = tf.io.read_file(x), tf.io.read_file(y)
        if variant == "read":
            return tf.strings.length(cx) + tf.strings.length(cy)
        ok = tf.logical_and(check(cx, hx, sx), check(cy, hy, sy))
        if variant == "parse":
            return ok
        with tf.control_dependencies([tf.debugging.Assert(ok, [x])]):
            dx = tf.reshape(dec(cx, hx), profile.input_shape)
            dy = tf.reshape(dec(cy, hy), profile.label_shape)
        if variant == "decode":  # one value of each: the decode runs, nothing is batched
            return tf.reshape(dx, [-1])[0] + tf.reshape(dy, [-1])[0]
        return dx, dy

    def both(a, b):
        return (tf.reshape(tf.io.decode_raw(a, tf.float32), [-1, *profile.input_shape]),
                tf.reshape(tf.io.decode_raw(b, tf.float32), [-1, *profile.label_shape]))

    if variant in ("npyio", "npyio+mallopt"):
        ds = npyio.dataset(xs, ys, batch_size=8)
    elif variant == "fixed":
        def one(path, h, s):
            return tf.data.FixedLengthRecordDataset(path, s - h, header_bytes=h)
        def pair(x, y):
            return tf.data.Dataset.zip((one(x, hx, sx), one(y, hy, sy)))
        ds = files.interleave(pair, cycle_length=2, num_parallel_calls=AUTO)
        ds = ds.map(lambda a, b: [t[0] for t in both(a, b)], num_parallel_calls=AUTO)
        ds = ds.batch(8).prefetch(AUTO)
    elif variant == "batch-strings":
        def payload(x, y):
            return (tf.strings.substr(tf.io.read_file(x), hx, sx - hx),
                    tf.strings.substr(tf.io.read_file(y), hy, sy - hy))
        ds = files.map(payload, num_parallel_calls=AUTO).batch(8)
        ds = ds.map(both, num_parallel_calls=AUTO).prefetch(AUTO)
    else:
        ds = files.map(stage, num_parallel_calls=AUTO).batch(8).prefetch(AUTO)
    drain = lambda: pipelines.drain(ds)
drain()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
start = time.perf_counter()
n = 0
for _ in range(epochs):
    n += drain()[0]
seconds = time.perf_counter() - start
faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
print(json.dumps({"samples": n, "seconds": seconds, "faults_per_pair": faults / n,
                  "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def child(variant: str, profile: str, count: int, epochs: int, root: str) -> dict[str, float]:
    """One variant in a fresh process: samples, seconds, faults per pair, peak RSS MiB."""
    from npyio.cli.bench import child_env

    out = subprocess.run(
        [sys.executable, "-c", CHILD, variant, profile, str(count), str(epochs), root],
        check=True, capture_output=True, text=True, env=child_env(),
    ).stdout  # fmt: skip
    result: dict[str, float] = json.loads(out.strip().splitlines()[-1])
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profiles", nargs="+", default=["small", "medium", "large"])
    parser.add_argument("--count", action="append", metavar="PROFILE=N", default=[])
    parser.add_argument("--variants", nargs="+", default=[*STAGES, *CANDIDATES])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--root", default="/tmp/npyio-bench", help="sample data (npyio bench's)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    import dataclasses

    from npyio.cli import sample

    counts = {k: int(v) for k, v in (c.split("=", 1) for c in args.count)}
    rows = []
    for name in args.profiles:
        profile = dataclasses.replace(
            sample.PROFILES[name], count=counts.get(name, sample.PROFILES[name].count)
        )
        sample.ensure(profile, args.root, quiet=True)
        found: dict[str, list[dict[str, float]]] = {v: [] for v in args.variants}
        for r in range(args.rounds):
            order = args.variants if r % 2 == 0 else args.variants[::-1]
            for variant in order:
                found[variant].append(child(variant, name, profile.count, args.epochs, args.root))
                print(f"{name} round {r + 1} {variant} done", file=sys.stderr)
        for variant, runs in found.items():
            rate = statistics.median(x["samples"] / x["seconds"] for x in runs)
            faults = statistics.median(x["faults_per_pair"] for x in runs)
            rows.append({
                "profile": name, "variant": variant, "samples_per_s": rate,
                "ms_per_pair": 1e3 / rate, "faults_per_pair": faults,
                "fresh_buffers_per_pair": faults * 4096 / profile.pair_bytes,
                "peak_rss_mib": statistics.median(x["peak_rss_mib"] for x in runs),
                "rates": [x["samples"] / x["seconds"] for x in runs],
            })  # fmt: skip
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        print(
            "| profile | variant | samples/s | ms/pair | faults/pair | fresh pair-sized "
            "buffers/pair | peak RSS MiB | rounds |\n|---|---|---:|---:|---:|---:|---:|---|"
        )
        for x in rows:
            each = ", ".join(f"{v:,.0f}" for v in x["rates"])  # type: ignore[attr-defined]
            print(
                f"| {x['profile']} | {x['variant']} | {x['samples_per_s']:,.0f} | "
                f"{x['ms_per_pair']:.3f} | {x['faults_per_pair']:,.0f} | "
                f"{x['fresh_buffers_per_pair']:.2f} | {x['peak_rss_mib']:,.0f} | {each} |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
