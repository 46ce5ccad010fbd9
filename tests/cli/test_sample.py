"""``npyio.cli.sample``: the sample datasets of the demo and the benchmarks."""

from __future__ import annotations

import dataclasses
import os

import numpy as np

from npyio.cli import sample


def test_profile():
    p = sample.Profile("p", (2, 3), (5,), count=7)
    assert p.pair_bytes == 4 * (6 + 5)
    assert p.dirname() == "p-2x3-n7"
    assert p.file_names() == [f"{i:04d}.npy" for i in range(7)]


def test_file_names_grow_past_four_digits_and_sort_in_pair_order():
    names = dataclasses.replace(sample.DEMO, count=10_001).file_names()
    assert names[0] == "00000.npy" and names[-1] == "10000.npy"
    assert sorted(names) == names


def test_profiles_are_named_by_their_keys():
    assert {name: p.name for name, p in sample.PROFILES.items()} == {
        "small": "small",
        "medium": "medium",
        "large": "large",
    }


def test_default_cache_is_the_cache_root(monkeypatch):
    monkeypatch.setenv("NPYIO_CACHE", "/c")
    assert sample.default_cache() == "/c"  # (tests/io/test_cache.py: the environment's rules)


def test_paths():
    xs, ys = sample.paths(sample.Profile("p", (1,), count=2), "/r")
    assert xs == ["/r/inputs/0000.npy", "/r/inputs/0001.npy"]
    assert ys == ["/r/labels/0000.npy", "/r/labels/0001.npy"]


def test_ensure_writes_pairs_that_can_be_checked_once(tmp_path, capsys, monkeypatch):
    profile = sample.Profile("t", (2, 2), (3,), count=5)
    where = sample.ensure(profile, str(tmp_path))
    assert where == str(tmp_path / "t-2x2-n5")
    assert "writing 5 pairs to " in capsys.readouterr().err
    xs, ys = sample.paths(profile, where)
    for i, (x, y) in enumerate(zip(xs, ys)):
        x_arr, y_arr = np.load(x), np.load(y)
        assert (x_arr.dtype, x_arr.shape, x_arr.flat[0]) == (np.float32, (2, 2), i)
        assert y_arr.dtype == np.float32 and y_arr.tolist() == np.eye(3)[i % 3].tolist()
    assert sorted(os.listdir(os.path.join(where, "inputs"))) == profile.file_names()

    # complete: a second call writes nothing
    def no_writes(*args: object, **kwargs: object) -> None:
        raise AssertionError("wrote again")

    monkeypatch.setattr(sample.np, "save", no_writes)
    assert sample.ensure(profile, str(tmp_path)) == where


def test_ensure_starts_again_after_an_interrupted_write(tmp_path):
    profile = sample.Profile("t", (2,), count=3)
    where = tmp_path / profile.dirname()
    (where / "inputs").mkdir(parents=True)
    (where / "inputs" / "0000.npy").write_bytes(b"half written")
    sample.ensure(profile, str(tmp_path), quiet=True)
    assert np.load(where / "inputs" / "0000.npy").shape == (2,)


def test_ensure_quiet_and_default_root(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("NPYIO_CACHE", str(tmp_path))
    where = sample.ensure(sample.Profile("q", (1,), count=1), quiet=True)
    assert where.startswith(str(tmp_path))
    assert capsys.readouterr().err == ""
