"""The native reader on ``gs://``, against TensorFlow's own GCS client and the fake: the kernel
reads each object with one GET that asks for more than TensorFlow's 64 MiB read block and no
stat, whatever the import order, and an object it doubts (short, long, emptied, another
header) is refused by the graph path with the very error ``backend="graph"`` gives. (An object
deleted after the build: ``tests/gcs/test_faults.py``, through the kernel too.)"""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest

from npyio._sources.sampling import sample_indices
from tests.gcs.fixtures import put_pairs
from tests.gcs.sandbox import GcsSandbox

MIB = 1 << 20
N = 6

READ = """
import json, sys
{imports}
from tests._graph_util import graph_def
ds = npyio.dataset(sys.argv[1], sys.argv[2], batch_size=2)
native = "NpyioReadFiles" in str(graph_def(ds))
got = [x.numpy().tolist() for x, y in ds]
print(json.dumps({{"native": native, "got": got}}))
"""
ORDERS = {
    "tensorflow first": "import tensorflow as tf\nimport npyio",
    "npyio first": "import npyio\nimport tensorflow as tf",
}
#: Both backends over the same pairs, each error's type and first line: run in the module's
#: worker (`tests.gcs.fixtures.gcs_worker`, TensorFlow imported once), as `_REFUSALS_CALL`.
REFUSALS = """
import re
import npyio
from npyio._tf import undecorated

#: the prefix tf.data puts before a function's error, which names the map's node
WHERE = re.compile(r"^Error in user-defined function passed to .*? with iterator: \\S+: ")

def refusal(backend, inputs, labels):
    ds = npyio.dataset(inputs, labels, batch_size=2, backend=backend)
    try:
        for _ in ds:
            pass
    except tf.errors.OpError as e:
        return [type(e).__name__, WHERE.sub("", undecorated(e.message.splitlines()[0]))]
    return None
"""
_REFUSALS_CALL = "result = {{b: refusal(b, {0!r}, {1!r}) for b in ('native', 'graph')}}"


@pytest.fixture
def pairs(gcs: GcsSandbox, tmp_path) -> tuple[str, str]:
    return put_pairs(gcs, tmp_path, N, "native")


def _run(gcs: GcsSandbox, code: str, pairs: tuple[str, str]) -> dict:
    gcs.reset_stats()
    run = gcs.python(code, *pairs, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("order", ORDERS)
def test_the_kernel_reads_each_object_with_one_get_and_no_stat(gcs, pairs, order):
    out = _run(gcs, READ.format(imports=ORDERS[order]), pairs)
    assert out["native"]
    assert out["got"] == [[[float(i)] * 8 for i in (b, b + 1)] for b in range(0, N, 2)]
    reads = gcs.requests("read")
    # the epoch: one GET per object, for more than the 64 MiB block; besides, the sampled
    # inputs' and labels' headers (`sample_indices`), read when the dataset was built
    sampled = 2 * len(sample_indices(N))
    epoch = Counter(r["name"] for r in reads if r["range"] == f"bytes=0-{64 * MIB}")
    assert sorted(epoch.values()) == [1] * 2 * N
    assert len(reads) - sum(epoch.values()) == sampled
    # no stat of any object but the sampled ones (the plan's)
    stated = {r["name"] for r in gcs.requests("stat")}
    assert len(stated & set(epoch)) <= sampled, stated


def _object(pairs: tuple[str, str], i: int) -> str:
    return pairs[0].removeprefix("gs://npyio-test/") + f"/{i}.npy"


@pytest.mark.parametrize("how", ["short", "long", "emptied", "other header"])
def test_an_object_the_kernel_doubts_gets_the_graph_paths_error(gcs, gcs_worker, pairs, how):
    name = _object(pairs, 2)  # not one the plan samples (0, 3, 5): read first by the kernel
    data = gcs.get(name)
    changed = {
        "short": data[:-3],
        "long": data + b"\0" * 5,
        "emptied": b"",
        "other header": data.replace(b"<f4", b">i4", 1),  # a dtype the plan refuses
    }[how]
    gcs.put(name, changed)
    # In the module's worker: the objects are this test's own, so nothing read before is cached
    out = gcs_worker.exec(REFUSALS + _REFUSALS_CALL.format(*pairs), timeout=300)
    assert out["native"] == out["graph"]
    assert out["native"] is not None and f"gs://npyio-test/{name}" in out["native"][1]


def test_an_object_of_another_header_that_decodes_is_read_by_the_graph_path(gcs, pairs):
    """A big-endian object among little-endian ones: doubted by the kernel, decoded by the
    graph parser, in its place."""
    name = _object(pairs, 4)
    buf = __import__("io").BytesIO()
    np.save(buf, np.full((8,), 4, ">f4"))
    gcs.put(name, buf.getvalue())
    out = _run(gcs, READ.format(imports=ORDERS["tensorflow first"]), pairs)
    assert out["got"][2][0] == [4.0] * 8
