"""``npyio pack INPUTS [LABELS] -o OUT``: `npyio.pack` from the command line, and ``npyio
verify OUT`` of a packed directory (`verify_packs`).

Progress: a bar on a terminal, a line every 10% elsewhere, none with ``-q``; ``--json`` prints
the summary (`npyio._sources.pack_write.PackSummary`) on stdout.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from npyio._format.packed import incomplete
from npyio._io.packed import read_index, state, verify_pack
from npyio.cli.args import (
    QUIET,
    CommandSpec,
    for_terminal,
    option,
    path_arg,
    size_arg,
    spec_arguments,
    spec_options,
    usage_error,
)
from npyio.cli.progress import Progress
from npyio.cli.report import human_bytes, plural
from npyio.errors import NpyioError, PackIndexError

__all__ = ["PACK", "command", "index_issues", "is_pack", "progress_callback", "verify_packs"]


def command(args: argparse.Namespace) -> int:
    """Runs `npyio.pack` with the command's arguments; 0 when the pack is complete, 1 when
    it is refused or fails (the reason on stderr)."""
    import npyio

    labels: Any = args.labels
    if args.label_values is not None:
        if labels is not None:
            usage_error(args, "give LABELS or --label-values, not both")
        import numpy as np

        labels = np.load(args.label_values, allow_pickle=False)
    bar = None
    try:
        if not args.quiet:
            bar = Progress(0, "packing")
        summary = npyio.pack(
            args.inputs,
            labels,
            out=args.out,
            shard_size=args.shard_size,
            shuffle=args.shuffle,
            seed=args.seed,
            overwrite=args.overwrite,
            from_directory=args.from_directory,
            check=not args.no_check,
            **spec_arguments(args),
            key=args.key,
            label_key=args.label_key,
            progress=None if bar is None else progress_callback(bar),
        )
    except (NpyioError, ValueError, TypeError, OSError) as e:
        if bar is not None:
            bar.close()
        print(f"npyio pack: {e}", file=sys.stderr)
        return 1
    if bar is not None:
        bar.close()
    if args.json:
        json.dump(summary.to_json(), sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        print(
            f"packed {plural(summary.rows, 'row')} into {plural(summary.shards, 'shard')} "
            f"({human_bytes(summary.bytes)}) in {summary.out}, {summary.seconds:.2f} s"
        )
    return 0


def progress_callback(bar: Progress) -> Any:
    """Progress's update, its total set from the first call (pack knows it then)."""

    def update(rows: int, total: int | None = None) -> None:
        if total is not None:
            bar.total = max(total, 1)
        bar.update(rows)

    return update


def is_pack(path: str) -> bool:
    """Whether ``path`` is a packed directory (complete or not), for ``npyio verify``."""
    try:
        return state(path) is not None
    except (OSError, ValueError):
        return False


def index_issues(paths: list[str]) -> list[tuple[str, str]]:
    """``npyio inspect``: the index of each packed directory among ``paths`` checked as
    `npyio.dataset` checks it; (index, reason) for each one that lies."""
    issues = []
    for path in filter(is_pack, paths):
        try:
            read_index(path)
        except PackIndexError as e:
            issues.append((e.path, e.reason))
        except (NpyioError, OSError):  # an incomplete pack: its files are listed as they are
            pass
    return issues


def verify_packs(paths: list[str], as_json: bool) -> int:
    """``npyio verify OUT``: every shard of each pack against its index; prints each
    damaged or missing shard as ``path: reason`` and a verdict per pack; 1 if any is bad."""
    docs, ok = [], True
    for path in paths:
        index, problems = verify_pack(path)
        ok = ok and not problems
        if index is None and state(path) == "incomplete":  # not a bad shard: no index at all
            problems = [(path, str(incomplete(path)).removeprefix(f"{path}: "))]
        files = 0 if index is None else len(index.shards) * len(index.parts)
        size = 0 if index is None else sum(sum(s.sizes) for s in index.shards)
        rows = 0 if index is None else index.count
        if as_json:
            docs.append(
                {
                    "pack": path,
                    "ok": not problems,
                    "rows": rows,
                    "files": files,
                    "bytes": size,
                    "bad": [{"path": p, "reason": r} for p, r in problems],
                }
            )
            continue
        for p, r in problems:
            print(f"{p}: {r}")
        if index is None:
            print(f"verified pack {path}: {problems[0][1].split(' -- ')[0]}, nothing checked")
            continue
        verdict = "all good" if not problems else plural(len(problems), "bad shard file")
        print(
            f"verified pack {path}: {plural(rows, 'row')}, {plural(files, 'shard file')} "
            f"({human_bytes(size)}), sizes and SHA-256: {verdict}"
        )
    if as_json:
        json.dump({"ok": ok, "packs": docs}, sys.stdout, indent=1)
        sys.stdout.write("\n")
    return 0 if ok else 1


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
        option(
            "inputs",
            type=path_arg,
            metavar="INPUTS",
            help="a directory, glob or file, as npyio.dataset",
        ),
        option(
            "labels",
            nargs="?",
            type=path_arg,
            metavar="LABELS",
            help="label files, paired as npyio.dataset",
        ),
        option(
            "--out",
            "-o",
            required=True,
            type=path_arg,
            metavar="OUT",
            help="the directory to write",
        ),
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
        *spec_options("", "fixed: a shard holds rows of one shape"),
        option(
            "--no-check",
            action="store_true",
            help="skip checking every header first (an odd file then fails the pack when it is "
            "read, and what was written is removed)",
        ),
        option("--json", action="store_true", help="print a JSON summary on stdout"),
        QUIET,
    ),
    run=for_terminal(command),
)
