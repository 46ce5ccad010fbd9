"""pytest fixtures for the GCS sandbox.

- ``gcs_sandbox`` (session): the one `tests.gcs.sandbox.GcsSandbox` of the test run, its
  bucket (``npyio-test``) created; closed at the end of the session.
- ``gcs`` (each test): the same sandbox, with latency, fault rules, counters and recorded
  errors reset before and after the test (objects stay: name them per test).
- ``gcs_worker`` (module): a `tests.gcs.sandbox.Worker` inside the sandbox, TensorFlow imported
  once, with the default environment (no ``GCS_*`` variable).

Test modules outside this directory import them::

    from tests.gcs.fixtures import gcs, gcs_sandbox, gcs_worker  # noqa: F401

When the sandbox cannot be made here (no user or network namespaces, no unshare or openssl, no
gcp-storage-emulator), its tests are skipped with the reason; where ``CI=true`` they fail.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

import numpy as np
import pytest

from tests.gcs.sandbox import GcsSandbox, SandboxUnavailable, Worker

#: The environment variable whose value ``true`` turns an unavailable sandbox into failures.
CI_ENV = "CI"


def unavailable(reason: str) -> NoReturn:
    """Skip the test, or fail it where ``CI=true``: CI must run the GCS tests."""
    if os.environ.get(CI_ENV, "").lower() in ("true", "1"):
        pytest.fail(f"the GCS sandbox is unavailable on CI: {reason}", pytrace=False)
    pytest.skip(f"the GCS sandbox is unavailable here: {reason}")


@pytest.fixture(scope="session")
def gcs_sandbox() -> Iterator[GcsSandbox]:
    """The session's sandbox (started on first use)."""
    sandbox = GcsSandbox()
    try:
        sandbox.start()
    except SandboxUnavailable as exc:
        unavailable(str(exc))
    try:
        yield sandbox
    finally:
        sandbox.close()


@pytest.fixture
def gcs(gcs_sandbox: GcsSandbox) -> Iterator[GcsSandbox]:
    """The session's sandbox with no latency, no fault rules and zeroed counters."""
    if not gcs_sandbox.running:
        pytest.fail("the GCS sandbox's supervisor is no longer running", pytrace=False)
    gcs_sandbox.reset()
    yield gcs_sandbox
    gcs_sandbox.reset()  # releases requests a test left stalled


@pytest.fixture(scope="module")
def gcs_worker(gcs_sandbox: GcsSandbox) -> Iterator[Worker]:
    """A TensorFlow worker inside the sandbox, shared by a module's tests."""
    worker = gcs_sandbox.worker()
    try:
        yield worker
    finally:
        worker.close()


def put_pairs(gcs: GcsSandbox, tmp: Path, n: int, prefix: str) -> tuple[str, str]:
    """``n`` pairs ``x/i.npy`` (float32 (8,), all ``i``) and ``y/i.npy`` written under ``tmp``
    and put under ``prefix/<random>/`` of the sandbox's bucket: their two directories' URLs."""
    for side in ("x", "y"):
        (tmp / side).mkdir()
        for i in range(n):
            np.save(tmp / side / f"{i}.npy", np.full((8,), i, np.float32))
    where = f"{prefix}/{uuid.uuid4().hex[:8]}"
    gcs.put_tree(tmp, where)
    return gcs.url(f"{where}/x"), gcs.url(f"{where}/y")
