"""`npyio._sources.pack_plan`: a packed directory found by its index or marker (`is_packed`), and
planned as `npyio.rows`'s pieces (`plan_packed`): every row once across shards and subsets,
and the options a pack refuses, named. What a pack yields: ``tests/sources/test_pack_write.py``."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

import npyio
from npyio._format.packed import INCOMPLETE, INDEX
from npyio._pipeline.loader import load
from npyio._pipeline.options import DatasetOptions
from npyio._sources.dataset import packed_source
from npyio._sources.pack_plan import is_packed, plan_subset
from npyio._sources.plan import plan as plan_sources
from tests.sources.test_pack_write import N
from tests.sources.test_rows_plan import kept_rows


def plan(directory: str, labels: object = None, **arguments: object):
    """`npyio._sources.plan.plan` of the pack (which refuses what a pack refuses, then asks
    `plan_packed`)."""
    return plan_sources(directory, labels, DatasetOptions.from_arguments(arguments))


def rows_of(p) -> list[int]:
    """The rows of the pack a plan yields, by their index in the whole pack."""
    return kept_rows([s.rows for s in p.index.shards], p.rows.pieces, p.rows.keep)


def test_is_packed_finds_the_index_or_the_marker(tmp_path, packed):
    assert is_packed(packed) == packed
    partial = tmp_path / "partial"
    partial.mkdir()
    (partial / INCOMPLETE).write_text("")
    assert is_packed(str(partial)) == str(partial)
    assert (Path(packed) / INDEX).is_file()


def test_is_packed_is_none_for_anything_else(tmp_path, tree, packed):
    for other in (
        str(tree / "x"),  # a directory of loose files
        str(tmp_path / "absent"),
        str(tree / "x" / "000.npy"),
        f"{packed}/*",
        [packed],
        None,
    ):
        assert is_packed(other) is None, other


def test_plan_reads_every_row_once(packed):
    p = plan(packed)
    assert p.kind == "pack" and p.index.count == N
    assert rows_of(p) == list(range(N)) and p.rows.count == N
    assert len(p.rows.sides) == 2  # x and y; the order is read only for the paths
    assert len(plan(packed, with_paths=True).rows.sides) == 3


def test_plan_shards_by_row_and_splits_into_disjoint_subsets(packed):
    shards = [rows_of(plan(packed, shard=(3, i))) for i in range(3)]
    assert sorted(r for s in shards for r in s) == list(range(N))
    assert max(map(len, shards)) - min(map(len, shards)) <= 1
    training, validation = plan(packed, validation_split=0.25, subset="both", seed=1)
    got = rows_of(training) + rows_of(validation)
    assert sorted(got) == list(range(N)) and len(rows_of(validation)) == round(N * 0.25)


@pytest.mark.parametrize("shuffle", [False, True])
@pytest.mark.parametrize("shard", [None, (2, 1)])
def test_a_subset_of_scattered_rows_is_read_in_a_piece_per_shard_file(packed, shuffle, shard):
    """Every other row (runs of one row, as a split's random subset has runs of a few): read
    in spans, not a piece per run, and yielded exactly, ascending unless shuffled."""
    kw = dict(shuffle=shuffle, seed=4, shard=shard, batch_size=None)
    options = DatasetOptions.from_arguments(kw)
    whole = plan(packed, **kw)
    subset = np.arange(0, N, 2)
    p = plan_subset(whole.index, whole.rows.sides, subset, options)
    assert len(p.pieces) <= len(whole.index.shards)  # not one per row
    lo, hi = (0, len(subset)) if shard is None else (len(subset) // 2, len(subset))
    want = subset[lo:hi].tolist()
    ds = load(packed_source(dataclasses.replace(whole, rows=p)))
    got = [int(y) for _, y in ds.as_numpy_iterator()]
    assert len(ds) == len(want) and (sorted(got) if shuffle else got) == want
    if shuffle:  # by index, anew each epoch
        assert [int(y) for _, y in ds.as_numpy_iterator()] != got


def test_plan_refuses_a_shape_or_key_the_pack_contradicts(packed):
    with pytest.raises(ValueError, match=r"is packed with shape \(3, 4\), which inputs shape"):
        plan(packed, shape=(4, 3))
    with pytest.raises(ValueError, match="key= does not apply to a packed directory"):
        plan(packed, key="x")


def test_options_that_do_not_apply_to_a_pack_are_refused(tree, packed):
    with pytest.raises(ValueError, match="holds its labels"):
        npyio.dataset(packed, str(tree / "y"))
    with pytest.raises(ValueError, match="packed as float32, not float64"):
        npyio.dataset(packed, dtype="float64")
    with pytest.raises(ValueError, match="backend"):
        npyio.dataset(packed, ignore_errors=True)
    with pytest.raises(ValueError, match="padding_value= does not apply to a packed directory"):
        npyio.dataset(packed, batch_size=2, padding_value=-1)


def test_a_shuffled_split_resumes_exactly_from_a_checkpoint(packed, tmp_path):
    kw = dict(batch_size=3, shuffle=True, seed=9, validation_split=0.3, subset="training")
    assert plan(packed, **kw).rows.keep is not None  # spans, rows of the other subset dropped
    ds = npyio.dataset(packed, **kw).repeat(2)
    it = iter(ds)
    for _ in range(5):  # 26 rows, 9 batches an epoch
        next(it)
    path = tf.train.Checkpoint(iterator=it).write(str(tmp_path / "c"))
    rest = [b[1].numpy().tolist() for b in it]
    again = iter(npyio.dataset(packed, **kw).repeat(2))
    tf.train.Checkpoint(iterator=again).read(path).assert_consumed()
    assert [b[1].numpy().tolist() for b in again] == rest and len(rest) == 2 * 9 - 5
