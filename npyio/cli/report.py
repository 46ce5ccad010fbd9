"""How ``npyio inspect`` and ``npyio verify`` print what they found: summaries, tables, notes.

Everything here turns checked files and counts into lines of text or JSON-ready values; what
is checked is `npyio.cli.verify`'s, and which lines make up a command's output is
`npyio.cli.main`'s.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from npyio._format import npy
from npyio._format.header import Checked

__all__ = [
    "FILE_COLUMNS",
    "Summary",
    "dtype_label",
    "file_json",
    "file_row",
    "file_table",
    "human_bytes",
    "nonfinite_notes",
    "paragraphs",
    "plural",
    "reasons_json",
    "summary_block",
    "table",
]

#: The columns of ``inspect``'s table, one row per good file (`file_row`).
FILE_COLUMNS = ["version", "dtype", "shape", "order", "header", "payload", "path"]
#: The columns of `FILE_COLUMNS` that are numbers, aligned right.
_NUMBER_COLUMNS = (4, 5)
#: NaN notes listed one by one before the rest are counted.
MAX_NOTES = 10


# --- words and layout -----------------------------------------------------------------------
def plural(n: int, noun: str) -> str:
    """``n`` and ``noun``, with an ``s`` unless ``n`` is 1.

    Example:
        >>> plural(1, "file"), plural(1200, "bad file")
        ('1 file', '1,200 bad files')
    """
    return f"{n:,} {noun}{'s' * (n != 1)}"


def human_bytes(n: int) -> str:
    """``123 B``, ``4.6 kB``, ``16.8 MB``, ... (SI units).

    Example:
        >>> human_bytes(999), human_bytes(1500), human_bytes(2 * 10**15)
        ('999 B', '1.5 kB', '2000.0 TB')
    """
    size = float(n)
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if size < 1000 or unit == "TB":
            return f"{n} B" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1000
    raise AssertionError("unreachable")


def table(rows: Sequence[Sequence[str]], right: Sequence[int] = ()) -> list[str]:
    """Rows padded into aligned columns (two spaces apart); the last column is not padded.

    Args:
        rows: the cells, every row as long as the first.
        right: the columns aligned right (the others are aligned left).

    Example:
        >>> table([["n", "name"], ["10", "a"], ["2", "bc"]], right=(0,))
        [' n  name', '10  a', ' 2  bc']
    """
    if not rows:
        return []
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = []
    for r in rows:
        cells = [
            (cell.rjust(w) if i in right else cell.ljust(w)) if i < len(r) - 1 else cell
            for i, (cell, w) in enumerate(zip(r, widths, strict=True))
        ]
        out.append("  ".join(cells).rstrip())
    return out


def paragraphs(blocks: Iterable[Sequence[str]]) -> list[str]:
    """The lines of ``blocks``, one blank line between two blocks; empty blocks are dropped.

    Example:
        >>> paragraphs([["a", "b"], [], ["c"]])
        ['a', 'b', '', 'c']
    """
    lines: list[str] = []
    for block in blocks:
        if block:
            lines += [*([""] if lines else []), *block]
    return lines


def reasons_json(found: Iterable[tuple[str, str]]) -> list[dict[str, str]]:
    """``(path, reason)`` pairs as ``--json`` lists them.

    Example:
        >>> reasons_json([("a.npy", "bad magic")])
        [{'path': 'a.npy', 'reason': 'bad magic'}]
    """
    return [{"path": path, "reason": reason} for path, reason in found]


# --- summaries ------------------------------------------------------------------------------
def dtype_label(header: npy.NpyHeader) -> str:
    """``float32``; with the descr for a byte order other than the machine's: ``float32 (>f4)``."""
    dt = header.dtype
    native = dt.byteorder in "=|" or dt.byteorder == npy.NATIVE_ORDER
    return dt.name if native else f"{dt.name} ({dt.str})"


@dataclass
class Summary:
    """Counts for a set of files: how many, how many bad, bytes, dtype/shape combinations."""

    files: int = 0
    bad: int = 0
    bytes: int = 0
    groups: Counter[tuple[str, tuple[int, ...]]] = field(default_factory=Counter)

    @classmethod
    def of(cls, checked: Iterable[Checked], bad_paths: set[str]) -> Summary:
        """The counts of ``checked``; a file is bad when its path is in ``bad_paths``, and
        only good files count in the dtype/shape combinations."""
        s = cls()
        headers: Counter[npy.NpyHeader] = Counter()
        for c in checked:
            s.files += 1
            s.bad += c.path in bad_paths
            s.bytes += c.size or 0
            if c.header is not None and c.ok:
                headers[c.header] += 1
        for h, n in headers.items():  # (few distinct headers: name them once each)
            s.groups[(h.dtype.name, h.shape)] += n
        return s

    def to_json(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "bad": self.bad,
            "bytes": self.bytes,
            "groups": [
                {"dtype": d, "shape": list(shape), "count": n}
                for (d, shape), n in self.sorted_groups()
            ],
        }

    def sorted_groups(self) -> list[tuple[tuple[str, tuple[int, ...]], int]]:
        """The dtype/shape combinations with their counts, most common first."""
        return sorted(self.groups.items(), key=lambda kv: (-kv[1], kv[0]))

    def lines(self, indent: str = "  ") -> list[str]:
        """The dtype/shape table, most common first."""
        rows = [(f"{n:,}", d, npy.show_shape(s)) for (d, s), n in self.sorted_groups()]
        return [indent + line for line in table(rows, right=(0,))]


def summary_block(name: str, s: Summary) -> list[str]:
    """A directory's summary: ``name: 3 files, 1 bad, 456 B``, then its dtype/shape table."""
    bad = f", {s.bad:,} bad" if s.bad else ""
    return [f"{name}: {plural(s.files, 'file')}{bad}, {human_bytes(s.bytes)}", *s.lines()]


def nonfinite_notes(nonfinite: Mapping[str, int], most: int = MAX_NOTES) -> list[str]:
    """The note on files that hold NaN or infinite values (none: no lines), listing the
    first ``most`` of them.

    Example:
        >>> nonfinite_notes({"a.npy": 1, "b.npy": 2}, most=1)  # doctest: +NORMALIZE_WHITESPACE
        ['note: 2 files hold NaN or infinite values (not counted as bad):',
         '  a.npy: 1 NaN or infinite value', '  and 1 more (see --json)']
    """
    if not nonfinite:
        return []
    n_files = len(nonfinite)
    holds = "holds" if n_files == 1 else "hold"
    lines = [
        f"note: {plural(n_files, 'file')} {holds} NaN or infinite values (not counted as bad):"
    ]
    lines += [
        f"  {p}: {plural(n, 'NaN or infinite value')}" for p, n in list(nonfinite.items())[:most]
    ]
    if n_files > most:
        lines.append(f"  and {n_files - most:,} more (see --json)")
    return lines


# --- one file -------------------------------------------------------------------------------
def _version_text(h: npy.NpyHeader) -> str:
    return f"{h.version[0]}.{h.version[1]}"


def _order_text(h: npy.NpyHeader) -> str:
    return "F" if h.fortran_order else "C"


def _header_of(c: Checked) -> npy.NpyHeader:
    assert c.header is not None, f"{c.path} is not a good file"
    return c.header


def file_json(c: Checked) -> dict[str, Any]:
    """One good file as ``inspect --json`` lists it."""
    h = _header_of(c)
    return {
        "path": c.path,
        "version": _version_text(h),
        "dtype": h.dtype.name,
        "descr": h.dtype.str,
        "shape": list(h.shape),
        "order": _order_text(h),
        "header_bytes": h.data_offset,
        "payload_bytes": h.nbytes,
        "file_bytes": c.size,
    }


def file_row(c: Checked) -> list[str]:
    """One good file as a row of ``inspect``'s table (see `FILE_COLUMNS`)."""
    h = _header_of(c)
    return [
        _version_text(h),
        dtype_label(h),
        npy.show_shape(h.shape),
        _order_text(h),
        str(h.data_offset),
        str(h.nbytes),
        c.path,
    ]


def file_table(good: Sequence[Checked]) -> list[str]:
    """``inspect``'s table: a header line and a row per good file (no files: no lines)."""
    if not good:
        return []
    return table([FILE_COLUMNS] + [file_row(c) for c in good], right=_NUMBER_COLUMNS)
