"""decode_npy / read_npy / inspect against numpy's own writer, over the whole case matrix.

Every supported dtype x byte order x shape x memory order x format version, compared bit for
bit with ``np.load``: eagerly case by case, and through one traced function (and one
``Dataset.map``) per dtype.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

import npyio
from npyio._format import npy
from tests._npy_testing import (
    DTYPE_NAMES,
    LAYOUTS,
    SHAPES,
    STORED_DTYPES,
    VERSION_IDS,
    VERSIONS,
    assert_same,
    byte_orders,
    decoder,
    np_load,
    npy_bytes,
    numpy_header,
    reader,
    sample,
    write_file,
    write_gfile,
)


def make(stored: str, shape: tuple[int, ...], layout: str, seed: int = 0) -> np.ndarray:
    # not np.asfortranarray / np.ascontiguousarray: those turn a 0-d array into a 1-d one
    arr = sample(stored, shape, seed).copy(order=layout)
    assert arr.shape == shape
    return arr


def files_of(name: str) -> list[tuple[str, bytes]]:
    """Every matrix file of dtype ``name``: (case label, bytes)."""
    out = []
    for stored_name, stored in STORED_DTYPES:
        if stored_name != name:
            continue
        for shape_id, shape in SHAPES.items():
            for layout in LAYOUTS:
                for version, vid in zip(VERSIONS, VERSION_IDS, strict=True):
                    arr = make(stored, shape, layout)
                    out.append((f"{stored}-{shape_id}-{layout}-{vid}", npy_bytes(arr, version)))
    return out


# --- eager: the full matrix, one test per case ---------------------------------------------------
@pytest.mark.parametrize("version", VERSIONS, ids=VERSION_IDS)
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape", list(SHAPES.values()), ids=list(SHAPES))
@pytest.mark.parametrize(("name", "stored"), STORED_DTYPES, ids=[s for _, s in STORED_DTYPES])
def test_eager_matches_np_load(name, stored, shape, layout, version):
    arr = make(stored, shape, layout)
    data = npy_bytes(arr, version)
    if layout == "F" and len(shape) >= 2 and arr.size > 1:
        assert b"'fortran_order': True" in data  # the matrix really covers Fortran files
    got = npyio.decode_npy(data, name)
    assert got.dtype == tf.as_dtype(name)
    assert_same(got, np_load(data))
    assert_same(got, arr)


def test_matrix_covers_the_spec():
    assert sorted(DTYPE_NAMES) == sorted(
        [
            "bool",
            "int8",
            "int16",
            "int32",
            "int64",
            "uint8",
            "uint16",
            "uint32",
            "uint64",
            "float16",
            "float32",
            "float64",
            "complex64",
            "complex128",
        ]
    )
    assert {s[0] for _, s in STORED_DTYPES} == {"|", "<", ">"}
    assert len(STORED_DTYPES) == 3 + 2 * 11


# --- one traced function per dtype, many files through it ----------------------------------------
@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_tf_function_matches_np_load(name):
    fn = decoder(name)
    for label, data in files_of(name):
        assert_same(fn(tf.constant(data)), np_load(data), label)
    assert fn.experimental_get_tracing_count() == 1  # one trace for every rank and order


@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_dataset_map_matches_np_load(name):
    files = files_of(name)
    ds = tf.data.Dataset.from_tensor_slices([data for _, data in files]).map(
        lambda b: npyio.decode_npy(b, name), num_parallel_calls=4, deterministic=True
    )
    assert ds.element_spec == tf.TensorSpec(None, tf.as_dtype(name))
    got = list(ds)
    assert len(got) == len(files)
    for (label, data), value in zip(files, got, strict=True):
        assert_same(value, np_load(data), label)


# --- batch mode: a rank-1 string tensor of files sharing dtype and shape -----------------------
BATCH_MIXES = {
    # (byte order index, layout, version) per element; byte order index picks from byte_orders
    "mixed": [(0, "C", (1, 0)), (-1, "F", (2, 0)), (0, "F", (3, 0)), (-1, "C", (1, 0))],
    "all-first-order-C": [(0, "C", (1, 0)), (0, "C", (3, 0)), (0, "C", (2, 0))],
    "all-last-order-F": [(-1, "F", (1, 0)), (-1, "F", (2, 0))],
    "one": [(-1, "F", (3, 0))],
}
BATCH_SHAPES = {k: SHAPES[k] for k in ("0d", "zero-3d", "2d", "6d")}


@pytest.mark.parametrize("mix", list(BATCH_MIXES))
@pytest.mark.parametrize("shape", list(BATCH_SHAPES.values()), ids=list(BATCH_SHAPES))
@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_batch_mixed_byte_order_and_layout(name, shape, mix):
    orders = byte_orders(name)
    arrays, files = [], []
    for i, (o, layout, version) in enumerate(BATCH_MIXES[mix]):
        stored = np.dtype(name).newbyteorder(orders[o]) if orders[o] != "|" else np.dtype(name)
        arr = make(stored.str, shape, layout, seed=i)
        arrays.append(arr)
        files.append(npy_bytes(arr, version))
    got = npyio.decode_npy(files, name)
    assert got.shape == (len(files), *shape)
    assert_same(got, np.stack([np_load(f) for f in files]))


def test_batch_in_tf_function_has_static_shape():
    fn = tf.function(
        lambda b: npyio.decode_npy(b, "float32", shape=(3, 4)),
        input_signature=[tf.TensorSpec([4], tf.string)],
    )
    assert fn.get_concrete_function().structured_outputs.shape.as_list() == [4, 3, 4]
    arrays = [
        make(o + "f4", (3, 4), layout, seed=i)
        for i, (o, layout) in enumerate([("<", "C"), (">", "F"), ("<", "F"), (">", "C")])
    ]
    got = fn(tf.constant([npy_bytes(a, (2, 0)) for a in arrays]))
    assert_same(got, np.stack(arrays))


def test_batch_of_nothing():
    got = npyio.decode_npy(tf.constant([], tf.string), "int16", shape=(2, 3))
    assert got.shape == (0, 2, 3)
    assert got.dtype == tf.int16


# --- read_npy on real files and on ram:// ---------------------------------------------------------
@pytest.mark.parametrize("version", VERSIONS, ids=VERSION_IDS)
@pytest.mark.parametrize(("name", "stored"), STORED_DTYPES, ids=[s for _, s in STORED_DTYPES])
def test_read_npy_local_file(tmp_path, name, stored, version):
    arr = make(stored, (3, 4, 2), "F")
    path = write_file(tmp_path, f"{stored[1:]}-{stored[0] == '>'}.npy", npy_bytes(arr, version))
    assert_same(npyio.read_npy(path, name), arr)
    assert_same(npyio.read_npy(path, name, shape=(3, 4, 2)), arr)
    assert_same(reader(name)(tf.constant(path)), arr)


@pytest.mark.parametrize("version", VERSIONS, ids=VERSION_IDS)
@pytest.mark.parametrize(("name", "stored"), STORED_DTYPES, ids=[s for _, s in STORED_DTYPES])
def test_read_npy_ram_filesystem(name, stored, version):
    arr = make(stored, (2, 5), "C")
    path = write_gfile(f"ram://npyio-tests/{uuid.uuid4().hex}/a.npy", npy_bytes(arr, version))
    assert_same(npyio.read_npy(path, name), arr)
    assert_same(reader(name, (2, None))(tf.constant(path)), arr)


def test_read_npy_in_dataset(tmp_path):
    arrays = [
        make(o + "i8", s, layout, seed=i)
        for i, (o, s, layout) in enumerate(
            [("<", (2, 3), "C"), (">", (4,), "C"), (">", (3, 2), "F"), ("<", (), "C")]
        )
    ]
    paths = [write_file(tmp_path, f"x{i}.npy", npy_bytes(a)) for i, a in enumerate(arrays)]
    ds = tf.data.Dataset.from_tensor_slices(paths).map(
        lambda p: npyio.read_npy(p, tf.int64), num_parallel_calls=4, deterministic=True
    )
    for got, want in zip(ds, arrays, strict=True):
        assert_same(got, want)


# --- inspect agrees with numpy's own header reader -----------------------------------------------
INSPECT_SHAPES = {k: SHAPES[k] for k in ("0d", "zero-3d", "6d")}


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape", list(INSPECT_SHAPES.values()), ids=list(INSPECT_SHAPES))
@pytest.mark.parametrize("version", VERSIONS, ids=VERSION_IDS)
@pytest.mark.parametrize(("name", "stored"), STORED_DTYPES, ids=[s for _, s in STORED_DTYPES])
def test_inspect_matches_numpy_reader(tmp_path, name, stored, version, shape, layout):
    arr = make(stored, shape, layout)
    path = write_file(tmp_path, "a.npy", npy_bytes(arr, version))
    np_version, np_shape, np_fortran, np_dtype, np_offset = numpy_header(Path(path).read_bytes())
    header = npyio.inspect(path)
    assert isinstance(header, npyio.NpyHeader)
    assert header == npyio.NpyHeader(np_version, np_dtype, np_shape, np_fortran, np_offset)
    assert header.version == version
    assert header.dtype.str == np_dtype.str == (stored if stored[0] != "|" else np_dtype.str)
    assert header.shape == shape
    assert header.fortran_order == (layout == "F" and arr.ndim >= 2 and arr.size > 1)
    assert header.data_offset % 64 == 0
    assert header.nbytes == arr.nbytes
    assert npyio.inspect(tmp_path / "a.npy") == header  # os.PathLike


def test_inspect_ram_filesystem():
    arr = make(">c16", (2, 3), "F")
    path = write_gfile(f"ram://npyio-tests/{uuid.uuid4().hex}/c.npy", npy_bytes(arr, (2, 0)))
    header = npyio.inspect(path)
    assert header.version == (2, 0)
    assert header.dtype == np.dtype(">c16") and header.dtype.byteorder == ">"
    assert header.shape == (2, 3)
    assert header.fortran_order is True
    assert header.data_offset == len(npy_bytes(arr, (2, 0))) - arr.nbytes
    assert header.count == 6


# --- static shapes ---------------------------------------------------------------------------
def test_partial_static_shape():
    data = npy_bytes(make("<f4", (2, 7), "C"))
    fn = tf.function(
        lambda b: npyio.decode_npy(b, tf.float32, shape=(2, None)),
        input_signature=[tf.TensorSpec([], tf.string)],
    )
    assert fn.get_concrete_function().structured_outputs.shape.as_list() == [2, None]
    assert fn(data).shape == (2, 7)
    assert npyio.decode_npy(data, tf.float32, shape=(2, None)).shape == (2, 7)


@pytest.mark.parametrize(
    ("shape", "static"),
    [((3, 4), [3, 4]), ((), []), ((0, 2), [0, 2]), (None, None), ((None, None), [None, None])],
    ids=["full", "scalar", "zero", "unknown-rank", "unknown-dims"],
)
def test_static_shape_in_tf_function(shape, static):
    fn = tf.function(
        lambda b: npyio.decode_npy(b, "uint16", shape=shape),
        input_signature=[tf.TensorSpec([], tf.string)],
    )
    out = fn.get_concrete_function().structured_outputs
    if static is None:
        assert out.shape.rank is None
    else:
        assert out.shape.as_list() == static
    concrete = (3, 4) if shape is None else tuple(5 if d is None else d for d in shape)
    arr = make(">u2", concrete, "F")
    assert_same(fn(npy_bytes(arr)), arr)


def test_static_shape_in_dataset(tmp_path):
    arr = make("<f8", (2, 3), "C")
    path = write_file(tmp_path, "s.npy", npy_bytes(arr))
    ds = tf.data.Dataset.from_tensors(path).map(lambda p: npyio.read_npy(p, "float64", (2, 3)))
    assert ds.element_spec == tf.TensorSpec([2, 3], tf.float64)
    assert_same(next(iter(ds)), arr)


@pytest.mark.parametrize(
    "dtype",
    [tf.float32, np.dtype("float32"), np.float32, "float32", "<f4", ">f4"],
    ids=["tf", "np-dtype", "np-type", "name", "little", "big"],
)
def test_dtype_spellings_decode_alike(dtype):
    arr = make(">f4", (2, 2), "C")
    assert_same(npyio.decode_npy(npy_bytes(arr), dtype), arr)


def test_huge_header_limit_is_configurable():
    arr = make("<i4", (3,), "C")
    data = npy_bytes(arr)
    assert_same(npyio.decode_npy(data, "int32", max_header_size=len(data) - 12), arr)
    assert npy.MAX_HEADER_SIZE == 10_000


# --- fully static shapes: files with numpy's own native header, and any other file -----------
@pytest.mark.parametrize("name", ["bool", "int16", "uint64", "float16", "complex128"])
def test_static_shape_numpy_headers_and_others_agree(name):
    """With a fully static shape, a file carrying exactly the header np.save writes for that
    dtype and shape, and files that differ from it (byte order, layout, version, padding) all
    decode the same, alone and mixed in a batch."""
    shape = (3, 2, 2)
    arrays = [make(np.dtype(name).str, shape, "C", seed=0)]  # np.save's own header
    files = [npy_bytes(arrays[0])]
    for i, (o, layout, version) in enumerate(
        [(-1, "C", (1, 0)), (0, "F", (1, 0)), (0, "C", (2, 0)), (-1, "F", (3, 0))], start=1
    ):
        order = byte_orders(name)[o]
        stored = np.dtype(name).newbyteorder(order) if order != "|" else np.dtype(name)
        arrays.append(make(stored.str, shape, layout, seed=i))
        files.append(npy_bytes(arrays[-1], version))
    fn = decoder(name, shape)
    for data, arr in zip(files, arrays, strict=True):
        assert_same(fn(tf.constant(data)), arr)
    assert_same(npyio.decode_npy(files[:1] * 3, name, shape), np.stack(arrays[:1] * 3))
    assert_same(npyio.decode_npy(files, name, shape), np.stack(arrays))
