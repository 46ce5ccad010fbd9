"""How ``npyio inspect`` and ``npyio verify`` print what they found: summaries and tables."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
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
    "human_bytes",
    "table",
]


# --- summaries --------------------------------------------------------------------------------
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
        return sorted(self.groups.items(), key=lambda kv: (-kv[1], kv[0]))

    def lines(self, indent: str = "  ") -> list[str]:
        """The dtype/shape table, most common first."""
        rows = [(f"{n:,}", d, npy.show_shape(s)) for (d, s), n in self.sorted_groups()]
        return [indent + line for line in table(rows, right=(0,))]


def human_bytes(n: int) -> str:
    """``123 B``, ``4.6 kB``, ``16.8 MB``, ... (SI units)."""
    size = float(n)
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if size < 1000 or unit == "TB":
            return f"{n} B" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1000
    raise AssertionError("unreachable")


def table(rows: Sequence[Sequence[str]], right: Sequence[int] = ()) -> list[str]:
    """Rows padded into aligned columns (two spaces apart); the last column is not padded."""
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


def file_json(c: Checked) -> dict[str, Any]:
    """One good file as ``inspect --json`` lists it."""
    h = c.header
    assert h is not None
    return {
        "path": c.path,
        "version": f"{h.version[0]}.{h.version[1]}",
        "dtype": h.dtype.name,
        "descr": h.dtype.str,
        "shape": list(h.shape),
        "order": "F" if h.fortran_order else "C",
        "header_bytes": h.data_offset,
        "payload_bytes": h.nbytes,
        "file_bytes": c.size,
    }


def file_row(c: Checked) -> list[str]:
    """One good file as a row of ``inspect``'s table (see `FILE_COLUMNS`)."""
    h = c.header
    assert h is not None
    return [
        f"{h.version[0]}.{h.version[1]}",
        dtype_label(h),
        npy.show_shape(h.shape),
        "F" if h.fortran_order else "C",
        str(h.data_offset),
        str(h.nbytes),
        c.path,
    ]


FILE_COLUMNS = ["version", "dtype", "shape", "order", "header", "payload", "path"]
