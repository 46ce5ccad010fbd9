"""Smoke test of bench/pack_split.py on a few pairs: each cell's pack and loose files yield the
same rows, and the table has every cell's times and ratio."""

from __future__ import annotations

from tests.bench import load


def test_every_cell_reads_the_same_rows_from_the_pack_and_the_loose_files(tmp_path):
    bench = load("pack_split")
    rows = bench.rows_read(str(tmp_path), 40, 8)
    assert rows == {
        "unshuffled, no split": (40, 40),
        "unshuffled, split 0.2": (32, 32),
        "shuffled, no split": (40, 40),
        "shuffled, split 0.2": (32, 32),
        "unshuffled, random subset 0.8": (32, 32),
    }
    table = bench.measure(str(tmp_path), 40, 1, [8])["batch 8"]
    assert set(table) == set(rows)
    for cell in table.values():
        assert 0 < cell["pack ms to last batch"] <= cell["pack ms to iterator end"]
        assert cell["pack/loose to iterator end"] > 0
