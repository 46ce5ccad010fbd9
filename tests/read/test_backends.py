"""One conformance suite for every backend: read_npy(..., backend=b) on numpy-written files.

Every backend must decode what numpy writes bit-exactly, or refuse it with an error that names
the file, under the same policy (npyio/_format/npy.py).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import tensorflow as tf

import npyio
from npyio._format.header import make_hint
from npyio._format.spec import Spec
from npyio._read import CAPABILITIES
from npyio._read.backends import Reader, reader, row_reader
from npyio._read.rows import NativeRowReader, RowReader
from npyio._sources.plan import BATCH_THEN_DECODE, DECODE_THEN_BATCH, choose_strategy
from tests._corpus import CORPUS, CORPUS_IDS
from tests._npy_testing import assert_same, case_id, write_file

BACKENDS = [
    pytest.param("native", id="native"),
    pytest.param("graph", id="graph"),
    pytest.param("py_function", id="py_function"),
]


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_backend_decodes_what_numpy_writes(backend, files):
    """Every case bit-exact, eagerly; and in a traced function, as a pipeline runs the read,
    for each dtype and each shape at least once. A function per (dtype, shape) pair, as
    before, spent 20-30 s of 30 tracing and optimizing 70 graphs whose kernels are the ones
    that run eagerly here."""
    dtypes: set[str] = set()
    shapes: set[tuple[int, ...]] = set()
    for case, (path, arr) in files.items():
        dtype = arr.dtype.newbyteorder("=").name
        reads = [lambda p, d=dtype, s=arr.shape: npyio.read_npy(p, d, s, backend=backend)]
        if dtype not in dtypes or arr.shape not in shapes:
            reads.append(tf.function(reads[0]))
            dtypes.add(dtype)
            shapes.add(arr.shape)
        for read in reads:
            got = read(tf.constant(path))
            assert got.shape == arr.shape
            assert_same(got, arr, case_id(case))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", CORPUS, ids=CORPUS_IDS)
def test_every_backend_refuses_bad_files_naming_them(backend, case, tmp_path):
    path = write_file(tmp_path, f"bad-{case.id}.npy", case.data)
    with pytest.raises(tf.errors.OpError) as info:
        npyio.read_npy(path, case.dtype, case.shape, backend=backend)
    assert path in str(info.value), str(info.value)[:500]


@pytest.mark.parametrize("backend", ["native", "graph", "py_function"])
def test_a_reader_says_what_it_can_do_as_data(backend):
    read: Reader = reader(backend)
    assert read.capabilities is CAPABILITIES[backend]
    assert all(callable(getattr(read, step)) for step in ("fetch", "decode", "read"))


@pytest.mark.parametrize(
    "build",
    [
        lambda path: npyio.read_npy(path, "float32", (3,), backend="tfio"),
        lambda path: npyio.dataset([path], batch_size=None, backend="tfio"),
    ],
    ids=["read_npy", "dataset"],
)
def test_the_removed_tfio_backend_is_refused_as_unknown(build, tmp_path):
    path = str(tmp_path / "x.npy")
    np.save(path, np.zeros(3, np.float32))
    with pytest.raises(
        ValueError, match=r"^unknown backend 'tfio' -- expected one of native, graph, py_function$"
    ):
        build(path)


def test_a_reader_of_row_ranges_comes_from_a_backend_that_reads_them():
    read = row_reader("graph", [], 4)
    assert isinstance(read, RowReader) and read.capabilities.rows and read.chunk == 4
    native = row_reader("native", [], 4, ["/data/x.npy"])
    assert isinstance(native, NativeRowReader) and native.capabilities.rows
    # the native reader reads local files: others through the graph's, told if remote
    remote = row_reader("native", [], 4, ["/data/x.npy", "gs://bucket/y.npy"])
    assert type(remote) is RowReader and remote.remote
    memory = row_reader("native", [], 4, ["ram://x.npy"])
    assert type(memory) is RowReader and not memory.remote
    with pytest.raises(
        ValueError, match=r"'py_function' reads no row ranges -- expected one of native, graph$"
    ):
        row_reader("py_function", [], 4)
    with pytest.raises(ValueError, match="unknown backend 'numpy'"):
        row_reader("numpy", [], 4)


def test_the_plan_asks_capabilities_not_names(monkeypatch):
    dt = np.dtype("float32")
    specs = (Spec.whole(dt, (2,), make_hint(dt, (2,))),)
    assert choose_strategy(specs, 4, False, "graph") == BATCH_THEN_DECODE
    assert choose_strategy(specs, 4, False, "py_function") == DECODE_THEN_BATCH
    # a backend that decodes batches gets batch-then-decode, whatever its name
    batched = dataclasses.replace(CAPABILITIES["py_function"], decodes_batches=True)
    monkeypatch.setitem(CAPABILITIES, "py_function", batched)
    assert choose_strategy(specs, 4, False, "py_function") == BATCH_THEN_DECODE
