"""Patch sampling for 3-D segmentation (issue 52, point 4): ``crops_per_file`` (several windows
of each case per epoch, each a unit of the epoch's stream) and ``foreground`` (a share of each
batch's windows centred on a labelled voxel, nnU-Net's rule), on cases of per-case shapes whose
image voxels hold their own coordinates, so that each window says where it was cut."""

from __future__ import annotations

import collections
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

import npyio
from npyio._sources import foreground as fg
from npyio.errors import NpyFormatError

CASES = 9
WINDOW = (8, 8, 8)


def _write_cases(root: Path, n: int = CASES) -> tuple[str, str]:
    """``n`` cases of per-case shapes, unpadded names: an image whose voxel (d, h, w) holds
    ``d * 10000 + h * 100 + w`` (so a window's first voxel is its start), and a mask with a
    block of class 1 and, in two cases of three, one voxel of class 2."""
    rng = np.random.default_rng(7)
    (root / "images").mkdir(parents=True)
    (root / "masks").mkdir()
    for i in range(n):
        d, h, w = (int(v) for v in rng.integers(12, 30, size=3))
        grid = np.indices((d, h, w))
        image = (grid[0] * 10000 + grid[1] * 100 + grid[2]).astype(np.float32)[..., None]
        mask = np.zeros((d, h, w), np.uint8)
        mask[1:4, 1:4, 1:4] = 1  # in a corner: a uniform window seldom holds it
        if i % 3:
            mask[d - 2, h - 2, w - 2] = 2
        np.save(root / "images" / f"case_{i}.npy", image)
        np.save(root / "masks" / f"case_{i}.npy", mask)
    return str(root / "images"), str(root / "masks")


@pytest.fixture(scope="module")
def cases(tmp_path_factory) -> tuple[str, str]:
    return _write_cases(tmp_path_factory.mktemp("patches"))


@pytest.fixture(autouse=True)
def index_cache(tmp_path, monkeypatch) -> Path:
    """Each test's foreground index in a cache of its own (the native library's stays)."""
    where = tmp_path / "foreground"
    monkeypatch.setattr(fg, "index_dir", lambda: where)
    return where


def _patches(cases: tuple[str, str], **kw: object) -> tf.data.Dataset:
    """``npyio.dataset`` of the cases' windows, shuffled, with each element's path."""
    images, masks = cases
    return npyio.dataset(images, masks, crop=WINDOW, shuffle=True, with_paths=True, **kw)


def _start(x: np.ndarray) -> tuple[int, int, int]:
    v = int(x[0, 0, 0, 0])
    return v // 10000, v // 100 % 100, v % 100


def _windows(ds: tf.data.Dataset) -> list[tuple[str, tuple[int, ...], np.ndarray]]:
    """Each element's case (its path's name), window start and mask window."""
    out = []
    for x, y, paths in ds.as_numpy_iterator():
        for i in range(len(paths)):
            out.append((Path(paths[i].decode()).name, _start(x[i]), y[i]))
    return out


def test_crops_per_file_reads_each_case_k_times_an_epoch_each_window_exact(cases):
    masks = cases[1]
    ds = _patches(cases, crops_per_file=3, seed=1, batch_size=4)
    assert ds.cardinality().numpy() == -(-CASES * 3 // 4)
    epochs = [_windows(ds) for _ in range(2)]
    for got in epochs:
        assert collections.Counter(name for name, _, _ in got) == {
            f"case_{i}.npy": 3 for i in range(CASES)
        }
        for name, start, y in got:
            mask = np.load(Path(masks) / name)
            d, h, w = start
            np.testing.assert_array_equal(y, mask[d : d + 8, h : h + 8, w : w + 8])
        # a case's three windows are its own draws (the unit's index is in the key)
        by_case = collections.defaultdict(set)
        for name, start, _ in got:
            by_case[name].add(start)
        assert sum(len(s) for s in by_case.values()) > 2 * CASES
        # a batch mixes cases: the three units of a case are not one batch's
        batches = [[name for name, _, _ in got[i : i + 4]] for i in range(0, len(got), 4)]
        assert any(len(set(b)) > 1 for b in batches)
    assert [s for _, s, _ in epochs[0]] != [s for _, s, _ in epochs[1]]  # new windows each epoch


def test_crops_per_file_in_order_reads_every_case_then_again(cases):
    images, masks = cases
    ds = npyio.dataset(
        images, masks, crop=WINDOW, crops_per_file=2, batch_size=None, with_paths=True, seed=0
    )
    names = [Path(p.decode()).name for _, _, p in ds.as_numpy_iterator()]
    listed = sorted((f"case_{i}.npy" for i in range(CASES)), key=lambda n: int(n[5:-4]))
    assert names == listed * 2


def test_the_last_share_of_each_batch_is_centred_on_a_class_present(cases):
    ds = _patches(cases, crops_per_file=4, foreground=0.5, seed=3, batch_size=4)
    got = _windows(ds)
    assert len(got) == CASES * 4
    uniform_hits = 0
    for at, (name, start, y) in enumerate(got):
        if at % 4 >= 2:  # ceil(0.5 * 4) = 2: the last two of each batch
            assert (y > 0).any(), (at, name, start)
        else:
            uniform_hits += bool((y > 0).any())
    assert uniform_hits < CASES * 2  # the corner block is seldom in a uniform window


def test_classes_are_chosen_uniformly_then_a_voxel_of_the_class(cases):
    # class 2 is one voxel, class 1 twenty-seven: a voxel drawn over all foreground would
    # seldom be class 2; a class drawn first makes it half of the centred windows
    ds = _patches(cases, crops_per_file=8, foreground=1.0, seed=4, batch_size=8)
    twos = total = 0
    for name, _, y in _windows(ds.repeat(3)):
        assert (y > 0).any()
        if int(name[5:-4]) % 3:
            total += 1
            twos += bool((y == 2).any())
    assert 0.35 < twos / total < 0.65, (twos, total)


def test_foreground_classes_leave_out_an_ignore_label(tmp_path):
    # (cases 1 and 2 have a class 2 voxel; case 0 has none, so its windows are uniform)
    only_two = npyio.Foreground(1.0, classes=(2,))
    cases = _write_cases(tmp_path / "data", 3)
    got = _windows(_patches(cases, foreground=only_two, seed=0, crops_per_file=6, batch_size=6))
    assert len(got) == 18
    for name, _, y in got:
        if name != "case_0.npy":
            assert (y == 2).any(), name


def test_foreground_without_batches_centres_each_window_with_its_probability(cases):
    images, masks = cases
    ds = npyio.dataset(
        images,
        masks,
        crop=WINDOW,
        crops_per_file=20,
        foreground=0.5,
        shuffle=True,
        seed=2,
        batch_size=None,
    )
    hits = [bool((y > 0).any()) for _, y in ds.as_numpy_iterator()]
    assert 0.4 < np.mean(hits) < 0.75  # about half centred, and a few uniform ones that hit


def test_patch_sampling_is_reproducible_and_resumes_exactly(cases, tmp_path):
    images, masks = cases

    def make() -> tf.data.Dataset:
        return npyio.dataset(
            images,
            masks,
            crop=WINDOW,
            crops_per_file=2,
            foreground=1 / 3,
            shuffle=True,
            seed=9,
            batch_size=3,
        ).repeat(2)

    def starts(batches) -> list[tuple[int, ...]]:
        return [_start(x[i]) for x, _ in batches for i in range(len(x))]

    whole = starts(make().as_numpy_iterator())
    assert whole == starts(make().as_numpy_iterator())
    it = iter(make())
    head = [tuple(t.numpy() for t in next(it)) for _ in range(4)]
    tf.train.Checkpoint(iterator=it).write(str(tmp_path / "c"))
    again = iter(make())
    tf.train.Checkpoint(iterator=again).read(str(tmp_path / "c")).assert_consumed()
    rest = [tuple(t.numpy() for t in batch) for batch in again]
    assert starts(head) + starts(rest) == whole


def test_the_graph_path_cuts_the_same_windows(cases):
    images, masks = cases

    def starts(backend: str) -> list[tuple[int, ...]]:
        ds = npyio.dataset(
            images,
            masks,
            crop=WINDOW,
            crops_per_file=2,
            foreground=0.5,
            shuffle=True,
            seed=5,
            batch_size=4,
            backend=backend,
        )
        return [_start(x[i]) for x, _ in ds.as_numpy_iterator() for i in range(len(x))]

    assert starts("graph") == starts("native")


@pytest.mark.parametrize(
    ("given", "match"),
    [
        ({"crops_per_file": 2}, r"crops_per_file=2 samples random windows: pass crop="),
        (
            {"crops_per_file": 2, "crop": npyio.Crop((8, 8, 8), start="center")},
            r"crops_per_file=2 samples random windows",
        ),
        ({"foreground": 0.5}, r"foreground samples random windows"),
        ({"foreground": 0.5, "crop": WINDOW, "label_crop": None}, r"leave label_crop='same'"),
        ({"crops_per_file": 0, "crop": WINDOW}, r"crops_per_file must be a positive int"),
        ({"foreground": 1.5, "crop": WINDOW}, r"fraction must be in \[0, 1\]"),
    ],
)
def test_sampling_that_cannot_mean_what_it_says_is_refused(cases, given, match):
    images, masks = cases
    with pytest.raises(ValueError, match=match):
        npyio.dataset(images, masks, **given)


def test_foreground_needs_mask_files(cases):
    images, _ = cases
    with pytest.raises(ValueError, match=r"pass the masks as labels=.*got label values"):
        npyio.dataset(images, list(range(CASES)), crop=WINDOW, foreground=0.5)
    with pytest.raises(TypeError, match=r"foreground must be a fraction"):
        npyio.dataset(images, crop=WINDOW, foreground="yes")


def test_a_float_mask_is_refused_naming_it(tmp_path):
    images, masks = _write_cases(tmp_path / "data", 2)
    for p in Path(masks).iterdir():
        np.save(p, np.load(p).astype(np.float32))
    with pytest.raises(NpyFormatError, match=r"case_0\.npy: foreground: a mask holds integer"):
        npyio.dataset(images, masks, crop=WINDOW, foreground=0.5)


def test_masks_without_foreground_get_uniform_windows(tmp_path):
    images, masks = _write_cases(tmp_path / "data", 3)
    for p in Path(masks).iterdir():
        np.save(p, np.zeros_like(np.load(p)))
    ds = npyio.dataset(images, masks, crop=WINDOW, foreground=1.0, crops_per_file=4, seed=0)
    ((x, y),) = ds.as_numpy_iterator()
    assert len(x) == 12 and not y.any()
    assert len({_start(x[i]) for i in range(len(x))}) > 3  # drawn, not all one window


def test_named_modalities_share_the_centred_window(tmp_path):
    # T1 and T2 of each case as named inputs: both cut at the window centred on the mask
    images, masks = _write_cases(tmp_path / "data", 3)
    t2 = tmp_path / "data" / "t2"
    t2.mkdir()
    for p in Path(images).iterdir():
        np.save(t2 / p.name, np.load(p) + 0.5)
    inputs = {"t1": images, "t2": str(t2)}
    ds = npyio.dataset(
        inputs, masks, crop=WINDOW, foreground=1.0, crops_per_file=4, seed=0, with_paths=True
    )
    for x, y, paths in ds.as_numpy_iterator():
        np.testing.assert_array_equal(x["t2"], x["t1"] + 0.5)
        for i in range(len(y)):
            d, h, w = _start(x["t1"][i])
            mask = np.load(Path(masks) / Path(paths[i].decode()).name)
            np.testing.assert_array_equal(y[i], mask[d : d + 8, h : h + 8, w : w + 8])
            assert (y[i] > 0).any()  # (every case has class 1)


def test_a_split_holds_out_cases_and_each_subset_crops_its_own(cases):
    train, val = _patches(
        cases, crops_per_file=2, seed=3, batch_size=None, validation_split=1 / 3, subset="both"
    )
    names = [[Path(p.decode()).name for _, _, p in ds.as_numpy_iterator()] for ds in (train, val)]
    assert not set(names[0]) & set(names[1])  # a case's crops all go to one subset
    assert len(set(names[1])) == CASES // 3 and len(names[1]) == 2 * (CASES // 3)
    assert len(names[0]) == 2 * (CASES - CASES // 3)
    assert collections.Counter(names[0]) == {name: 2 for name in set(names[0])}


def test_shards_crop_their_own_cases(cases):
    seen = []
    for index in range(2):
        ds = _patches(cases, crops_per_file=2, seed=3, batch_size=None, shard=(2, index))
        seen.append([Path(p.decode()).name for _, _, p in ds.as_numpy_iterator()])
    assert not set(seen[0]) & set(seen[1])
    assert sorted(seen[0] + seen[1]) == sorted([f"case_{i}.npy" for i in range(CASES)] * 2)
