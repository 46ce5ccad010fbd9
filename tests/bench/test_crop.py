"""Smoke test of bench/crop.py with tiny volumes: every pipeline reads windows that are numpy
slices of the volumes, the same one from a volume and its mask, and the memory case reports its
peak RSS. The figures are the benchmark's, not asserted here."""

import numpy as np
import pytest

from tests.bench import load

SHAPE, WINDOW = (16, 16, 16), (8, 8, 8)


@pytest.fixture(scope="module")
def crop():
    return load("crop")


@pytest.fixture(scope="module")
def pairs(crop, tmp_path_factory):
    return crop.ensure(str(tmp_path_factory.mktemp("crop")), 3, SHAPE)


def test_the_masks_are_their_volumes_above_one(pairs):
    xs, ys = pairs
    assert len(xs) == len(ys) == 3
    for x, y in zip(xs, ys):
        volume, mask = np.load(x), np.load(y)
        assert volume.shape == SHAPE and volume.dtype == np.float32 and mask.dtype == np.uint8
        assert np.array_equal(mask, volume > 1)


def test_the_check_refuses_a_window_of_no_volume_and_a_mask_of_another_window(crop, pairs):
    xs, ys = pairs
    volume, mask = np.load(xs[1]), np.load(ys[1])
    x = volume[None, 2:10, 3:11, 4:12]
    assert crop.check(xs, ys, x, mask[None, 2:10, 3:11, 4:12]) == [(1, (2, 3, 4))]
    with pytest.raises(AssertionError):  # the mask's window one step off
        crop.check(xs, ys, x, mask[None, 3:11, 3:11, 4:12])
    with pytest.raises(AssertionError, match="no slice"):
        crop.check(xs, ys, x + 1, mask[None, 2:10, 3:11, 4:12])


@pytest.mark.parametrize("name", ["npyio crop", "npyio whole + slice", "mmap py_function"])
def test_each_pipeline_reads_an_epoch_of_windows_of_its_volumes(crop, pairs, name):
    xs, ys = crop.epoch(pairs[0], 6), crop.epoch(pairs[1], 6)
    (ds,) = crop.build([name], xs, ys, SHAPE, WINDOW).values()
    windows = []
    for x, y in ds:
        assert x.shape[1:] == WINDOW and y.shape[1:] == WINDOW
        windows += crop.check(*pairs, x.numpy(), y.numpy())
    # the epoch's files in order, at random starts (not all the same one)
    assert [i for i, _ in windows] == [0, 1, 2, 0, 1, 2]
    assert len({start for _, start in windows}) > 1
    assert crop.tf_drain(ds)()[0] == 6


def test_dali_roi_reads_the_numpy_slice_at_its_start(crop, pairs):
    if not crop.dali_installed():
        pytest.skip("DALI is not installed (bench/crop.py's docstring says where it runs)")
    xs, ys = crop.epoch(pairs[0], 6), crop.epoch(pairs[1], 6)
    pipe = crop.dali_pipe(xs, ys, SHAPE, WINDOW)
    for _ in range(3):
        x, y, starts = pipe.run()
        for i in range(len(x)):
            start = tuple(int(s) for s in np.asarray(starts[i]))
            assert crop.check(*pairs, np.asarray(x[i])[None], np.asarray(y[i])[None])[0][1] == start


def test_the_speed_run_reports_each_pipelines_rate_and_npyio_crops_ratios(crop, tmp_path):
    result = crop.speed(str(tmp_path), 2, 4, ["npyio crop", "mmap py_function"], 2, SHAPE, WINDOW)
    assert set(result["samples/s (median)"]) == {"npyio crop", "mmap py_function"}
    assert all(len(r) == 2 for r in result["samples/s (rounds)"].values())
    rates = result["samples/s (median)"]
    assert result["npyio crop / mmap py_function"] == pytest.approx(
        rates["npyio crop"] / rates["mmap py_function"], rel=0.01
    )


def test_a_memory_case_reads_its_epochs_and_reports_its_peak(crop, tmp_path):
    out = crop.child(str(tmp_path), (16, 16, 96), 4, 2, WINDOW)
    assert out["shape"] == [16, 16, 96]
    assert 0 < out["peak RSS before reading (MiB)"] <= out["peak RSS (MiB)"]
