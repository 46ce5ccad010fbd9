"""`npyio._sources.rows_plan`: `plan_rows` decides pieces, chunks and shards of `npyio.rows` in
plain Python (run with TensorFlow blocked, as ``tests/sources/test_plan.py`` runs `plan_dataset`),
and `pieces` cuts files' rows into pieces, a pure function checked directly."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from npyio._sources.rows_plan import (
    CHUNK_BYTES,
    CYCLE,
    GAP_BYTES,
    pieces,
    row_runs,
    shard_runs,
    subset_pieces,
)
from tests.sources.test_plan import plan_json, save


# --- plan_rows --------------------------------------------------------------------------------
@pytest.fixture
def shards(tmp_path: Path) -> tuple[list[str], list[str]]:
    """Three shards of 10, 5 and 7 rows of 4 float32, big-endian in the middle, with labels."""
    xs, ys = [], []
    for i, (n, order) in enumerate(((10, "<"), (5, ">"), (7, "<"))):
        xs.append(save(tmp_path / "x" / f"{i}.npy", np.zeros((n, 4), order + "f4")))
        ys.append(save(tmp_path / "y" / f"{i}.npy", np.zeros(n, "<i8")))
    return xs, ys


def test_rows_pieces_and_chunk(shards):
    out = plan_json(
        """
        p = rows_plan(xs, ys)
        out = {"pieces": p.pieces, "chunk": p.chunk, "count": p.count, "cycle": p.cycle,
               "auto": p.auto, "sides": [[s.dtype.name, s.row_shape, s.little_endian,
                                          s.row_bytes] for s in p.sides]}
        """,
        xs=shards[0],
        ys=shards[1],
    )
    assert out["pieces"] == [[0, 0, 10], [1, 0, 5], [2, 0, 7]]
    assert out["chunk"] == CHUNK_BYTES // 16  # the widest row: 4 float32
    assert (out["count"], out["cycle"], out["auto"]) == (22, CYCLE, True)
    # byte orders differ between the input files: decided per piece
    assert out["sides"] == [["float32", [4], None, 16], ["int64", [], True, 8]]


def test_rows_shard_ranges_cover_every_row_once(shards):
    out = plan_json("out = [rows_plan(xs, shard=(3, i)).pieces for i in range(3)]", xs=shards[0])
    assert out == [
        [[0, 0, 7]],
        [[0, 7, 10], [1, 0, 4]],
        [[1, 4, 5], [2, 0, 7]],
    ]
    counts = (10, 5, 7)
    rows = [(j, r) for shard in out for j, a, e in shard for r in range(a, e)]
    assert sorted(rows) == [(j, r) for j, n in enumerate(counts) for r in range(n)]


def test_rows_shuffle_cuts_files_into_pieces(shards):
    out = plan_json(
        """
        npyio._sources.rows_plan.MAX_PIECE_BYTES = 64  # pieces of 4 rows of 16 bytes: files cut
        p = rows_plan(xs, shuffle=True, shuffle_buffer=8, num_parallel_reads=2)
        out = [p.pieces, p.chunk, p.cycle, p.auto]
        """,
        xs=shards[0],
    )
    pieces, chunk, cycle, auto = out
    # 2 pieces at a time fill the buffer of 8 rows, with 2 chunks each
    assert (chunk, cycle, auto) == (2, 2, False)
    assert pieces == [
        [0, 0, 4], [0, 4, 8], [0, 8, 10], [1, 0, 4], [1, 4, 5], [2, 0, 4], [2, 4, 7],
    ]  # fmt: skip


def test_rows_shuffle_without_a_buffer_takes_pieces_of_the_smallest_size(shards):
    out = plan_json(
        """
        npyio._sources.rows_plan.MIN_PIECE_BYTES = 64  # pieces of 4 rows of 16 bytes
        p = rows_plan(xs, shuffle=True, num_parallel_reads=2)
        out = [p.pieces, p.chunk]
        """,
        xs=shards[0],
    )
    # a window of 2 such pieces, as shuffle_buffer=8 asks for in the test above
    assert out == [
        [[0, 0, 4], [0, 4, 8], [0, 8, 10], [1, 0, 4], [1, 4, 5], [2, 0, 4], [2, 4, 7]], 2
    ]  # fmt: skip


def test_rows_build_errors(shards, tmp_path):
    bad = save(tmp_path / "bad.npy", np.zeros((3, 5), np.float32))
    out = plan_json(
        """
        out = [error(lambda: rows_plan(xs, ys[:1] * 3)),
               error(lambda: rows_plan(xs + [bad])),
               error(lambda: rows_plan(xs, shuffle=True, shuffle_buffer=0)),
               error(lambda: rows_plan(xs, validation_split=0.01, subset="validation", seed=0))]
        """,
        xs=shards[0],
        ys=shards[1],
        bad=bad,
    )
    assert out[0][1].startswith("inputs and labels must have the same number of rows: ")
    assert out[1] == [
        "NpyFormatError",
        f"{bad}: row shape mismatch -- expected (4,), got (5,) (the shape of a row of the "
        f"first file, {shards[0][0]})",
    ]
    assert out[2][0] == "ValueError" and "shuffle_buffer" in out[2][1]
    # the split counts rows here, and says so
    assert out[3] == [
        "ValueError",
        "validation_split=0.01 of 22 rows leaves the validation subset empty",
    ]


def test_pieces():
    assert pieces([3, 0, 2], 0, 5, None) == [(0, 0, 3), (2, 0, 2)]
    assert pieces([3, 0, 2], 2, 4, None) == [(0, 2, 3), (2, 0, 1)]
    assert pieces([5], 0, 5, 2) == [(0, 0, 2), (0, 2, 4), (0, 4, 5)]
    assert pieces([5], 3, 3, 2) == []


# --- subset_pieces: a split's random rows, read in spans ----------------------------------------
def kept_rows(counts: list[int], cut: list, keep: bytes | None) -> list[int]:
    """The global rows a plan's pieces yield, in order."""
    starts = np.cumsum([0, *counts])
    rows = [int(starts[j]) + r for j, a, e in cut for r in range(a, e)]
    return rows if keep is None else [r for r, k in zip(rows, keep) if k]


@pytest.mark.parametrize("shard", [None, (3, 0), (3, 2)])
@pytest.mark.parametrize("piece_rows", [None, 1000])
def test_a_random_subset_is_read_in_spans_not_in_a_piece_per_run(shard, piece_rows):
    counts = [20_000, 0, 30_000]
    subset = np.sort(np.random.RandomState(0).permutation(50_000)[:40_000])
    runs = row_runs(subset)
    assert len(runs) > 5000  # runs of a few rows: a piece each made the split slow
    cut, keep = subset_pieces(counts, runs, shard, piece_rows, 16)
    # rows of 16 bytes, GAP_BYTES apart at most: one span, cut only at files and pieces
    assert len(cut) <= 2 + (0 if piece_rows is None else 50_000 // piece_rows)
    assert keep is not None and len(keep) == sum(e - a for _, a, e in cut)
    want = [a + r for a, e in shard_runs(runs, shard) for r in range(e - a)]
    assert kept_rows(counts, cut, keep) == want  # the same rows as before, ascending


def test_runs_far_apart_or_of_wide_rows_are_read_alone():
    runs = [(0, 3), (10, 12), (100, 101)]
    # GAP_BYTES apart or more (7 rows of GAP_BYTES / 7 bytes and more): each run its own
    # piece, nothing read to be dropped; so always for rows of GAP_BYTES
    alone = ([(0, 0, 3), (0, 10, 12), (0, 100, 101)], None)
    assert subset_pieces([200], runs, None, None, GAP_BYTES // 7 + 1) == alone
    assert subset_pieces([200], runs, None, None, GAP_BYTES) == alone
    # closer: a span from the first row kept to the last, and which rows of it are kept
    cut, keep = subset_pieces([200], runs, None, None, GAP_BYTES // 7)
    assert cut == [(0, 0, 12), (0, 100, 101)]
    assert kept_rows([200], cut, keep) == [0, 1, 2, 10, 11, 100]
    cut, keep = subset_pieces([200], runs, None, None, GAP_BYTES // 100)
    assert cut == [(0, 0, 101)] and kept_rows([200], cut, keep) == [0, 1, 2, 10, 11, 100]
    # a span cut into pieces leaves out the pieces that keep no row
    cut, keep = subset_pieces([200], runs, None, 4, 1)
    assert cut == [(0, 0, 4), (0, 8, 12), (0, 100, 101)]
    assert kept_rows([200], cut, keep) == [0, 1, 2, 10, 11, 100]
    assert subset_pieces([200], [(0, 200)], None, None, 1) == ([(0, 0, 200)], None)


def test_a_split_of_rows_reads_a_few_pieces(tmp_path):
    xs = save(tmp_path / "x.npy", np.zeros((100_000, 2), np.float32))
    out = plan_json(
        """
        out = [[len(p.pieces), p.count] for shuffled in (False, True)
               for p in rows_plan(xs, validation_split=0.2, subset="both", seed=1,
                                  shuffle=shuffled)]
        """,
        xs=xs,
    )
    # a random subset (shuffled or not) has runs of a few rows: each
    # subset is read as one span (800 KB, within one piece of 4 MiB)
    assert out == [[1, 80_000], [1, 20_000], [1, 80_000], [1, 20_000]]
