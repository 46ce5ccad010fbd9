"""Smoke test of bench/where.py: its hand-written candidate pipelines deliver every sample, and
it reports faults and peak RSS from the child process."""

import dataclasses

import pytest

from npyio.cli import sample
from tests.bench import load


@pytest.mark.parametrize("variant", ["fixed", "batch-strings", "decode"])
def test_a_variant_reads_every_pair_and_reports_its_counters(tmp_path, variant):
    where = load("where")
    profile = dataclasses.replace(sample.PROFILES["medium"], count=12)
    sample.ensure(profile, str(tmp_path), quiet=True)
    out = where.child(variant, "medium", 12, 2, str(tmp_path))
    assert out["samples"] == 24
    # the counters are reported (their values are the benchmark's figures, not asserted here)
    assert {"seconds", "faults_per_pair", "peak_rss_mib"} <= out.keys(), out
    assert out["faults_per_pair"] >= 0 and out["peak_rss_mib"] > 0
