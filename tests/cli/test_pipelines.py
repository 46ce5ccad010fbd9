"""``npyio.cli.pipelines``: the reference pipelines deliver what npyio delivers, and ``drain``
counts samples."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

import npyio
from npyio.cli import bench, pipelines, sample

#: Files per profile: enough for a partial last batch of 8.
COUNTS = {"small": 13, "medium": 11, "large": 3}


@pytest.fixture(scope="module", params=list(sample.PROFILES))
def profile_files(request, tmp_path_factory) -> tuple[sample.Profile, list[str], list[str]]:
    profile = dataclasses.replace(sample.PROFILES[request.param], count=COUNTS[request.param])
    root = sample.ensure(profile, str(tmp_path_factory.mktemp(request.param)), quiet=True)
    xs, ys = sample.paths(profile, root)
    return profile, xs, ys


def test_py_function_pipeline_agrees_with_npyio(profile_files):
    profile, xs, ys = profile_files
    ours = npyio.dataset(xs, ys, batch_size=8)
    theirs = pipelines.py_function_pipeline(xs, ys, profile.input_shape, profile.label_shape)
    assert ours.element_spec == theirs.element_spec
    batches = 0
    for (x1, y1), (x2, y2) in zip(ours, theirs, strict=True):
        tf.debugging.assert_equal(x1, x2)
        tf.debugging.assert_equal(y1, y2)
        batches += 1
    assert batches == -(-profile.count // 8)


def test_floor_and_numpy_loop_read_every_pair(profile_files):
    profile, xs, ys = profile_files
    floor = pipelines.floor_pipeline(xs, ys, batch_size=4)
    lengths = np.concatenate([b.numpy() for b in floor])
    sizes = [os.path.getsize(x) + os.path.getsize(y) for x, y in zip(xs, ys)]
    assert lengths.tolist() == sizes
    assert pipelines.numpy_loop(xs, ys) == profile.count


def test_drain_counts_samples_along_the_batch_dimension(profile_files):
    profile, xs, ys = profile_files
    n, seconds = pipelines.drain(pipelines.floor_pipeline(xs, ys, batch_size=5))
    assert n == profile.count and seconds > 0
    unbatched = tf.data.Dataset.from_tensor_slices(tf.zeros([6, 2]))
    assert pipelines.drain(unbatched.batch(4))[0] == 6
    nested = tf.data.Dataset.from_tensor_slices(({"a": tf.zeros([3, 1])}, tf.zeros([3]))).batch(2)
    assert pipelines.drain(nested)[0] == 3


def test_iterate_counts_alike_and_drains_names_both(profile_files):
    profile, xs, ys = profile_files
    n, seconds = pipelines.iterate(pipelines.floor_pipeline(xs, ys, batch_size=5))
    assert n == profile.count and seconds > 0
    assert {"reduce": pipelines.drain, "iterator": pipelines.iterate} == pipelines.DRAINS


def _cold(path: str) -> bool:
    """Whether ``path``'s last page is out of the page cache: a one-byte read that may not wait
    for the disk is refused (the refusal may start reading it, so probe once)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.preadv(fd, [bytearray(1)], os.fstat(fd).st_size - 1, os.RWF_NOWAIT)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)


@pytest.mark.skipif(not hasattr(os, "RWF_NOWAIT"), reason="Linux's preadv2(RWF_NOWAIT)")
def test_evict_drops_every_file_from_the_page_cache(tmp_path):
    paths = [str(tmp_path / f"{i}.npy") for i in range(3)]
    for path in paths:
        np.save(path, np.arange(4096.0))  # written just now: dirty pages, written back first
    assert not _cold(paths[0])
    pipelines.evict([*paths, paths[0]])  # a repeated path is dropped once
    cold = [_cold(p) for p in paths]
    if not any(cold):
        pytest.skip("this file system keeps the pages (tmpfs?)")
    assert all(cold)


# Runs in a fresh process: from_generator would slow the tf.data tests after it in this one.
_AGREE = r"""
import json, sys
import numpy as np
import tensorflow as tf
import npyio
from npyio.cli import pipelines

xs, ys, input_shape, label_shape = json.loads(sys.argv[1])
ours = npyio.dataset(xs, ys, batch_size=8)
expected = [(x.numpy(), y.numpy()) for x, y in ours]
for generators in (1, 4):
    theirs = pipelines.generator_pipeline(xs, ys, input_shape, label_shape, 8, generators)
    assert theirs.element_spec == ours.element_spec, (theirs.element_spec, ours.element_spec)
    got = [(x.numpy(), y.numpy()) for x, y in theirs]
    assert [len(x) for x, _ in got] == [len(x) for x, _ in expected], generators
    for (x1, y1), (x2, y2) in zip(got, expected):
        np.testing.assert_array_equal(x1, x2)
        np.testing.assert_array_equal(y1, y2)
print("agree")
"""


def test_generator_pipelines_yield_every_pair_once_in_order(tmp_path):
    # 13 pairs: the 4 generators get 4, 3, 3 and 3, and the last batch is partial. Input i
    # holds i in its first element, so a pair lost, repeated or out of order fails.
    profile = dataclasses.replace(sample.PROFILES["small"], count=13)
    root = sample.ensure(profile, str(tmp_path), quiet=True)
    xs, ys = sample.paths(profile, root)
    env = dict(bench.child_env(), TF_CPP_MIN_LOG_LEVEL="2")
    args = json.dumps([xs, ys, list(profile.input_shape), list(profile.label_shape)])
    done = subprocess.run(
        [sys.executable, "-c", _AGREE, args], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0 and done.stdout.strip().endswith("agree"), done.stderr[-3000:]


def test_without_labels_and_of_other_dtypes_on_any_file_system(tmp_path):
    # What `npyio bench INPUTS` gives them: inputs alone, int16, paths on ram:// as on gs://.
    root = f"ram://pipelines-{tmp_path.name}"
    xs = [f"{root}/{i}.npy" for i in range(5)]
    for i, x in enumerate(xs):
        with tf.io.gfile.GFile(x, "wb") as f:
            np.save(f, np.full((2, 3), i, np.int16))
    ours = npyio.dataset(xs, batch_size=2)
    theirs = pipelines.py_function_pipeline(xs, None, (2, 3), None, 2, [tf.int16])
    assert theirs.element_spec == ours.element_spec
    for a, b in zip(ours, theirs, strict=True):
        tf.debugging.assert_equal(a, b)
    lengths = np.concatenate([b.numpy() for b in pipelines.floor_pipeline(xs, None, 2)])
    assert lengths.tolist() == [128 + 12] * 5  # header and payload of each input alone
    assert pipelines.numpy_loop(xs, None) == 5
    assert pipelines.load_path(xs[3]).tolist() == [[3] * 3] * 2


def test_py_function_crops_per_case_shapes_in_numpy_as_npyio_does(tmp_path):
    # Volumes of different shapes: image (D, H, W, 1) holding its voxels' flat index, mask
    # (D, H, W) the same index: the same window cut from both keeps them equal.
    xs, ys = [], []
    for i, dhw in enumerate([(5, 6, 7), (8, 5, 6), (6, 9, 5)]):
        index = np.arange(np.prod(dhw), dtype=np.int32).reshape(dhw) + 1000 * i
        xs.append(str(tmp_path / f"x{i}.npy"))
        ys.append(str(tmp_path / f"y{i}.npy"))
        np.save(xs[-1], index[..., None])
        np.save(ys[-1], index)
    ours = npyio.dataset(xs, ys, batch_size=2, crop=(4, 4, 4), shape=(None, None, None, 1),
                         label_shape=(None, None, None))  # fmt: skip
    theirs = pipelines.py_function_pipeline(
        xs, ys, (4, 4, 4, 1), (4, 4, 4), 2, [tf.int32, tf.int32], crop=(4, 4, 4)
    )
    assert theirs.element_spec == ours.element_spec
    for _ in range(3):  # random windows: the same one for image and mask
        for x, y in theirs:
            tf.debugging.assert_equal(x[..., 0], y)
    whole = pipelines.py_function_pipeline(xs, ys, (4, 4, 4, 1), (None, None, None), 2,
                                           [tf.int32, tf.int32], crop=(4, 4, 4),
                                           label_crop=None)  # fmt: skip
    shapes = [tuple(y.shape) for _, y in whole]  # masks whole, padded in their batch
    assert shapes == [(2, 8, 6, 7), (1, 6, 9, 5)]
    own = pipelines.py_function_pipeline(xs, ys, (4, 4, 4, 1), (2, 3, 2), 3,
                                         [tf.int32, tf.int32], crop=(4, 4, 4),
                                         label_crop=(2, 3, 2))  # fmt: skip
    assert [tuple(y.shape) for _, y in own] == [(3, 2, 3, 2)]


def test_random_window_refuses_a_window_larger_than_the_array():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match=r"a crop of \(4, 4\) does not fit an array of shape"):
        pipelines.random_window(np.zeros((3, 5)), (4, 4), rng)
    window, origin = pipelines.random_window(np.arange(20).reshape(4, 5), (2, 5), rng)
    assert window.shape == (2, 5) and origin[1] == 0


def test_native_loop_reads_inputs_alone_or_pairs_with_the_drivers_timing(tmp_path):
    from npyio._native.library import build_driver
    from npyio.errors import BackendUnavailableError

    try:
        driver = build_driver()
    except BackendUnavailableError as e:
        pytest.skip(str(e))
    xs = []
    for i in range(5):
        np.save(tmp_path / f"x{i}.npy", np.full((3, 3), i, "float32"))
        np.save(tmp_path / f"y{i}.npy", np.int64(i))
        xs.append(str(tmp_path / f"x{i}.npy"))
    ys = [x.replace("/x", "/y") for x in xs]
    n, seconds, _ = pipelines.native_loop(driver, xs, None, 1)
    assert n == 5 and seconds > 0
    n, seconds, _ = pipelines.native_loop(driver, xs, ys, 2)
    assert n == 5 and seconds > 0
    with pytest.raises(RuntimeError, match=r"/labels: .* read 4 of 5 files"):
        pipelines.native_loop(driver, xs, [*ys[:4], xs[0]], 2)  # an input among the labels
