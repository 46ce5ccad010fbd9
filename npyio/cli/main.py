"""The ``npyio`` command line."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from collections.abc import Callable, Sequence

from npyio._data.paths import Source, resolve
from npyio._format import npy
from npyio.cli import report
from npyio.cli import verify as _verify

EXIT_OK, EXIT_BAD_FILES, EXIT_USAGE = 0, 1, 2


def _lazy(module: str, name: str) -> Callable[[argparse.Namespace], int]:
    """A command whose module (and TensorFlow) is imported only when it runs."""

    def run(args: argparse.Namespace) -> int:
        import importlib

        return int(getattr(importlib.import_module(f"npyio.cli.{module}"), name)(args))

    return run


_EXIT_POLICY = (
    "exit status:\n"
    "  0  every file is good\n"
    "  1  a bad file; also a PATH that does not exist, a directory with no .npy files,\n"
    "     a pattern that matches nothing (each is listed as a bad file)\n"
    "  2  usage error (bad options or arguments)"
)
_PATHS_HELP = (
    "files, directories (their *.npy, not recursive; other files there are ignored) or\n"
    "quoted glob patterns; a file named explicitly is checked whatever its name. Any\n"
    "TensorFlow filesystem path works (gs://..., ram://...)."
)


#: Threads for reading headers: ThreadPoolExecutor's own default for I/O-bound work (reading
#: headers waits on I/O; bench/README.md, "npyio verify", has the measurements by thread count).
_DEFAULT_JOBS = min(32, (os.cpu_count() or 1) + 4)


def _positive_int(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return n


def _for_terminal(run: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """Ctrl-C exits 130 without a traceback; a closed pipe (``| head``) ends quietly."""

    def wrapped(args: argparse.Namespace) -> int:
        try:
            code = run(args)
            sys.stdout.flush()
            return code
        except KeyboardInterrupt:
            print("\ninterrupted", file=sys.stderr)
            return 130
        except BrokenPipeError:
            # Python flushes stdout again at exit; point it at devnull so that is silent too.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            return EXIT_BAD_FILES if getattr(args, "_had_issues", False) else EXIT_OK

    return wrapped


def _print_json(obj: object) -> None:
    json.dump(obj, sys.stdout, indent=1)
    sys.stdout.write("\n")


def _summary_block(name: str, s: report.Summary) -> list[str]:
    bad = f", {s.bad:,} bad" if s.bad else ""
    return [
        f"{name}: {s.files:,} file{'s' * (s.files != 1)}{bad}, {report.human_bytes(s.bytes)}",
        *s.lines(),
    ]


def _inspect(args: argparse.Namespace) -> int:
    sources = [resolve(a, "PATH", strict=False) for a in args.paths]
    out = _verify.scan(sources, jobs=args.jobs, progress=not args.quiet)
    args._had_issues = bool(out.issues)
    grouped = [s for s in sources if s.kind in ("dir", "glob") and s.paths]
    good = [c for c in out.checked if c.ok]
    if args.json:
        doc: dict[str, object] = {}
        if not args.summary:
            doc["files"] = [report.file_json(c) for c in good]
        doc["bad"] = [{"path": p, "reason": r} for p, r in out.issues]
        doc["directories"] = [{"path": s.arg, **out.summary(s).to_json()} for s in grouped]
        _print_json(doc)
    else:
        lines: list[str] = []
        if not args.summary and good:
            lines += report.table(
                [report.FILE_COLUMNS] + [report.file_row(c) for c in good], right=(4, 5)
            )
        for s in grouped:
            lines += ([""] if lines else []) + _summary_block(s.arg, out.summary(s))
        if lines:
            print("\n".join(lines))
    for path, reason in out.issues:
        print(f"npyio inspect: {path}: {reason}", file=sys.stderr)
    return EXIT_BAD_FILES if out.issues else EXIT_OK


_MAX_NOTES = 10


def _specs(args: argparse.Namespace, sources: list[Source]) -> list[_verify.SpecCheck]:
    """The spec checks of a run: each side of ``--pairs`` as ``npyio.dataset`` pairs them, and
    each directory or glob PATH as one dataset of inputs (unless ``--allow-mixed``)."""
    checks = []
    if not args.allow_mixed:
        checks += [
            _verify.SpecCheck(s.paths, "inputs", args.dtype, args.shape)
            for s in sources
            if s.by_name and s.paths
        ]
    return checks


def _pairs_source(arg: str, side: str) -> Source:
    """One side of ``--pairs``; a problem (a missing path, ...) says which side it is, in the
    one line that reports it (the other side's files are then not listed as unpaired)."""
    source = resolve(arg, side.lower(), strict=False)
    if source.problem is not None:
        source = dataclasses.replace(source, problem=f"{source.problem} (--pairs {side})")
    return source


def _verify_cmd(args: argparse.Namespace) -> int:
    if not args.paths and not args.pairs:
        args._parser.error("give at least one PATH, or --pairs INPUTS LABELS")
    sources = [resolve(a, "PATH", strict=False) for a in args.paths]
    specs = _specs(args, sources)
    extra: list[tuple[str, str]] = []
    if args.pairs:
        xs, ys = (_pairs_source(d, side) for d, side in zip(args.pairs, ("INPUTS", "LABELS")))
        sources += [xs, ys]
        extra, paired = _verify.pairing(xs, ys)
        if paired:
            x_check, y_check = paired
            specs += [
                dataclasses.replace(x_check, dtype=args.dtype, shape=args.shape),
                dataclasses.replace(y_check, dtype=args.label_dtype, shape=args.label_shape),
            ]
    out = _verify.scan(
        sources,
        jobs=args.jobs,
        progress=not args.quiet,
        full=args.full,
        extra=extra,
        specs=specs,
    )
    args._had_issues = not out.ok
    # The whole run, from the start of main: resolving (listing directories, which can take
    # longer than the checks on a remote file system) as well as checking.
    seconds = time.perf_counter() - getattr(args, "_started", time.perf_counter())
    grouped = list({s.arg: s for s in sources if s.kind in ("dir", "glob") and s.paths}.values())
    total = out.summary()
    bad_files = len(out.bad_paths)
    checks = "headers, sizes and payloads" if args.full else "headers and sizes"
    if args.json:
        doc: dict[str, object] = {
            "ok": out.ok,
            "checks": checks,
            "files": total.files,
            "bad_files": bad_files,
            "bytes": total.bytes,
            "seconds": round(seconds, 3),
            "bad": [{"path": p, "reason": r} for p, r in out.issues],
            "mismatched": [{"path": p, "reason": r} for p, r in out.mismatches],
            "groups": total.to_json()["groups"],
            "directories": [{"path": s.arg, **out.summary(s).to_json()} for s in grouped],
        }
        if args.full:
            doc["nonfinite"] = [{"path": p, "count": n} for p, n in out.nonfinite.items()]
        _print_json(doc)
        return EXIT_OK if out.ok else EXIT_BAD_FILES
    lines = [f"{path}: {reason}" for path, reason in out.issues + out.mismatches]
    if out.mismatches:
        lines.append(
            "(npyio.dataset would refuse these when it reaches them; --dtype/--shape/"
            "--label-dtype/--label-shape say what to load, --allow-mixed skips this check)"
        )
    if out.nonfinite:
        n_files = len(out.nonfinite)
        lines += ([""] if lines else []) + [
            f"note: {n_files:,} file{'s' * (n_files != 1)} hold{'s' * (n_files == 1)} NaN or "
            "infinite values (not counted as bad):"
        ]
        for path, n in list(out.nonfinite.items())[:_MAX_NOTES]:
            lines.append(f"  {path}: {n:,} NaN or infinite value{'s' * (n != 1)}")
        if len(out.nonfinite) > _MAX_NOTES:
            lines.append(f"  and {len(out.nonfinite) - _MAX_NOTES:,} more (see --json)")
    for s in grouped:
        lines += ([""] if lines else []) + _summary_block(s.arg, out.summary(s))
    verdicts = []
    if out.issues:
        verdicts.append(f"{bad_files:,} bad file{'s' * (bad_files != 1)}")
    if out.mismatches:
        n = len(out.mismatches)
        verdicts.append(f"{n:,} file{'s' * (n != 1)} npyio.dataset would refuse")
    lines += ([""] if lines else []) + [
        f"verified {total.files:,} file{'s' * (total.files != 1)} "
        f"({report.human_bytes(total.bytes)}) in {seconds:.2f} s, {checks}: "
        f"{', '.join(verdicts) or 'all good'}"
    ]
    print("\n".join(lines))
    return EXIT_OK if out.ok else EXIT_BAD_FILES


def _dtype_arg(text: str) -> object:
    try:
        return npy.parse_dtype(text)
    except TypeError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _shape_arg(text: str) -> tuple[int | None, ...]:
    """``64,64,3``; ``None`` (or ``?``) for a dim of any size; ``()`` or an empty string for
    a 0-d array."""
    body = text.strip().strip("()[]").replace(" ", "")
    dims: list[int | None] = []
    for token in filter(None, body.split(",")):
        if token in ("None", "?", "-1"):
            dims.append(None)
        elif token.isdigit():
            dims.append(int(token))
        else:
            raise argparse.ArgumentTypeError(
                f"expected a shape such as 64,64,3 (None for any size), got {text!r}"
            )
    return tuple(dims)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="npyio",
        description="Feed NumPy .npy datasets into TensorFlow with graph ops only.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=(
            "examples:\n  npyio inspect data/inputs\n  npyio verify data/inputs data/labels\n"
            "  npyio verify --pairs data/inputs data/labels --full\n"
            "  npyio demo\n  npyio demo --count 2000\n\n"
            "Run 'npyio COMMAND --help' for a command's options, examples and exit status."
        ),
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
        "--cache",
        default=None,
        help="cache folder (default: $NPYIO_CACHE, else ~/.cache/npyio)",
    )
    demo.set_defaults(run=_lazy("demo", "run"), _parser=demo)

    bench = sub.add_parser(
        "bench",
        help="measure npyio against the py_function pipeline and the read-only floor",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "Writes sample datasets (once) and drains, in interleaved rounds, npyio's backends,\n"
            "the tf.py_function(np.load) pipeline, tf.data.Dataset.from_generator over np.load\n"
            "(one generator, and four interleaved; in a worker process, because a generator\n"
            "pipeline slows later pipelines of its process), the read-only floor (read_file of\n"
            "both files reduced to tf.strings.length) and, for scale, np.load in a Python loop\n"
            "(no tf.data, no parallelism). Reports medians: samples/s, MB/s, ratios to\n"
            "py_function, to the best from_generator pipeline and to the floor, and peak RSS."
        ),
        epilog=(
            "examples:\n  npyio bench\n  npyio bench --profiles small --rounds 3 --json\n"
            "  npyio bench --plot bench.png --count large=200"
        ),
    )
    bench.add_argument(
        "--profiles",
        nargs="+",
        default=["small", "medium", "large"],
        choices=["small", "medium", "large"],
    )
    bench.add_argument("--rounds", type=int, default=5, help="measured rounds (5)")
    bench.add_argument(
        "--count",
        action="append",
        metavar="PROFILE=N",
        help="files per profile (defaults: small=8000 medium=4000 large=400)",
    )
    bench.add_argument("--cache", default=None, help="where sample data goes")
    bench.add_argument("--json", action="store_true", help="print JSON instead of a table")
    bench.add_argument("--plot", metavar="PNG", help="also write a bar chart (needs matplotlib)")
    bench.set_defaults(run=_lazy("bench", "command"), _parser=bench)

    inspect = sub.add_parser(
        "inspect",
        help="show what .npy files hold: dtype, shape, order, sizes",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "Reads each file's header (not its payload) and prints one row per file:\n"
            "version, dtype, shape, order (C or F), header bytes, payload bytes and path.\n"
            "For a directory or pattern it then prints a summary: file count, total size, and\n"
            "each distinct dtype/shape combination with its count. Files that cannot be read\n"
            "(bad header, wrong size, missing) are listed on stderr as 'path: reason'."
        ),
        epilog=(
            "examples:\n"
            "  npyio inspect data/inputs/0000.npy\n"
            "  npyio inspect data/inputs --summary\n"
            "  npyio inspect 'data/inputs/*.npy' --json | jq '.directories'\n"
            "  npyio inspect gs://bucket/dataset/labels\n\n" + _EXIT_POLICY
        ),
    )
    inspect.add_argument("paths", nargs="+", metavar="PATH", help=_PATHS_HELP)
    inspect.add_argument(
        "--summary", "-s", action="store_true", help="print only the summaries, not a row per file"
    )
    inspect.add_argument("--json", action="store_true", help="print JSON on stdout")
    inspect.add_argument(
        "--jobs",
        "-j",
        type=_positive_int,
        default=_DEFAULT_JOBS,
        metavar="N",
        help=f"threads reading headers (default: {_DEFAULT_JOBS})",
    )
    inspect.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
    inspect.set_defaults(run=_for_terminal(_inspect), _parser=inspect)

    verify = sub.add_parser(
        "verify",
        help="check that every .npy file will load, before a training run finds out",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "Checks each file's header with the rules npyio's decoder applies, and that the\n"
            "file's size is exactly what its header declares. --full also reads and decodes\n"
            "every payload through the graph decoder, as npyio.dataset will (and notes files\n"
            "holding NaN or infinite values, without counting them as bad). --pairs checks\n"
            "that the files of two directories pair up by name, as npyio.dataset pairs them.\n\n"
            "Prints each bad file as 'path: reason', a summary per directory (file count,\n"
            "size, dtype/shape combinations), and a verdict line, all on stdout. Progress goes\n"
            "to stderr: a bar on a terminal, a line every 10% otherwise (-q for none)."
        ),
        epilog=(
            "examples:\n"
            "  npyio verify data/inputs\n"
            "  npyio verify --pairs data/inputs data/labels\n"
            "  npyio verify --full --jobs 8 data/inputs/0001.npy data/inputs/0002.npy\n"
            "  npyio verify 'data/inputs/*.npy' --json | jq '.bad'\n"
            "  npyio verify gs://bucket/dataset/inputs --jobs 32\n\n" + _EXIT_POLICY
        ),
    )
    verify.add_argument("paths", nargs="*", metavar="PATH", help=_PATHS_HELP)
    verify.add_argument(
        "--pairs",
        nargs=2,
        metavar=("INPUTS", "LABELS"),
        help="also check these two directories (or globs), and that their files pair up as "
        "npyio.dataset(INPUTS, LABELS) pairs them",
    )
    verify.add_argument(
        "--dtype",
        type=_dtype_arg,
        metavar="DTYPE",
        help="the inputs' dtype, as npyio.dataset(dtype=...) (default: the first file's)",
    )
    verify.add_argument(
        "--shape",
        type=_shape_arg,
        metavar="DIMS",
        help="the inputs' shape, as npyio.dataset(shape=...): 64,64,3, with "
        "None for a dim of any size (default: the first file's)",
    )
    verify.add_argument(
        "--label-dtype", type=_dtype_arg, metavar="DTYPE", help="the labels' dtype (with --pairs)"
    )
    verify.add_argument(
        "--label-shape", type=_shape_arg, metavar="DIMS", help="the labels' shape (with --pairs)"
    )
    verify.add_argument(
        "--allow-mixed",
        action="store_true",
        help="accept files of different dtypes and shapes in one directory "
        "(npyio.dataset does not)",
    )
    verify.add_argument(
        "--full",
        action="store_true",
        help="also decode every payload through the graph decoder (slower)",
    )
    verify.add_argument(
        "--jobs",
        "-j",
        type=_positive_int,
        default=_DEFAULT_JOBS,
        metavar="N",
        help=f"files checked (and decoded) in parallel (default: {_DEFAULT_JOBS},"
        " the CPU count + 4, at most 32: reading headers waits on I/O)",
    )
    verify.add_argument("--json", action="store_true", help="print JSON on stdout")
    verify.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
    verify.set_defaults(run=_for_terminal(_verify_cmd), _parser=verify)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    started = time.perf_counter()
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    parser = build_parser()
    # Unknown options are reported by the command's own parser, with its usage line.
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        args._parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    args._started = started  # the time verify reports covers the whole run
    return int(args.run(args))


if __name__ == "__main__":
    sys.exit(main())
