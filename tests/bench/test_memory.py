"""Smoke test of bench/memory.py: peak RSS must not grow with the number of files."""

from tests.bench import load


def test_peak_rss_does_not_grow_with_dataset(tmp_path):
    memory = load("memory")
    # 1 MiB inputs: holding the 96-file epoch in memory would add ~90 MiB over the 8-file run.
    small, large = memory.measure([8, 96], (256, 256, 4), str(tmp_path))
    assert (small["samples"], large["samples"]) == (8, 96)
    assert large["peak_rss_mib"] - small["peak_rss_mib"] < 40, (small, large)
