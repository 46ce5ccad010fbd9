"""What npyio sets for TensorFlow's GCS file system, seen in the requests the fake receives:
with npyio imported first, an object is read in a 1 MiB block (``GCS_READ_CACHE_BLOCK_SIZE_MB``
from `npyio._format.files.GCS_DEFAULTS`); with TensorFlow imported first, TensorFlow's 64 MiB
block, and a warning that says so when the dataset is built. And `rows` on ``gs://`` gets the
same private thread pool as `dataset`."""

from __future__ import annotations

import numpy as np
import pytest

from tests.gcs.sandbox import GcsSandbox

MIB = 1 << 20

READ = """
import sys, warnings
{imports}
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    ds = npyio.dataset(sys.argv[1], sys.argv[2], batch_size=2)
print(len(list(ds)), [str(w.message) for w in caught])
"""


@pytest.fixture
def pairs(gcs: GcsSandbox, tmp_path) -> tuple[str, str]:
    for side in ("x", "y"):
        (tmp_path / side).mkdir()
        for i in range(4):
            np.save(tmp_path / side / f"{i}.npy", np.full((8,), i, np.float32))
    gcs.put_tree(tmp_path, "defaults")
    return gcs.url("defaults/x"), gcs.url("defaults/y")


def _ranges(gcs: GcsSandbox, imports: str, pairs: tuple[str, str]) -> tuple[set[str], str]:
    gcs.reset_stats()
    run = gcs.python(READ.format(imports=imports), *pairs, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    return {r["range"] for r in gcs.requests("read")}, run.stdout


def test_npyio_imported_first_reads_an_object_in_a_1_mib_block(gcs, pairs):
    ranges, out = _ranges(gcs, "import npyio\nimport tensorflow as tf", pairs)
    assert ranges == {f"bytes=0-{MIB - 1}"}
    assert out.strip() == "2 []"


def test_tensorflow_imported_first_reads_64_mib_blocks_and_is_warned(gcs, pairs):
    ranges, out = _ranges(gcs, "import tensorflow as tf\nimport npyio", pairs)
    assert ranges == {f"bytes=0-{64 * MIB - 1}"}
    assert "npyio was imported after TensorFlow" in out and "import npyio" in out


def test_rows_on_gs_get_the_private_thread_pool(gcs, pairs):
    code = (
        "import sys, npyio\n"
        "ds = npyio.rows(sys.argv[1] + '/0.npy')\n"
        "print(ds.options().threading.private_threadpool_size, len(list(ds)))"
    )
    run = gcs.python(code, pairs[0], timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    from npyio._data.remote import REMOTE_THREADS

    assert run.stdout.split() == [str(REMOTE_THREADS), "8"]
