"""`npyio._read.local`: `npyio.pack`'s Python reader of local files, held to the conformance
cases of every backend (``tests/read/test_backends.py``): numpy-written files decode
bit-exactly, and every bad file of the corpus is refused naming it."""

from __future__ import annotations

import numpy as np
import pytest

from npyio._format.header import make_hint
from npyio._format.spec import Layout, Spec
from npyio._read.local import LocalReader
from npyio.errors import NpyFormatError
from tests._corpus import CORPUS, CORPUS_IDS
from tests._npy_testing import assert_same, case_id, write_file


def _spec(dtype: object, shape: tuple[int | None, ...] | None) -> Spec:
    dt = np.dtype(dtype).newbyteorder("=")
    return Spec.whole(dt, shape, make_hint(dt, shape))


def test_the_local_reader_decodes_what_numpy_writes(files):
    for case, (path, arr) in files.items():
        got = LocalReader(_spec(arr.dtype, arr.shape)).read(path)
        assert_same(got, arr, case_id(case))


@pytest.mark.parametrize("case", CORPUS, ids=CORPUS_IDS)
def test_the_local_reader_refuses_bad_files_naming_them(case, tmp_path):
    path = write_file(tmp_path, f"bad-{case.id}.npy", case.data)
    with pytest.raises(NpyFormatError) as info:
        LocalReader(_spec(case.dtype, case.shape), "inputs").read(path)
    assert str(info.value).startswith(f"{path}: "), str(info.value)[:500]
    assert str(info.value).endswith(" (inputs)")


def test_a_part_is_judged_once_per_distinct_header(tmp_path, monkeypatch):
    """The spec's verdict is kept per header: a dataset's files share a few."""
    paths = [write_file(tmp_path, f"{i}.npy", b"") for i in range(3)]
    for i, path in enumerate(paths):
        np.save(path, np.full((2,), i, np.float32))
    spec = _spec(np.float32, (2,))
    calls = []
    read = LocalReader(spec)
    monkeypatch.setattr(
        Layout, "reason", lambda self, header, path: calls.append(path) or None, raising=True
    )
    assert [read.read(p).tolist() for p in paths] == [[0, 0], [1, 1], [2, 2]]
    assert calls == paths[:1]
