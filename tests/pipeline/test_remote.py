"""npyio._pipeline.remote: the thread pool of a pipeline over object storage. What the reads do to
requests is measured against the fake in tests/gcs/test_defaults.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import npyio
from npyio._pipeline.remote import BLOCK_BUDGET_MB, MIN_THREADS, REMOTE_THREADS, remote_threads

REPO = Path(__file__).resolve().parents[2]
SPEC = {"dtype": "float32", "shape": (2,)}  # nothing is read when the dataset is built
GS = [f"gs://bucket/x/{i}.npy" for i in range(4)]


def test_a_pipeline_over_object_storage_gets_its_own_thread_pool():
    remote = npyio.dataset(GS, batch_size=2, **SPEC)
    assert remote.options().threading.private_threadpool_size == REMOTE_THREADS
    local = npyio.dataset([f"/data/{i}.npy" for i in range(4)], batch_size=2, **SPEC)
    assert local.options().threading.private_threadpool_size in (None, 0)


def test_a_gs_dataset_built_after_tensorflow_warns_nothing():
    code = (
        "import warnings\nwarnings.simplefilter('error')\nimport tensorflow as tf\nimport npyio\n"
        f"npyio.dataset({GS!r}, batch_size=2, dtype='float32', shape=(2,))\nprint('built')"
    )
    clean = {k: v for k, v in os.environ.items() if not k.startswith("GCS_")}
    run = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**clean, "PYTHONPATH": str(REPO)},
    )
    assert run.returncode == 0 and "built" in run.stdout, run.stderr[-2000:]


def test_the_pool_keeps_the_gcs_read_blocks_in_flight_bounded(monkeypatch):
    for block, threads in (("1", REMOTE_THREADS), ("0", REMOTE_THREADS), ("8", 32), ("64", 4)):
        monkeypatch.setenv("GCS_READ_CACHE_BLOCK_SIZE_MB", block)
        assert remote_threads(GS) == threads
        assert threads * max(int(block), 1) <= max(BLOCK_BUDGET_MB, REMOTE_THREADS)
        assert remote_threads(GS, blocks=False) == REMOTE_THREADS  # reads that bypass it
    monkeypatch.delenv("GCS_READ_CACHE_BLOCK_SIZE_MB")
    assert remote_threads(GS) == MIN_THREADS  # TensorFlow's 64 MiB
    assert remote_threads(["s3://b/x.npy"]) == REMOTE_THREADS  # no GCS block there


def test_only_parts_of_unknown_size_on_gs_keep_the_block_budget(monkeypatch):
    monkeypatch.delenv("GCS_READ_CACHE_BLOCK_SIZE_MB", raising=False)
    sized = npyio.dataset(GS, batch_size=2, **SPEC)
    assert sized.options().threading.private_threadpool_size == REMOTE_THREADS
    unsized = npyio.dataset(GS, batch_size=2, dtype="float32", shape=(None,))
    assert unsized.options().threading.private_threadpool_size == MIN_THREADS
    reporting = npyio.dataset(GS, batch_size=2, ignore_errors=True, **SPEC)
    assert reporting.options().threading.private_threadpool_size == MIN_THREADS
