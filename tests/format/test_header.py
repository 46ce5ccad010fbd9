"""`npyio._format.header`: the size limits, where a payload starts by the fixed fields alone
(`data_offset`), a file's verdict (`Checked`), and the header fast path's `Hint`."""

from __future__ import annotations

import numpy as np
import pytest

from npyio._format.header import Checked, Limits, data_offset, make_hint
from npyio.errors import NpyFormatError
from tests._npy_testing import header_text, npy_bytes, with_header


def test_limits_are_checked_when_made():
    assert Limits() == Limits(max_file_size=None)
    for bad in ({"max_header_size": None}, {"max_header_size": -1}, {"max_file_size": "1"}):
        with pytest.raises((TypeError, ValueError)):
            Limits(**bad)


@pytest.mark.parametrize("version", [(1, 0), (2, 0), (3, 0)])
def test_data_offset_reads_the_fixed_fields(version):
    data = with_header(header_text("<f4", False, (2, 3)), bytes(24), version)
    want = len(data) - 24
    assert data_offset(data, 10_000) == want
    assert data_offset(data[:want], 10_000) == want  # the header's text is not needed
    assert data_offset(data, want - (10 if version == (1, 0) else 12)) == want
    assert data_offset(data, want - (10 if version == (1, 0) else 12) - 1) is None


@pytest.mark.parametrize(
    "head", [b"", b"\x93NUMPY", b"\x93NUMPX\x01\x00\x10\x00", b"\x93NUMPY\x04\x00\x10\x00"]
)
def test_data_offset_is_none_for_bad_fixed_fields(head):
    assert data_offset(head, 10_000) is None


def test_checked_raises_naming_a_bad_file():
    assert not Checked("a.npy", None, 10, "bad magic").ok
    with pytest.raises(NpyFormatError, match=r"^a\.npy: bad magic$"):
        Checked("a.npy", None, 10, "bad magic").raise_if_bad()
    with pytest.raises(NpyFormatError, match=r"^a\.npy: no header$"):
        Checked("a.npy", None, None).raise_if_bad()


@pytest.mark.parametrize("dtype", ["<f4", ">i8", "|u1", "|b1", "<c16"])
def test_make_hint_is_the_header_numpy_writes(dtype):
    arr = np.zeros((2, 3), dtype)
    data = npy_bytes(arr.astype(arr.dtype.newbyteorder("=")))
    hint = make_hint(arr.dtype, (2, 3))
    assert hint is not None
    assert data.startswith(hint.header) and hint.size == len(data)
    assert not hint.fortran_order
    big = make_hint(np.dtype(">f4"), (2,), npy_bytes(np.zeros(2, ">f4"))[:-8])
    assert big is not None and not big.little_endian


def test_make_hint_is_none_unless_the_shape_is_static_and_the_header_agrees():
    f4 = np.dtype("float32")
    assert make_hint(f4, None) is None
    assert make_hint(f4, (2, None)) is None
    other = npy_bytes(np.zeros(3, "<f4"))[:-12]
    assert make_hint(f4, (3,), other) is not None
    assert make_hint(f4, (4,), other) is None  # another shape
    assert make_hint(np.dtype("int32"), (3,), other) is None  # another dtype
    assert make_hint(f4, (3,), other[:-1]) is None  # not the whole header


def test_a_hint_is_usable_within_the_limits():
    hint = make_hint(np.dtype("float32"), (2, 3))
    assert hint is not None
    text = len(hint.header) - 10
    assert hint.usable(Limits())
    assert hint.usable(Limits(max_header_size=text, max_file_size=hint.size))
    assert not hint.usable(Limits(max_header_size=text - 1))
    assert not hint.usable(Limits(max_file_size=hint.size - 1))
