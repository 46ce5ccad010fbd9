"""The GCS sandbox's fixtures for the tests in this directory (see `tests.gcs.fixtures`).

The server and supervisor modules need gcp-storage-emulator; without it, doctest collection
leaves them out (the fixtures then skip, or fail on CI, with the reason)."""

import importlib.util

from tests.gcs.fixtures import gcs, gcs_sandbox, gcs_worker

__all__ = ["gcs", "gcs_sandbox", "gcs_worker"]

collect_ignore = []
if importlib.util.find_spec("gcp_storage_emulator") is None:
    collect_ignore = ["server.py", "supervisor.py"]
