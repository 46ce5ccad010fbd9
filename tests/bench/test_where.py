"""Smoke test of bench/where.py: its hand-written candidate pipelines deliver every sample, and
it reports faults and peak RSS from the child process."""

import dataclasses
from concurrent.futures import ThreadPoolExecutor

from npyio.cli import sample
from tests.bench import load

VARIANTS = ["fixed", "batch-strings", "decode"]


def test_a_variant_reads_every_pair_and_reports_its_counters(tmp_path):
    """Each variant in its own child process, as the benchmark runs it; the three children
    read the same sample tree and nothing else, so they run at once (each mostly imports
    TensorFlow), instead of one test and one tree per variant."""
    where = load("where")
    profile = dataclasses.replace(sample.PROFILES["medium"], count=12)
    sample.ensure(profile, str(tmp_path), quiet=True)
    with ThreadPoolExecutor(len(VARIANTS)) as pool:
        outs = pool.map(lambda v: where.child(v, "medium", 12, 2, str(tmp_path)), VARIANTS)
        found = dict(zip(VARIANTS, outs, strict=True))
    for variant, out in found.items():
        assert out["samples"] == 24, variant
        # the counters are reported (their values are the benchmark's figures, not asserted)
        assert {"seconds", "faults_per_pair", "peak_rss_mib"} <= out.keys(), (variant, out)
        assert out["faults_per_pair"] >= 0 and out["peak_rss_mib"] > 0, variant
