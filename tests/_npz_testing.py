"""Helpers shared by the ``.npz`` tests: archives written by numpy and zipfile in each style
(seekable, streamed with data descriptors, zip64 everywhere), the members they hold, and the
positions of their zip structures for patching."""

from __future__ import annotations

import io
import struct
import zipfile
from pathlib import Path
from unittest import mock

import numpy as np

from npyio._format import npz


def _members() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {
        "flags": rng.integers(0, 2, (7, 3)).astype(bool),
        "ids": rng.integers(-(2**62), 2**62, (3, 4), dtype=np.int64),
        "big_endian": rng.standard_normal((5, 2)).astype(">f8"),
        "empty": np.zeros((0, 3), np.float32),
        "large": rng.standard_normal((1024, 1024)).astype(np.float32),  # 4 MiB
        "u32": rng.integers(0, 2**32, 6, dtype=np.uint64).astype(">u4"),
        "scalar": np.array(1.5 - 2j, ">c8"),
    }


MEMBERS = _members()


class _Unseekable(io.RawIOBase):
    """A write-only stream: zipfile then writes data descriptors (flag bit 3, local sizes 0)."""

    def __init__(self) -> None:
        self.buffer = io.BytesIO()

    def writable(self) -> bool:
        return True

    def write(self, b) -> int:  # type: ignore[override]
        return self.buffer.write(b)


def eocd_at(data: bytes) -> int:
    return data.rindex(npz.EOCD_SIG)


def zip64_everywhere() -> mock._patch:
    """Make Python's zipfile write zip64 structures for a small archive: the zip64 extra field
    (sizes, local header offsets) in the central directory, and the zip64 end records."""
    return mock.patch.multiple(zipfile, ZIP64_LIMIT=64, ZIP_FILECOUNT_LIMIT=1)


def npz_bytes(arrays: dict[str, np.ndarray], compressed: bool, writer: str = "file") -> bytes:
    """``writer``: "file" (seekable), "stream" (data descriptors), "zip64" (zip64 structures,
    with the end record's fields set to 0xFFFF... so that only the zip64 record has them, as
    in an archive of more than 65535 members or 4 GiB)."""
    save = np.savez_compressed if compressed else np.savez
    if writer == "stream":
        out = _Unseekable()
        save(out, **arrays)
        return out.buffer.getvalue()
    buf = io.BytesIO()
    if writer == "zip64":
        with zip64_everywhere():
            save(buf, **arrays)
        data = bytearray(buf.getvalue())
        e = eocd_at(data)
        assert data[e - npz.LOCATOR_LEN : e - npz.LOCATOR_LEN + 4] == npz.LOCATOR_SIG
        data[e + 8 : e + 20] = b"\xff" * 12  # entries (2 x 2 bytes), directory size and offset
        return bytes(data)
    save(buf, **arrays)
    return buf.getvalue()


def write(path: Path, data: bytes) -> str:
    path.write_bytes(data)
    return str(path)


def central(data: bytes) -> dict[str, int]:
    """Member name -> position of its central directory entry."""
    e = eocd_at(data)
    count, _, offset = struct.unpack("<HII", data[e + 10 : e + 20])
    if data[e - npz.LOCATOR_LEN : e - npz.LOCATOR_LEN + 4] == npz.LOCATOR_SIG:
        record = struct.unpack("<Q", data[e - 12 : e - 4])[0]
        count, _, offset = struct.unpack("<QQQ", data[record + 32 : record + 56])
    out, p = {}, offset
    for _ in range(count):
        nlen, xlen, clen = struct.unpack("<HHH", data[p + 28 : p + 34])
        out[data[p + 46 : p + 46 + nlen].decode()] = p
        p += 46 + nlen + xlen + clen
    return out


def patched(data: bytes, at: int, fmt: str, *values: int) -> bytes:
    out = bytearray(data)
    struct.pack_into(fmt, out, at, *values)
    return bytes(out)


BASE = {"x": np.arange(10, dtype=np.int64), "y": np.ones(3)}
