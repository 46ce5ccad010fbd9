"""npyio._io.npz: a member's header read in Python (``inspect_npz_prefix``),
with its errors naming ``path[key]``."""

from __future__ import annotations

import io
import re
import zipfile

import pytest

import npyio
from npyio._io.npz import inspect_npz_prefix
from tests._npy_testing import npy_bytes
from tests._npz_testing import BASE, MEMBERS, npz_bytes, write


# --- inspect_npz_prefix ------------------------------------------------------------------------
def test_inspect_npz(tmp_path):
    for compressed in (False, True):
        path = write(tmp_path / "a.npz", npz_bytes(MEMBERS, compressed, "stream"))
        for key, arr in MEMBERS.items():
            header = inspect_npz_prefix(path, key)[0]
            assert (header.dtype, header.shape) == (arr.dtype, arr.shape)
        header, raw = inspect_npz_prefix(path, "big_endian.npy")
        assert raw == npy_bytes(MEMBERS["big_endian"])[: header.data_offset]
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_BZIP2) as zf:
        zf.writestr("x.npy", npy_bytes(BASE["x"]))
    bz = write(tmp_path / "bz.npz", buf.getvalue())
    for p, key, words in (
        (path, "nope", "no such member"),
        (bz, "x", re.escape("12 (bzip2)")),
        (write(tmp_path / "n.npz", b"junk"), "x", "not a readable zip"),
    ):
        with pytest.raises(npyio.NpyFormatError, match=words) as e:
            inspect_npz_prefix(p, key)
        assert str(e.value).startswith(f"{p}[{key}]: ")
    with pytest.raises(npyio.NpyFormatError, match="no such file"):
        inspect_npz_prefix(tmp_path / "missing.npz", "x")


def test_a_member_that_does_not_inflate_is_named(tmp_path):
    # (zlib's own error once came through raw, naming no file, from the dataset's build)
    data = bytearray(npz_bytes({"x": BASE["x"]}, True, "file"))
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as zf:
        info = zf.getinfo("x.npy")
    name_len = int.from_bytes(data[info.header_offset + 26 : info.header_offset + 28], "little")
    extra_len = int.from_bytes(data[info.header_offset + 28 : info.header_offset + 30], "little")
    start = info.header_offset + 30 + name_len + extra_len
    data[start : start + 10] = b"\xff" * 10  # a deflate block of the reserved type
    path = write(tmp_path / "0000.npz", bytes(data))
    words = rf"^{re.escape(str(path))}\[x\]: its compressed data is corrupt -- "
    with pytest.raises(npyio.NpyFormatError, match=words):
        inspect_npz_prefix(path, "x")
    with pytest.raises(npyio.NpyFormatError, match=words):
        npyio.dataset(str(tmp_path), key="x")
