"""The native reader (`npyio._read.native`) inside `npyio.dataset`: a batch of local files read
straight into one tensor, with every file the kernel doubts decided by the graph parser. So its
values are the graph path's, bit for bit, and its refusals are the graph path's, word for word:
other writers' headers, byte-swapped and Fortran-order files, bools that are not 0/1, files
truncated, grown, replaced or deleted after the dataset was built. Where the op cannot be built
(no compiler), a dataset still reads, through the graph path, and says why once."""

from __future__ import annotations

import io
import os
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

import npyio
from tests._graph_util import graph_def
from tests._npy_testing import run_python

REPO = Path(__file__).resolve().parents[2]
SHAPE = (4, 3)


def _v2(array: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array(buf, array, version=(2, 0))
    return buf.getvalue()


def _padded(array: np.ndarray) -> bytes:
    """``array`` as another writer might save it: the same dict, with a longer padding."""
    buf = io.BytesIO()
    np.save(buf, array)
    data = buf.getvalue()
    length = int.from_bytes(data[8:10], "little")
    text = data[10 : 10 + length].rstrip(b" \n") + b" " * 64 + b"\n"
    return data[:8] + len(text).to_bytes(2, "little") + text + data[10 + length :]


def _tree(root: Path, n: int = 19) -> tuple[str, str]:
    """x/ (float32 (4, 3), value i) and y/ (int64 i), with files the kernel doubts among
    them: format 2.0, big-endian, Fortran-order, another writer's padding."""
    xs, ys = root / "x", root / "y"
    xs.mkdir()
    ys.mkdir()
    for i in range(n):
        x = np.arange(12, dtype=np.float32).reshape(SHAPE) + 100 * i
        np.save(xs / f"{i:04d}.npy", x)
        np.save(ys / f"{i:04d}.npy", np.int64(i))
    x = lambda i: np.arange(12, dtype=np.float32).reshape(SHAPE) + 100 * i  # noqa: E731
    (xs / "0003.npy").write_bytes(_v2(x(3)))
    np.save(xs / "0005.npy", x(5).astype(">f4"))
    np.save(xs / "0008.npy", np.asfortranarray(x(8)))
    (xs / "0013.npy").write_bytes(_padded(x(13)))
    (ys / "0013.npy").write_bytes(_v2(np.int64(13)))
    return str(xs), str(ys)


def _uses_native(ds: tf.data.Dataset, op: str | None = None) -> bool:
    """Whether ``ds``'s graph holds ``op``, or (None) either op that reads files of one shape:
    the batch source, or the batch read of the loader's batches (without ``batch_size``)."""
    graph = str(graph_def(ds))
    return any(name in graph for name in ([op] if op else ["NpyioReadFiles", "NpyioBatchDataset"]))


def _batches(ds: tf.data.Dataset) -> list[tuple[bytes, ...]]:
    """Every batch's bytes (bit-exact, NaNs included)."""
    return [tuple(t.numpy().tobytes() for t in tf.nest.flatten(b)) for b in ds]


@pytest.mark.parametrize("batch_size", [8, None])
def test_doubted_files_read_as_the_graph_path_reads_them(tmp_path, batch_size):
    xs, ys = _tree(tmp_path)
    native = npyio.dataset(xs, ys, batch_size=batch_size, shuffle=True, seed=4)
    graph = npyio.dataset(xs, ys, batch_size=batch_size, shuffle=True, seed=4, backend="graph")
    assert _uses_native(native) and not _uses_native(graph)
    assert _batches(native) == _batches(graph)
    x, y = next(iter(npyio.dataset(xs, ys, batch_size=19)))
    expected = np.arange(12, dtype=np.float32).reshape(SHAPE) + 100 * np.arange(19)[:, None, None]
    np.testing.assert_array_equal(x.numpy(), expected)
    assert y.numpy().tolist() == list(range(19))


def _cases(root: Path) -> tuple[str, str]:
    """x/ float32 (D, H, 1) and y/ uint8 (D, H) of a shape per case, unpadded names, with files
    the kernel doubts among them (big-endian, Fortran order, format 2.0, a Python 2 header)."""
    xs, ys = root / "x", root / "y"
    xs.mkdir()
    ys.mkdir()
    rng = np.random.default_rng(0)
    for i in range(11):
        x = rng.random((int(rng.integers(2, 9)), int(rng.integers(1, 5)), 1)).astype(np.float32)
        np.save(xs / f"{i}.npy", x)
        np.save(ys / f"{i}.npy", (x[..., 0] > 0.5).astype(np.uint8))
    x = np.load(xs / "3.npy")
    np.save(xs / "3.npy", x.astype(">f4"))
    np.save(xs / "5.npy", np.asfortranarray(np.load(xs / "5.npy")))
    (ys / "7.npy").write_bytes(_v2(np.load(ys / "7.npy")))
    y = np.load(ys / "8.npy")
    d, h = y.shape
    text = f"{{'descr': '|u1', 'fortran_order': False, 'shape': ({d}L, {h}L), }}\n"
    head = b"\x93NUMPY\x01\x00" + len(text).to_bytes(2, "little") + text.encode()
    (ys / "8.npy").write_bytes(head + y.tobytes())  # numpy on Python 2, on Windows
    return str(xs), str(ys)


@pytest.mark.parametrize("batch_size", [None, 3])
def test_per_case_shapes_are_read_by_the_kernel_as_the_graph_path_reads_them(tmp_path, batch_size):
    """Issue 52: files of a shape per case are read by the kernel, one at a time, each header
    parsed there (``NpyioReadFile``); whole arrays, or padded batches."""
    xs, ys = _cases(tmp_path)
    kwargs = dict(shape=(None, None, 1), label_shape=(None, None), batch_size=batch_size)
    native = npyio.dataset(xs, ys, shuffle=True, seed=3, **kwargs)
    graph = npyio.dataset(xs, ys, shuffle=True, seed=3, backend="graph", **kwargs)
    assert _uses_native(native, 'NpyioReadFile"') and not _uses_native(graph, "NpyioRead")
    assert native.element_spec == graph.element_spec
    assert _batches(native) == _batches(graph)


@pytest.mark.parametrize("how", ["truncated", "grown", "replaced", "emptied"])
def test_a_case_changed_after_the_build_is_refused_as_the_graph_path_refuses_it(tmp_path, how):
    xs, ys = _cases(tmp_path)
    kwargs = dict(shape=(None, None, 1), label_shape=(None, None), batch_size=None)
    native = npyio.dataset(xs, ys, **kwargs)
    graph = npyio.dataset(xs, ys, backend="graph", **kwargs)
    _change(Path(xs) / "9.npy", how)
    got, expected = _refusal(native), _refusal(graph)
    assert got == expected
    assert "9.npy" in got[1], got


def test_bools_the_graph_decodes_differently_are_doubted(tmp_path):
    """numpy bools stored as bytes other than 0 and 1: the kernel sends them to the graph
    parser, whose reading is the reference."""
    for i in range(4):
        np.save(tmp_path / f"{i}.npy", np.array([True, False, i % 2 == 0]))
    odd = bytearray((tmp_path / "2.npy").read_bytes())
    odd[-3] = 7
    (tmp_path / "2.npy").write_bytes(bytes(odd))
    native = npyio.dataset(str(tmp_path), batch_size=4)
    assert _uses_native(native)
    assert _batches(native) == _batches(npyio.dataset(str(tmp_path), batch_size=4, backend="graph"))


def _refusal(ds: tf.data.Dataset) -> tuple[type, str]:
    """The error iterating ``ds`` raises, and its first line from the file's path on."""
    with pytest.raises(tf.errors.OpError) as info:
        _batches(ds)
    first = str(info.value).splitlines()[0]
    return type(info.value), first[first.index(": ", first.index("assertion") + 1) :]


def _change(path: Path, how: str) -> None:
    data = path.read_bytes()
    if how == "truncated":
        path.write_bytes(data[:-5])
    elif how == "grown":
        path.write_bytes(data + b"\0" * 4)
    elif how == "replaced":
        np.save(path, np.zeros(SHAPE, np.float64))
    elif how == "emptied":
        path.write_bytes(b"")


@pytest.mark.parametrize("how", ["truncated", "grown", "replaced", "emptied"])
def test_a_file_changed_after_the_build_is_refused_as_the_graph_path_refuses_it(tmp_path, how):
    xs, ys = _tree(tmp_path)
    native = npyio.dataset(xs, ys, batch_size=8)
    graph = npyio.dataset(xs, ys, batch_size=8, backend="graph")
    _change(Path(xs) / "0010.npy", how)
    got, expected = _refusal(native), _refusal(graph)
    assert got == expected
    assert "0010.npy" in got[1], got


def test_a_file_deleted_after_the_build_is_refused_naming_it(tmp_path):
    xs, ys = _tree(tmp_path)
    native = npyio.dataset(xs, ys, batch_size=8)
    os.remove(Path(xs) / "0011.npy")
    with pytest.raises(tf.errors.NotFoundError, match=r"0011\.npy; No such file or directory"):
        _batches(native)


def test_without_a_compiler_a_dataset_reads_through_the_graph_path_and_says_why_once(tmp_path):
    xs, ys = _tree(tmp_path)
    code = f"""
        import sys
        import numpy as np, npyio
        def batches(ds):
            return [b.numpy().tobytes() for batch in ds for b in batch]
        native = batches(npyio.dataset({xs!r}, {ys!r}, batch_size=8))
        again = batches(npyio.dataset({xs!r}, {ys!r}, batch_size=5))
        graph = batches(npyio.dataset({xs!r}, {ys!r}, batch_size=8, backend="graph"))
        print(native == graph and len(again) == 8)
    """
    empty = tmp_path / "bin"
    empty.mkdir()
    env = {"PATH": str(empty), "CXX": "", "NPYIO_CACHE": str(tmp_path / "cache")}
    done = run_python(code, {**env, "NPYIO_NATIVE": ""})
    assert (done.returncode, done.stdout.strip()) == (0, "True"), done.stderr[-3000:]
    said = [line for line in done.stderr.splitlines() if line.startswith("npyio:")]
    assert said == [
        "npyio: native reader off (no C++ compiler on PATH: install g++ and run "
        "`npyio native --build`); reading through the graph path (NPYIO_NATIVE=0 silences this)"
    ]
    required = run_python(code, {**env, "NPYIO_NATIVE": "1"})
    assert required.returncode != 0
    why = "npyio's native reader (NPYIO_NATIVE=1) is not available: no C++ compiler on PATH"
    assert f"BackendUnavailableError: {why}" in required.stderr, required.stderr[-3000:]


def test_native_pipelines_turn_autotune_off_and_a_caller_can_turn_it_on(tmp_path):
    """An epoch's iterator deletion waits for autotune's next tick when autotune is on
    (bench/README.md, "Short epochs"): the native reader's pipelines turn it off, the graph
    parser's keep it, and the caller's own options win."""
    xs, ys = _tree(tmp_path)
    native = npyio.dataset(xs, ys, batch_size=8)
    assert native.options().autotune.enabled is False
    assert npyio.dataset(xs, ys, batch_size=8, backend="graph").options().autotune.enabled is None
    on = tf.data.Options()
    on.autotune.enabled = True
    again = native.with_options(on)
    assert again.options().autotune.enabled is True
    assert _batches(again) == _batches(native)


def _to_ram(local: str, ram: str) -> str:
    """The ``.npy`` files of the directory ``local``, copied under ``ram`` (TensorFlow's
    in-memory file system)."""
    tf.io.gfile.makedirs(ram)
    for name in sorted(os.listdir(local)):
        tf.io.gfile.copy(os.path.join(local, name), f"{ram}/{name}", overwrite=True)
    return ram


def test_objects_of_a_file_system_are_read_by_the_kernel_as_the_graph_path_reads_them(tmp_path):
    """``ram://`` (TensorFlow's file systems, as ``gs://``): the kernel reads the objects, and
    the doubted ones (other headers, byte orders, layouts) are the graph parser's."""
    xs, ys = _tree(tmp_path)
    root = f"ram://native-{tmp_path.name}"
    xs, ys = _to_ram(xs, f"{root}/x"), _to_ram(ys, f"{root}/y")
    native = npyio.dataset(xs, ys, batch_size=8, shuffle=True, seed=4)
    graph = npyio.dataset(xs, ys, batch_size=8, shuffle=True, seed=4, backend="graph")
    assert _uses_native(native) and not _uses_native(graph)
    assert _batches(native) == _batches(graph)


# (not emptied: ram:// keeps an object's old bytes when it is rewritten with none)
@pytest.mark.parametrize("how", ["truncated", "grown", "replaced"])
def test_an_object_changed_after_the_build_is_refused_as_the_graph_path_refuses_it(tmp_path, how):
    xs, ys = _tree(tmp_path)
    root = f"ram://changed-{how}-{tmp_path.name}"
    ram_xs, ram_ys = _to_ram(xs, f"{root}/x"), _to_ram(ys, f"{root}/y")
    native = npyio.dataset(ram_xs, ram_ys, batch_size=8)
    graph = npyio.dataset(ram_xs, ram_ys, batch_size=8, backend="graph")
    _change(Path(xs) / "0010.npy", how)
    tf.io.gfile.copy(str(Path(xs) / "0010.npy"), f"{ram_xs}/0010.npy", overwrite=True)
    got, expected = _refusal(native), _refusal(graph)
    assert got == expected
    assert f"{ram_xs}/0010.npy" in got[1], got
