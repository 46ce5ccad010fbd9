"""The op `NpyioReadFiles` over paths with a scheme (``npyio/_native/src/remote.cc``): read
through TensorFlow's own file systems, here ``ram://`` (``file://`` too), one read per object;
good objects come out bit-identical to ``np.load``, and every object the kernel must doubt gives
``ok=False`` and a zero slice, never an error of the op. (Over ``gs://``, with the requests
counted: ``tests/gcs/test_native.py``.)"""

from __future__ import annotations

import io
import uuid

import numpy as np
import pytest
import tensorflow as tf

from npyio._native import library

SHAPE = (3, 5)


def _bytes(array: np.ndarray) -> bytes:
    out = io.BytesIO()
    np.save(out, array)
    return out.getvalue()


def _header(data: bytes) -> bytes:
    field = 2 if data[6] == 1 else 4
    return data[: 8 + field + int.from_bytes(data[8 : 8 + field], "little")]


@pytest.fixture
def ram() -> str:
    """A ``ram://`` directory of the test's own."""
    root = f"ram://native-{uuid.uuid4().hex[:8]}"
    tf.io.gfile.makedirs(root)
    return root


def _put(path: str, data: bytes) -> str:
    with tf.io.gfile.GFile(path, "wb") as f:
        f.write(data)
    return path


def _read(paths: list[str], dtype: str, header: bytes, shape=SHAPE):
    values, ok = library.read_files(tf.constant(paths), tf.as_dtype(dtype), shape, header)
    return values.numpy(), ok.numpy()


@pytest.mark.parametrize("dtype", ["bool", "uint8", "float32", "int64", "complex128"])
def test_ram_objects_read_bit_identical_to_np_load(native_ops, ram, dtype):
    rng = np.random.default_rng(1)
    arrays = [rng.integers(0, 2, SHAPE).astype(dtype) for _ in range(5)]
    datas = [_bytes(a) for a in arrays]
    paths = [_put(f"{ram}/{i}.npy", d) for i, d in enumerate(datas)]
    values, ok = _read(paths, dtype, _header(datas[0]))
    assert ok.all()
    assert [v.tobytes() for v in values] == [a.tobytes() for a in arrays]


def test_each_doubted_object_gives_ok_false_and_zeros(native_ops, ram, tmp_path):
    good = _bytes(np.arange(15, dtype="f4").reshape(SHAPE))
    other = _bytes(np.arange(15, dtype=">f4").reshape(SHAPE))  # another header
    cases = {
        "short": good[:-3],
        "long": good + b"\0",  # one byte more: the read asks for one byte more than expected
        "empty": b"",
        "header": other,
        "double": good + good,
    }
    paths = {name: _put(f"{ram}/{name}.npy", data) for name, data in cases.items()}
    paths["missing"] = f"{ram}/missing.npy"
    paths["nul"] = f"{ram}/a\0b.npy"
    paths["no file system"] = "nosuchscheme://bucket/x.npy"
    local = tmp_path / "local.npy"
    local.write_bytes(good)
    first = _put(f"{ram}/good.npy", good)
    names = ["good", *paths, "local"]
    values, ok = _read([first, *paths.values(), str(local)], "float32", _header(good))
    assert dict(zip(names, ok.tolist())) == {
        "good": True,
        **dict.fromkeys(paths, False),
        "local": True,  # a batch may mix local files and objects
    }
    assert not values[1:-1].any()  # a doubted object's slice is zeros
    assert values[0].tobytes() == values[-1].tobytes() == np.arange(15, dtype="f4").tobytes()


def test_a_bool_byte_other_than_0_or_1_is_doubted(native_ops, ram):
    data = bytearray(_bytes(np.ones(SHAPE, bool)))
    good = _put(f"{ram}/good.npy", bytes(data))
    data[-1] = 2
    bad = _put(f"{ram}/bad.npy", bytes(data))
    _, ok = _read([good, bad], "bool", _header(bytes(data)))
    assert ok.tolist() == [True, False]


def test_file_urls_are_read_through_the_file_system_too(native_ops, tmp_path):
    data = _bytes(np.arange(15, dtype="i8").reshape(SHAPE))
    (tmp_path / "a.npy").write_bytes(data)
    values, ok = _read([f"file://{tmp_path}/a.npy"], "int64", _header(data))
    assert ok.tolist() == [True] and values[0].tobytes() == data[len(_header(data)) :]


def test_a_large_shape_no_object_holds_allocates_nothing(native_ops, ram):
    """A header that lies about a large shape: no object has its size, so the output has no
    rows and every object is doubted (the graph path then refuses them)."""
    small = _bytes(np.zeros(4, "f4"))
    shape = (1 << 22, 4)  # 64 MiB a file
    lied = _header(small).replace(b"(4,), }   ", b"(4194304, 4), }")
    paths = [_put(f"{ram}/{i}.npy", small) for i in range(3)]
    values, ok = library.read_files(tf.constant(paths), tf.float32, shape, lied)
    assert values.shape[0] == 0 and not ok.numpy().any()


def test_large_batches_of_objects_land_each_in_its_slice(native_ops, ram):
    """Objects are read on the op's own pool, all at once: each lands in its own slice."""
    shape = (256, 256, 4)
    datas = [_bytes(np.full(shape, i, "f4")) for i in range(6)]
    paths = [_put(f"{ram}/{i}.npy", d) for i, d in enumerate(datas)]
    values, ok = library.read_files(tf.constant(paths), tf.float32, shape, _header(datas[0]))
    assert ok.numpy().all()
    assert [float(v.numpy()[0, 0, 0]) for v in values] == list(range(6))
