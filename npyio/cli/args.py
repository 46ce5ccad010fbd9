"""What every ``npyio`` command shares: exit statuses, argument types, the `CommandSpec` table
of a command's options, the options more than one command takes, and the run's state that
`npyio.cli.main` keeps on the parsed arguments (`usage_error`, `note_issues`, `started`).

Each command's own module (`npyio.cli.inspect`, `npyio.cli.verify`, `npyio.cli.pack`) holds its
`CommandSpec` and its code; `npyio.cli.main` lists them and runs the one asked for.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn, TypedDict

from npyio._format import npy

__all__ = [
    "DEFAULT_JOBS",
    "EXIT_BAD_FILES",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_POLICY",
    "EXIT_USAGE",
    "JSON",
    "QUIET",
    "Command",
    "CommandSpec",
    "CropArguments",
    "Option",
    "SpecArguments",
    "crop_arg",
    "crop_arguments",
    "crop_options",
    "dtype_arg",
    "exit_status",
    "for_terminal",
    "had_issues",
    "jobs_option",
    "label_crop_arg",
    "lazy",
    "mark_started",
    "note_issues",
    "option",
    "path_arg",
    "paths_option",
    "positive_int",
    "print_json",
    "print_lines",
    "set_parser",
    "shape_arg",
    "size_arg",
    "spec_arguments",
    "spec_options",
    "started",
    "usage_error",
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


def path_arg(text: str) -> str:
    """A PATH: any text but the empty one (a shell's unset ``"$DIR"``), which names nothing.

    Raises:
        argparse.ArgumentTypeError: for ``''``.

    Example:
        >>> path_arg("data/inputs")
        'data/inputs'
    """
    if not text:
        raise argparse.ArgumentTypeError("a path is empty ('')")
    return text


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


def crop_arg(text: str) -> tuple[int, ...]:
    """``--crop``: a random window's sizes along the leading axes, ``64,64,64``, as
    ``npyio.dataset(crop=(64, 64, 64))`` takes them. Brackets and spaces are ignored.

    Raises:
        argparse.ArgumentTypeError: for anything but one or more positive sizes.

    Example:
        >>> crop_arg("64,64,64"), crop_arg("(96, 96)")
        ((64, 64, 64), (96, 96))
    """
    body = text.strip().strip("()[]").replace(" ", "")
    tokens = body.split(",") if body else []
    if not tokens or not all(t.isdigit() and int(t) > 0 for t in tokens):
        raise argparse.ArgumentTypeError(
            f"expected a window's sizes such as 64,64,64 (positive, the leading axes), got {text!r}"
        )
    return tuple(int(t) for t in tokens)


def label_crop_arg(text: str) -> tuple[int, ...] | str | None:
    """``--label-crop``: ``same`` (the inputs' window), ``none`` (labels whole) or a window of
    the labels' own (`crop_arg`), as ``npyio.dataset(label_crop=...)`` takes them.

    Raises:
        argparse.ArgumentTypeError: for anything else.

    Example:
        >>> label_crop_arg("same"), label_crop_arg("none"), label_crop_arg("32,32")
        ('same', None, (32, 32))
    """
    if text.strip().lower() == "same":
        return "same"
    if text.strip().lower() == "none":
        return None
    try:
        return crop_arg(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(
            f"expected same, none or a window's sizes such as 64,64,64, got {text!r}"
        ) from None


# --- the run's state, kept on the parsed arguments ------------------------------------------
# `npyio.cli.main` sets the first two; a command records the third. They are read and written
# here only.
_PARSER, _STARTED, _HAD_ISSUES = "_parser", "_started", "_had_issues"


def set_parser(parser: argparse.ArgumentParser) -> None:
    """Makes ``parser`` (a command's sub-parser) the one `usage_error` reports with."""
    parser.set_defaults(**{_PARSER: parser})


def usage_error(args: argparse.Namespace, message: str) -> NoReturn:
    """Exits 2 with ``message`` under the command's own usage line (argparse's ``error``)."""
    getattr(args, _PARSER).error(message)
    raise AssertionError("unreachable: argparse's error exits")


def mark_started(args: argparse.Namespace, when: float) -> None:
    setattr(args, _STARTED, when)


def started(args: argparse.Namespace, default: float) -> float:
    """When the run started (``time.perf_counter``), or ``default`` if `main` did not say."""
    return float(getattr(args, _STARTED, default))


def note_issues(args: argparse.Namespace, found: bool) -> None:
    """Records whether the command found bad files, for `for_terminal`'s closed pipe."""
    setattr(args, _HAD_ISSUES, found)


def had_issues(args: argparse.Namespace) -> bool:
    return bool(getattr(args, _HAD_ISSUES, False))


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
            return EXIT_BAD_FILES if had_issues(args) else EXIT_OK

    return wrapped


def print_json(obj: object) -> None:
    json.dump(obj, sys.stdout, indent=1)
    sys.stdout.write("\n")


def print_lines(lines: Sequence[str]) -> None:
    if lines:
        print("\n".join(lines))


def exit_status(ok: bool) -> int:
    return EXIT_OK if ok else EXIT_BAD_FILES


# --- a command's table ----------------------------------------------------------------------
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
        return text + ("\n\n" + EXIT_POLICY if self.exit_policy else "")


EXIT_POLICY = (
    "exit status:\n"
    "  0  every file is good\n"
    "  1  a bad file; also a PATH that does not exist, a directory with no .npy files,\n"
    "     a pattern that matches nothing (each is listed as a bad file), an incomplete\n"
    "     pack, and (verify) INPUTS and LABELS that do not pair up\n"
    "  2  usage error (bad options or arguments)"
)
#: Threads for reading headers: ThreadPoolExecutor's own default for I/O-bound work (reading
#: headers waits on I/O; bench/README.md, "npyio verify", has the measurements by thread count).
DEFAULT_JOBS = min(32, (os.cpu_count() or 1) + 4)


# --- options that more than one command takes ----------------------------------------------
def paths_option(nargs: str) -> Option:
    return option(
        "paths",
        nargs=nargs,
        type=path_arg,
        metavar="PATH",
        help="files, directories (their *.npy, not recursive; hidden files, whose names begin\n"
        "with '.', and other files there are ignored) or quoted glob patterns; a file named\n"
        "explicitly is checked whatever its name. Any TensorFlow filesystem path works\n"
        "(gs://..., ram://...).",
    )


def jobs_option(help: str) -> Option:
    return option("--jobs", "-j", type=positive_int, default=DEFAULT_JOBS, metavar="N", help=help)


def spec_options(labels: str, dims: str) -> tuple[Option, ...]:
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


class SpecArguments(TypedDict):
    """What `spec_options` adds, by `npyio.dataset`'s names for it."""

    dtype: object
    shape: object
    label_dtype: object
    label_shape: object


def spec_arguments(args: argparse.Namespace) -> SpecArguments:
    """The `spec_options` a command was given, as `npyio.dataset`'s keyword arguments."""
    return SpecArguments(
        dtype=args.dtype,
        shape=args.shape,
        label_dtype=args.label_dtype,
        label_shape=args.label_shape,
    )


def crop_options() -> tuple[Option, ...]:
    """``--crop``, ``--label-crop``: a random window of each sample instead of the whole, the
    arguments of `npyio.dataset` (``--label-crop`` is ``"same"`` unless given, its default)."""
    return (
        option(
            "--crop",
            type=crop_arg,
            metavar="DIMS",
            help="read a random window of each input, as npyio.dataset(crop=...): 64,64,64\n"
            "(the leading axes, sized by each file where their shapes differ)",
        ),
        option(
            "--label-crop",
            type=label_crop_arg,
            default="same",
            metavar="same|none|DIMS",
            help="with --crop and LABELS: the labels' window, as npyio.dataset(label_crop=...):\n"
            "same (the inputs' window: the default), none (labels whole) or their own sizes",
        ),
    )


class CropArguments(TypedDict):
    """What `crop_options` adds, by `npyio.dataset`'s names for it."""

    crop: object
    label_crop: object


def crop_arguments(args: argparse.Namespace) -> CropArguments:
    """The `crop_options` a command was given, as `npyio.dataset`'s keyword arguments."""
    return CropArguments(crop=args.crop, label_crop=args.label_crop)


JSON = option("--json", action="store_true", help="print JSON on stdout")
QUIET = option("--quiet", "-q", action="store_true", help="no progress on stderr")
