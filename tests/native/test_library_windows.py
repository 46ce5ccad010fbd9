"""The op `NpyioReadWindows` (``npyio/_native/src/op.cc`` over the core's
``read_window_placed``), through `npyio._native.library.read_windows`: each file's header read
once, its window placed by the file's own shape as npyio's rule says (`Window.starts`: random
by the draws, centred on a foreground voxel, at the centre or fixed, under each policy), and
each window is numpy's slice of the file's array, padded with the fill where it passes the
edges, whatever the rank, dtype, start or size; only the window's runs are read (the op's byte
count and the process's ``rchar`` both show it); a file, a draw or a window the kernel must
doubt gives ``ok=False`` and a zero slice; attrs that do not fit are op errors."""

from __future__ import annotations

import io
import os
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from npyio._format.window import CENTER, ERROR, PAD, RANDOM, TRIM, Window
from npyio._native import library

DTYPES = ["bool", "uint8", "int16", "float16", "float32", "int64", "float64", "complex128"]
PAGE = 4096


def _array(dtype: str, shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    count = int(np.prod(shape))
    raw = rng.integers(0, 256, count * np.dtype(dtype).itemsize, dtype=np.uint8)
    return raw.view(dtype).reshape(shape)  # every bit pattern, NaNs included


def _expected(a: np.ndarray, start, window, fill) -> np.ndarray:
    """numpy's slice of ``a`` at ``start`` of ``window``, padded with ``fill`` past the edges."""
    out = np.full(window, fill, a.dtype)
    src, dst = [], []
    for s, w, n in zip(start, window, a.shape, strict=True):
        lo, hi = max(s, 0), min(s + w, n)
        if lo >= hi:
            return out
        src.append(slice(lo, hi))
        dst.append(slice(lo - s, hi - s))
    out[tuple(dst)] = a[tuple(src)]
    return out


def _planned_bytes(shape, start, window, itemsize: int) -> int:
    """What the kernel's rule asks of the file system for a window inside the array, the
    header aside: the window's bytes, plus each gap of at most a page between two of its
    contiguous runs (read through rather than split into another call)."""
    axes = np.meshgrid(
        *(np.arange(s, s + w) for s, w in zip(start, window, strict=True)), indexing="ij"
    )
    elements = np.ravel_multi_index(axes, shape).ravel()
    gaps = (np.diff(elements) - 1) * itemsize
    return elements.size * itemsize + int(gaps[gaps <= PAGE].sum())


#: The bytes the kernel reads first, to parse a header (``kHead`` in ``npy_read.cc``).
HEAD = 256


def _head(path: Path | str) -> int:
    """The bytes the kernel reads first, to parse the header."""
    return min(os.path.getsize(path), HEAD)


def _read(paths, starts, dtype, shape, window, fill=b""):
    """The windows at fixed ``starts`` of ``paths`` (files of ``shape``), kept where they pass
    the edges (``"pad"``): one op call per file, as fixed starts are attrs."""
    rank = len(shape)
    starts = np.asarray(starts, np.int64).reshape(len(paths), rank)
    out = []
    for path, start in zip(paths, starts, strict=True):
        values, _, ok, nbytes = library.read_windows(
            tf.constant([path]),
            tf.zeros([1, 0], tf.float64),
            tf.as_dtype(dtype),
            shape,
            window,
            range(rank),
            tuple(int(s) for s in start),
            "pad",
            10_000,
            None,
            fill,
        )
        out.append((values.numpy(), ok.numpy(), nbytes.numpy()))
    return tuple(np.concatenate(column) for column in zip(*out, strict=True))


def _drawn(paths, draws, dtype, shape, window, axes, start="random", policy="pad", fill=b""):
    """One op call: each file's window placed by its own shape, as numpy arrays."""
    values, dims, ok, nbytes = library.read_windows(
        tf.constant(paths),
        tf.constant(np.asarray(draws, np.float64).reshape(len(paths), -1)),
        tf.as_dtype(dtype),
        shape,
        window,
        axes,
        start,
        policy,
        10_000,
        None,
        fill,
    )
    return values.numpy(), dims.numpy(), ok.numpy(), nbytes.numpy()


def _saved(a: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, a)
    return buf.getvalue()


def _same_bits(got: np.ndarray, want: np.ndarray) -> bool:
    return got.shape == want.shape and got.tobytes() == want.tobytes()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rank", [1, 2, 3, 4])
def test_windows_are_numpys_slices_padded_with_the_fill(native_ops, tmp_path, dtype, rank):
    rng = np.random.default_rng(rank)
    shape = tuple(int(d) for d in rng.integers(1, 7, rank))
    a = _array(dtype, shape, seed=rank)
    path = str(tmp_path / "a.npy")
    np.save(path, a)
    fill_value = np.array(1 if dtype == "bool" else 7, dtype)
    fill = fill_value.tobytes()
    for window in [shape, tuple(d + 3 for d in shape), (0, *shape[1:])] + [
        tuple(int(w) for w in rng.integers(0, 9, rank)) for _ in range(4)
    ]:
        # within, at each edge, before the start, past the end, and random
        starts = [
            (0,) * rank,
            tuple(d - w for d, w in zip(shape, window, strict=True)),
            (-2,) * rank,
            tuple(d - 1 for d in shape),
            tuple(d + 1 for d in shape),
        ] + [tuple(int(s) for s in rng.integers(-9, 9, rank)) for _ in range(8)]
        for f, fv in ((b"", np.zeros((), dtype)), (fill, fill_value)):
            values, ok, nbytes = _read([path] * len(starts), starts, dtype, shape, window, f)
            assert ok.all(), (window, starts)
            assert values.shape == (len(starts), *window)
            for got, start in zip(values, starts, strict=True):
                assert _same_bits(got, _expected(a, start, window, fv)), (window, start)
            assert (nbytes <= os.path.getsize(path) + _head(path)).all()


def test_a_scalar_is_its_one_element(native_ops, tmp_path):
    path = str(tmp_path / "s.npy")
    np.save(path, np.float64(2.5))
    values, ok, nbytes = _read([path], np.zeros((1, 0)), "float64", (), ())
    assert ok.tolist() == [True] and values.tolist() == [2.5]
    assert nbytes.tolist() == [os.path.getsize(path) + 8]  # the head, then the element


def test_a_window_of_many_runs_takes_several_calls_and_reads_them_all(native_ops, tmp_path):
    """One column of 3000 rows: 3000 runs a few bytes apart, more than one preadv's iovecs."""
    a = _array("float32", (3000, 4))
    path = str(tmp_path / "a.npy")
    np.save(path, a)
    values, ok, nbytes = _read([path], [[0, 1]], "float32", a.shape, (3000, 1))
    assert ok.tolist() == [True] and _same_bits(values[0], a[:, 1:2])
    head = _head(path)
    assert head + a[:, 1:2].nbytes <= nbytes[0] <= os.path.getsize(path) + head


@pytest.mark.parametrize(
    ("shape", "start", "window"),
    [
        # runs of 128 bytes 128 apart: one call would span 1 MiB, past the bounce buffer
        ((4096, 64), (0, 16), (4096, 32)),
        # whole rows, contiguous within a plane, 4 KiB apart between planes (trimmed by the
        # pad): a call with gaps reaches the bounce buffer's end on a run with no gap before it
        ((8, 64, 256), (0, 2, -1), (8, 60, 258)),
    ],
)
def test_a_window_past_the_bounce_buffer_is_read_in_several_calls_alike(
    native_ops, tmp_path, shape, start, window
):
    """Calls with gaps are read into a 256 KiB bounce buffer (``kWindowBounce``) and copied
    out; a window whose merged runs span more takes several such calls."""
    a = _array("float32", shape)
    path = str(tmp_path / "a.npy")
    np.save(path, a)
    fill = np.float32(-1)
    values, ok, nbytes = _read([path], [start], "float32", shape, window, fill.tobytes())
    assert ok.tolist() == [True] and _same_bits(values[0], _expected(a, start, window, fill))
    if min(start) >= 0:  # inside the array: the window's bytes, at most the gap rule's (a
        # gap where a call ends is not read)
        head = _head(path)
        assert (
            head + values[0].nbytes <= nbytes[0] <= head + _planned_bytes(shape, start, window, 4)
        )


def test_a_large_batch_is_read_in_parallel_alike(native_ops, tmp_path):
    """64 windows of 32 KiB, random: past the op's threshold for TF's worker threads (Shard)."""
    paths, arrays = [], []
    for i in range(8):
        arrays.append(_array("float32", (40, 40, 40), seed=i))
        paths.append(str(tmp_path / f"{i}.npy"))
        np.save(paths[-1], arrays[-1])
    draws = np.random.default_rng(0).random((64, 3))
    which = [i % 8 for i in range(64)]
    window = Window(rank=3, axes=(0, 1, 2), size=(20, 20, 20), start=RANDOM)
    values, dims, ok, _ = _drawn(
        [paths[i] for i in which], draws, "float32", (40, 40, 40), (20, 20, 20), (0, 1, 2)
    )
    assert ok.all() and (dims == 40).all()
    for got, i, draw in zip(values, which, draws, strict=True):
        start = window.starts((40, 40, 40), tuple(draw))
        assert _same_bits(got, _expected(arrays[i], start, (20, 20, 20), np.float32(0)))


def _cases(tmp_path, count: int, seed: int) -> tuple[list[str], list[np.ndarray]]:
    """``count`` files of per-case shapes (D, H, 3), D and H in 2-12, float32."""
    rng = np.random.default_rng(seed)
    paths, arrays = [], []
    for i, (d, h) in enumerate(rng.integers(2, 13, (count, 2))):
        arrays.append(_array("float32", (int(d), int(h), 3), seed=seed + i))
        paths.append(str(tmp_path / f"case{i}.npy"))
        np.save(paths[-1], arrays[-1])
    return paths, arrays


@pytest.mark.parametrize("policy", [ERROR, TRIM, PAD])
@pytest.mark.parametrize("start", [RANDOM, "foreground", CENTER, (1, 2), (-1, 2)])
def test_each_window_is_placed_by_its_files_own_shape_as_the_rule_says(
    native_ops, tmp_path, start, policy
):
    """Windows of 5 x 4 on axes (1, 0), in that order, of 24 cases of their own shapes: each is
    numpy's slice at `Window.starts` (the reference the graph path follows) on the file's own
    dims, moved inside from below but for "pad", doubted where it passes an edge under
    "error"; ``dims`` is each file's shape; each header read once."""
    paths, arrays = _cases(tmp_path, 24, seed=len(str(start)))
    rng = np.random.default_rng(3)
    draws = rng.random((24, 2))
    if start == "foreground":  # a voxel on each axis, or -1 (none): inside, at and past edges
        draws = np.concatenate([draws, rng.integers(-1, 14, (24, 2)).astype(np.float64)], 1)
    kind = RANDOM if start == "foreground" else start
    window = Window(rank=3, axes=(1, 0), size=(5, 4), start=kind, policy=policy)
    fill = np.float32(-1).tobytes() if policy == PAD else b""
    values, dims, ok, nbytes = _drawn(
        paths, draws, "float32", (None, None, 3), (4, 5, 3), (1, 0), kind, policy, fill
    )
    refused = 0
    for a, draw, got, dim, good, n in zip(arrays, draws, values, dims, ok, nbytes, strict=True):
        assert tuple(dim) == a.shape
        at = window.starts(a.shape, tuple(draw))
        inside = all(s >= 0 and s + w <= d for s, w, d in zip(at, (4, 5, 3), a.shape))
        if policy == ERROR and not inside:
            assert not good and not got.any()
            refused += 1
            continue
        if policy != PAD:
            at = tuple(max(s, 0) for s in at)
        assert good, (a.shape, draw)
        want = _expected(a, at, (4, 5, 3), np.float32(-1 if policy == PAD else 0))
        assert _same_bits(got, want), (a.shape, draw, at)
        # the header once, then at most the window's rows (4 runs of 5 x 3 floats here)
        assert n <= _head(paths[0]) + 4 * PAGE
    assert refused < 24 or start == (-1, 2)  # (a start below 0: each refused)


def test_draws_the_kernel_cannot_use_are_doubted(native_ops, tmp_path):
    """Not finite, or past int64 once scaled: doubted (the graph path decides)."""
    paths, _ = _cases(tmp_path, 4, seed=0)
    draws = [[0.5, np.nan], [np.inf, 0.5], [1e300, 0.5], [0.25, 0.75]]
    _, dims, ok, _ = _drawn(paths, draws, "float32", (None, None, 3), (2, 2, 3), (0, 1))
    assert ok.tolist() == [False, False, False, True]
    assert (dims[:, 2] == 3).all()  # the headers were read


def test_dims_come_from_each_header_and_doubted_files_give_zeros(native_ops, tmp_path):
    np.save(tmp_path / "a.npy", np.zeros((5, 7, 2), "f4"))
    np.save(tmp_path / "b.npy", np.zeros((3, 4, 2), "f4"))
    np.save(tmp_path / "c.npy", np.zeros((3, 4, 2), ">f4"))  # byte-swapped: doubted
    np.save(tmp_path / "d.npy", np.zeros((3, 4, 3), "f4"))  # a known dim differs
    paths = [str(tmp_path / f"{n}.npy") for n in "abcd"] + ["gs://b/a.npy"]
    _, dims, ok, _ = _drawn(paths, [[]] * 5, "float32", (None, None, 2), (2, 2, 2), (0, 1), CENTER)
    assert ok.tolist() == [True, True, False, False, False]
    assert dims.tolist() == [[5, 7, 2], [3, 4, 2], [0, 0, 0], [0, 0, 0], [0, 0, 0]]


def test_each_doubted_file_gives_ok_false_and_a_zero_slice(native_ops, tmp_path):
    good = tmp_path / "good.npy"
    np.save(good, np.ones((4, 6), bool))
    data = good.read_bytes()
    files = {
        "good": data,
        "one byte short": data[:-1],
        "one byte long": data + b"\0",
        "another shape": data.replace(b"(4, 6)", b"(6, 4)"),
        "another dtype": _saved(np.ones((4, 6), "u1")),
        "a bool byte 2 inside the window": data[:-8] + b"\2" + data[-7:],
    }
    paths = {}
    for name, content in files.items():
        paths[name] = str(tmp_path / f"{name}.npy")
        Path(paths[name]).write_bytes(content)
    paths["missing"] = str(tmp_path / "missing.npy")
    paths["a directory"] = str(tmp_path)
    paths["a NUL in the path"] = str(good) + "\0x"
    # the window covers the last row (where the bool byte 2 is), from column 1
    values, ok, _ = _read(
        list(paths.values()), [[2, 1]] * len(paths), "bool", (4, 6), (2, 5), b"\1"
    )
    assert dict(zip(paths, ok.tolist(), strict=True)) == {name: name == "good" for name in paths}
    assert values[0].all() and not values[1:].any()


def test_a_bad_bool_byte_outside_the_window_is_not_read(native_ops, tmp_path):
    path = tmp_path / "a.npy"
    np.save(path, np.zeros((4, 6), bool))
    data = bytearray(path.read_bytes())
    data[-1] = 2  # the last element, outside a window of the first rows
    path.write_bytes(bytes(data))
    values, ok, _ = _read([str(path)], [[0, 0]], "bool", (4, 6), (2, 6))
    assert ok.tolist() == [True] and not values.any()


def test_invalid_windows_are_doubted_never_read(native_ops, tmp_path):
    """A start whose end passes int64 is the core's BAD_WINDOW: ok=False, zeros, and nothing
    read past the header."""
    path = str(tmp_path / "a.npy")
    np.save(path, np.arange(8, dtype="int64"))
    big = np.iinfo(np.int64).max
    values, ok, nbytes = _read([path, path], [[big - 1], [3]], "int64", (8,), (2,))
    assert ok.tolist() == [False, True] and values[0].tolist() == [0, 0]
    assert nbytes[0] == _head(path) and values[1].tolist() == [3, 4]


@pytest.mark.parametrize(
    ("shape", "window", "axes", "start", "draws", "fill", "match"),
    [
        ((4, 4), (2,), (0,), "random", [[0.5]], b"", "of the shape's rank 2"),
        ((4, 4), (2, 2), (0, 1), "random", [[0.5]], b"", r"draws \[B, 2\] or \[B, 4\]"),
        ((4, 4), (2, None), (0,), "center", [[]], b"", "fully defined"),
        ((4, 4), (2, 2), (0,), "center", [[]], b"\0\0", "fill must be empty or one element"),
        ((2,) * 33, (1,) * 33, (0,), "center", [[]], b"", "at most 32"),
        ((4, 4), (2, 2), (0, 0), "center", [[]], b"", "axes must be distinct axes of rank 2"),
        ((4, 4), (2, 2), (2,), "center", [[]], b"", "axes must be distinct axes of rank 2"),
        ((4, 4), (2, 2), (0, 1), (1,), [[]], b"", "fixed must give a start per axis"),
    ],
)
def test_attrs_that_do_not_fit_are_op_errors(
    native_ops, tmp_path, shape, window, axes, start, draws, fill, match
):
    with pytest.raises((tf.errors.InvalidArgumentError, ValueError), match=match):
        library.read_windows(
            tf.constant([str(tmp_path / "a.npy")]),
            tf.constant(draws, tf.float64, shape=(1, len(draws[0]))),
            tf.float32,
            shape,
            window,
            axes,
            start,
            "error",
            10_000,
            None,
            fill,
        )


def test_draws_of_another_batch_than_paths_are_an_op_error(native_ops):
    with pytest.raises((tf.errors.InvalidArgumentError, ValueError), match="draws"):
        library.read_windows(
            tf.constant(["a", "b"]),
            tf.zeros((3, 1), tf.float64),
            tf.float32,
            (4,),
            (2,),
            (0,),
            "random",
            "error",
            10_000,
            None,
        )


def test_bytes_read_stay_within_the_window_plus_a_page_per_run(native_ops, tmp_path):
    """64^3 float32 (1 MiB) and 16^3 windows: 256 runs of 64 bytes each; the op's count stays
    within the issue's bound and under a quarter of the file (reading it whole fails this)."""
    a = _array("float32", (64, 64, 64))
    path = str(tmp_path / "a.npy")
    np.save(path, a)
    head = _head(path)
    window = (16, 16, 16)
    starts = np.random.default_rng(0).integers(0, 49, (16, 3))
    values, ok, nbytes = _read([path] * 16, starts, "float32", a.shape, window)
    assert ok.all()
    window_bytes, runs = 16**3 * 4, 16 * 16
    for got, start, n in zip(values, starts, nbytes, strict=True):
        assert _same_bits(got, _expected(a, start, window, np.float32(0)))
        assert window_bytes + head <= n <= 1.1 * window_bytes + PAGE * runs + head
        assert n < os.path.getsize(path) / 4
        assert n == head + _planned_bytes(a.shape, start, window, 4)


def _rchar() -> int:
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError("no rchar in /proc/self/io")


@pytest.mark.skipif(not Path("/proc/self/io").exists(), reason="Linux's /proc/self/io")
def test_the_file_system_sees_the_window_read_not_the_file(native_ops, tmp_path):
    """A 96^3 window of a 256^3 float32 file (64 MiB, sparse: written as a header and a
    length): the process's read syscalls (``rchar``) grow by about the op's own count, a few
    MiB, not 64 MiB. One file, read in the calling thread (below the op's parallel threshold)."""
    shape, window = (256, 256, 256), (96, 96, 96)
    path = tmp_path / "volume.npy"
    with open(path, "wb") as f:
        np.lib.format.write_array_header_1_0(
            f, {"descr": "<f4", "fortran_order": False, "shape": shape}
        )
        f.truncate(f.tell() + 4 * 256**3)
    args = ([str(path)], [[80, 80, 80]], "float32", shape, window)
    _read(*args)  # the op's kernel made and the function traced before counting
    before = _rchar()
    values, ok, nbytes = _read(*args)
    read = _rchar() - before
    assert ok.tolist() == [True] and values.shape == (1, *window)
    window_bytes = 96**3 * 4
    assert nbytes[0] == HEAD + _planned_bytes(shape, (80, 80, 80), window, 4)
    assert window_bytes <= nbytes[0] <= 1.1 * window_bytes + PAGE * 96 * 96 + HEAD
    assert nbytes[0] <= read < nbytes[0] + (1 << 20), (read, nbytes[0])
    assert read < os.path.getsize(path) / 4
    print(f"window {window_bytes} B, op's count {nbytes[0]} B, rchar delta {read} B")


def test_draws_of_another_width_are_refused_when_traced(native_ops):
    """In a graph the shape function refuses them before anything runs."""

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float64)])
    def read(draws):
        return library.read_windows(
            tf.constant(["a"]),
            draws,
            tf.float32,
            (4, 4),
            (2, 2),
            (0, 1),
            "random",
            "pad",
            10_000,
            None,
        )

    with pytest.raises(ValueError, match=r"draws must be \[B, 2\] or \[B, 4\]"):
        read.get_concrete_function()


def _evicted(path: Path) -> bool:
    """Drops ``path``'s pages from the page cache (written back first); whether its last page
    is then cold (a one-byte read that may not wait for the disk is refused; the refusal may
    start reading that page, so the window must not touch it)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        try:
            os.preadv(fd, [bytearray(1)], os.fstat(fd).st_size - 1, os.RWF_NOWAIT)
        except BlockingIOError:
            return True
        return False
    finally:
        os.close(fd)


@pytest.mark.skipif(not hasattr(os, "RWF_NOWAIT"), reason="Linux's preadv2(RWF_NOWAIT)")
def test_a_cold_files_window_is_advised_then_read_alike(native_ops, tmp_path):
    """An 8 MiB volume out of the page cache: the window's ranges are advised before its reads
    (the disk has them queued), and the window is the same; a warm file's is not advised."""
    a = _array("float32", (32, 256, 256))
    path = tmp_path / "cold.npy"
    np.save(path, a)
    start, window = (8, 100, 40), (16, 64, 64)
    if not _evicted(path):
        pytest.skip("this file system keeps the pages (tmpfs?)")
    before = library.windows_advised()
    values, ok, _ = _read([str(path)], [start], "float32", a.shape, window)
    assert ok.tolist() == [True]
    assert _same_bits(values[0], _expected(a, start, window, np.float32(0)))
    assert library.windows_advised() == before + 1
    _read([str(path)], [start], "float32", a.shape, window)  # now in the page cache
    assert library.windows_advised() == before + 1


def _settled(*paths: Path) -> None:
    """Waits until ``paths`` changed over a second ago, so that the kernel keeps their headers
    (it keeps none of a file changed within the last second)."""
    import time

    newest = max(os.stat(p).st_ctime for p in paths)
    time.sleep(max(0.0, newest + 2.05 - time.time()))


def test_a_files_header_is_read_once_for_all_its_windows(native_ops, tmp_path):
    """Four windows of each of three volumes, twice: each header is read from its file once,
    the rest from the kernel's cache, and every window is still the file's."""
    arrays = [_array("float32", (9 + i, 12, 10), seed=i) for i in range(3)]
    paths = [str(tmp_path / f"{i}.npy") for i in range(3)]
    for path, a in zip(paths, arrays, strict=True):
        np.save(path, a)
    _settled(*map(Path, paths))
    draws = np.random.default_rng(0).random((12, 3))
    window = (4, 5, 6)
    read = []
    for _ in range(2):
        before = library.headers_read()
        values, _, ok, _ = _drawn(paths * 4, draws, "float32", (None, 12, 10), window, (0, 1, 2))
        read.append(library.headers_read() - before)
        assert ok.all()
        for k in range(12):
            a = arrays[k % 3]
            place = Window(rank=3, axes=(0, 1, 2), size=window, start=RANDOM, policy=PAD)
            start = place.starts(a.shape, tuple(draws[k]))  # npyio's rule
            assert _same_bits(values[k], _expected(a, start, window, np.float32(0)))
    # once per file (two of the op's threads may both miss one file at once), then never
    assert 3 <= read[0] < 12 and read[1] == 0, read


def test_a_header_is_read_again_once_its_file_changes(native_ops, tmp_path):
    """A file kept in the cache, then rewritten with another shape of the same size: its next
    window is placed and read by the new header. A file changed within the last second is
    never kept."""
    path = tmp_path / "a.npy"
    np.save(path, np.arange(8 * 16, dtype=np.float32).reshape(8, 16))
    _settled(path)
    _drawn([str(path)], np.zeros((1, 0)), "float32", (None, None), (4, 4), (0, 1), "center")
    before = library.headers_read()
    _, dims, _, _ = _drawn(
        [str(path)], np.zeros((1, 0)), "float32", (None, None), (4, 4), (0, 1), "center"
    )
    assert library.headers_read() == before and dims.tolist() == [[8, 16]]  # kept
    b = np.arange(16 * 8, dtype=np.float32).reshape(16, 8) + 1000
    np.save(path, b)  # the same size: only the header differs
    for _ in range(2):  # changed just now: read from the file both times
        values, dims, ok, _ = _drawn(
            [str(path)], np.zeros((1, 0)), "float32", (None, None), (4, 4), (0, 1), "center"
        )
        assert ok.tolist() == [True] and dims.tolist() == [[16, 8]]
        assert np.array_equal(values[0], b[6:10, 2:6])
    assert library.headers_read() == before + 2
