"""`npyio.errors`: every error npyio raises itself derives from `NpyioError` and from the
built-in class callers already catch, with ``"PATH: reason"`` messages; all of them public."""

from __future__ import annotations

import pytest

import npyio
import npyio.errors
from npyio.errors import (
    BackendUnavailableError,
    IncompletePackError,
    NpyFormatError,
    NpyioError,
    PackIndexError,
)


def test_a_format_error_is_path_then_reason():
    e = NpyFormatError("a.npy", "bad magic -- expected x, got y")
    assert str(e) == "a.npy: bad magic -- expected x, got y"
    assert (e.path, e.reason) == ("a.npy", "bad magic -- expected x, got y")
    index = PackIndexError("p/npyio-pack.json", "shards[0].rows: not an int")
    assert str(index) == "p/npyio-pack.json: shards[0].rows: not an int"
    assert index.reason == "shards[0].rows: not an int"


@pytest.mark.parametrize(
    ("error", "builtin"),
    [
        (NpyFormatError("a", "b"), ValueError),
        (PackIndexError("a", "b"), NpyFormatError),
        (BackendUnavailableError("no tfio"), RuntimeError),
        (IncompletePackError("p: incomplete pack"), ValueError),
    ],
)
def test_every_error_is_an_npyio_error_and_a_builtin_one(error, builtin):
    assert isinstance(error, NpyioError) and isinstance(error, builtin)


def test_every_error_is_public():
    errors = {n for n, v in vars(npyio.errors).items() if isinstance(v, type)}
    assert set(npyio.errors.__all__) == errors
    for name in npyio.errors.__all__:
        if name != "IncompletePackError":  # npyio.errors only, not the package's namespace
            assert getattr(npyio, name) is getattr(npyio.errors, name)


def test_incomplete_pack_error_is_public_with_the_other_errors():
    from npyio._format import packed

    assert npyio.errors.IncompletePackError is packed.IncompletePackError
    assert issubclass(npyio.errors.IncompletePackError, (npyio.NpyioError, ValueError))
    assert "IncompletePackError" in npyio.errors.__all__
