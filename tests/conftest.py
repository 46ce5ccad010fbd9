"""Test selection: tests marked ``tfio`` need tensorflow-io's ops, so they run only in the tfio
virtualenv (TensorFlow 2.16.2 + tensorflow-io 0.37.1), which sets ``NPYIO_TFIO=1``::

    NPYIO_TFIO=1 .venv-tfio/bin/python -m pytest -m tfio tests/read/test_tfio.py

Anywhere else they are deselected (not collected as skips). Where ``NPYIO_TFIO=1`` is set they
are never skipped: if tensorflow-io's ops do not load there, they fail.
"""

from __future__ import annotations

import os

import pytest

TFIO_ENV = "NPYIO_TFIO"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get(TFIO_ENV) == "1":
        return
    kept = [item for item in items if item.get_closest_marker("tfio") is None]
    if len(kept) != len(items):
        config.hook.pytest_deselected(
            items=[item for item in items if item.get_closest_marker("tfio") is not None]
        )
        items[:] = kept
