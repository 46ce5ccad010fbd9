"""`derive_spec` reads the first file's header (the rules it applies are
``tests/format/test_spec.py``'s matrix): no file when both arguments are given, a truncated file
refused naming it, an ``.npz`` member by name."""

from __future__ import annotations

import numpy as np
import pytest

from npyio._format.spec import Spec
from npyio._io.spec import derive_spec
from npyio.errors import NpyFormatError
from tests.format.test_spec import _save


def test_both_arguments_read_no_file(tmp_path):
    spec = derive_spec(str(tmp_path / "absent.npy"), "int16", (4, None))
    assert spec == Spec.whole(np.dtype("int16"), (4, None), spec.hint)


def test_a_truncated_first_file_is_refused_naming_it(tmp_path):
    path = _save(tmp_path, "<f8", (16,))
    with open(path, "r+b") as f:
        f.truncate(f.seek(0, 2) - 8)
    with pytest.raises(NpyFormatError) as caught:
        derive_spec(path)
    assert str(caught.value).startswith(path)
    assert "truncated" in str(caught.value)


def test_an_npz_member_is_read_by_name(tmp_path):
    path = tmp_path / "a.npz"
    np.savez(path, x=np.zeros((2, 2), "<i4"), y=np.zeros(3, "<f8"))
    spec = derive_spec(str(path), member="y")
    assert (spec.file.dtype, spec.file.shape, spec.member) == (np.dtype("float64"), (3,), "y")
    assert spec.name(str(path)) == f"{path}[y]"
