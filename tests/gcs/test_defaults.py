"""How npyio reads ``gs://`` with TensorFlow's own GCS settings, seen in the requests the fake
receives, whatever the import order and with no ``GCS_*`` variable: an object of a part whose
size is known from the first header is read in one GET that bypasses TensorFlow's 64 MiB read
block (by the native reader's kernel, with no stat, ``tests/gcs/test_native.py``; on the graph
path by `npyio._read.objects`, after a stat); one of unknown size (``None`` dims) is read by
``tf.io.read_file``, through that block. An object of another size than the header implies is
read whole, or refused naming it. And `rows` on ``gs://`` gets the private thread pool."""

from __future__ import annotations

import io
import json
from collections import Counter

import numpy as np
import pytest

from npyio._sources.sampling import sample_indices
from tests.gcs.fixtures import put_pairs
from tests.gcs.sandbox import GcsSandbox, Worker

MIB = 1 << 20
N = 4

READ = """
import json, sys, warnings
{imports}
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    ds = npyio.dataset(sys.argv[1], sys.argv[2], batch_size=2{kwargs})
try:
    got = [x.numpy().tolist() for x, y in ds]
    error = None
except tf.errors.OpError as e:
    got, error = None, [type(e).__name__, e.message]
print(json.dumps({{"got": got, "error": error, "warnings": [str(w.message) for w in caught]}}))
"""
ORDERS = {
    "tensorflow first": "import tensorflow as tf\nimport npyio",
    "npyio first": "import npyio\nimport tensorflow as tf",
}


@pytest.fixture
def pairs(gcs: GcsSandbox, tmp_path) -> tuple[str, str]:
    return put_pairs(gcs, tmp_path, N, "defaults")


def _epoch(gcs: GcsSandbox, pairs: tuple[str, str], imports: str, kwargs: str = "") -> dict:
    gcs.reset_stats()
    code = READ.format(imports=imports, kwargs=kwargs)
    run = gcs.python(code, *pairs, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


#: `READ`'s epoch as a function of the module's worker (`tests.gcs.fixtures.gcs_worker`:
#: TensorFlow imported first, no ``GCS_*`` variable), for the cases whose import order is
#: TensorFlow's first: one TensorFlow import for them all instead of one each. Each case's
#: objects are its own (`put_pairs`), so nothing another case read is cached.
WORKER_READ = """
import npyio

def epoch(inputs, labels, **kwargs):
    ds = npyio.dataset(inputs, labels, batch_size=2, **kwargs)
    try:
        return {"got": [x.numpy().tolist() for x, y in ds], "error": None}
    except tf.errors.OpError as e:
        return {"got": None, "error": [type(e).__name__, e.message]}
"""


def _epoch_in(worker: Worker, gcs: GcsSandbox, pairs: tuple[str, str], kwargs: str = "") -> dict:
    gcs.reset_stats()
    return worker.exec(WORKER_READ + f"result = epoch({pairs[0]!r}, {pairs[1]!r}{kwargs})", 300)


def _expected() -> list[list[list[float]]]:
    return [[[float(i)] * 8 for i in (b, b + 1)] for b in range(0, N, 2)]


def _by_object(gcs: GcsSandbox, kind: str) -> Counter[str]:
    return Counter(r["name"] for r in gcs.requests(kind))


@pytest.mark.parametrize("order", ORDERS)
def test_an_object_of_known_size_is_one_get_past_the_read_block(gcs, pairs, order):
    out = _epoch(gcs, pairs, ORDERS[order])
    assert out == {"got": _expected(), "error": None, "warnings": []}
    reads = gcs.requests("read")
    # one GET per object, asking for more than TensorFlow's 64 MiB block; besides, only the
    # sampled inputs and labels were read (for their headers, when the dataset was built: the
    # first, which sets the spec, and those `sample_indices` checks it against)
    epoch = [r for r in reads if r["range"] == f"bytes=0-{64 * MIB}"]
    assert sorted(Counter(r["name"] for r in epoch).values()) == [1] * 2 * N
    assert len(reads) - len(epoch) == 2 * len(sample_indices(N))
    assert max(_by_object(gcs, "stat").values()) <= 2  # the size (and the build's own stat)


def test_an_object_of_unknown_size_is_read_through_the_block(gcs, gcs_worker, pairs):
    out = _epoch_in(gcs_worker, gcs, pairs, ", shape=(None,)")
    assert out["got"] == _expected() and out["error"] is None
    ranges = {r["range"] for r in gcs.requests("read") if r["name"].split("/")[-2] == "x"}
    assert f"bytes=0-{64 * MIB - 1}" in ranges


def _padded(array: np.ndarray, total: int) -> bytes:
    """``array`` as a valid ``.npy`` of ``total`` bytes: its header padded with spaces."""
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buf, {"descr": array.dtype.str, "fortran_order": False, "shape": array.shape}
    )
    header = buf.getvalue()
    text_len = total - array.nbytes - 10
    text = header[10:-1].ljust(text_len - 1) + b"\n"
    return b"\x93NUMPY\x01\x00" + text_len.to_bytes(2, "little") + text + array.tobytes()


def test_an_object_twice_the_expected_size_is_read_whole(gcs, gcs_worker, pairs):
    name = pairs[0].removeprefix("gs://npyio-test/") + "/2.npy"
    size = len(gcs.get(name))
    gcs.put(name, _padded(np.full((8,), 2, np.float32), 2 * size))
    out = _epoch_in(gcs_worker, gcs, pairs)
    assert out["got"] == _expected() and out["error"] is None


@pytest.mark.parametrize("change", [-1, 1])
def test_an_object_of_another_size_is_refused_naming_it(gcs, gcs_worker, pairs, change):
    name = pairs[0].removeprefix("gs://npyio-test/") + "/3.npy"
    data = gcs.get(name)
    gcs.put(name, data[:change] if change < 0 else data + b"\0" * change)
    out = _epoch_in(gcs_worker, gcs, pairs)
    assert out["error"][0] == "InvalidArgumentError"
    assert f"gs://npyio-test/{name}" in out["error"][1]
    assert f"{len(data) + change} bytes" in out["error"][1]


def test_rows_on_gs_get_the_private_thread_pool(gcs, pairs):
    code = (
        "import sys, npyio\n"
        "ds = npyio.rows(sys.argv[1] + '/0.npy', batch_size=None)\n"
        "print(ds.options().threading.private_threadpool_size, len(list(ds)))"
    )
    run = gcs.python(code, pairs[0], timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    from npyio._pipeline.remote import MIN_THREADS

    # its headers are read through TensorFlow's 64 MiB block (no GCS_* variable is set): the
    # block budget
    assert run.stdout.split() == [str(MIN_THREADS), "8"]


def test_rows_on_gs_read_past_the_read_block(gcs, pairs):
    gcs.reset_stats()
    code = (
        "import sys\nimport tensorflow as tf\nimport npyio\n"
        "ds = npyio.rows(sys.argv[1] + '/0.npy', sys.argv[2] + '/0.npy', batch_size=None)\n"
        "print(len(list(ds)))"
    )
    run = gcs.python(code, *pairs, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.split() == ["8"]
    # the rows' reads ask for more than the block, so TensorFlow neither allocates nor zero-fills
    # one per open piece; only the plan's header reads go through it
    ranges = Counter(r["range"] for r in gcs.requests("read"))
    assert ranges[f"bytes=0-{64 * MIB}"] >= 2
    assert set(ranges) == {f"bytes=0-{64 * MIB}", f"bytes=0-{64 * MIB - 1}"}
