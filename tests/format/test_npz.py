"""`npyio._format.npz`: a member found by its key (with or without ``.npy``) or refused, naming
the archive's members, an encrypted member or a compression method npyio does not read."""

from __future__ import annotations

import io
import zipfile

import pytest

from npyio._format.npz import MAX_LISTED, member_info, method_text
from npyio.errors import NpyFormatError


def archive(names: list[str], compression: int = zipfile.ZIP_STORED) -> zipfile.ZipFile:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=compression) as zf:
        for name in names:
            zf.writestr(name, b"x")
    return zipfile.ZipFile(buf)


def test_a_member_is_found_by_its_key_with_or_without_npy():
    zf = archive(["x.npy", "y", "y.npy"])
    assert member_info(zf, "x", "a.npz[x]").filename == "x.npy"
    assert member_info(zf, "x.npy", "a.npz[x]").filename == "x.npy"
    assert member_info(zf, "y", "a.npz[y]").filename == "y"  # the exact name first


def test_a_missing_member_names_the_members():
    with pytest.raises(NpyFormatError) as caught:
        member_info(archive(["x.npy", "y.npy"]), "z", "a.npz[z]")
    assert str(caught.value) == (
        "a.npz[z]: no such member in the archive -- expected one of 'x.npy', 'y.npy', got 'z'"
    )
    names = [f"{i}.npy" for i in range(MAX_LISTED + 1)]
    with pytest.raises(NpyFormatError, match=r"'9\.npy', \.\.\., got 'z'"):
        member_info(archive(names), "z", "a.npz[z]")
    with pytest.raises(NpyFormatError, match="expected one of nothing, got 'z'"):
        member_info(archive([]), "z", "a.npz[z]")


def test_an_encrypted_member_or_another_method_is_refused():
    zf = archive(["x.npy"])
    zf.getinfo("x.npy").flag_bits |= 1
    with pytest.raises(NpyFormatError, match="member is encrypted"):
        member_info(zf, "x", "a.npz[x]")
    with pytest.raises(NpyFormatError, match=r"got 12 \(bzip2\)$"):
        member_info(archive(["x.npy"], zipfile.ZIP_BZIP2), "x", "a.npz[x]")
    deflated = archive(["x.npy"], zipfile.ZIP_DEFLATED)
    assert member_info(deflated, "x", "a.npz[x]").compress_type == zipfile.ZIP_DEFLATED


def test_method_text_names_known_methods():
    assert method_text(14) == "14 (lzma)"
    assert method_text(7) == "7"
