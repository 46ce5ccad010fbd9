"""What ``npyio inspect`` and ``npyio verify`` do: resolve, check, compare with the spec, decode.

``verify`` checks what `npyio.dataset` reads, planned as ``dataset`` plans it
(`npyio._sources.plan`: `resolve_parts`, `paired` and `spec_rules`, the steps of `plan_dataset`),
so that the two cannot disagree: each call it stands for (`Call`: ``npyio.dataset(PATH)``, or
``npyio.dataset(INPUTS, LABELS)`` with its pairing) gets its parts and each part's `SpecRule`
from the plan. Files are checked by the one header reader, `npyio._io.header.check_files`
(headers and sizes, with the graph decoder's grammar, limits and wording); every good file is
then compared with the spec its part's rule derives (`spec_issues`: `SpecRule.derive` and
`npyio._format.spec.Layout.reason` of `Spec.file`), so that ``verify`` passes exactly the
files ``dataset`` delivers. ``--full`` then reads every good file through the graph decoder
(`npyio.read_npy`), one ``tf.data`` pipeline per dtype and shape.

A run is planned (`plan`: its calls), scanned (`scan`) and comes back as an `Outcome`, which
`verify_command` (``npyio verify``) and `npyio.cli.inspect` print with `npyio.cli.report`, as
text or ``--json``.

Nothing here imports TensorFlow unless a path needs ``tf.io.gfile`` or ``--full`` decodes.
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from npyio._format import npy
from npyio._format.files import NO_SUCH_FILE
from npyio._format.header import Checked, Limits
from npyio._format.spec import Spec
from npyio._format.window import ERROR, Crop, named_axes, unequal_axes
from npyio._format.window import resolve as resolve_window
from npyio._io.header import check_files
from npyio._pipeline.options import ReadOptions
from npyio._pipeline.paths import Source, resolve, unpaired
from npyio._sources.plan import (
    Parts,
    SpecRule,
    crop_of,
    cropped_spec,
    paired,
    resolve_parts,
    shares_window,
    spec_rules,
)
from npyio._tf import graph_assertion, last_line
from npyio.cli import pack, report
from npyio.cli.args import (
    DEFAULT_JOBS,
    JSON,
    QUIET,
    CommandSpec,
    crop_arguments,
    crop_options,
    exit_status,
    for_terminal,
    jobs_option,
    note_issues,
    option,
    paths_option,
    print_json,
    print_lines,
    spec_arguments,
    spec_options,
    started,
    usage_error,
)
from npyio.cli.progress import Progress
from npyio.cli.report import Summary
from npyio.errors import NpyFormatError

__all__ = [
    "SIDES",
    "VERIFY",
    "Call",
    "Outcome",
    "decode_files",
    "directories",
    "directories_json",
    "op_reason",
    "pair_issues",
    "plan",
    "plan_call",
    "resolve_paths",
    "scan",
    "spec_issues",
    "summary_blocks",
    "verify_command",
]

#: The word for each kind of `Source`, in the reason of an unpaired file.
_KIND_WORDS = {"dir": "directory", "glob": "glob", "file": "file", "list": "list"}
#: The two sides of ``verify INPUTS LABELS``, as its messages name them.
SIDES = ("INPUTS", "LABELS")


# --- the sources ----------------------------------------------------------------------------
def resolve_paths(paths: Iterable[str]) -> list[Source]:
    """Each PATH argument as a `Source`; one that names no file carries its ``problem``.

    Example:
        >>> [(s.kind, s.problem) for s in resolve_paths(["/no/such/dir"])]
        [('missing', 'no such file or directory')]
    """
    return [resolve(arg, "PATH", strict=False) for arg in paths]


def directories(sources: Iterable[Source]) -> list[Source]:
    """The directory and glob sources that found files, each argument once, in order: the
    sources that ``inspect`` and ``verify`` summarise (a file named on its own is not)."""
    found = {s.arg: s for s in sources if s.by_name and s.paths}
    return list(found.values())


# --- --full: decoding through the graph decoder ---------------------------------------------
def op_reason(err: Exception, path: str) -> str:
    """The reason in a TensorFlow error about ``path``, without the path and TF's noise.

    Args:
        err: a ``tf.errors.OpError`` (or any exception with a ``message`` or a text).
        path: the file the error is about.

    Returns:
        npyio's own words when the error is one of its graph assertions (unescaped, the path
        cut off), ``no such file or directory`` for a ``NotFoundError``, else the last line of
        TensorFlow's message without its ``{{node ...}}`` annotations.

    Example:
        >>> op_reason(ValueError("a.npy: bad header"), "a.npy")
        'a.npy: bad header'
    """
    message = getattr(err, "message", str(err))
    text = graph_assertion(message)
    if text is not None:  # npyio's own message
        return text[len(path) + 2 :] if text.startswith(f"{path}: ") else text
    if type(err).__name__ == "NotFoundError":
        return NO_SUCH_FILE
    return last_line(message) if message.strip() else type(err).__name__


def _by_header(files: Sequence[Checked]) -> dict[tuple[str, tuple[int, ...]], list[str]]:
    """The paths of good files grouped by dtype name and shape, in file order."""
    groups: dict[tuple[str, tuple[int, ...]], list[str]] = {}
    for c in files:
        assert c.header is not None, "only good files are decoded"
        groups.setdefault((c.header.dtype.name, c.header.shape), []).append(c.path)
    return groups


def _probe(dtype: str, shape: tuple[int, ...]) -> Callable[[Any], Any]:
    """A map function: a path -> (its nonzero count, its count of NaN or infinite values),
    decoding the file with `npyio.read_npy` as ``dtype`` ``shape``."""
    import tensorflow as tf

    from npyio._read.api import read_npy

    floating = dtype.startswith(("float", "complex"))

    def probe(path: Any) -> Any:
        x = read_npy(path, dtype, shape)
        # Outputs must depend on the values, or the decode is pruned from the graph.
        nonzero = tf.math.count_nonzero(x, dtype=tf.int64)
        if not floating:
            return nonzero, tf.zeros([], tf.int64)
        finite = tf.math.is_finite(tf.math.abs(x) if dtype.startswith("complex") else x)
        return nonzero, tf.math.count_nonzero(tf.logical_not(finite), dtype=tf.int64)

    return probe


def decode_files(
    files: Sequence[Checked], jobs: int, on_file: Callable[[int], None] = lambda n: None
) -> tuple[dict[str, str], dict[str, int]]:
    """Reads every file through `npyio.read_npy`: one ``tf.data`` pipeline per dtype and shape.

    Args:
        files: good files (their headers read), as `check_files` returns them.
        jobs: files decoded in parallel.
        on_file: called with 1 after each file.

    Returns:
        ``{path: reason}`` for the files the graph decoder refuses (a file changed since its
        check, say), and ``{path: count}`` for float or complex files that hold NaN or
        infinite values.
    """
    import tensorflow as tf

    bad: dict[str, str] = {}
    nonfinite: dict[str, int] = {}
    for (dtype, shape), paths in _by_header(files).items():
        ds = tf.data.Dataset.from_tensor_slices(paths).map(
            _probe(dtype, shape), num_parallel_calls=max(jobs, 1), deterministic=True
        )
        it = iter(ds)
        for path in paths:  # an error is that element's; the iterator goes on after it
            try:
                _, n = next(it)
                if int(n):
                    nonfinite[path] = int(n)
            except tf.errors.OpError as e:
                bad[path] = op_reason(e, path)
            on_file(1)
    return bad, nonfinite


# --- the plan: what npyio.dataset reads, planned as it plans it -----------------------------
def _spec_text(spec: Spec) -> str:
    shape = "any shape" if spec.file.shape is None else npy.show_shape(spec.file.shape)
    return f"{spec.file.dtype.name} {shape}"


def spec_issues(
    paths: Sequence[str],
    rule: SpecRule,
    checked: dict[str, Checked],
    side: str = "inputs",
    read: ReadOptions = ReadOptions(),
) -> list[tuple[str, str]]:
    """The good files of one part (``paths``, in ``npyio.dataset``'s order) that
    ``npyio.dataset`` would refuse under the spec ``rule`` derives: the arguments, else the
    first file's header, as `npyio._sources.plan` derives it.

    Args:
        paths: the files of the part.
        rule: the part's rule (`npyio._sources.plan.spec_rules`).
        checked: every file's verdict by path (``paths`` must all be there).
        side: the part's side, whose crop (``read``'s ``crop`` and ``label_crop``) it
            takes: its window's axes are sized by each file as ``dataset`` sizes them
            (`npyio._sources.plan.cropped_spec`), and a file the window does not fit (under
            ``out_of_bounds="error"``) is refused, as ``dataset`` refuses it when read.

    Returns:
        ``(path, reason)`` per refused file, in the words of the graph parser and naming the
        spec. A spec argument that the first header contradicts is reported against that
        file, as ``dataset`` refuses it when built.
    """
    good = [checked[p] for p in paths if checked[p].ok]
    if not good:
        return []
    # A bad first file is already reported; the others are compared with the first good one,
    # unless most files disagree with it: then it is the odd one (a stray file that sorts
    # first), and they are compared with the first file of the most common header.
    first = good[0] if rule.given else _reference(good, rule)
    try:
        spec = cropped_spec(rule.derive(first.path, first), rule, side, read, first.path)
    except NpyFormatError as e:
        return [(e.path, e.reason)]
    if first is good[0]:
        origin = "as given" if rule.given else f"from {first.path}"
    else:
        origin = (
            f"as most of its files hold, {first.path} the first; npyio.dataset refuses a "
            "first file unlike them"
        )
    loads_as = f"npyio.dataset loads the {rule.what} as {_spec_text(spec)}, {origin}"
    out = []
    # The first file too: a spec derived from it fits it, but with dtype and shape both given
    # dataset reads no header when built and refuses a first file unlike them when it gets there.
    crop, group = crop_of(side, read)
    for c in good:
        assert c.header is not None
        reason = spec.file.reason(c.header, c.path)
        if reason is not None:
            out.append((c.path, f"{reason} ({loads_as})"))
        elif crop is not None and crop.out_of_bounds == ERROR:
            try:  # as the reader refuses a case smaller than the window
                resolve_window(crop, c.header.shape, c.path, group)
            except NpyFormatError as e:
                out.append((c.path, e.reason))
    return out


def _reference(good: Sequence[Checked], rule: SpecRule) -> Checked:
    """The file whose header the others of a part are compared with: the first good one,
    unless more files share another header (the dims ``rule``'s shape leaves free aside);
    then the first of those."""
    given = npy.parse_shape(rule.shape)

    def key(c: Checked) -> tuple[object, ...]:
        assert c.header is not None
        shape: tuple[int | None, ...] = c.header.shape
        if given is not None and len(given) == len(shape):
            shape = tuple(None if g is None else d for g, d in zip(given, shape))
        return (c.header.dtype.newbyteorder("="), shape)

    counts = Counter(key(c) for c in good)
    most = max(counts.values())
    if counts[key(good[0])] == most:
        return good[0]
    return next(c for c in good if counts[key(c)] == most)


def pair_issues(call: Call, checked: dict[str, Checked]) -> list[tuple[str, str]]:
    """The pairs whose parts share a random or centred window (``--crop``, the labels taking
    the inputs' window) but differ in size on its axes: ``(path, reason)`` of the later part,
    in the words of the reader that refuses it (`npyio._format.window.unequal_axes`)."""
    shared = [
        (column, crop) for column, crop in zip(call.parts.columns, call.shared) if crop is not None
    ]
    out: list[tuple[str, str]] = []
    if len(shared) < 2:
        return out
    (first_column, first_crop), rest = shared[0], shared[1:]
    for row, path in enumerate(first_column):
        base = _cropped_sizes(checked[path], first_crop)
        for column, crop in rest:
            sizes = _cropped_sizes(checked[column[row]], crop)
            if base is not None and sizes is not None and sizes != base:
                reason = unequal_axes(npy.show_shape(sizes), path, npy.show_shape(base))
                out.append((column[row], reason))
    return out


def _cropped_sizes(c: Checked, crop: Crop) -> tuple[int, ...] | None:
    """A good file's sizes on the axes ``crop`` names; None for a bad file, or one the crop
    does not fit (reported as such)."""
    if c.header is None or not c.ok:
        return None
    axes = named_axes(crop, len(c.header.shape))
    return None if axes is None else tuple(c.header.shape[a] for a in axes)


def _unpaired_reason(other: str, source: Source) -> str:
    return (
        f"unpaired -- no file of this name in the {other} {_KIND_WORDS[source.kind]} {source.arg}"
    )


@dataclass(frozen=True)
class Call:
    """One ``npyio.dataset`` call that ``verify`` checks (``npyio.dataset(PATH)`` or
    ``npyio.dataset(INPUTS, LABELS)``), planned by `npyio._sources.plan` as ``dataset`` plans it.

    Attributes:
        parts: its parts, resolved, and paired when they pair (`npyio._sources.plan.Parts`).
        rules: each part's `SpecRule`; none when the specs are not checked (``--allow-mixed``,
            a source with a problem, parts that do not pair).
        unpaired: ``(path, reason)`` for each file without a partner (or one line for two
            files that share a name), when the parts do not pair.
        refused: the error ``npyio.dataset`` raises for them then (the plan's words).
    """

    parts: Parts
    rules: tuple[SpecRule, ...] = ()
    unpaired: tuple[tuple[str, str], ...] = ()
    refused: str | None = None
    #: each part's crop where it shares the inputs' random or centred window (`pair_issues`)
    shared: tuple[Crop | None, ...] = ()
    #: the arguments the call was planned with (each part's crop, for `spec_issues`)
    read: ReadOptions = ReadOptions()

    @property
    def sources(self) -> list[Source]:
        return self.parts.sources


def _named_sides(parts: Parts) -> Parts:
    """``parts`` of INPUTS LABELS, a source's problem naming its side (``(INPUTS)``), in the
    one line that reports it (the other side's files are then not listed as unpaired)."""
    sources = [
        s if s.problem is None else dataclasses.replace(s, problem=f"{s.problem} ({side})")
        for s, side in zip(parts.sources, SIDES)
    ]
    return dataclasses.replace(parts, sources=sources)


def _not_paired(parts: Parts, error: ValueError) -> Call:
    """INPUTS and LABELS that do not pair: a line per file without a partner of its name (or
    one line for two files that share a name), and ``dataset``'s error."""
    inputs, labels = parts.sources
    only_x, only_y = unpaired(inputs, labels)
    if not (only_x or only_y):  # two files share a name
        return Call(parts, unpaired=((inputs.arg, str(error)),), refused=str(error))
    lines = [(p, _unpaired_reason("labels", labels)) for p in only_x]
    lines += [(p, _unpaired_reason("inputs", inputs)) for p in only_y]
    return Call(parts, unpaired=tuple(lines), refused=str(error))


def plan_call(inputs: str, labels: str | None, read: ReadOptions, specs: bool = True) -> Call:
    """``npyio.dataset(inputs, labels)`` as `npyio._sources.plan` plans it, each source resolved
    without raising (its problem reported instead); ``specs``: check each part's spec.

    Example:
        >>> plan_call("/no/such/dir", None, ReadOptions()).sources[0].problem
        'no such file or directory'
    """
    parts = resolve_parts(inputs, labels, read, strict=False)
    if labels is not None:
        parts = _named_sides(parts)
    if any(s.problem is not None for s in parts.sources):
        return Call(parts)  # nothing is paired: a missing path is one line, not one per file
    try:
        parts = paired(parts)
    except ValueError as e:
        return _not_paired(parts, e)
    shared = tuple(shares_window(side, read) for side in parts.sides)
    rules = spec_rules(parts, read, labels is not None) if specs else ()
    return Call(parts, rules, shared=shared, read=read)


def plan(
    paths: Sequence[str],
    *,
    each: bool = False,
    read: ReadOptions = ReadOptions(),
    allow_mixed: bool = False,
) -> list[Call]:
    """The calls of ``npyio verify PATH...``: two PATHs (without ``each``) are INPUTS and
    LABELS, ``npyio.dataset(INPUTS, LABELS)``, pairing included; otherwise each PATH is
    ``npyio.dataset(PATH)``, whose files must share a spec (unless ``allow_mixed``).

    Args:
        paths: the PATH arguments.
        each: check two PATHs each on its own too.
        read: the spec arguments (``dtype``, ``shape``, ``label_dtype``, ``label_shape``).
        allow_mixed: do not check that the files of a PATH share a spec.
    """
    if len(paths) == 2 and not each:
        return [plan_call(paths[0], paths[1], read)]
    return [plan_call(path, None, read, specs=not allow_mixed) for path in paths]


# --- one run: find, check, (decode), collect the verdicts -----------------------------------
@dataclass
class Outcome:
    """Everything ``inspect`` and ``verify`` report."""

    sources: list[Source]
    checked: list[Checked]  # every file, once, in the order found
    issues: list[tuple[str, str]]  # (path or argument, reason), in the order found
    nonfinite: dict[str, int]
    #: (path, reason) for good files that npyio.dataset would refuse under its spec
    mismatches: list[tuple[str, str]] = field(default_factory=list)
    #: what npyio.dataset raises when built (INPUTS and LABELS that do not pair), its words
    refused: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.issues and not self.mismatches and not self.refused

    @property
    def bad_paths(self) -> set[str]:
        return {p for p, _ in self.issues}

    def summary(self, source: Source | None = None) -> Summary:
        """Counts for one directory or glob source, or for all files."""
        if source is None:
            return Summary.of(self.checked, self.bad_paths)
        by_path = {c.path: c for c in self.checked}
        return Summary.of((by_path[p] for p in source.paths), self.bad_paths)


def _check(paths: Sequence[str], jobs: int, progress: bool, limits: Limits) -> list[Checked]:
    with Progress(len(paths), "checking", enabled=progress and bool(paths)) as bar:
        return check_files(paths, jobs, bar.update, limits)


def _decode(
    good: Sequence[Checked], jobs: int, progress: bool
) -> tuple[dict[str, str], dict[str, int]]:
    """`decode_files` with a progress display; the NaN counts in file order."""
    with Progress(len(good), "decoding", enabled=progress and bool(good)) as bar:
        refused, found = decode_files(good, jobs, bar.update)
    return refused, {c.path: found[c.path] for c in good if c.path in found}


def _in_source_order(
    sources: Sequence[Source], reasons: dict[str, list[str]]
) -> list[tuple[str, str]]:
    """Each source's problem, then its files' reasons, each file once, in argument order."""
    issues: list[tuple[str, str]] = []
    seen: set[str] = set()
    for s in sources:
        if s.problem is not None:
            issues.append((s.arg, s.problem))
        for p in s.paths:
            if p not in seen:
                seen.add(p)
                issues += [(p, r) for r in reasons.get(p, [])]
    return issues


def scan(
    sources: list[Source],
    *,
    jobs: int,
    progress: bool,
    full: bool = False,
    calls: Sequence[Call] = (),
    limits: Limits = Limits(),
) -> Outcome:
    """Checks the files of ``sources`` (each once), then the specs of ``calls``' parts; with
    ``full``, decodes the good files.

    Args:
        sources: resolved arguments (`resolve_paths`, or the sources of ``calls``).
        jobs: files checked (and decoded) in parallel.
        progress: show progress on stderr.
        full: also decode every good file through the graph decoder.
        calls: the planned ``npyio.dataset`` calls (`plan`): each part's files against its
            `SpecRule`; their unpaired files are merged in file order, and what
            ``npyio.dataset`` raises for them kept as ``refused``.
        limits: the header reader's limits.

    Returns:
        The `Outcome`: every file's verdict, the issues in argument order (a source's problem,
        then its files' reasons), the spec mismatches and, with ``full``, the NaN counts.
    """
    paths = list(dict.fromkeys(p for s in sources for p in s.paths))
    checked = _check(paths, jobs, progress, limits)
    by_path = {c.path: c for c in checked}
    mismatches: dict[str, tuple[str, str]] = {}  # a file both sides hold is reported once
    for call in calls:
        for column, rule, side in zip(call.parts.columns, call.rules, call.parts.sides):
            for path, reason in spec_issues(column, rule, by_path, side, call.read):
                mismatches.setdefault(path, (path, reason))
        for path, reason in pair_issues(call, by_path):
            mismatches.setdefault(path, (path, reason))
    found = [(c.path, c.reason) for c in checked if c.reason is not None]
    nonfinite: dict[str, int] = {}
    if full:
        undecoded, nonfinite = _decode([c for c in checked if c.ok], jobs, progress)
        found += undecoded.items()
    reasons: dict[str, list[str]] = {}
    for path, reason in [*found, *(line for call in calls for line in call.unpaired)]:
        reasons.setdefault(path, []).append(reason)
    issues = _in_source_order(sources, reasons)
    refused = [call.refused for call in calls if call.refused is not None]
    return Outcome(sources, checked, issues, nonfinite, list(mismatches.values()), refused)


def directories_json(out: Outcome, sources: Iterable[Source]) -> list[dict[str, Any]]:
    """``--json``'s ``directories``: each source's summary (``inspect`` and ``verify``)."""
    return [{"path": s.arg, **out.summary(s).to_json()} for s in sources]


def summary_blocks(out: Outcome, sources: Iterable[Source]) -> list[list[str]]:
    """The text summary of each source (``inspect`` and ``verify``)."""
    return [report.summary_block(s.arg, out.summary(s)) for s in sources]


# --- the command ------------------------------------------------------------------------------
_REFUSED_HINT = (
    "(npyio.dataset would refuse these when it reaches them; --dtype/--shape/"
    "--label-dtype/--label-shape say what to load, --allow-mixed skips this check)"
)


def verify_command(args: argparse.Namespace) -> int:
    """``npyio verify INPUTS [LABELS]`` (or ``PATH...``): every bad file with its reason, a
    summary per directory and a verdict; exits 1 if any file is bad or would be refused."""
    if not args.paths:
        usage_error(args, "give at least one PATH, or INPUTS LABELS")
    packs = [path for path in args.paths if pack.is_pack(path)]
    if packs:  # a packed directory is checked against its index (npyio pack)
        if len(packs) < len(args.paths):
            usage_error(args, "verify packed directories on their own (no other PATH)")
        return pack.verify_packs(packs, args.json)
    read = ReadOptions.from_arguments({**spec_arguments(args), **crop_arguments(args)})
    calls = plan(args.paths, each=args.each, read=read, allow_mixed=args.allow_mixed)
    out = scan(
        [s for call in calls for s in call.sources],
        jobs=args.jobs,
        progress=not args.quiet,
        full=args.full,
        calls=calls,
    )
    note_issues(args, not out.ok)
    # The whole run, from the start of main: resolving (listing directories, which can take
    # longer than the checks on a remote file system) as well as checking.
    seconds = time.perf_counter() - started(args, time.perf_counter())
    if args.json:
        print_json(_verify_json(out, full=args.full, seconds=seconds))
    else:
        print_lines(_verify_lines(out, full=args.full, seconds=seconds))
    return exit_status(out.ok)


def _checks_done(full: bool) -> str:
    return "headers, sizes and payloads" if full else "headers and sizes"


def _verify_json(out: Outcome, *, full: bool, seconds: float) -> dict[str, object]:
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
        "directories": directories_json(out, directories(out.sources)),
    }
    if full:
        doc["nonfinite"] = [{"path": p, "count": n} for p, n in out.nonfinite.items()]
    return doc


def _verify_lines(out: Outcome, *, full: bool, seconds: float) -> list[str]:
    problems = [f"{path}: {reason}" for path, reason in out.issues + out.mismatches]
    if out.mismatches:
        problems.append(_REFUSED_HINT)
    problems += [f"npyio.dataset(INPUTS, LABELS) refuses them: {e}" for e in out.refused]
    return report.paragraphs(
        [
            problems,
            report.nonfinite_notes(out.nonfinite),
            *summary_blocks(out, directories(out.sources)),
            [_verdict(out, full=full, seconds=seconds)],
        ]
    )


def _verdict(out: Outcome, *, full: bool, seconds: float) -> str:
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
        "checked as npyio.dataset(PATH) reads it. --full also reads and decodes every\n"
        "payload through the graph decoder, as npyio.dataset will (and notes files holding\n"
        "NaN or infinite values, without counting them as bad). A packed directory (npyio\n"
        "pack) is checked against its index.\n\n"
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
        paths_option("*"),
        option(
            "--each",
            action="store_true",
            help="check each PATH on its own, as npyio.dataset(PATH), two PATHs as well",
        ),
        *spec_options(" (with LABELS)", "None for a dim of any size"),
        *crop_options(),
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
        jobs_option(
            f"files checked (and decoded) in parallel (default: {DEFAULT_JOBS},"
            " the CPU count + 4, at most 32: reading headers waits on I/O)"
        ),
        JSON,
        QUIET,
    ),
    run=for_terminal(verify_command),
    exit_policy=True,
)
