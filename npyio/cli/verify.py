"""What ``npyio inspect`` and ``npyio verify`` do: resolve, check, compare with the spec, decode.

Sources are resolved by `npyio._data.paths` and paired by its rule; files are checked by the one
header reader, `npyio._format.header.check_files` (headers and sizes, with the graph decoder's
grammar,
limits and wording); every good file is then compared with the spec `npyio.dataset` would use
(`npyio._data.plan.derive_spec` and `Spec.reason`), so that ``verify`` passes exactly the files
``dataset`` delivers. ``--full`` then reads every good file through the graph decoder
(`npyio.read_npy`), one ``tf.data`` pipeline per dtype and shape.

Nothing here imports TensorFlow unless a path needs ``tf.io.gfile`` or ``--full`` decodes.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from npyio._data.paths import Source, pair, unpaired
from npyio._format import npy
from npyio._format.files import NO_SUCH_FILE
from npyio._format.header import Checked, Limits, check_files
from npyio._format.spec import Spec, derive_spec
from npyio.cli.report import Summary
from npyio.errors import NpyFormatError

__all__ = ["Outcome", "decode_files", "op_reason", "scan", "spec_issues"]


def no_label(labels: str) -> str:
    return f"unpaired -- no file of this name in the labels {labels}"


def no_input(inputs: str) -> str:
    return f"unpaired -- no file of this name in the inputs {inputs}"


def _tf() -> Any:
    import tensorflow as tf

    return tf


# --- --full: decoding through the graph decoder -----------------------------------------------
_GRAPH_ASSERT = re.compile(r"assertion failed: \[(.*?)\]\n\t \[\[\{\{", re.DOTALL)


def op_reason(err: Exception, path: str) -> str:
    """The reason in a TensorFlow error about ``path``, without the path and TF's noise."""
    message = getattr(err, "message", str(err))
    m = _GRAPH_ASSERT.search(message)
    if m:  # npyio's own message, C-escaped by the graph runtime
        raw, _ = codecs.escape_decode(m.group(1).encode("utf-8"))
        text = raw.decode("utf-8", "replace")
        return text[len(path) + 2 :] if text.startswith(f"{path}: ") else text
    if type(err).__name__ == "NotFoundError":
        return NO_SUCH_FILE
    last = message.strip().splitlines()[-1] if message.strip() else type(err).__name__
    return re.sub(r"\{\{[^}]*\}\}\s*", "", last).strip()


def decode_files(
    files: Sequence[Checked], jobs: int, on_file: Callable[[int], None] = lambda n: None
) -> tuple[dict[str, str], dict[str, int]]:
    """Reads every file through `npyio.read_npy`: one ``tf.data`` pipeline per dtype and shape.

    Returns ``{path: reason}`` for the files the graph decoder refuses, and ``{path: count}``
    for float or complex files that hold NaN or infinite values.
    """
    tf = _tf()
    from npyio._read.api import read_npy

    groups: dict[tuple[str, tuple[int, ...]], list[str]] = {}
    for c in files:
        assert c.header is not None, "only good files are decoded"
        groups.setdefault((c.header.dtype.name, c.header.shape), []).append(c.path)
    bad: dict[str, str] = {}
    nonfinite: dict[str, int] = {}
    for (dtype, shape), paths in groups.items():
        floating = dtype.startswith(("float", "complex"))

        def probe(
            path: Any, dtype: str = dtype, shape: tuple[int, ...] = shape, floating: bool = floating
        ) -> Any:
            x = read_npy(path, dtype, shape)
            # Outputs must depend on the values, or the decode is pruned from the graph.
            nonzero = tf.math.count_nonzero(x, dtype=tf.int64)
            if not floating:
                return nonzero, tf.zeros([], tf.int64)
            finite = tf.math.is_finite(tf.math.abs(x) if dtype.startswith("complex") else x)
            return nonzero, tf.math.count_nonzero(tf.logical_not(finite), dtype=tf.int64)

        ds = tf.data.Dataset.from_tensor_slices(paths).map(
            probe, num_parallel_calls=max(jobs, 1), deterministic=True
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


# --- the spec npyio.dataset would use ---------------------------------------------------------
@dataclass(frozen=True)
class SpecCheck:
    """Files that ``npyio.dataset`` would load as one part of its elements (in its order, so
    that the first is the one it takes the spec from), and the spec arguments given."""

    paths: Sequence[str]
    what: str = "inputs"
    dtype: object = None
    shape: object = None


def _spec_text(spec: Spec) -> str:
    shape = "any shape" if spec.shape is None else npy.show_shape(spec.shape)
    return f"{spec.dtype.name} {shape}"


def spec_issues(check: SpecCheck, checked: dict[str, Checked]) -> list[tuple[str, str]]:
    """``(path, reason)`` for each good file that ``npyio.dataset`` would refuse under the spec
    it derives (`derive_spec`: the arguments, else the first file's header), in the words its
    graph parser uses. A spec argument that the first header contradicts is reported against
    that file, as ``dataset`` refuses it when built."""
    good = [checked[p] for p in check.paths if checked[p].ok]
    if not good:
        return []
    # A bad first file is already reported; the others are compared with the first good one.
    first = check.paths[0] if checked[check.paths[0]].ok else good[0].path
    try:
        spec = derive_spec(first, check.dtype, check.shape, check.what)
    except NpyFormatError as e:
        return [(e.path, e.reason)]
    given = check.dtype is not None and check.shape is not None
    source = "as given" if given else f"from {first}"
    out = []
    # The first file too: a spec derived from it fits it, but with dtype and shape both given
    # dataset reads no header when built and refuses a first file unlike them when it gets there.
    for c in good:
        assert c.header is not None
        reason = spec.reason(c.header, c.path)
        if reason is not None:
            out.append(
                (
                    c.path,
                    f"{reason} (npyio.dataset loads the {check.what} as "
                    f"{_spec_text(spec)}, {source})",
                )
            )
    return out


# --- one run: find, check, (decode), collect the verdicts -------------------------------------
@dataclass
class Outcome:
    """Everything ``inspect`` and ``verify`` report."""

    sources: list[Source]
    checked: list[Checked]  # every file, once, in the order found
    issues: list[tuple[str, str]]  # (path or argument, reason), in the order found
    nonfinite: dict[str, int]
    seconds: float
    #: (path, reason) for good files that npyio.dataset would refuse under its spec
    mismatches: list[tuple[str, str]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.issues and not self.mismatches

    @property
    def bad_paths(self) -> set[str]:
        return {p for p, _ in self.issues}

    def summary(self, source: Source | None = None) -> Summary:
        """Counts for one directory or glob source, or for all files."""
        bad = self.bad_paths
        if source is None:
            return Summary.of(self.checked, bad)
        by_path = self._by_path()
        return Summary.of((by_path[p] for p in source.paths), bad)

    def _by_path(self) -> dict[str, Checked]:
        return {c.path: c for c in self.checked}


def scan(
    sources: list[Source],
    *,
    jobs: int,
    progress: bool,
    full: bool = False,
    extra: Sequence[tuple[str, str]] = (),
    specs: Sequence[SpecCheck] = (),
    limits: Limits = Limits(),
) -> Outcome:
    """Checks the files of ``sources`` (each once), then each of ``specs``; with ``full``,
    decodes the good files.

    ``extra`` holds further ``(path, reason)`` verdicts (unpaired names), merged in order.
    """
    import time

    from npyio.cli.progress import Progress

    start = time.perf_counter()
    paths = list(dict.fromkeys(p for s in sources for p in s.paths))
    with Progress(len(paths), "checking", enabled=progress and bool(paths)) as bar:
        checked = check_files(paths, jobs, bar.update, limits)
    by_path = {c.path: c for c in checked}
    mismatches = [issue for check in specs for issue in spec_issues(check, by_path)]
    reasons: dict[str, list[str]] = {}
    for c in checked:
        if c.reason is not None:
            reasons.setdefault(c.path, []).append(c.reason)
    nonfinite: dict[str, int] = {}
    if full:
        good = [c for c in checked if c.ok]
        with Progress(len(good), "decoding", enabled=progress and bool(good)) as bar:
            refused, found = decode_files(good, jobs, bar.update)
        nonfinite = {c.path: found[c.path] for c in good if c.path in found}  # in file order
        for path, reason in refused.items():
            reasons.setdefault(path, []).append(reason)
    for path, reason in extra:
        reasons.setdefault(path, []).append(reason)
    issues: list[tuple[str, str]] = []
    seen: set[str] = set()
    for s in sources:
        if s.problem is not None:
            issues.append((s.arg, s.problem))
        for p in s.paths:
            if p not in seen:
                seen.add(p)
                issues += [(p, r) for r in reasons.get(p, [])]
    return Outcome(sources, checked, issues, nonfinite, time.perf_counter() - start, mismatches)


def pairing(inputs: Source, labels: Source) -> tuple[list[tuple[str, str]], list[SpecCheck]]:
    """``verify --pairs``: the unpaired files, as ``(path, reason)``, and the two spec checks
    over the pairs in ``npyio.dataset``'s order. Nothing is paired when a side has a problem
    (a missing path is one line, not a line per file of the other side)."""
    if inputs.problem is not None or labels.problem is not None:
        return [], []
    only_x, only_y = unpaired(inputs, labels)
    if only_x or only_y:
        kind = {"dir": "directory", "glob": "glob", "file": "file", "list": "list"}
        return [(p, no_label(f"{kind[labels.kind]} {labels.arg}")) for p in only_x] + [
            (p, no_input(f"{kind[inputs.kind]} {inputs.arg}")) for p in only_y
        ], []
    try:
        xs, ys = pair(inputs, labels)
    except ValueError as e:  # two files share a name
        return [(inputs.arg, str(e))], []
    return [], [SpecCheck(xs, "inputs"), SpecCheck(ys, "labels")]
