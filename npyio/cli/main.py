"""The ``npyio`` command line: the table of commands, its parser, and `main`, which runs the
command asked for.

Each command lives in a module of its own, with its `CommandSpec` (its help, options and what
runs it): `npyio.cli.inspect`, `npyio.cli.verify`, `npyio.cli.pack`; what they share (argument
types, shared options, exit statuses) is `npyio.cli.args`. ``demo`` and ``bench`` import
TensorFlow when their modules load, so their tables are here and their modules are imported
only when they run (`lazy`).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

from npyio.cli import sample
from npyio.cli.args import (
    EXIT_BAD_FILES,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    CommandSpec,
    Option,
    crop_options,
    dtype_arg,
    for_terminal,
    lazy,
    mark_started,
    option,
    path_arg,
    positive_int,
    set_parser,
    shape_arg,
    size_arg,
    spec_options,
    usage_error,
)
from npyio.cli.inspect import INSPECT, inspect_command
from npyio.cli.native import NATIVE
from npyio.cli.pack import PACK
from npyio.cli.quiet import quiet_tensorflow
from npyio.cli.verify import VERIFY, verify_command

__all__ = [
    "BENCH",
    "COMMANDS",
    "DEMO",
    "EXIT_BAD_FILES",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "INSPECT",
    "NATIVE",
    "PACK",
    "VERIFY",
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


def _bench(args: argparse.Namespace) -> int:
    """``npyio bench``: on the user's files with INPUTS, else on the sample profiles."""
    return for_terminal(lazy("bench_data" if args.sources else "bench"))(args)


BENCH = CommandSpec(
    "bench",
    help="measure npyio against the py_function pipeline and the read-only floor",
    description=(
        "With INPUTS [LABELS] (a directory, glob or files, local or gs://, as npyio.dataset\n"
        "takes them): lists and pairs them (no header is read), takes --sample pairs evenly\n"
        "across the listing, and drains on them, in interleaved rounds: npyio.dataset, the\n"
        "tf.py_function(np.load) pipeline, the read-only floor and the np.load loop; then\n"
        "packs the sample into a temporary directory (npyio.pack; removed afterwards) and\n"
        "reads it with npyio.dataset. npyio reads the loose files and the pack in order\n"
        "and shuffled (shuffle=True, the way training reads). It reports samples/s and\n"
        "ratios, whether reading is bound by files or by bytes, and a suggestion. The rule:\n"
        "the read-only floor runs over the loose files and over the pack's few shards, the\n"
        "same bytes, and over one sample (the fixed cost of an epoch, taken off both); what\n"
        "the loose floor spends beyond the packed one is per-file cost, and from 50% of its\n"
        "time the pipeline is files-bound (a pack can help), below that bytes-bound. npyio is\n"
        "advised from 1.2x py_function, a pack from 1.5x the loose files through npyio,\n"
        "both shuffled (in order does not count). --shape, --crop and the like are\n"
        "npyio.dataset's arguments, for files of per-case shapes (--crop 64,64,64: the\n"
        "window's axes are sized by each file): with a crop or None dims no pack is made (a\n"
        "pack holds whole rows of one shape).\n"
        "\n"
        "Without INPUTS: writes sample datasets (once) and drains, in interleaved rounds,\n"
        "npyio's backends, the tf.py_function(np.load) pipeline,\n"
        "tf.data.Dataset.from_generator over np.load (one generator, and four interleaved;\n"
        "in a worker process, because a generator pipeline slows later pipelines of its\n"
        "process), the read-only floor (read_file of both files reduced to\n"
        "tf.strings.length) and, for scale, np.load in a Python loop (no tf.data, no\n"
        "parallelism). Reports medians: samples/s, MB/s, ratios to py_function, to the best\n"
        "from_generator pipeline and to the floor, and peak RSS."
    ),
    examples=(
        "npyio bench data/inputs data/labels --sample 4 --rounds 1",
        "npyio bench gs://bucket/dataset/inputs --sample 4 --rounds 1 --json",
        "npyio bench data/inputs --crop 2,2 --shape None,None --sample 4 --rounds 1",
        "npyio bench",
        "npyio bench --profiles small --rounds 3 --json",
        "npyio bench --plot bench.png --count large=200",
        "npyio bench --peers dali,grain --rounds 3",
    ),
    options=(
        option(
            "sources",
            nargs="*",
            type=path_arg,
            metavar="INPUTS [LABELS]",
            help="your files: a directory, glob or files (any TensorFlow file system), as\n"
            "npyio.dataset takes them; without, the sample profiles are measured",
        ),
        option(
            "--sample",
            type=positive_int,
            metavar="N",
            help=f"with INPUTS: samples to measure, taken evenly ({sample.USER_SAMPLE})",
        ),
        option(
            "--batch-size",
            type=positive_int,
            metavar="N",
            help="with INPUTS: the batch size (8, as the profiles)",
        ),
        option(
            "--pack-dir",
            metavar="DIR",
            help="with INPUTS: where the temporary pack goes (any TensorFlow file system;\n"
            "default: the local temporary folder)",
        ),
        *spec_options(" (with LABELS)", "None for a dim of any size: per-case shapes"),
        *crop_options(),
        option(
            "--crops-per-file",
            type=positive_int,
            metavar="K",
            help="with --crop: windows of each file a round, as\n"
            "npyio.dataset(crops_per_file=K) reads them (default: enough for 256 a round)",
        ),
        option(
            "--profiles",
            nargs="+",
            choices=list(sample.PROFILES),
            help="without INPUTS: the profiles to measure (all)",
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
            "'npyio[peers]'); tfio too, on TensorFlow 2.16 (pip install 'npyio[tfio]')",
        ),
        option(
            "--drain",
            choices=("reduce", "iterator"),
            help="drain the tf.data pipelines with Dataset.reduce or a new Python iterator\n"
            "each epoch, as model.fit reads (without INPUTS: reduce by default; with INPUTS:\n"
            "always an iterator)",
        ),
        option(
            "--cold",
            action="store_true",
            help="without INPUTS: drop every file from the page cache before each epoch;\n"
            "the bare read loop then reads with 32 threads (npyio.cli.bench.COLD_THREADS)",
        ),
        option(
            "--mallopt",
            action="store_true",
            help="also measure npyio with glibc's mmap/trim thresholds raised (256 MiB mmap, 1 "
            "GiB trim), in a process of its own",
        ),
    ),
    run=_bench,
)

#: The sub-commands, in the order ``npyio --help`` lists them.
COMMANDS = (DEMO, BENCH, INSPECT, VERIFY, PACK, NATIVE)

_EXAMPLES = (
    "npyio inspect data/inputs",
    "npyio verify data/inputs data/labels",
    "npyio verify data/inputs data/labels --full",
    "npyio pack data/inputs data/labels -o data/packed",
    "npyio demo",
    "npyio demo --count 2000",
    "npyio native --build",
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
    parser.set_defaults(run=command.run)
    set_parser(parser)
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
        usage_error(args, f"unrecognized arguments: {' '.join(unknown)}")
    mark_started(args, started)  # the time verify reports covers the whole run
    return int(args.run(args))


if __name__ == "__main__":
    sys.exit(main())
