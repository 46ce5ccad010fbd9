"""npyio._data.remote: the thread pool of a pipeline over object storage, and the warning when
the GCS defaults came too late (TensorFlow imported before npyio). What these do to requests is
measured against the fake in tests/gcs/test_defaults.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import npyio
from npyio._data.remote import REMOTE_THREADS

REPO = Path(__file__).resolve().parents[2]
SPEC = {"dtype": "float32", "shape": (2,)}  # nothing is read when the dataset is built
GS = [f"gs://bucket/x/{i}.npy" for i in range(4)]


def test_a_pipeline_over_object_storage_gets_its_own_thread_pool():
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
