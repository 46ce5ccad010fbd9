"""The ``npyio`` command line."""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence

EXIT_OK, EXIT_BAD_FILES, EXIT_USAGE = 0, 1, 2


def _demo(args: argparse.Namespace) -> int:
    import tensorflow as tf

    import npyio
    from npyio import _pipelines, _sample

    profile = _sample.Profile("demo", (64, 64, 3), (10,), args.count)
    root = _sample.ensure(profile, args.cache)
    inputs, labels = os.path.join(root, "inputs"), os.path.join(root, "labels")
    ds = npyio.dataset(inputs, labels, batch_size=args.batch_size)
    x, y = next(iter(ds))
    print(f"dataset: {profile.count:,} pairs in {root}")
    print(f"element_spec: {ds.element_spec}")
    print(f"first batch: inputs {tuple(x.shape)} {x.dtype.name}, labels {tuple(y.shape)} "
          f"{y.dtype.name}")

    xs = sorted(tf.io.gfile.glob(os.path.join(inputs, "*.npy")))
    ys = sorted(tf.io.gfile.glob(os.path.join(labels, "*.npy")))
    baseline = _pipelines.py_function_pipeline(
        xs, ys, profile.input_shape, profile.label_shape, args.batch_size
    )
    print(f"\none epoch, batches of {args.batch_size}:")
    results = {}
    for name, pipeline in (("npyio", ds), ("py_function(np.load)", baseline)):
        n, seconds = _pipelines.drain(pipeline)
        results[name] = n / seconds
        mb = n * profile.pair_bytes / seconds / 1e6
        print(f"  {name:<22} {n:>7,} samples  {seconds:6.2f} s  {n / seconds:>9,.0f} samples/s"
              f"  {mb:>7,.0f} MB/s")
    ratio = results["npyio"] / results["py_function(np.load)"]
    print(f"  npyio / py_function: {ratio:.2f}x")
    return EXIT_OK


def _bench(args: argparse.Namespace) -> int:
    from npyio import _bench

    counts = dict(c.split("=", 1) for c in args.count) if args.count else {}
    log = (lambda m: None) if args.json else (lambda m: print(m, file=sys.stderr))
    results = _bench.run(
        args.profiles, rounds=args.rounds, root=args.cache,
        counts={k: int(v) for k, v in counts.items()}, log=log,
    )
    if args.json:
        print(_bench.to_json(results))
    else:
        print(f"{time.strftime('%Y-%m-%d')}, {_bench.machine()}, batches of {_bench.BATCH}, "
              f"median of {args.rounds} rounds\n")
        print(_bench.table(results))
    if args.plot:
        _bench.plot(results, args.plot)
        print(f"plot written to {args.plot}", file=sys.stderr)
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="npyio",
        description="Feed NumPy .npy datasets into TensorFlow with graph ops only.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n  npyio demo\n  npyio demo --count 2000",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    demo = sub.add_parser(
        "demo",
        help="generate a sample dataset (once) and stream it through npyio",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "Generates COUNT pairs of inputs/NNNN.npy (float32, 64x64x3) and labels/NNNN.npy\n"
            "(float32, 10) in a cache folder if they are not there, streams them through\n"
            "npyio.dataset in batches, and compares one epoch with the py_function pipeline."
        ),
        epilog="examples:\n  npyio demo\n  npyio demo --count 1000 --cache /tmp/npyio-cache",
    )
    demo.add_argument("--count", type=int, default=10_000, help="pairs to generate (10000)")
    demo.add_argument("--batch-size", type=int, default=8, help="batch size (8)")
    demo.add_argument(
        "--cache", default=None,
        help="cache folder (default: $NPYIO_CACHE, else ~/.cache/npyio)",
    )
    demo.set_defaults(run=_demo)

    bench = sub.add_parser(
        "bench",
        help="measure npyio against the py_function pipeline and the read-only floor",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "Writes sample datasets (once) and drains, in interleaved rounds, npyio's backends,\n"
            "the tf.py_function(np.load) pipeline, the read-only floor (read_file of both files\n"
            "reduced to tf.strings.length) and np.load in a Python loop. Reports medians:\n"
            "samples/s, MB/s, ratios to py_function and to the floor, and peak RSS."
        ),
        epilog=(
            "examples:\n  npyio bench\n  npyio bench --profiles small --rounds 3 --json\n"
            "  npyio bench --plot bench.png --count large=200"
        ),
    )
    bench.add_argument("--profiles", nargs="+", default=["small", "medium", "large"],
                       choices=["small", "medium", "large"])
    bench.add_argument("--rounds", type=int, default=5, help="measured rounds (5)")
    bench.add_argument("--count", action="append", metavar="PROFILE=N",
                       help="files per profile (defaults: small=8000 medium=4000 large=400)")
    bench.add_argument("--cache", default=None, help="where sample data goes")
    bench.add_argument("--json", action="store_true", help="print JSON instead of a table")
    bench.add_argument("--plot", metavar="PNG", help="also write a bar chart (needs matplotlib)")
    bench.set_defaults(run=_bench)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    parser = build_parser()
    args = parser.parse_args(argv)
    return int(args.run(args))


if __name__ == "__main__":
    sys.exit(main())
