"""``npyio.cli.report``: the words, tables and summaries ``inspect`` and ``verify`` print."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from npyio._format import header, npy
from npyio._io import header as io_header
from npyio.cli import report
from tests._npy_testing import npy_bytes


def checked(tmp_path: Path, name: str, arr: np.ndarray, **kwargs: object) -> header.Checked:
    """``arr`` written by numpy's writer to ``name``, checked by the one header reader."""
    path = tmp_path / name
    path.write_bytes(npy_bytes(arr, **kwargs))  # type: ignore[arg-type]
    return io_header.check_file(str(path), {})


def bad(tmp_path: Path, name: str) -> header.Checked:
    path = tmp_path / name
    path.write_bytes(b"not a .npy file")
    found = io_header.check_file(str(path), {})
    assert not found.ok
    return found


# --- words and layout -----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("n", "noun", "text"),
    [
        (0, "file", "0 files"),
        (1, "file", "1 file"),
        (2, "bad file", "2 bad files"),
        (12345, "file", "12,345 files"),
    ],
    ids=["zero", "one", "two", "thousands"],
)
def test_plural(n, noun, text):
    assert report.plural(n, noun) == text


@pytest.mark.parametrize(
    ("n", "text"),
    [
        (0, "0 B"),
        (999, "999 B"),
        (1000, "1.0 kB"),
        (4567, "4.6 kB"),
        (16_800_000, "16.8 MB"),
        (999_949_999, "999.9 MB"),
        (3 * 10**9, "3.0 GB"),
        (10**12, "1.0 TB"),
        (5 * 10**15, "5000.0 TB"),
    ],
)
def test_human_bytes(n, text):
    assert report.human_bytes(n) == text


def test_table_aligns_columns_and_leaves_the_last_unpadded():
    rows = [["a", "bb", "path"], ["ccc", "d", "x"], ["e", "12345", "long/path"]]
    assert report.table(rows, right=(1,)) == [
        "a       bb  path",
        "ccc      d  x",
        "e    12345  long/path",
    ]


def test_table_of_nothing_and_trailing_blanks():
    assert report.table([]) == []
    # an empty last cell leaves no trailing spaces
    assert report.table([["a", ""], ["bbb", ""]]) == ["a", "bbb"]


def test_paragraphs_put_one_blank_line_between_non_empty_blocks():
    assert report.paragraphs([]) == []
    assert report.paragraphs([[], ["a"], [], [], ["b", "c"], ["d"]]) == ["a", "", "b", "c", "", "d"]


def test_reasons_json():
    assert report.reasons_json([("a", "x"), ("b", "y")]) == [
        {"path": "a", "reason": "x"},
        {"path": "b", "reason": "y"},
    ]


# --- summaries ------------------------------------------------------------------------------
OTHER_ORDER = ">" if npy.NATIVE_ORDER == "<" else "<"


@pytest.mark.parametrize(
    ("descr", "label"),
    [
        (f"{npy.NATIVE_ORDER}f4", "float32"),
        (f"{OTHER_ORDER}f4", f"float32 ({OTHER_ORDER}f4)"),
        ("|u1", "uint8"),
        ("|b1", "bool"),
    ],
    ids=["native", "other-order", "one-byte", "bool"],
)
def test_dtype_label_shows_the_descr_only_for_the_other_byte_order(tmp_path, descr, label):
    c = checked(tmp_path, "a.npy", np.zeros(3, descr))
    assert report.dtype_label(c.header) == label


@pytest.fixture
def files(tmp_path) -> list[header.Checked]:
    """Three float32 (2, 3), one int64 (), one bad file, in that order."""
    found = [checked(tmp_path, f"{i}.npy", np.zeros((2, 3), "<f4")) for i in range(3)]
    found.append(checked(tmp_path, "3.npy", np.int64(7)))
    found.append(bad(tmp_path, "4.npy"))
    return found


def test_summary_counts_files_bad_files_bytes_and_groups(files):
    s = report.Summary.of(files, {files[4].path})
    assert (s.files, s.bad) == (5, 1)
    assert s.bytes == 3 * 152 + 136 + len(b"not a .npy file")
    assert s.sorted_groups() == [(("float32", (2, 3)), 3), (("int64", ()), 1)]
    assert s.to_json() == {
        "files": 5,
        "bad": 1,
        "bytes": s.bytes,
        "groups": [
            {"dtype": "float32", "shape": [2, 3], "count": 3},
            {"dtype": "int64", "shape": [], "count": 1},
        ],
    }
    assert s.lines() == ["  3  float32  (2, 3)", "  1  int64    ()"]


def test_summary_leaves_files_reported_bad_out_of_the_groups(files):
    # a good header whose file is reported bad (unpaired, say) counts as bad, not in a group
    s = report.Summary.of(files[:4], {files[0].path})
    assert s.bad == 1
    assert s.groups[("float32", (2, 3))] == 3  # its header is still good
    s = report.Summary.of([], set())
    assert (s.files, s.bad, s.bytes, s.lines()) == (0, 0, 0, [])


def test_summary_groups_tie_break_by_dtype_then_shape(tmp_path):
    found = [
        checked(tmp_path, "a.npy", np.zeros(2, "<i4")),
        checked(tmp_path, "b.npy", np.zeros(1, "<f4")),
        checked(tmp_path, "c.npy", np.zeros(3, "<f4")),
    ]
    groups = [g for g, _ in report.Summary.of(found, set()).sorted_groups()]
    assert groups == [("float32", (1,)), ("float32", (3,)), ("int32", (2,))]


def test_summary_block(files):
    block = report.summary_block("data", report.Summary.of(files, {files[4].path}))
    assert block == [
        f"data: 5 files, 1 bad, {report.human_bytes(3 * 152 + 136 + 15)}",
        "  3  float32  (2, 3)",
        "  1  int64    ()",
    ]
    one = report.summary_block("one", report.Summary.of(files[3:4], set()))
    assert one == ["one: 1 file, 136 B", "  1  int64  ()"]


def test_nonfinite_notes():
    assert report.nonfinite_notes({}) == []
    assert report.nonfinite_notes({"a.npy": 1}) == [
        "note: 1 file holds NaN or infinite values (not counted as bad):",
        "  a.npy: 1 NaN or infinite value",
    ]
    many = {f"{i}.npy": 1000 + i for i in range(report.MAX_NOTES + 3)}
    lines = report.nonfinite_notes(many)
    assert lines[0].startswith(f"note: {report.MAX_NOTES + 3} files hold NaN")
    assert lines[1] == "  0.npy: 1,000 NaN or infinite values"
    assert len(lines) == 1 + report.MAX_NOTES + 1
    assert lines[-1] == "  and 3 more (see --json)"


# --- one file -------------------------------------------------------------------------------
def test_file_json_and_row(tmp_path):
    c = checked(tmp_path, "f.npy", np.asfortranarray(np.zeros((2, 3), ">f8")), version=(2, 0))
    assert report.file_json(c) == {
        "path": c.path,
        "version": "2.0",
        "dtype": "float64",
        "descr": ">f8",
        "shape": [2, 3],
        "order": "F",
        "header_bytes": c.header.data_offset,
        "payload_bytes": 48,
        "file_bytes": c.header.data_offset + 48,
    }
    row = report.file_row(c)
    assert row == [
        "2.0",
        report.dtype_label(c.header),
        "(2, 3)",
        "F",
        str(c.header.data_offset),
        "48",
        c.path,
    ]
    assert len(row) == len(report.FILE_COLUMNS)


def test_file_table(tmp_path):
    a = checked(tmp_path, "a.npy", np.zeros(3, "<u2"))
    b = checked(tmp_path, "b.npy", np.zeros((1000, 10), "<u2"))
    assert report.file_table([]) == []
    assert report.file_table([a, b]) == [
        "version  dtype   shape       order  header  payload  path",
        f"1.0      uint16  (3,)        C         128        6  {a.path}",
        f"1.0      uint16  (1000, 10)  C         128    20000  {b.path}",
    ]


def test_a_bad_file_has_no_row(tmp_path):
    with pytest.raises(AssertionError, match="not a good file"):
        report.file_row(bad(tmp_path, "x.npy"))
