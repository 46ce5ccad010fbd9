"""Smoke test of bench/pack.py's ``shuffled`` check on a few pairs: every pipeline drains every
pair, by both ways, and each ratio is reported."""

from __future__ import annotations

from tests.bench import load


def test_the_shuffled_check_drains_every_pair_and_reports_each_ratio(tmp_path):
    result = load("pack").shuffled(str(tmp_path), rounds=1, count=40)
    for way in ("python iterator", "compiled loop"):
        rates = result[f"{way}: pairs/s (median)"]
        assert set(rates) == {f"{k}, batch {b}" for k in ("loose", "pack") for b in (8, 128)}
        assert all(rate > 0 for rate in rates.values())
        assert result[f"{way}: pack / loose, batch 8"] > 0
        assert result[f"{way}: pack / loose, batch 128"] > 0
