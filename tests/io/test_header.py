"""`npyio._io.header`: reading and checking files' headers in Python, as ``npyio verify`` and
`npyio.inspect` do: `check_file` agrees with the reference parser on the bad-input corpus, a
cached header still checks each file's size, `check_files` keeps the order of its paths over
threads, and `read_checked` raises for a bad file, naming it."""

from __future__ import annotations

import io

import numpy as np
import pytest

from npyio._format import header, npy
from npyio._io import header as io_header
from npyio.errors import NpyFormatError
from tests._corpus import CORPUS, CORPUS_IDS
from tests._npy_testing import header_text, npy_bytes, with_header


# --- in-process: the header check agrees with the reference parser ------------------------------
def reference_reason(data: bytes) -> str | None:
    try:
        header = npy.read_header(io.BytesIO(data), "<bytes>")
        npy.check_payload(header, len(data), "<bytes>")
    except NpyFormatError as e:
        return e.reason
    return None


LONG_TEXT = header_text("<f4", False, (2, 3)).ljust(header.HEAD + 900) + "\n"
EXTRA = {  # beyond the corpus: headers longer than the first read, good and bad
    "long-header": with_header(LONG_TEXT, bytes(24)),
    "long-header-cut": with_header(LONG_TEXT, bytes(24))[: header.HEAD + 100],
    "long-header-v2-short-payload": with_header(LONG_TEXT, bytes(20), (2, 0)),
    "good-then-cut": npy_bytes(np.zeros((2, 3), "<f4"))[:-1],
}


@pytest.mark.parametrize(
    "data", [c.data for c in CORPUS] + list(EXTRA.values()), ids=CORPUS_IDS + list(EXTRA)
)
def test_check_file_agrees_with_read_header_and_check_payload(tmp_path, data):
    want = reference_reason(data)
    path = tmp_path / "f.npy"
    path.write_bytes(data)
    cache: header.HeaderCache = {}
    for _ in range(2):  # cold, then with the header cached
        got = io_header.check_file(str(path), cache)
        assert got.reason == want
        assert got.size == len(data)


def test_cached_header_still_checks_each_size(tmp_path):
    data = npy_bytes(np.zeros((2, 3), "<f4"))
    (tmp_path / "a.npy").write_bytes(data)
    (tmp_path / "b.npy").write_bytes(data + b"\0\0")
    cache: header.HeaderCache = {}
    a, b = (io_header.check_file(str(tmp_path / n), cache) for n in ("a.npy", "b.npy"))
    assert len(cache) == 1
    assert a.ok and b.reason == npy.payload_trailing("24", "26")


def test_check_files_keeps_the_order_of_its_paths(tmp_path):
    paths = []
    for i in range(7):
        path = tmp_path / f"{i}.npy"
        path.write_bytes(npy_bytes(np.zeros(i, "<i2")) if i != 4 else b"junk")
        paths.append(str(path))
    got = io_header.check_files(paths, jobs=3, per_task=2)
    assert [c.path for c in got] == paths
    assert [c.ok for c in got] == [i != 4 for i in range(7)]
    assert [c.header.shape for c in got if c.header is not None] == [
        (i,) for i in range(7) if i != 4
    ]


def test_read_checked_raises_naming_the_file(tmp_path):
    good, bad = tmp_path / "good.npy", tmp_path / "bad.npy"
    good.write_bytes(npy_bytes(np.arange(6, dtype="<f8").reshape(2, 3)))
    bad.write_bytes(b"\x93NUMPY junk")
    assert io_header.read_checked(str(good)).header.shape == (2, 3)
    with pytest.raises(NpyFormatError) as caught:
        io_header.read_checked(str(bad))
    assert str(caught.value).startswith(f"{bad}: ")
    with pytest.raises(NpyFormatError, match="max_file_size"):
        io_header.read_checked(str(good), header.Limits(max_file_size=10))
