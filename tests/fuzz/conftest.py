"""The sanitized native driver, built once for the session's fuzz tests (a build takes about
6 s): `tests/fuzz/test_native.py` and `tests/fuzz/test_headers.py` share it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fuzz import native


@pytest.fixture(scope="session")
def sanitized_driver(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return native.build_driver(tmp_path_factory.mktemp("sanitized-driver"))
