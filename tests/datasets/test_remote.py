"""npyio._data.remote: the thread pool of a pipeline over object storage, and the warning when
the GCS defaults came too late (TensorFlow imported before npyio). What these do to requests is
measured against the fake in tests/gcs/test_defaults.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import npyio
from npyio._data.remote import REMOTE_THREADS

REPO = Path(__file__).resolve().parents[2]
SPEC = {"dtype": "float32", "shape": (2,)}  # nothing is read when the dataset is built
GS = [f"gs://bucket/x/{i}.npy" for i in range(4)]


def test_a_pipeline_over_object_storage_gets_its_own_thread_pool(monkeypatch):
    from npyio._format import files

    # as if npyio had been imported first (in this process, whichever test module imported
    # TensorFlow first decided it)
    monkeypatch.setattr(files, "GCS_TOO_LATE", {})
    monkeypatch.setenv("GCS_READ_CACHE_BLOCK_SIZE_MB", "1")
    remote = npyio.dataset(GS, batch_size=2, **SPEC)
    assert remote.options().threading.private_threadpool_size == REMOTE_THREADS
    local = npyio.dataset([f"/data/{i}.npy" for i in range(4)], batch_size=2, **SPEC)
    assert local.options().threading.private_threadpool_size in (None, 0)


BUILD = f"""
import warnings
warnings.simplefilter("error")  # a warning fails the build, with its message
{{imports}}
npyio.dataset({GS!r}, batch_size=2, dtype="float32", shape=(2,))
npyio.dataset(["/data/0.npy"], dtype="float32", shape=(2,))
print("built")
"""


def _build(imports: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("GCS_")}
    return subprocess.run(
        [sys.executable, "-c", BUILD.format(imports=imports)],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**clean, "PYTHONPATH": str(REPO), **env},
    )


def test_importing_tensorflow_first_is_named_when_a_gs_dataset_is_built():
    late = _build("import tensorflow as tf\nimport npyio")
    assert late.returncode != 0
    assert "RuntimeWarning: npyio was imported after TensorFlow" in late.stderr
    assert "GCS_READ_CACHE_BLOCK_SIZE_MB=1" in late.stderr


def test_no_warning_when_npyio_comes_first_or_the_user_set_the_block():
    for imports, env in (
        ("import npyio\nimport tensorflow as tf", {}),
        ("import tensorflow as tf\nimport npyio", {"GCS_READ_CACHE_BLOCK_SIZE_MB": "4"}),
    ):
        run = _build(imports, **env)
        assert run.returncode == 0 and "built" in run.stdout, (imports, env, run.stderr[-2000:])


def test_the_pool_keeps_the_gcs_read_blocks_in_flight_bounded(monkeypatch):
    from npyio._data.remote import BLOCK_BUDGET_MB, MIN_THREADS, remote_threads
    from npyio._format import files

    monkeypatch.setattr(files, "GCS_TOO_LATE", {})
    for block, threads in (("1", REMOTE_THREADS), ("0", REMOTE_THREADS), ("8", 32), ("64", 4)):
        monkeypatch.setenv("GCS_READ_CACHE_BLOCK_SIZE_MB", block)
        assert remote_threads(GS) == threads
        assert threads * max(int(block), 1) <= max(BLOCK_BUDGET_MB, REMOTE_THREADS)
    monkeypatch.setenv("GCS_READ_CACHE_BLOCK_SIZE_MB", "1")
    monkeypatch.setattr(files, "GCS_TOO_LATE", {"GCS_READ_CACHE_BLOCK_SIZE_MB": "1"})
    assert remote_threads(GS) == MIN_THREADS  # TensorFlow kept its 64 MiB
    with pytest.warns(RuntimeWarning, match="imported after TensorFlow"):
        ds = npyio.dataset(GS, **SPEC)
    assert ds.options().threading.private_threadpool_size == MIN_THREADS
    assert remote_threads(["s3://b/x.npy"]) == REMOTE_THREADS  # no GCS block there
