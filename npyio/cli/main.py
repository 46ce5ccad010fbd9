"""The ``npyio`` command line: its parser, and the ``inspect`` and ``verify`` commands.

`build_parser` builds one sub-parser per command from the option tables below (an option
two commands share is written once); `main` parses and runs the command. ``demo`` and
``bench`` live in their own modules, imported (with TensorFlow) only when they run;
``inspect`` and ``verify`` are here, in steps: plan (`npyio.cli.verify.plan`), scan
(`npyio.cli.verify.scan`), then print (`npyio.cli.report`), as text or ``--json``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from npyio._data.paths import Source
from npyio._format import npy
from npyio._format.header import Checked
from npyio.cli import pack, report, sample, verify
from npyio.cli.quiet import quiet_tensorflow

__all__ = [
    "COMMANDS",
    "EXIT_BAD_FILES",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "CommandSpec",
    "Option",
    "build_parser",
    "dtype_arg",
    "for_terminal",
    "inspect_command",
    "lazy",
    "main",
    "positive_int",
    "shape_arg",
    "size_arg",
    "verify_command",
]

EXIT_OK, EXIT_BAD_FILES, EXIT_USAGE = 0, 1, 2
#: The exit status of a run interrupted with Ctrl-C (128 + SIGINT), as shells report it.
EXIT_INTERRUPTED = 130

Command = Callable[[argparse.Namespace], int]


# --- argument types -------------------------------------------------------------------------
def positive_int(text: str) -> int:
    """``--jobs``: a whole number of at least 1.

    Raises:
        argparse.ArgumentTypeError: for anything else, naming it.

    Example:
        >>> positive_int("8")
        8
    """
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return n


_UNITS = {"": 1, "b": 1, "k": 10**3, "kb": 10**3, "m": 10**6, "mb": 10**6, "g": 10**9}
_UNITS.update({"gb": 10**9, "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30})


def size_arg(text: str) -> int:
    """A byte count: ``268435456``, ``256MB``, ``64MiB``, ``1GB``.

    Example:
        >>> size_arg("256MB"), size_arg("64MiB"), size_arg("1000")
        (256000000, 67108864, 1000)
    """
    m = re.fullmatch(r"\s*(\d+)\s*([A-Za-z]*)\s*", text)
    if m is None or m.group(2).lower() not in _UNITS or int(m.group(1)) < 1:
        raise argparse.ArgumentTypeError(
            f"expected a positive size in bytes such as 256MB, 64MiB or 1000000, got {text!r}"
        )
    return int(m.group(1)) * _UNITS[m.group(2).lower()]


def dtype_arg(text: str) -> object:
    """``--dtype``: a dtype name as ``npyio.dataset(dtype=...)`` takes it.

    Raises:
        argparse.ArgumentTypeError: for a dtype npyio does not decode, listing those it does.

    Example:
        >>> dtype_arg("float32")
        dtype('float32')
    """
    try:
        return npy.parse_dtype(text)
    except TypeError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def shape_arg(text: str) -> tuple[int | None, ...]:
    """``--shape``: ``64,64,3``; ``None`` (or ``?``, ``-1``) for a dim of any size; ``()`` or
    an empty string for a 0-d array. Brackets and spaces are ignored.

    Raises:
        argparse.ArgumentTypeError: for any other dim.

    Example:
        >>> shape_arg("(None, 64, 3)"), shape_arg("")
        ((None, 64, 3), ())
    """
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


# --- running a command ----------------------------------------------------------------------
def lazy(module: str) -> Command:
    """The command ``npyio.cli.{module}.command``, imported (with TensorFlow) only when it
    runs."""

    def run(args: argparse.Namespace) -> int:
        import importlib

        return int(importlib.import_module(f"npyio.cli.{module}").command(args))

    return run


def for_terminal(run: Command) -> Command:
    """``run``, where Ctrl-C exits 130 without a traceback and a closed pipe (``| head``)
    ends quietly, with the exit status of what was found so far."""

    def wrapped(args: argparse.Namespace) -> int:
        try:
            code = run(args)
            sys.stdout.flush()
            return code
        except KeyboardInterrupt:
            print("\ninterrupted", file=sys.stderr)
            return EXIT_INTERRUPTED
        except BrokenPipeError:
            # Python flushes stdout again at exit; point it at devnull so that is silent too.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            return EXIT_BAD_FILES if getattr(args, "_had_issues", False) else EXIT_OK

    return wrapped


def _print_json(obj: object) -> None:
    json.dump(obj, sys.stdout, indent=1)
    sys.stdout.write("\n")


def _print_lines(lines: Sequence[str]) -> None:
    if lines:
        print("\n".join(lines))


def _exit_status(ok: bool) -> int:
    return EXIT_OK if ok else EXIT_BAD_FILES


def _directories_json(out: verify.Outcome, sources: Iterable[Source]) -> list[dict[str, Any]]:
    return [{"path": s.arg, **out.summary(s).to_json()} for s in sources]


def _summary_blocks(out: verify.Outcome, sources: Iterable[Source]) -> list[list[str]]:
    return [report.summary_block(s.arg, out.summary(s)) for s in sources]


# --- npyio inspect --------------------------------------------------------------------------
def inspect_command(args: argparse.Namespace) -> int:
    """``npyio inspect PATH...``: a row per good file, a summary per directory, the bad files
    on stderr; exits 1 if any file is bad."""
    sources = verify.resolve_paths(args.paths)
    out = verify.scan(sources, jobs=args.jobs, progress=not args.quiet)
    issues = pack.index_issues(args.paths) + out.issues  # a pack's index is input too
    args._had_issues = bool(issues)
    directories = verify.directories(sources)
    rows = None if args.summary else [c for c in out.checked if c.ok]
    if args.json:
        _print_json(_inspect_json(out, directories, rows, issues))
    else:
        blocks = [report.file_table(rows or []), *_summary_blocks(out, directories)]
        _print_lines(report.paragraphs(blocks))
    for path, reason in issues:
        print(f"npyio inspect: {path}: {reason}", file=sys.stderr)
    return _exit_status(not issues)


def _inspect_json(
    out: verify.Outcome,
    directories: list[Source],
    rows: list[Checked] | None,
    issues: list[tuple[str, str]],
) -> dict[str, object]:
    """``inspect --json``: ``files`` (the good files, unless ``--summary``), ``bad`` and
    ``directories``."""
    doc: dict[str, object] = {}
    if rows is not None:
        doc["files"] = [report.file_json(c) for c in rows]
    doc["bad"] = report.reasons_json(issues)
    doc["directories"] = _directories_json(out, directories)
    return doc


# --- npyio verify ---------------------------------------------------------------------------
_REFUSED_HINT = (
    "(npyio.dataset would refuse these when it reaches them; --dtype/--shape/"
    "--label-dtype/--label-shape say what to load, --allow-mixed skips this check)"
)


def _dataset_form(args: argparse.Namespace) -> tuple[list[str], list[str] | None, str]:
    """The PATHs checked each on its own, INPUTS and LABELS (or None), and how messages name
    the latter: ``verify INPUTS LABELS`` (two PATHs) is ``npyio.dataset(INPUTS, LABELS)``,
    pairing included; ``--pairs INPUTS LABELS`` is the same, beside any other PATH."""
    if args.pairs:
        return args.paths, args.pairs, "--pairs "
    if len(args.paths) == 2 and not args.each:
        return [], args.paths, ""
    return args.paths, None, ""


def verify_command(args: argparse.Namespace) -> int:
    """``npyio verify INPUTS [LABELS]`` (or ``PATH...``, ``--pairs INPUTS LABELS``): every bad
    file with its reason, a summary per directory and a verdict; exits 1 if any file is bad or
    would be refused."""
    if not args.paths and not args.pairs:
        args._parser.error("give at least one PATH, or INPUTS LABELS")
    packs = [path for path in args.paths if pack.is_pack(path)]
    if packs:  # a packed directory is checked against its index (npyio pack)
        if len(packs) < len(args.paths) or args.pairs:
            args._parser.error("verify packed directories on their own (no other PATH, no --pairs)")
        return pack.verify_packs(packs, args.json)
    paths, pairs, flag = _dataset_form(args)
    planned = verify.plan(
        paths,
        pairs,
        flag=flag,
        dtype=args.dtype,
        shape=args.shape,
        label_dtype=args.label_dtype,
        label_shape=args.label_shape,
        allow_mixed=args.allow_mixed,
    )
    out = verify.scan(
        planned.sources,
        jobs=args.jobs,
        progress=not args.quiet,
        full=args.full,
        extra=planned.extra,
        specs=planned.specs,
        refused=planned.refused,
    )
    args._had_issues = not out.ok
    # The whole run, from the start of main: resolving (listing directories, which can take
    # longer than the checks on a remote file system) as well as checking.
    seconds = time.perf_counter() - getattr(args, "_started", time.perf_counter())
    if args.json:
        _print_json(_verify_json(out, full=args.full, seconds=seconds))
    else:
        _print_lines(_verify_lines(out, full=args.full, seconds=seconds))
    return _exit_status(out.ok)


def _checks_done(full: bool) -> str:
    return "headers, sizes and payloads" if full else "headers and sizes"


def _verify_json(out: verify.Outcome, *, full: bool, seconds: float) -> dict[str, object]:
    total = out.summary()
    doc: dict[str, object] = {
        "ok": out.ok,
        "checks": _checks_done(full),
        "files": total.files,
        "bad_files": len(out.bad_paths),
        "bytes": total.bytes,
        "seconds": round(seconds, 3),
        "bad": report.reasons_json(out.issues),
        "mismatched": report.reasons_json(out.mismatches),
        "refused": out.refused,
        "groups": total.to_json()["groups"],
        "directories": _directories_json(out, verify.directories(out.sources)),
    }
    if full:
        doc["nonfinite"] = [{"path": p, "count": n} for p, n in out.nonfinite.items()]
    return doc


def _verify_lines(out: verify.Outcome, *, full: bool, seconds: float) -> list[str]:
    problems = [f"{path}: {reason}" for path, reason in out.issues + out.mismatches]
    if out.mismatches:
        problems.append(_REFUSED_HINT)
    problems += [f"npyio.dataset(INPUTS, LABELS) refuses them: {e}" for e in out.refused]
    return report.paragraphs(
        [
            problems,
            report.nonfinite_notes(out.nonfinite),
            *_summary_blocks(out, verify.directories(out.sources)),
            [_verdict(out, full=full, seconds=seconds)],
        ]
    )


def _verdict(out: verify.Outcome, *, full: bool, seconds: float) -> str:
    """``verified 4 files (592 B) in 0.01 s, headers and sizes: all good`` (or what is not)."""
    total = out.summary()
    verdicts = []
    if out.issues:
        verdicts.append(report.plural(len(out.bad_paths), "bad file"))
    if out.mismatches:
        verdicts.append(f"{report.plural(len(out.mismatches), 'file')} npyio.dataset would refuse")
    return (
        f"verified {report.plural(total.files, 'file')} ({report.human_bytes(total.bytes)}) "
        f"in {seconds:.2f} s, {_checks_done(full)}: {', '.join(verdicts) or 'all good'}"
    )


# --- the parser -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Option:
    """One argument of a command, as ``parser.add_argument(*flags, **settings)`` takes it."""

    flags: tuple[str, ...]
    settings: Mapping[str, Any] = field(default_factory=dict)


def option(*flags: str, **settings: Any) -> Option:
    return Option(flags, settings)


@dataclass(frozen=True)
class CommandSpec:
    """One sub-command: its ``--help`` texts, its options in order, and what runs it."""

    name: str
    help: str
    description: str
    examples: tuple[str, ...]
    options: tuple[Option, ...]
    run: Command
    exit_policy: bool = False  # list the exit statuses after the examples

    def epilog(self) -> str:
        text = "examples:\n" + "\n".join(f"  {example}" for example in self.examples)
        return text + ("\n\n" + _EXIT_POLICY if self.exit_policy else "")


_EXIT_POLICY = (
    "exit status:\n"
    "  0  every file is good\n"
    "  1  a bad file; also a PATH that does not exist, a directory with no .npy files,\n"
    "     a pattern that matches nothing (each is listed as a bad file), an incomplete\n"
    "     pack, and (verify) INPUTS and LABELS that do not pair up\n"
    "  2  usage error (bad options or arguments)"
)
#: Threads for reading headers: ThreadPoolExecutor's own default for I/O-bound work (reading
#: headers waits on I/O; bench/README.md, "npyio verify", has the measurements by thread count).
_DEFAULT_JOBS = min(32, (os.cpu_count() or 1) + 4)


# Options that more than one command takes.
def _paths(nargs: str) -> Option:
    return option(
        "paths",
        nargs=nargs,
        metavar="PATH",
        help="files, directories (their *.npy, not recursive; hidden files, whose names begin\n"
        "with '.', and other files there are ignored) or quoted glob patterns; a file named\n"
        "explicitly is checked whatever its name. Any TensorFlow filesystem path works\n"
        "(gs://..., ram://...).",
    )


def _jobs(help: str) -> Option:
    return option("--jobs", "-j", type=positive_int, default=_DEFAULT_JOBS, metavar="N", help=help)


def _spec_options(labels: str, dims: str) -> tuple[Option, ...]:
    """``--dtype``, ``--shape``, ``--label-dtype``, ``--label-shape``: what each part loads as,
    the arguments of `npyio.dataset` (``labels`` and ``dims`` end the labels' and the shape's
    help)."""
    first = " (default: the first file's)"
    return (
        option(
            "--dtype",
            type=dtype_arg,
            metavar="DTYPE",
            help=f"the inputs' dtype, as npyio.dataset(dtype=...){first}",
        ),
        option(
            "--shape",
            type=shape_arg,
            metavar="DIMS",
            help=f"the inputs' shape, as npyio.dataset(shape=...): 64,64,3 ({dims}){first}",
        ),
        option("--label-dtype", type=dtype_arg, metavar="DTYPE", help=f"the labels' dtype{labels}"),
        option("--label-shape", type=shape_arg, metavar="DIMS", help=f"the labels' shape{labels}"),
    )


_JSON = option("--json", action="store_true", help="print JSON on stdout")
_QUIET = option("--quiet", "-q", action="store_true", help="no progress on stderr")


DEMO = CommandSpec(
    "demo",
    help="generate a sample dataset (once) and stream it through npyio",
    description=(
        "Generates COUNT pairs of inputs/NNNN.npy (float32, 64x64x3) and labels/NNNN.npy\n"
        "(float32, 10) in a cache folder if they are not there, streams them through\n"
        "npyio.dataset in batches, and compares one epoch with the py_function pipeline."
    ),
    examples=("npyio demo", "npyio demo --count 1000 --cache /tmp/npyio-cache"),
    options=(
        option(
            "--count",
            type=int,
            default=sample.DEMO.count,
            help=f"pairs to generate ({sample.DEMO.count})",
        ),
        option("--batch-size", type=int, default=8, help="batch size (8)"),
        option(
            "--cache",
            default=None,
            help="cache folder (default: $NPYIO_CACHE, else ~/.cache/npyio)",
        ),
    ),
    run=lazy("demo"),
)

BENCH = CommandSpec(
    "bench",
    help="measure npyio against the py_function pipeline and the read-only floor",
    description=(
        "Writes sample datasets (once) and drains, in interleaved rounds, npyio's backends,\n"
        "the tf.py_function(np.load) pipeline, tf.data.Dataset.from_generator over np.load\n"
        "(one generator, and four interleaved; in a worker process, because a generator\n"
        "pipeline slows later pipelines of its process), the read-only floor (read_file of\n"
        "both files reduced to tf.strings.length) and, for scale, np.load in a Python loop\n"
        "(no tf.data, no parallelism). Reports medians: samples/s, MB/s, ratios to\n"
        "py_function, to the best from_generator pipeline and to the floor, and peak RSS."
    ),
    examples=(
        "npyio bench",
        "npyio bench --profiles small --rounds 3 --json",
        "npyio bench --plot bench.png --count large=200",
        "npyio bench --peers dali,grain --rounds 3",
    ),
    options=(
        option(
            "--profiles", nargs="+", default=list(sample.PROFILES), choices=list(sample.PROFILES)
        ),
        option("--rounds", type=int, default=5, help="measured rounds (5)"),
        option(
            "--count",
            action="append",
            metavar="PROFILE=N",
            help="files per profile (defaults: "
            + " ".join(f"{name}={p.count}" for name, p in sample.PROFILES.items())
            + ")",
        ),
        option("--cache", default=None, help="where sample data goes"),
        option("--json", action="store_true", help="print JSON instead of a table"),
        option("--plot", metavar="PNG", help="also write a bar chart (needs matplotlib)"),
        option(
            "--peers",
            metavar="dali,grain",
            help="also measure these peers, each in a process of its own (pip install "
            "'npyio[peers]')",
        ),
        option(
            "--mallopt",
            action="store_true",
            help="also measure npyio with glibc's mmap/trim thresholds raised (issue 34), in a "
            "process of its own",
        ),
    ),
    run=lazy("bench"),
)

INSPECT = CommandSpec(
    "inspect",
    help="show what .npy files hold: dtype, shape, order, sizes",
    description=(
        "Reads each file's header (not its payload) and prints one row per file:\n"
        "version, dtype, shape, order (C or F), header bytes, payload bytes and path.\n"
        "For a directory or pattern it then prints a summary: file count, total size, and\n"
        "each distinct dtype/shape combination with its count. Files that cannot be read\n"
        "(bad header, wrong size, missing) are listed on stderr as 'path: reason'."
    ),
    examples=(
        "npyio inspect data/inputs/0000.npy",
        "npyio inspect data/inputs --summary",
        "npyio inspect 'data/inputs/*.npy' --json | jq '.directories'",
        "npyio inspect gs://bucket/dataset/labels",
    ),
    options=(
        _paths("+"),
        option(
            "--summary",
            "-s",
            action="store_true",
            help="print only the summaries, not a row per file",
        ),
        _JSON,
        _jobs(f"threads reading headers (default: {_DEFAULT_JOBS})"),
        _QUIET,
    ),
    run=for_terminal(inspect_command),
    exit_policy=True,
)

VERIFY = CommandSpec(
    "verify",
    help="check that every .npy file will load, before a training run finds out",
    description=(
        "Checks what npyio.dataset reads: each file's header with the rules npyio's decoder\n"
        "applies, that the file's size is exactly what its header declares, and that the\n"
        "files of a part share a dtype and shape. Two PATHs are INPUTS and LABELS, checked\n"
        "as npyio.dataset(INPUTS, LABELS) reads them: also that they pair up (by file name\n"
        "when either is a directory or glob, else by position), with npyio.dataset's own\n"
        "error when they do not. One PATH, three or more, or any with --each, are each\n"
        "checked as npyio.dataset(PATH) reads it. --pairs INPUTS LABELS, from earlier\n"
        "versions, is the same as the two PATHs, and other PATHs may come with it. --full\n"
        "also reads and decodes every payload through the graph decoder, as npyio.dataset\n"
        "will (and notes files holding NaN or infinite values, without counting them as\n"
        "bad). A packed directory (npyio pack) is checked against its index.\n\n"
        "Prints each bad file as 'path: reason', a summary per directory (file count,\n"
        "size, dtype/shape combinations), and a verdict line, all on stdout. Progress goes\n"
        "to stderr: a bar on a terminal, a line every 10% otherwise (-q for none)."
    ),
    examples=(
        "npyio verify data/inputs",
        "npyio verify data/inputs data/labels",
        "npyio verify --full --jobs 8 data/inputs/0001.npy data/labels/0001.npy",
        "npyio verify 'data/inputs/*.npy' --json | jq '.bad'",
        "npyio verify gs://bucket/dataset/inputs --jobs 32",
    ),
    options=(
        _paths("*"),
        option(
            "--pairs",
            nargs=2,
            metavar=verify.PAIR_SIDES,
            help="INPUTS and LABELS, as two PATHs are (kept from earlier versions); other PATHs "
            "may come with it",
        ),
        option(
            "--each",
            action="store_true",
            help="check each PATH on its own, as npyio.dataset(PATH), two PATHs as well",
        ),
        *_spec_options(" (with LABELS)", "None for a dim of any size"),
        option(
            "--allow-mixed",
            action="store_true",
            help="accept files of different dtypes and shapes in one directory "
            "(npyio.dataset does not)",
        ),
        option(
            "--full",
            action="store_true",
            help="also decode every payload through the graph decoder (slower)",
        ),
        _jobs(
            f"files checked (and decoded) in parallel (default: {_DEFAULT_JOBS},"
            " the CPU count + 4, at most 32: reading headers waits on I/O)"
        ),
        _JSON,
        _QUIET,
    ),
    run=for_terminal(verify_command),
    exit_policy=True,
)

PACK = CommandSpec(
    "pack",
    help="pack many small .npy files into a few standard .npy shards (and read them fast)",
    description=(
        "Reads INPUTS (and LABELS) as npyio.dataset(INPUTS, LABELS) does and writes, in OUT,\n"
        "for each part (inputs, labels, each key of a dict source) standard .npy shards of\n"
        "the rows stacked, PART-00000-of-0000K.npy, and the index npyio-pack.json (format\n"
        "version, parts, rows, bytes and SHA-256 of every shard, the original file names).\n"
        "npyio.dataset(OUT) then yields what npyio.dataset(INPUTS, LABELS) yields, from a few\n"
        "large files. Every file's header is checked first (a part that mixes dtypes or shapes\n"
        "is refused, naming the first odd file); shards and index are written under temporary\n"
        "names and renamed, the index last, so an interrupted pack is never read as a smaller\n"
        "dataset (rerun the same command to complete it). npyio verify OUT checks the shards."
    ),
    examples=(
        "npyio pack data/inputs data/labels -o data/packed",
        "npyio pack data/inputs --label-values data/labels.npy -o data/packed --shuffle --seed 1",
        "npyio pack --from-directory data/classes -o data/classes-packed",
        "npyio pack gs://bucket/inputs gs://bucket/labels -o gs://bucket/packed --json",
    ),
    options=(
        option("inputs", metavar="INPUTS", help="a directory, glob or file, as npyio.dataset"),
        option("labels", nargs="?", metavar="LABELS", help="label files, paired as npyio.dataset"),
        option("--out", "-o", required=True, metavar="OUT", help="the directory to write"),
        option(
            "--label-values",
            metavar="NPY",
            help="labels as values: a .npy of one value (or row) per input file",
        ),
        option(
            "--from-directory",
            action="store_true",
            help="INPUTS is a directory of class folders; the labels are the class indices "
            "(int32), as npyio.dataset_from_directory(label_mode='int')",
        ),
        option(
            "--shard-size",
            type=size_arg,
            default=256 * 10**6,
            metavar="BYTES",
            help="bytes per shard file, about: 256MB (default), 64MiB, 1000000",
        ),
        option("--shuffle", action="store_true", help="write the rows in a shuffled order"),
        option("--seed", type=int, default=None, help="the seed of --shuffle"),
        option("--overwrite", action="store_true", help="replace a pack already in OUT"),
        option("--key", help="read this member of .npz archives (as npyio.dataset(key=))"),
        option("--label-key", help="and this one as the labels"),
        *_spec_options("", "fixed: a shard holds rows of one shape"),
        option(
            "--no-check",
            action="store_true",
            help="skip checking every header first (an odd file then fails the pack when it is "
            "read, and what was written is removed)",
        ),
        option("--json", action="store_true", help="print a JSON summary on stdout"),
        _QUIET,
    ),
    run=for_terminal(lazy("pack")),
)

#: The sub-commands, in the order ``npyio --help`` lists them.
COMMANDS = (DEMO, BENCH, INSPECT, VERIFY, PACK)

_EXAMPLES = (
    "npyio inspect data/inputs",
    "npyio verify data/inputs data/labels",
    "npyio verify data/inputs data/labels --full",
    "npyio pack data/inputs data/labels -o data/packed",
    "npyio demo",
    "npyio demo --count 2000",
)


def _add_command(
    commands: argparse._SubParsersAction[argparse.ArgumentParser], command: CommandSpec
) -> argparse.ArgumentParser:
    """Adds ``command``'s sub-parser; its ``run`` and the sub-parser itself become defaults,
    so that `main` runs it and reports a usage error with the command's own usage line."""
    parser = commands.add_parser(
        command.name,
        help=command.help,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=command.description,
        epilog=command.epilog(),
    )
    for o in command.options:
        parser.add_argument(*o.flags, **o.settings)
    parser.set_defaults(run=command.run, _parser=parser)
    return parser


def build_parser() -> argparse.ArgumentParser:
    """The ``npyio`` parser: one sub-parser per command of `COMMANDS`.

    Example:
        >>> args = build_parser().parse_args(["verify", "data", "--shape", "4,None"])
        >>> args.command, args.paths, args.shape
        ('verify', ['data'], (4, None))
    """
    parser = argparse.ArgumentParser(
        prog="npyio",
        description="Feed NumPy .npy datasets into TensorFlow with graph ops only.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n"
        + "\n".join(f"  {example}" for example in _EXAMPLES)
        + "\n\nRun 'npyio COMMAND --help' for a command's options, examples and exit status.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True
    for command in COMMANDS:
        _add_command(commands, command)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Runs ``npyio`` with ``argv`` (default: ``sys.argv[1:]``); returns the exit status.

    Raises:
        SystemExit: for ``--help`` (0) and usage errors (2), as argparse does.
    """
    started = time.perf_counter()
    quiet_tensorflow()  # before anything can import TensorFlow; a level the user set is kept
    parser = build_parser()
    # Unknown options are reported by the command's own parser, with its usage line.
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        args._parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    args._started = started  # the time verify reports covers the whole run
    return int(args.run(args))


if __name__ == "__main__":
    sys.exit(main())
