"""A stray file among numbered ones (``labels.npy`` beside ``sample_0.npy`` ...): the remedy of
the unpadded-names error matches only the numbered names and says which it leaves out, and the
count error of label values names the likely strays (`npyio._pipeline.paths.numbered`)."""

from __future__ import annotations

import glob
import os
import re

import numpy as np
import pytest

import npyio
from npyio._pipeline.paths import numbered, order_remedy, stray_note

N = 25


@pytest.fixture
def train(tmp_path) -> str:
    """The user's layout, small: ``sample_0.npy`` .. ``sample_24.npy`` (file ``i`` holds ``i``)
    and a stray ``labels.npy`` (the labels, saved beside them) in one directory."""
    d = tmp_path / "train"
    d.mkdir()
    for i in range(N):
        np.save(d / f"sample_{i}.npy", np.full((2, 1), i, np.float16))
    np.save(d / "labels.npy", np.arange(N))
    return str(d)


def _paths(names: list[str]) -> list[str]:
    return [f"d/{n}" for n in sorted(names)]


@pytest.mark.parametrize(
    ("names", "name_glob", "strays"),
    [
        (["labels.npy"] + [f"sample_{i}.npy" for i in range(N)], "sample_*.npy", ["labels.npy"]),
        (["labels.npy"] + [f"{i}.npy" for i in range(12)], "[0-9]*.npy", ["labels.npy"]),
        ([f"case_{i}_0000.npy" for i in range(12)] + ["notes.npy"], "case_*_*.npy", ["notes.npy"]),
        ([f"{i}.npy" for i in range(12)], "*.npy", []),
        ([f"a[{i}].npy" for i in range(3)], "a[[]*].npy", []),  # glob characters escaped
    ],
    ids=["sample-labels", "bare-numbers-labels", "two-numbers", "no-stray", "escaped"],
)
def test_numbered_finds_the_pattern_and_the_strays(names, name_glob, strays):
    found = numbered(_paths(names))
    assert found is not None
    assert (found.glob, found.strays, found.matched) == (name_glob, _paths(strays), [])


def test_no_pattern_without_a_majority_of_numbered_names():
    assert numbered(_paths(["a.npy", "b.npy", "c.npy"])) is None
    assert numbered(_paths(["x_1.npy", "y_1.npy", "z.npy", "w.npy"])) is None


def test_a_stray_the_digit_glob_still_matches_is_said():
    paths = _paths(["1x.npy"] + [f"{i}.npy" for i in range(12)])
    found = numbered(paths)
    assert found is not None and found.matched == ["d/1x.npy"]
    remedy = order_remedy(paths, "d")
    assert "'[0-9]*.npy' still matches d/1x.npy: leave it out of the list." in remedy
    assert "re.split" in remedy  # '1x' is no int: the key reads it as text and numbers


def test_the_unpadded_names_error_globs_only_the_numbered_names(train):
    with pytest.raises(ValueError, match=r"'sample_19\.npy' comes before 'sample_2\.npy'") as info:
        npyio.dataset(train, np.load(os.path.join(train, "labels.npy")))
    message = str(info.value)
    pattern = os.path.join(train, "sample_*.npy")
    assert f"sorted(glob.glob({pattern!r}), key=" in message
    assert f"sorted(glob.glob({os.path.join(train, '*.npy')!r}" not in message
    stray = os.path.join(train, "labels.npy")
    assert message.endswith(
        f"1 file does not follow the numbered names the others share ('sample_<n>.npy'): "
        f"{stray}; 'sample_*.npy' leaves it out."
    )
    # The remedy as printed pairs every sample with its label.
    (key,) = re.findall(r"key=(lambda p: .*?)\) for numeric order", message)
    files = sorted(glob.glob(pattern), key=eval(key))  # the message's own code
    ds = npyio.dataset(files, np.arange(N), batch_size=None)
    assert [(int(x[0, 0]), int(y)) for x, y in ds] == [(i, i) for i in range(N)]


def test_a_glob_that_matched_the_stray_is_narrowed_to_its_folder(train):
    wide = os.path.join(train, "*.npy")
    with pytest.raises(ValueError, match="not zero-padded") as info:
        npyio.dataset(wide, np.arange(N))
    assert f"sorted(glob.glob({os.path.join(train, 'sample_*.npy')!r}))" in str(info.value)


def test_the_count_error_names_the_stray(train):
    # What the old remedy's natural-sort glob gave: the numbered files and labels.npy.
    files = sorted(
        glob.glob(os.path.join(train, "*.npy")),
        key=lambda p: [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", p)],
    )
    with pytest.raises(ValueError) as info:
        npyio.dataset(files, np.arange(N))
    assert str(info.value) == (
        f"labels: expected one value (or row) per input file, got {N} values for {N + 1} input "
        f"files; 1 file does not follow the numbered names the others share "
        f"('sample_<n>.npy'), likely a stray: {os.path.join(train, 'labels.npy')}"
    )


def test_the_count_error_names_the_strays_of_padded_names_in_a_directory(tmp_path):
    for i in range(N):
        np.save(tmp_path / f"sample_{i:05d}.npy", np.zeros(2))
    strays = [f"extra_{c}.npy" for c in "abcdefghijkl"]  # twelve: the first ten are named
    for name in strays:
        np.save(tmp_path / name, np.zeros(2))
    with pytest.raises(ValueError, match=r"got 25 values for 37 input files; 12 files") as info:
        npyio.dataset(str(tmp_path), np.arange(N))
    shown = ", ".join(os.path.join(tmp_path, n) for n in strays[:10])
    assert str(info.value).endswith(f"likely strays: {shown} and 2 more")


def test_the_count_error_says_when_no_stray_is_apparent(tmp_path):
    for i in range(N):
        np.save(tmp_path / f"sample_{i:05d}.npy", np.zeros(2))
    with pytest.raises(ValueError) as info:
        npyio.dataset(str(tmp_path), np.arange(N - 1))
    assert str(info.value).endswith(
        "got 24 values for 25 input files; no stray file is apparent from the names "
        "(all follow 'sample_<n>.npy')"
    )
    with pytest.raises(ValueError) as info:  # more values than files: the text as before
        npyio.dataset(str(tmp_path), np.arange(N + 1))
    assert str(info.value).endswith("got 26 values for 25 input files")


def test_stray_note_without_numbers():
    assert stray_note(_paths(["a.npy", "b.npy"])) == "; no stray file is apparent from the names"
