"""Replays of two new users' layouts (issue 50), which once gave wrong data or wrong advice with
no error: each step is what the user did, following only npyio's own words.

- A JAX user on TPU-style hosts: 20,000 unpadded ``sample_0.npy .. sample_19999.npy`` of
  (64, 64, 1) float16 and their labels in a stray ``labels.npy`` in the same directory, batches
  of 128 with ``drop_remainder=True``, ``shard=`` per host, the same seed on every host.
- A 3-D segmentation user: per-case shapes, image (D, H, W, 1) float32 and mask (D, H, W)
  uint8, one mask 5 voxels narrower than its image, random crops.
"""

from __future__ import annotations

import glob
import itertools
import os
import re
from collections import Counter

import numpy as np
import pytest
import tensorflow as tf

import npyio
from npyio.cli import main as cli

N = 20_000
SHAPE = (64, 64, 1)


def sample(i: int) -> np.ndarray:
    """Sample ``i`` says its number exactly in float16 (which holds integers to 2048)."""
    x = np.zeros(SHAPE, np.float16)
    x[0, 0, 0], x[0, 1, 0] = i % 2048, i // 2048
    return x


def number(x: np.ndarray) -> int:
    return int(x[0, 0, 0]) + 2048 * int(x[0, 1, 0])


@pytest.fixture(scope="module")
def train(tmp_path_factory) -> str:
    d = tmp_path_factory.mktemp("jax") / "train"
    d.mkdir()
    for i in range(N):
        np.save(d / f"sample_{i}.npy", sample(i))
    np.save(d / "labels.npy", np.arange(N, dtype=np.int64))
    return str(d)


def test_the_stray_labels_file_is_named_not_the_samples(train, capsys):
    stray = os.path.join(train, "labels.npy")
    with pytest.raises(npyio.NpyFormatError) as e:
        npyio.dataset(train, batch_size=128)
    assert e.value.path == stray and "stray" in str(e.value)
    assert cli.main(["verify", "-q", train]) == cli.EXIT_BAD_FILES
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(": ")[0] for line in lines if line.startswith(train + os.sep)] == [stray]


def follow_the_remedy(train: str, labels: np.ndarray) -> list[str]:
    """The unpadded-names error, and the list its remedy builds."""
    with pytest.raises(ValueError) as e:
        npyio.dataset(train, labels, batch_size=128)
    found = re.search(
        r"sorted\(glob\.glob\('([^']+)'\), key=(lambda p: .*?)\) for numeric order", str(e.value)
    )
    assert found is not None, str(e.value)
    pattern, key = found.groups()
    paths = sorted(glob.glob(pattern), key=eval(key, {"os": os, "re": re}))
    assert len(paths) == N and not any(p.endswith("labels.npy") for p in paths)
    return paths


def test_hosts_draw_independent_orders_and_every_sample_once(train):
    labels = np.load(os.path.join(train, "labels.npy"))
    paths = follow_the_remedy(train, labels)
    hosts = [
        npyio.dataset(
            paths,
            labels,
            batch_size=128,
            drop_remainder=True,
            shuffle=True,
            seed=7,
            shard=(2, index),
        )
        for index in (0, 1)
    ]
    epochs = [[number(x) for x, _ in ds.unbatch().as_numpy_iterator()] for ds in hosts]
    assert len(epochs[0]) == len(epochs[1]) == (N // 2 // 128) * 128  # the same batches each
    seen = epochs[0] + epochs[1]
    assert len(set(seen)) == len(seen)  # each sample at most once in the epoch
    assert len(set(range(N)) - set(seen)) < 2 * 128  # only the dropped remainders are missing
    steps = Counter(b - a for a, b in zip(*epochs))
    assert steps.most_common(1)[0][1] < 0.05 * len(epochs[0])  # not in lockstep
    for x, y in hosts[0].unbatch().take(50).as_numpy_iterator():
        assert number(x) == y  # the labels pair with their samples


def volume(i: int, shape: tuple[int, int, int]) -> np.ndarray:
    """Each voxel says where it is: i * 1e6 + z * 1e4 + y * 1e2 + x."""
    z, y, x = np.meshgrid(*[np.arange(d) for d in shape], indexing="ij")
    return (i * 1e6 + z * 1e4 + y * 1e2 + x).astype(np.float32)


@pytest.fixture(scope="module")
def cases(tmp_path_factory) -> tuple[str, str]:
    """8 cases of their own shapes; case 5's mask is 5 voxels narrower than its image."""
    root = tmp_path_factory.mktemp("seg")
    images, masks = root / "imagesTr", root / "labelsTr"
    images.mkdir()
    masks.mkdir()
    rng = np.random.default_rng(0)
    for i in range(8):
        shape = tuple(int(d) for d in rng.integers(20, 33, 3))
        image = volume(i, shape)
        mask = (image % 3).astype(np.uint8)
        np.save(images / f"case_{i:03d}.npy", image[..., None])
        np.save(masks / f"case_{i:03d}.npy", mask[:, :, :-5] if i == 5 else mask)
    return str(images), str(masks)


def test_per_case_crops_get_the_fitting_advice_and_never_a_shifted_mask(cases, capsys):
    images, masks = cases
    shapes = {"shape": (None, None, None, 1), "label_shape": (None, None, None)}
    odd = (os.path.join(masks, "case_005.npy"), os.path.join(images, "case_005.npy"))
    # the plain form reads cases of any size (issue 52), as the form with shapes does
    for given, backend in itertools.product([{}, shapes], ("native", "graph")):
        ds = npyio.dataset(
            images, masks, crop=(16, 16, 16), batch_size=2, seed=0, backend=backend, **given
        )
        with pytest.raises(tf.errors.InvalidArgumentError) as e:
            list(ds)
        assert f"{odd[0]}: the cropped axes have sizes" in e.value.message
        assert f"but those of {odd[1]} are" in e.value.message
    args = ["--shape", "None,None,None,1", "--label-shape", "None,None,None"]
    assert cli.main(["verify", "-q", images, masks, "--crop", "16,16,16", *args]) == 1
    out = capsys.readouterr().out
    assert [line.split(": ")[0] for line in out.splitlines() if "cropped axes" in line] == [odd[0]]
    ds = npyio.dataset(
        images, masks, crop=(16, 16, 16), batch_size=2, seed=0, ignore_errors=True, **shapes
    )
    for _ in range(3):  # epochs of new windows: every mask cut where its image is
        got = [(x, y) for xb, yb in ds.as_numpy_iterator() for x, y in zip(xb, yb)]
        assert sorted(int(x.flat[0]) // 10**6 for x, _ in got) == [0, 1, 2, 3, 4, 6, 7]
        for x, y in got:
            np.testing.assert_array_equal((x[..., 0] % 3).astype(np.uint8), y)
