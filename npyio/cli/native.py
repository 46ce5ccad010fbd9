"""``npyio native``: whether npyio's native reader is active, where its library is and why
not; ``npyio native --build`` builds it ahead of time (for Docker images and clusters)."""

from __future__ import annotations

import argparse
import dataclasses
import sys

from npyio._native import library
from npyio.cli.args import EXIT_BAD_FILES, EXIT_OK, CommandSpec, option, print_json, print_lines
from npyio.errors import BackendUnavailableError

__all__ = ["NATIVE", "command", "status_lines"]


def status_lines(status: library.NativeStatus) -> list[str]:
    """The status as ``npyio native`` prints it.

    Example:
        >>> s = library.NativeStatus("auto", True, "/c/native/k/npyio_native.so", None, "k", True)
        >>> print("\\n".join(status_lines(s)))
        native reader: active
          mode:    auto (NPYIO_NATIVE unset: used where it builds)
          library: /c/native/k/npyio_native.so (built)
          key:     k
    """
    state = "active" if status.available else "off" if status.mode == "off" else "not active"
    modes = {
        "auto": "NPYIO_NATIVE unset: used where it builds",
        "off": "NPYIO_NATIVE=0: never used",
        "required": "NPYIO_NATIVE=1: an error where it cannot be had",
    }
    lines = [f"native reader: {state}", f"  mode:    {status.mode} ({modes[status.mode]})"]
    if status.library is not None:
        lines.append(f"  library: {status.library} ({'built' if status.built else 'not built'})")
        lines.append(f"  key:     {status.key}")
    if status.reason is not None:
        lines.append(f"  why not: {status.reason}")
    return lines


def command(args: argparse.Namespace) -> int:
    """Prints the status (``--build``: after building); 1 where ``--build`` cannot build."""
    code = EXIT_OK
    if args.build:
        try:
            library.build()
        except BackendUnavailableError as e:
            print(f"npyio native: {e}", file=sys.stderr)
            code = EXIT_BAD_FILES
    status = library.status()
    if args.json:
        print_json(dataclasses.asdict(status))
    else:
        print_lines(status_lines(status))
    return code


NATIVE = CommandSpec(
    "native",
    help="show whether the native reader is active, or build it ahead of time",
    description=(
        "npyio's native reader is a small C++ TensorFlow op that reads a batch of .npy files\n"
        "straight into one tensor. pip installs no compiled code: the op is built against the\n"
        "installed TensorFlow at first use (with a C++ compiler: $CXX, else c++ or g++ on\n"
        "PATH) and cached in $NPYIO_CACHE/native, else ~/.cache/npyio/native, one library\n"
        "per TensorFlow, compiler and npyio. Without --build this shows whether it is active,\n"
        "its library and cache key, and why not; --build builds it now (a Docker image or a\n"
        "cluster's shared cache then needs no compiler at run time) and exits 1 with the reason\n"
        "if it cannot. NPYIO_NATIVE=0 turns it off, NPYIO_NATIVE=1 makes it required."
    ),
    examples=("npyio native", "npyio native --build", "npyio native --json | jq '.available'"),
    options=(
        option("--build", action="store_true", help="build the library now if it is not built"),
        option("--json", action="store_true", help="print the status as JSON"),
    ),
    run=command,
)
