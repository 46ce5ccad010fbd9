"""Smoke test of bench/shuffle.py's ``gathers`` measurement on small epochs: each count gets its
own gather size (a divisor), a forced size is refused where it does not divide, and every rate
is reported."""

from __future__ import annotations

import pytest

from tests.bench import load


def test_each_count_is_timed_in_its_own_gathers_and_the_forced_sizes():
    result = load("shuffle").gathers([1_000, 1_009], forced=[1, 8], rounds=1)
    assert [(r["count"], r["gather"]) for r in result.values()] == [
        (1_000, 10),
        (1_009, 1_009),
        (1_000, 1),
        (1_000, 8),
    ]
    assert all(r["indices_per_s"] > 0 for r in result.values())
    with pytest.raises(ValueError, match="does not divide"):
        load("shuffle").gathers([1_000], forced=[3], rounds=1)
