"""The native library, built once per session into a cache inside the repository (``.cache/``,
ignored by git), and loaded into the test process once."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.conftest import NATIVE_CACHE

#: Where the session's library is built (kept between sessions: its key changes with the sources).
CACHE = NATIVE_CACHE


@pytest.fixture(scope="session")
def native_ops() -> Iterator[object]:
    """The op module, built in `CACHE` (auto mode)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("NPYIO_CACHE", str(CACHE))
        mp.delenv("NPYIO_NATIVE", raising=False)
        from npyio._native import library

        os.environ.pop("NPYIO_NATIVE", None)
        module = library.ops()
        assert module is not None, library.status().reason
        yield module
