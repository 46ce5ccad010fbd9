"""``npyio inspect PATH...``: what ``.npy`` files hold, a row per file and a summary per
directory; scanned by `npyio.cli.verify.scan`, printed by `npyio.cli.report`."""

from __future__ import annotations

import argparse
import sys

from npyio._format.header import Checked
from npyio._pipeline.paths import Source
from npyio.cli import pack, report, verify
from npyio.cli.args import (
    DEFAULT_JOBS,
    JSON,
    QUIET,
    CommandSpec,
    exit_status,
    for_terminal,
    jobs_option,
    note_issues,
    option,
    paths_option,
    print_json,
    print_lines,
)

__all__ = ["INSPECT", "inspect_command"]


# --- npyio inspect --------------------------------------------------------------------------
def inspect_command(args: argparse.Namespace) -> int:
    """``npyio inspect PATH...``: a row per good file, a summary per directory, the bad files
    on stderr; exits 1 if any file is bad."""
    sources = verify.resolve_paths(args.paths)
    out = verify.scan(sources, jobs=args.jobs, progress=not args.quiet)
    issues = pack.index_issues(args.paths) + out.issues  # a pack's index is input too
    note_issues(args, bool(issues))
    directories = verify.directories(sources)
    rows = None if args.summary else [c for c in out.checked if c.ok]
    if args.json:
        print_json(_inspect_json(out, directories, rows, issues))
    else:
        blocks = [report.file_table(rows or []), *verify.summary_blocks(out, directories)]
        print_lines(report.paragraphs(blocks))
    for path, reason in issues:
        print(f"npyio inspect: {path}: {reason}", file=sys.stderr)
    return exit_status(not issues)


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
    doc["directories"] = verify.directories_json(out, directories)
    return doc


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
        paths_option("+"),
        option(
            "--summary",
            "-s",
            action="store_true",
            help="print only the summaries, not a row per file",
        ),
        JSON,
        jobs_option(f"threads reading headers (default: {DEFAULT_JOBS})"),
        QUIET,
    ),
    run=for_terminal(inspect_command),
    exit_policy=True,
)
