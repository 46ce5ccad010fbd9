"""npyio.dataset(crop=...): windows of each array, the same window on an image and its mask,
drawn from the seed, anew each epoch, resumed exactly, refused with the file's name."""

from __future__ import annotations

import os

import numpy as np
import pytest
import tensorflow as tf

import npyio
from npyio._pipeline.options import DatasetOptions
from npyio._sources.plan import plan

SHAPE = (12, 10, 9)
BACKENDS = ["native", "graph"]


def volume(i: int, shape: tuple[int, ...] = SHAPE) -> np.ndarray:
    """Each element says where it is: i * 1e6 + z * 1e4 + y * 1e2 + x (float64: exact)."""
    grids = np.meshgrid(*[np.arange(d) for d in shape], indexing="ij")
    out = np.full(shape, i * 1e6)
    for grid, scale in zip(grids, (1e4, 1e2, 1)[-len(shape) :]):
        out += grid * scale
    return out


@pytest.fixture
def volumes(tmp_path):
    """inputs: float64 volumes whose values say where they are; masks: the same as int32."""
    xs, ys = tmp_path / "volumes", tmp_path / "masks"
    xs.mkdir()
    ys.mkdir()
    for i in range(6):
        np.save(xs / f"{i}.npy", volume(i))
        np.save(ys / f"{i}.npy", volume(i).astype(np.int32))
    return str(xs), str(ys)


def where(window: np.ndarray) -> tuple[int, ...]:
    """The element and start of a window of a `volume`, checked to be a whole block of it."""
    first = int(window.flat[0])
    i, rest = divmod(first, 10**6)
    start = (rest // 10**4, rest // 100 % 100, rest % 100)
    block = volume(i)[tuple(slice(s, s + n) for s, n in zip(start, window.shape))]
    np.testing.assert_array_equal(window, block)
    return (i, *start)


def windows(ds: tf.data.Dataset) -> list[tuple[int, ...]]:
    return [
        where(x) for batch in ds for x in (batch[0] if isinstance(batch, tuple) else batch).numpy()
    ]


@pytest.mark.parametrize("backend", BACKENDS)
def test_random_windows_are_the_same_on_the_volume_and_its_mask(volumes, backend):
    ds = npyio.dataset(*volumes, crop=(4, 5, 6), seed=0, batch_size=4, backend=backend)
    assert ds.element_spec[0].shape.as_list() == [None, 4, 5, 6]
    assert ds.element_spec[1].shape.as_list() == [None, 4, 5, 6]
    starts = set()
    for x, y in ds:
        np.testing.assert_array_equal(x.numpy().astype(np.int32), y.numpy())
        starts |= {where(v)[1:] for v in x.numpy()}
    assert len(starts) > 1  # drawn, not one fixed window


@pytest.mark.parametrize("backend", BACKENDS)
def test_windows_come_from_the_seed_and_change_each_epoch(volumes, backend):
    def make(**kwargs):
        return npyio.dataset(volumes[0], crop=(4, 5, 6), batch_size=2, backend=backend, **kwargs)

    ds = make(seed=3)
    first, second = windows(ds), windows(ds)
    assert [w[0] for w in first] == list(range(6))  # in order, every file once
    assert first != second  # anew each epoch
    assert windows(make(seed=3)) == first  # the same seed, the same windows
    assert windows(make(seed=4)) != first
    fixed = make(seed=3, reshuffle_each_iteration=False)
    assert windows(fixed) == windows(fixed)
    shuffled = windows(make(seed=3, shuffle=True))
    assert sorted(w[0] for w in shuffled) == list(range(6))
    assert [w[0] for w in shuffled] != list(range(6))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_restored_iterator_draws_the_same_windows(volumes, tmp_path, backend):
    def make():
        ds = npyio.dataset(
            volumes[0], crop=(4, 5, 6), seed=1, shuffle=True, batch_size=2, backend=backend
        )
        return ds.repeat(3)

    whole = windows(make())
    it = iter(make())
    seen = [where(x) for _ in range(4) for x in next(it).numpy()]
    path = tf.train.Checkpoint(it=it).write(str(tmp_path / "ckpt"))
    restored = iter(make())
    tf.train.Checkpoint(it=restored).read(path).assert_consumed()
    rest = [where(x) for batch in restored for x in batch.numpy()]
    assert seen + rest == whole


@pytest.mark.parametrize("backend", BACKENDS)
def test_centre_fixed_trimmed_and_padded_windows(volumes, backend):
    x = volumes[0]
    ds = npyio.dataset(x, crop=npyio.Crop((4, 4), start="center"), batch_size=None, backend=backend)
    got = next(iter(ds)).numpy()
    np.testing.assert_array_equal(got, volume(0)[4:8, 3:7])
    crop = npyio.Crop(start=(0.5, 2), end=(1.0, 4), axes=(0, 2))
    got = next(iter(npyio.dataset(x, crop=crop, batch_size=None, backend=backend))).numpy()
    np.testing.assert_array_equal(got, volume(0)[6:12, :, 2:4])
    crop = npyio.Crop((6, 4), start=(-2, 7), out_of_bounds="pad", fill_value=-1.0)
    got = next(iter(npyio.dataset(x, crop=crop, batch_size=None, backend=backend))).numpy()
    expect = np.full((6, 4, 9), -1.0)
    expect[2:6, 0:3] = volume(0)[0:4, 7:10]
    np.testing.assert_array_equal(got, expect)
    crop = npyio.Crop((6, 4), start=(-2, 7), out_of_bounds="trim")
    ds = npyio.dataset(x, crop=crop, batch_size=2, backend=backend)
    assert ds.element_spec.shape.as_list() == [None, 4, 3, 9]
    np.testing.assert_array_equal(next(iter(ds)).numpy()[1], volume(1)[0:4, 7:10])


@pytest.mark.parametrize("backend", BACKENDS)
def test_label_crop_none_reads_labels_whole_and_own_draws_apart(volumes, backend):
    ds = npyio.dataset(*volumes, crop=(4, 5, 6), label_crop=None, seed=0, backend=backend)
    assert ds.element_spec[1].shape.as_list() == [None, *SHAPE]
    ds = npyio.dataset(
        *volumes, crop=(4, 5, 6), label_crop=(4, 5, 6), seed=0, batch_size=None, backend=backend
    )
    pairs = [(where(x.numpy()), where(y.numpy().astype(np.float64))) for x, y in ds]
    assert all(a[0] == b[0] for a, b in pairs)  # the same pair
    assert any(a != b for a, b in pairs)  # windows drawn apart


def test_the_plan_says_the_kernel_reads_the_windows(volumes):
    """The window's axes are sized by each file (issue 52: the plain ``crop=`` reads cases of
    any size there); the window's own size is static, and the batches are read whole."""
    planned = plan(*volumes, DatasetOptions.from_arguments({"crop": (4, 5, 6)}))
    assert planned.backend == "native" and planned.strategy == "batch-then-decode"
    assert [s.output.shape for s in planned.specs] == [(4, 5, 6), (4, 5, 6)]
    assert [s.file.shape for s in planned.specs] == [(None, None, None)] * 2
    given = plan(*volumes, DatasetOptions.from_arguments({"crop": (4, 5), "shape": SHAPE}))
    assert given.specs[0].file.shape == SHAPE  # a shape given is the caller's
    trimmed = npyio.Crop((4, 5, 6), out_of_bounds="trim")
    kept = plan(*volumes, DatasetOptions.from_arguments({"crop": trimmed}))
    assert kept.specs[0].file.shape == SHAPE  # a trimmed window's size would vary


def test_bool_windows_are_read_whole_by_the_graph_path(tmp_path):
    np.save(tmp_path / "0.npy", np.ones((8, 8), bool))
    planned = plan(str(tmp_path), None, DatasetOptions.from_arguments({"crop": (4, 4)}))
    assert planned.backend == "graph"  # its check of every byte needs the whole file


def test_refusals_name_the_file(volumes, tmp_path):
    x, y = volumes
    with pytest.raises(
        npyio.NpyFormatError, match=r"0.npy: inputs: crop window of size 20 on axis 0 is outside"
    ):
        npyio.dataset(x, y, crop=(20, 4))
    with pytest.raises(
        npyio.NpyFormatError, match=r"names axes \[0, 1, 2, 3\], but the array has 3 dims"
    ):
        npyio.dataset(x, crop=(2, 2, 2, 2))
    scalars = tmp_path / "scalars"
    scalars.mkdir()
    for i in range(6):
        np.save(scalars / f"{i}.npy", np.int64(i))
    with pytest.raises(
        npyio.NpyFormatError, match=r"scalars/0.npy: labels: .*pass label_crop=None"
    ):
        npyio.dataset(x, str(scalars), crop=(4, 4))
    ds = npyio.dataset(x, str(scalars), crop=(4, 4), label_crop=None, batch_size=6)
    assert next(iter(ds))[1].numpy().tolist() == list(range(6))
    with pytest.raises(ValueError, match="label_crop: the labels are not files"):
        npyio.dataset(x, list(range(6)), label_crop=(2,))
    small = tmp_path / "small"
    small.mkdir()
    for i in range(6):
        np.save(small / f"{i}.npy", np.zeros((6, 10, 9)))
    with pytest.raises(npyio.NpyFormatError, match=r"one window cannot be cut from both"):
        npyio.dataset(x, str(small), crop=(4, 4))
    with pytest.raises(TypeError, match="tuple of window sizes"):
        npyio.dataset(x, crop=4)


def test_varying_shapes_are_cropped_in_the_graph_and_refused_by_name(tmp_path):
    for i, n in enumerate([9, 7, 3]):
        np.save(tmp_path / f"{i}.npy", np.arange(n * 4, dtype=np.float32).reshape(n, 4))
    ds = npyio.dataset(str(tmp_path), shape=(None, 4), crop=(3,), seed=0, batch_size=None)
    assert [x.shape for x in ds] == [(3, 4)] * 3
    ds = npyio.dataset(str(tmp_path), shape=(None, 4), crop=(5,), seed=0, batch_size=None)
    with pytest.raises(
        tf.errors.InvalidArgumentError,
        match=r"2.npy: crop window of shape \(5, 4\) is outside the array of shape \(3, 4\)",
    ):
        list(ds)
    trim = npyio.Crop((5,), out_of_bounds="trim")
    ds = npyio.dataset(str(tmp_path), shape=(None, 4), crop=trim, seed=0, batch_size=3)
    assert ds.element_spec.shape.as_list() == [None, None, 4]
    assert next(iter(ds)).shape == (3, 5, 4)  # padded to the largest window


def test_dataset_from_directory_crops_the_inputs(tmp_path):
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        for i in range(3):
            np.save(tmp_path / name / f"{i}.npy", np.zeros((8, 8, 2), np.float32))
    ds = npyio.dataset_from_directory(str(tmp_path), crop=(4, 4), seed=0, batch_size=6)
    x, y = next(iter(ds))
    assert x.shape == (6, 4, 4, 2) and y.shape == (6,)


def test_a_pack_refuses_crop(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for i in range(3):
        np.save(src / f"{i}.npy", np.zeros((4, 4), np.float32))
    npyio.pack(str(src), out=str(tmp_path / "pack"))
    with pytest.raises(ValueError, match="crop= does not apply to a packed directory"):
        npyio.dataset(str(tmp_path / "pack"), crop=(2, 2))


def _rchar() -> int:
    """Bytes this process asked of read syscalls so far (/proc/self/io: every thread)."""
    with open("/proc/self/io") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("rchar:"))


@pytest.mark.skipif(not os.path.exists("/proc/self/io"), reason="Linux's /proc/self/io")
def test_only_the_windows_bytes_are_read(tmp_path):
    """Random 16^3 windows of 4 MiB volumes: what the read syscalls fetched stays within the
    windows' bytes plus a page per run (the issue's bound), far below the volumes'."""
    shape, window, n = (64, 128, 128), (16, 16, 16), 8
    for i in range(n):
        np.save(tmp_path / f"{i}.npy", np.full(shape, i, np.float32))
    ds = npyio.dataset(str(tmp_path), crop=window, seed=0, batch_size=4)
    next(iter(ds))  # builds the graph, loads the library: outside the count
    before = _rchar()
    assert sum(int(x.shape[0]) for x in ds) == n
    fetched = _rchar() - before
    window_bytes = n * 16**3 * 4
    runs = n * 16 * 16
    assert fetched <= 1.1 * window_bytes + runs * 4096 + n * 128 + (1 << 20)  # 1 MiB: TF's own
    assert fetched < n * 64 * 128 * 128 * 4 / 8  # whole volumes would be 8x this


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_file_whose_header_lies_is_refused_by_name(volumes, backend):
    """A file whose header claims a huge array: the kernel doubts it, and the graph path
    refuses it naming the file, allocating nothing by it; a sampled one too (file 3; file 4 is
    not sampled). The window's axes are sized by each file (issue 52), so a header of another
    shape of the same size is another case, read as ``np.load`` reads it."""
    x = volumes[0]
    real = volume(4)
    header = np.lib.format.header_data_from_array_1_0(real)
    for name in ["4.npy", "3.npy"]:
        with open(f"{x}/{name}", "wb") as f:
            np.lib.format.write_array_header_1_0(f, {**header, "shape": (4000, 4000, 4000)})
            f.write(real.tobytes())
        ds = npyio.dataset(x, crop=(4, 5, 6), seed=0, batch_size=2, backend=backend)
        with pytest.raises(
            tf.errors.InvalidArgumentError,
            match=rf"{name[0]}\.npy: payload is shorter than the header says -- expected "
            "512000000000 bytes",
        ):
            list(ds)
        np.save(f"{x}/{name}", volume(int(name[0])))
    with open(f"{x}/4.npy", "wb") as f:
        np.lib.format.write_array_header_1_0(f, {**header, "shape": (10, 12, 9)})
        f.write(real.tobytes())
    crop = npyio.Crop((10, 10, 9), start=(0, 0, 0))
    ds = npyio.dataset(x, crop=crop, batch_size=None, shuffle=False, backend=backend)
    windows = [w.numpy() for w in ds]
    np.testing.assert_array_equal(windows[4], np.load(f"{x}/4.npy")[:, :10])


def test_objects_in_a_store_are_read_whole_and_cut_in_the_graph():
    """The kernel reads a store's objects in one request each, whole: a cropped part there is
    the graph path's, with the same windows."""
    root = "ram://crop-test/volumes"
    for i in range(3):
        with tf.io.gfile.GFile(f"{root}/{i}.npy", "wb") as f:
            np.save(f, volume(i))
    options = DatasetOptions.from_arguments({"crop": (4, 5, 6)})
    assert plan(root, None, options).backend == "graph"
    assert plan(root, None, DatasetOptions()).backend == "native"
    ds = npyio.dataset(root, crop=(4, 5, 6), seed=0, batch_size=3)
    assert [w[0] for w in windows(ds)] == [0, 1, 2]


def test_a_fill_value_is_cast_to_each_part_or_refused_naming_it(volumes):
    """0.0 pads an int mask with 0; -1.0, which uint8 cannot hold, is refused naming the part
    (casting it would pad the mask with 255)."""
    pad = npyio.Crop((14, 4, 4), start=(-2, 0, 0), out_of_bounds="pad", fill_value=0.0)
    x, y = next(iter(npyio.dataset(*volumes, crop=pad, batch_size=None)))
    assert y.dtype == tf.int32 and y.numpy()[:2].max() == 0 and x.numpy()[:2].max() == 0.0
    bad = npyio.Crop((14, 4, 4), out_of_bounds="pad", fill_value=-1.5)
    with pytest.raises(
        ValueError, match=r"labels: crop fill_value=-1.5 is not a value of its dtype int32"
    ):
        npyio.dataset(*volumes, crop=bad)
    huge = npyio.Crop((14, 4, 4), out_of_bounds="pad", fill_value=1e300)
    with pytest.raises(
        ValueError, match=r"inputs: crop fill_value=1e\+300 is not a value of its dtype float32"
    ):
        npyio.dataset(volumes[0], crop=huge, dtype="float32", shape=SHAPE)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_pair_whose_cropped_axes_differ_is_refused_naming_both(tmp_path, backend):
    """Per-case shapes (None dims), one mask 5 voxels narrower than its image: the shared window
    would be cut from the mask at another origin. Refused naming both files and both sizes, or
    skipped by name with ignore_errors; the other pairs' windows stay aligned."""
    xs, ys = tmp_path / "x", tmp_path / "y"
    xs.mkdir()
    ys.mkdir()
    shapes = [(12, 10, 9), (10, 12, 11), (11, 9, 12), (12, 12, 10)]
    for i, shape in enumerate(shapes):
        np.save(xs / f"{i}.npy", volume(i, shape))
        mask = volume(i, shape).astype(np.int32)
        np.save(ys / f"{i}.npy", mask[:, :, :-5] if i == 2 else mask)

    def make(**kwargs):
        return npyio.dataset(
            str(xs),
            str(ys),
            crop=(4, 5, 4),
            seed=0,
            batch_size=None,
            backend=backend,
            shape=(None, None, None),
            label_shape=(None, None, None),
            **kwargs,
        )

    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        list(make())
    assert (
        f"{ys / '2.npy'}: the cropped axes have sizes (11, 9, 7), but those of {xs / '2.npy'} "
        "are (11, 9, 12): one window cannot be cut from both" in e.value.message
    )
    for _ in range(3):  # several draws: never a shifted window
        kept = [(x.numpy(), y.numpy()) for x, y in make(ignore_errors=True)]
        assert [int(x.flat[0]) // 10**6 for x, _ in kept] == [0, 1, 3]
        for x, y in kept:
            np.testing.assert_array_equal(x.astype(np.int32), y)


@pytest.fixture
def cases(tmp_path):
    """inputs: float32 (D, H, W, 1) volumes of a shape per case, whose values say where they
    are, one big-endian (which the kernel doubts); masks: uint8 (D, H, W); labels: an int."""
    xs, ys = tmp_path / "images", tmp_path / "masks"
    xs.mkdir()
    ys.mkdir()
    rng = np.random.default_rng(0)
    for i in range(9):
        shape = tuple(int(d) for d in rng.integers(10, 24, 3))
        x = volume(i, shape).astype(np.float32)[..., None]
        np.save(xs / f"case_{i}.npy", x.astype(">f4") if i == 4 else x)
        np.save(ys / f"case_{i}.npy", (volume(i, shape) % 7).astype(np.uint8))
    return str(xs), str(ys)


def _graph_def(ds: tf.data.Dataset) -> str:
    return str(ds._as_serialized_graph())


@pytest.mark.parametrize(
    "crop",
    [
        (8, 8, 8),
        npyio.Crop((8, 8, 8), start="center"),
        npyio.Crop((16, 16, 16), out_of_bounds="pad", fill_value=0),
        npyio.Crop((16, 30, 16), start=(2, -4, 0), out_of_bounds="pad"),
    ],
)
@pytest.mark.parametrize("batch_size", [None, 3])
def test_windows_of_per_case_shapes_are_the_kernels_in_the_plain_form(cases, crop, batch_size):
    """Issue 52: crop= over volumes of a shape per case, with no shape given, is read by the
    kernel (each file's shape from its header, the window placed by it, only its bytes read),
    window for window what the graph path cuts from the whole arrays; the big-endian case is
    doubted and cut by the graph path."""
    kwargs = dict(crop=crop, seed=3, batch_size=batch_size)
    native = npyio.dataset(*cases, **kwargs)
    graph = npyio.dataset(*cases, backend="graph", **kwargs)
    assert "NpyioReadWindows" in _graph_def(native)
    assert "NpyioRead" not in _graph_def(graph)
    assert native.element_spec == graph.element_spec
    for _ in range(2 if crop == (8, 8, 8) else 1):  # two epochs of random windows: new ones
        got = [tuple(t.numpy().tobytes() for t in tf.nest.flatten(b)) for b in native]
        assert got == [tuple(t.numpy().tobytes() for t in tf.nest.flatten(b)) for b in graph]


def test_windows_of_per_case_shapes_beside_a_label_per_file(cases, tmp_path):
    """A volume's window and an int read whole from a file of its own, in batches."""
    labels = tmp_path / "labels"
    labels.mkdir()
    for i in range(9):
        np.save(labels / f"case_{i}.npy", np.int64(i))
    kwargs = dict(crop=(8, 8, 8), label_crop=None, batch_size=4, shuffle=False)
    ds = npyio.dataset(cases[0], str(labels), **kwargs)
    assert "NpyioReadWindows" in _graph_def(ds)
    for x, y in ds:
        # value // 1e6 is the case's number: each window is its label's case
        assert (x.numpy()[:, 0, 0, 0, 0] // 10**6).astype(int).tolist() == y.numpy().tolist()


@pytest.mark.skipif(not os.path.exists("/proc/self/io"), reason="Linux's /proc/self/io")
def test_only_the_windows_bytes_of_per_case_shapes_are_read(tmp_path):
    """The issue's bound: bytes asked of the file system within 4x the window's plus 64 KiB
    per patch (two header reads and a page per run), far below the volumes'."""
    n, window = 8, (16, 16, 16)
    sizes = 0
    for i in range(n):
        shape = (48 + 4 * i, 96 + 8 * i, 100 + i)
        np.save(tmp_path / f"{i}.npy", np.full(shape, i, np.float32))
        sizes += 4 * int(np.prod(shape))
    ds = npyio.dataset(str(tmp_path), crop=window, seed=0, batch_size=4)
    assert "NpyioReadWindows" in _graph_def(ds)
    next(iter(ds))  # builds the graph, loads the library: outside the count
    before = _rchar()
    assert sum(int(x.shape[0]) for x in ds) == n
    fetched = _rchar() - before
    patch = 16**3 * 4
    assert fetched <= n * (4 * patch + 64 * 1024) + (1 << 20)  # 1 MiB: TF's own
    assert fetched < sizes / 8


@pytest.mark.parametrize("backend", BACKENDS)
def test_each_part_pads_with_its_own_fill_value(cases, backend):
    """Issue 52: an image pads with -1.0 and its mask with an ignore label, sharing the window
    (one draw): fill_value by side, or by part name; a part given none is refused by name."""
    for fill in ({"inputs": -1.0, "labels": 255}, {"images": -1.0, "labels": 255}):
        crop = npyio.Crop((30, 30, 30), out_of_bounds="pad", fill_value=fill)
        x, y = cases
        ds = npyio.dataset(
            {"images": x} if "images" in fill else x, y, crop=crop, seed=1, batch_size=None,
            backend=backend,
        )  # fmt: skip
        for image, mask in ds:
            image = image["images"] if isinstance(image, dict) else image
            outside = image.numpy()[..., 0] == -1.0  # no voxel of a case is negative
            assert outside.any()  # every case is smaller than 30 on some axis
            assert (mask.numpy()[outside] == 255).all() and (mask.numpy()[~outside] < 7).all()
    with pytest.raises(ValueError, match=r"fill_value gives no value for labels"):
        npyio.dataset(*cases, crop=npyio.Crop((30, 30, 30), out_of_bounds="pad",
                                              fill_value={"inputs": 0}))  # fmt: skip
    with pytest.raises(TypeError, match="fill_value must be a number, or a dict"):
        npyio.Crop((4,), fill_value={"inputs": "zero"})
    assert npyio.Crop((4,), fill_value={"labels": 1, "inputs": 0}).fill_value == (
        ("inputs", 0),
        ("labels", 1),
    )


def test_trimmed_masks_are_never_padded_with_a_class_unasked(cases):
    """Issue 52: trimmed windows of varying size are padded to the batch's largest; a mask's
    padding must be asked for (0 reads as a class), and then it is what pads."""
    x, y = cases
    shapes = {"shape": (None, None, None, 1), "label_shape": (None, None, None)}
    trimmed = npyio.Crop((16, 16, 16), out_of_bounds="trim")
    with pytest.raises(ValueError, match=r"labels: trimmed windows .* reads as a class"):
        npyio.dataset(x, y, crop=trimmed, batch_size=3, **shapes)
    ds = npyio.dataset(x, y, crop=trimmed, batch_size=3, padding_value=(0.0, 255), **shapes)
    masks = np.concatenate([m.numpy().ravel() for _, m in ds])
    assert (masks == 255).any() and set(np.unique(masks)) <= set(range(7)) | {255}
    whole = npyio.dataset(x, y, crop=trimmed, batch_size=None, **shapes)  # nothing padded
    assert all(int(m.numpy().max()) < 7 for _, m in whole)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("batch_size", [None, 3])
def test_a_squeezed_window_drops_its_axes_of_one_for_a_2d_network(cases, backend, batch_size):
    """Issue 52: a window one voxel deep of per-case volumes, ``squeeze=True``: (H, W, 1) slices
    and (H, W) masks, each the unsqueezed window's values, on the volume and its mask alike."""
    kwargs = dict(seed=5, batch_size=batch_size, backend=backend)
    flat = npyio.dataset(*cases, crop=npyio.Crop((1, 8, 8)), **kwargs)
    slices = npyio.dataset(*cases, crop=npyio.Crop((1, 8, 8), squeeze=True), **kwargs)
    lead = () if batch_size is None else (None,)
    assert slices.element_spec == (
        tf.TensorSpec((*lead, 8, 8, 1), tf.float32),
        tf.TensorSpec((*lead, 8, 8), tf.uint8),
    )
    got = [(x.numpy(), y.numpy()) for x, y in slices]
    want = [(x.numpy(), y.numpy()) for x, y in flat]
    assert len(got) == len(want) and got
    axis = 0 if batch_size is None else 1
    for (x, y), (fx, fy) in zip(got, want):
        np.testing.assert_array_equal(x, np.squeeze(fx, axis))
        np.testing.assert_array_equal(y, np.squeeze(fy, axis))


def test_a_squeeze_without_an_axis_of_one_or_one_that_trim_may_empty_is_refused(volumes):
    with pytest.raises(npyio.NpyFormatError, match="squeeze=True drops the axes the window is 1"):
        npyio.dataset(*volumes, crop=npyio.Crop((2, 8, 8), squeeze=True))
    past = npyio.Crop(start=(20, 0, 0), shape=(1, 4, 4), out_of_bounds="trim", squeeze=True)
    with pytest.raises(npyio.NpyFormatError, match="out_of_bounds='trim' may cut them to 0"):
        npyio.dataset(*volumes, crop=past)
    inside = npyio.Crop(start=(3, 0, 0), shape=(1, 4, 4), out_of_bounds="trim", squeeze=True)
    x, _ = next(iter(npyio.dataset(*volumes, crop=inside, batch_size=None)))
    assert x.shape == (4, 4) and where(x.numpy()[None])[1:] == (3, 0, 0)
    with pytest.raises(TypeError, match="squeeze must be True or False"):
        npyio.Crop((1, 8, 8), squeeze=1)


def test_axes_that_line_up_parts_of_other_ranks_another_way_are_refused(tmp_path):
    """A channel-last image (D, H, W, 1) and its mask (D, H, W) share a window: axes counted
    from the last name W in the one and H in the other, which H == W would hide (wrong data,
    no error). Refused naming both files, with or without shape hints; counted from the first
    they line up, and a channel-first image (1, D, H, W) lines up from the last."""
    d, h, w = np.indices((6, 8, 8))
    coords = d * 10000 + h * 100 + w  # each voxel names its place
    for layout, image in (("last", coords[..., None]), ("first", coords[None])):
        (tmp_path / layout / "x").mkdir(parents=True)
        (tmp_path / layout / "y").mkdir()
        for i in range(2):
            np.save(tmp_path / layout / "x" / f"{i}.npy", image.astype(np.float32))
            np.save(tmp_path / layout / "y" / f"{i}.npy", coords.astype(np.int32))

    def first_window(layout, axes, **hints):
        x, y = str(tmp_path / layout / "x"), str(tmp_path / layout / "y")
        crop = npyio.Crop((4,) * len(axes), axes=axes)
        image, mask = next(iter(npyio.dataset(x, y, crop=crop, batch_size=1, seed=0, **hints)))
        return np.squeeze(image.numpy(), axis=-1 if layout == "last" else 1), mask.numpy()

    hinted = {"shape": (None, None, None, 1), "label_shape": (None, None, None)}
    for hints in ({}, hinted):
        with pytest.raises(
            npyio.NpyFormatError,
            match=r"y/0.npy: labels: the crop names axes \[1\] of its shape \(6, 8, 8\) but "
            r"axes \[2\] of inputs \(shape \(6, 8, 8, 1\), .*x/0.npy\), which do not line up",
        ):
            first_window("last", (-2,), **hints)
    for layout, axes in (("last", (1, 2)), ("first", (-2, -1)), ("first", (-3, -2, -1))):
        image, mask = first_window(layout, axes)
        assert image.shape == mask.shape and np.array_equal(image, mask), (layout, axes)
