"""Smoke test of bench/memory.py: each run reads every sample and reports its peak RSS.

Whether peak RSS grows with the number of files is the benchmark's figure (``npyio bench``),
not a test's assertion: tests assert behaviour, not time or memory.
"""

from tests.bench import load


def test_each_size_reads_every_sample_and_reports_its_memory(tmp_path):
    memory = load("memory")
    small, large = memory.measure([2, 8], (16, 16), str(tmp_path), "graph")
    assert (small["files"], small["samples"], small["backend"]) == (2, 2, "graph")
    assert (large["files"], large["samples"]) == (8, 8)
    for row in (small, large):
        # the peak is taken over the run, so it cannot be below the RSS measured before it
        assert 0 < row["rss_before_mib"] <= row["peak_rss_mib"], row
