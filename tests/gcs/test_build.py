"""Building `npyio.dataset` over ``gs://`` costs a fixed number of requests besides the listing
of each directory (which GCS, and the fake, answer in pages of 1,000 names): the first pair's
headers, the headers sampled against them, and the look for a pack. (The time it takes,
against a bare ``tf.io.gfile.glob`` at the same latency, is measured by ``bench/remote.py
startup``; bench/README.md has the figures.)"""

from __future__ import annotations

import collections

import numpy as np
import pytest

from npyio._sources.sampling import sample_indices
from tests.gcs.sandbox import GcsSandbox

BUILD = """
import sys
import npyio
ds = npyio.dataset(sys.argv[1], sys.argv[2], batch_size=8)
print(ds.cardinality().numpy())
"""


@pytest.mark.parametrize("n", [10, 1000, 2500])
def test_building_costs_a_listing_per_directory_and_a_few_requests(gcs: GcsSandbox, tmp_path, n):
    for side in ("x", "y"):
        (tmp_path / side).mkdir()
        for i in range(n):
            np.save(tmp_path / side / f"{i:05d}.npy", np.full((4,), i, np.float32))
    gcs.put_tree(tmp_path, f"build-{n}")
    gcs.reset_stats()
    run = gcs.python(BUILD, gcs.url(f"build-{n}/x"), gcs.url(f"build-{n}/y"), timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert int(run.stdout.split()[-1]) == -(-n // 8)
    kinds = collections.Counter(r["kind"] for r in gcs.requests())
    print(f"{n} objects per side: {dict(kinds)}")
    # a listing of each directory, a page per 1,000 names; whether it holds a pack (its index,
    # or the marker of an unfinished one: a stat each, and the listing GCS's client adds to a
    # missing name)
    pages = -(-n // 1000)
    assert sum("pageToken=" in r["target"] for r in gcs.requests("list")) == 2 * (pages - 1)
    assert kinds["list"] <= 2 + 2 * pages
    # the first input's and label's headers and the probe (6), then the headers of the files
    # sampled against them (`sample_indices`: the middle and the last of each side), a read and
    # a size each
    sampled = 2 * 2 * (len(sample_indices(n)) - 1)
    assert kinds["read"] + kinds["stat"] <= 6 + sampled
    assert sum(kinds.values()) - kinds["list"] <= 8 + sampled
