"""The foreground index (`npyio._sources.foreground`): a uniform sample of each class's voxels per
mask, cached apart from the data, keyed so that a changed mask is indexed again, and built once
by processes that start at once."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import npyio
from npyio._pipeline.options import DatasetOptions, LoaderOptions, ReadOptions
from npyio._sources import foreground as fg
from npyio._sources.plan import plan_dataset
from tests.sources.test_dataset_patches import WINDOW, _write_cases


@pytest.fixture(autouse=True)
def index_cache(tmp_path, monkeypatch) -> Path:
    """Each test's index in a cache of its own (the native library's stays)."""
    where = tmp_path / "foreground"
    monkeypatch.setattr(fg, "index_dir", lambda: where)
    return where


def _index(masks: str, **kw: object):
    options = DatasetOptions(
        ReadOptions(crop=WINDOW, foreground=npyio.Foreground(**kw)), LoaderOptions()
    )
    planned = plan_dataset(str(Path(masks).parent / "images"), masks, options)
    return planned.foreground  # type: ignore[union-attr]


def test_the_index_keeps_a_uniform_sample_of_each_class(tmp_path):
    _, masks = _write_cases(tmp_path / "data", 3)
    index = _index(masks, samples=10)
    for case in range(3):
        found = index.locations(case)
        assert sorted(found) == ([1, 2] if case % 3 else [1])
        assert len(found[1]) == 10 and len(set(map(tuple, found[1]))) == 10
        mask = np.load(Path(masks) / f"case_{case}.npy")
        for c, coords in found.items():
            assert all(mask[tuple(v)] == c for v in coords)


def test_the_index_is_built_once_cached_apart_from_the_data_and_rebuilt_when_a_mask_changes(
    tmp_path, index_cache, monkeypatch, capfd
):
    _, masks = _write_cases(tmp_path / "data", 3)
    first = _index(masks)
    assert "indexing the foreground of 3 masks" in capfd.readouterr().err
    assert len(list(index_cache.glob("*.npz"))) == 3
    assert not [p for p in Path(masks).iterdir() if p.suffix != ".npy"]  # nothing beside the data
    read = []
    real = fg._mask
    monkeypatch.setattr(fg, "_mask", lambda path, *a: read.append(path) or real(path, *a))
    again = _index(masks)
    assert read == [] and "indexing" not in capfd.readouterr().err
    np.testing.assert_array_equal(first.coords, again.coords)
    changed = Path(masks) / "case_1.npy"
    mask = np.load(changed)
    mask[:] = 0
    mask[5, 5, 5] = 3
    time.sleep(0.01)
    np.save(changed, mask)
    third = _index(masks)
    assert read == [str(changed)]
    assert sorted(third.locations(1)) == [3]


_BUILD = """
import sys, time
from pathlib import Path
import npyio
from npyio._sources import foreground as fg
where = Path(sys.argv[2])
fg.index_dir = lambda: where
real = fg._locate
def slow(*a):
    time.sleep(0.2)
    return real(*a)
fg._locate = slow
paths = sorted(str(p) for p in Path(sys.argv[1]).iterdir())
fg.build_index(paths, None, npyio.Foreground(), 3)
"""


def test_processes_starting_at_once_build_the_index_once(tmp_path):
    _, masks = _write_cases(tmp_path / "data", 4)
    where = tmp_path / "shared"
    children = [
        subprocess.Popen(
            [sys.executable, "-c", _BUILD, masks, str(where)],
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    errs = [c.communicate(timeout=120)[1] for c in children]
    assert [c.returncode for c in children] == [0, 0, 0], errs
    assert sum("indexing the foreground of 4 masks" in e for e in errs) == 1, errs
    assert not any("indexing the foreground" in e and "of 4" not in e for e in errs), errs
    assert len(list(where.glob("*.npz"))) == 4


def test_a_cache_that_cannot_be_written_still_gives_the_index(tmp_path, monkeypatch, capfd):
    _, masks = _write_cases(tmp_path / "data", 2)
    blocked = tmp_path / "a-file"
    blocked.write_text("")  # the cache directory would be under a file: it cannot be made
    monkeypatch.setattr(fg, "index_dir", lambda: blocked / "foreground")
    index = _index(masks)
    assert sorted(index.locations(1)) == [1, 2]
    err = capfd.readouterr().err
    assert "npyio: cannot cache the foreground index in" in err
    assert "indexing the foreground of 2 masks (not cached)" in err and "cached in" not in err
