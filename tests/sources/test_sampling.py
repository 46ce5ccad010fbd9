"""The spec's source is never a stray file: `npyio._sources.sampling` checks each part's spec,
set by its first file, against the middle and the last file of its listing when the dataset is
built, and a read-time mismatch names the file that set the spec."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

import npyio
from npyio._format import npy
from npyio._format.spec import Spec
from npyio._sources.sampling import Sample, sample_indices, verdict

F16 = np.dtype("float16")


def header(shape: tuple[int, ...], dtype: str = "float16") -> npy.NpyHeader:
    return npy.NpyHeader((1, 0), np.dtype(dtype), shape, False, 128)


def samples(*shapes: tuple[int, ...] | tuple[tuple[int, ...], str]) -> list[Sample]:
    out = []
    for i, s in enumerate(shapes):
        shape, dtype = s if isinstance(s[0], tuple) else (s, "float16")
        out.append(Sample(f"f{i}.npy", header(shape, dtype)))  # type: ignore[arg-type]
    return out


def test_the_first_the_middle_and_the_last_are_sampled():
    assert sample_indices(0) == []
    assert sample_indices(1) == [0]
    assert sample_indices(2) == [0, 1]
    assert sample_indices(20001) == [0, 10000, 20000]


def test_samples_that_agree_say_nothing():
    spec = Spec.whole(F16, (8, 8, 1))
    assert verdict(spec, samples((8, 8, 1), (8, 8, 1), (8, 8, 1))) == verdict(spec, samples())


def test_a_first_file_unlike_the_two_others_is_the_odd_one_even_when_skipping():
    spec = Spec.whole(np.dtype("int64"), (20,))
    for ignore_errors in (False, True):
        found = verdict(spec, samples(((20,), "int64"), (8, 8, 1), (8, 8, 1)), ignore_errors)
        assert found.odd is not None
        assert found.odd.path == "f0.npy"
        assert "dtype mismatch -- expected float16, got int64 -- unlike f1.npy and f2.npy" in str(
            found.odd
        )
        assert "stray" in str(found.odd)


def test_a_later_file_unlike_the_first_is_named_with_the_spec_source():
    spec = Spec.whole(F16, (8, 8, 1))
    found = verdict(spec, samples((8, 8, 1), (8, 8, 1), (9, 8, 1)))
    assert found.odd is not None and found.odd.path == "f2.npy"
    text = str(found.odd)
    assert "shape mismatch -- expected (8, 8, 1), got (9, 8, 1)" in text
    assert "the spec came from f0.npy, which f1.npy agrees with" in text
    assert "ignore_errors=True" in text
    assert "None" not in text  # one odd file: no None dims suggested
    # skipped when read, with ignore_errors
    assert verdict(spec, samples((8, 8, 1), (8, 8, 1), (9, 8, 1)), True).odd is None


def test_files_that_vary_get_the_shape_that_reads_them():
    spec = Spec.whole(F16, (8, 8, 1))
    found = verdict(spec, samples((8, 8, 1), (10, 8, 1), (17, 8, 1)), ignore_errors=True)
    assert found.odd is None
    assert found.shape == (None, 8, 1)
    other = verdict(spec, samples((8, 8, 1), ((8, 8, 1), "int64"), (8, 8)))
    assert other.varies is not None and other.shape is None  # dtypes and ranks: no shape=


def test_none_dims_and_unknown_ranks_match_anything():
    assert (
        verdict(Spec.whole(F16, (None, 8, 1)), samples((8, 8, 1), (3, 8, 1), (5, 8, 1))).varies
        is None
    )
    assert verdict(Spec.whole(F16, None), samples((8,), (3, 8), (5, 8, 1))).varies is None


def write(path, array) -> str:
    np.save(path, array)
    return str(path)


@pytest.fixture
def unpadded(tmp_path):
    """The JAX user's layout, small: sample_0.npy ... sample_24.npy of (8, 8, 1) float16, and a
    stray labels.npy (int64 values) in the same directory, which sorts first."""
    d = tmp_path / "train"
    d.mkdir()
    for i in range(25):
        write(d / f"sample_{i}.npy", np.full((8, 8, 1), i, np.float16))
    write(d / "labels.npy", np.arange(25))
    return d


def test_a_stray_file_that_sorts_first_is_refused_by_name_when_built(unpadded):
    with pytest.raises(npyio.NpyFormatError) as e:
        npyio.dataset(str(unpadded), batch_size=4)
    assert e.value.path == str(unpadded / "labels.npy")
    assert "this file comes first in the listing, so it would set the dataset's spec" in str(
        e.value
    )
    with pytest.raises(npyio.NpyFormatError, match=r"labels\.npy"):
        npyio.dataset(str(unpadded), batch_size=4, ignore_errors=True)


def test_files_that_vary_are_refused_with_the_shapes_that_read_them(tmp_path):
    for i in range(5):
        write(tmp_path / f"{i}.npy", np.zeros((8 + i, 8, 1), np.float32))
    with pytest.raises(npyio.NpyFormatError, match=r"pass shape=\(None, 8, 1\)") as e:
        npyio.dataset(str(tmp_path), batch_size=2)
    assert "XLA" in str(e.value)
    ds = npyio.dataset(str(tmp_path), batch_size=2, shape=(None, 8, 1))  # as advised
    assert [x.shape[1] for x in ds] == [9, 11, 12]


def test_per_case_crops_read_in_the_plain_form(tmp_path):
    """The segmentation user's plain form (issue 52): volumes of per-case shapes and their
    masks, cropped alike, read with no shape given. A trimmed window (whose size would vary),
    or an axis not cropped that varies, is still told the shape= and label_shape= that read
    them."""
    (tmp_path / "x").mkdir()
    (tmp_path / "y").mkdir()
    for i, d in enumerate((20, 24, 28)):
        write(tmp_path / "x" / f"{i}.npy", np.zeros((d, 20 + i, 16, 1), np.float32))
        write(tmp_path / "y" / f"{i}.npy", np.zeros((d, 20 + i, 16), np.uint8))
    x, y = str(tmp_path / "x"), str(tmp_path / "y")
    ds = npyio.dataset(x, y, crop=(8, 8, 8), batch_size=3)
    xb, yb = next(iter(ds))
    assert xb.shape == (3, 8, 8, 8, 1) and yb.shape == (3, 8, 8, 8)
    trimmed = npyio.Crop((8, 8, 8), out_of_bounds="trim")
    with pytest.raises(npyio.NpyFormatError) as e:
        npyio.dataset(x, y, crop=trimmed, batch_size=2)
    assert "pass shape=(None, None, 16, 1) and label_shape=(None, None, 16)" in str(e.value)
    assert "crop's sizes and starts in elements" in str(e.value)
    with pytest.raises(npyio.NpyFormatError) as e:  # axis 1 varies, and is not cropped
        npyio.dataset(x, y, crop=npyio.Crop((8,), axes=(0,)), batch_size=2)
    assert "pass shape=(None, None, 16, 1) and label_shape=(None, None, 16)" in str(e.value)


@pytest.mark.parametrize("backend", ["native", "graph"])
def test_a_later_odd_file_names_the_spec_source_when_read(tmp_path, backend):
    """Files 0, 2 and 4 are sampled (they agree); file 1 is odd: the read-time error names it
    and the file that set the spec, and points to verify and ignore_errors."""
    for i in range(5):
        write(tmp_path / f"{i}.npy", np.zeros((4, 3), np.float32))
    write(tmp_path / "1.npy", np.zeros((5, 3), np.float32))
    for batch_size in (None, 2):
        ds = npyio.dataset(str(tmp_path), batch_size=batch_size, backend=backend)
        with pytest.raises(tf.errors.InvalidArgumentError) as e:
            list(ds)
        expected = (
            f"{tmp_path / '1.npy'}: shape mismatch -- expected (4, 3), got (5, 3); the spec came "
            f"from {tmp_path / '0.npy'} -- `npyio verify` lists every file that differs, and "
            "ignore_errors=True skips them"
        )
        assert expected in e.value.message
    write(tmp_path / "1.npy", np.zeros((4, 3), np.float64))
    with pytest.raises(tf.errors.InvalidArgumentError, match="float64; the spec came from"):
        list(npyio.dataset(str(tmp_path), batch_size=None, backend=backend))


def test_a_spec_given_whole_is_named_as_the_arguments(tmp_path):
    for i in range(3):
        write(tmp_path / f"{i}.npy", np.zeros((4, 3), np.float32))
    ds = npyio.dataset(str(tmp_path), dtype="float64", shape=(4, 3), batch_size=None)
    with pytest.raises(
        tf.errors.InvalidArgumentError, match="the spec came from the dtype= and shape= arguments"
    ):
        list(ds)
