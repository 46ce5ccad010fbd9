"""Test selection: tests marked ``tfio`` need tensorflow-io's ops, so they run only in the tfio
virtualenv (TensorFlow 2.16.2 + tensorflow-io 0.37.1), which sets ``NPYIO_TFIO=1``::

    NPYIO_TFIO=1 .venv-tfio/bin/python -m pytest -m tfio tests/cli/test_bench.py

Anywhere else they are deselected (not collected as skips). Where ``NPYIO_TFIO=1`` is set they
are never skipped: if tensorflow-io's ops do not load there, they fail.

A hang is bounded by a per-test deadline (`DEADLINE_S`, or ``NPYIO_TEST_DEADLINE_S``): past it
the run stops with every thread's traceback. Tests assert behaviour, never how long it took;
the child processes they start have timeouts of their own.
"""

from __future__ import annotations

import faulthandler
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

try:  # where pytest's faulthandler plugin keeps the terminal's stderr (pytest 8 and 9)
    from _pytest.faulthandler import fault_handler_stderr_fd_key
except ImportError:  # moved in another pytest: the stack goes to fd 2
    fault_handler_stderr_fd_key = None  # type: ignore[assignment]

TFIO_ENV = "NPYIO_TFIO"
#: Seconds one test may run before it counts as hung: well above the slowest test (about 2
#: minutes, with a 120 s child timeout, on 2 busy cores). A hang in TensorFlow's C++ (a blocked
#: op) cannot be interrupted from Python, so the whole run stops, with every thread's stack.
DEADLINE_S = float(os.environ.get("NPYIO_TEST_DEADLINE_S", "600"))
#: The native reader's library, built once for the whole suite (its child processes too) in
#: the repository (ignored by git), not in the user's ~/.cache: one cache, one build per key.
NATIVE_CACHE = Path(__file__).resolve().parents[1] / ".cache" / "native-tests"
os.environ.setdefault("NPYIO_CACHE", str(NATIVE_CACHE))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    # To the terminal's stderr, as pytest's faulthandler plugin writes: the captured output
    # would never be shown, since the run ends at the deadline.
    key = fault_handler_stderr_fd_key
    stderr = 2 if key is None else item.config.stash.get(key, 2)
    faulthandler.dump_traceback_later(DEADLINE_S, exit=True, file=stderr)
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get(TFIO_ENV) == "1":
        return
    kept = [item for item in items if item.get_closest_marker("tfio") is None]
    if len(kept) != len(items):
        config.hook.pytest_deselected(
            items=[item for item in items if item.get_closest_marker("tfio") is not None]
        )
        items[:] = kept
