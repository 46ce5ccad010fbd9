"""pytest-benchmark modules for the pipelines ``npyio bench`` compares.

``make test`` runs these once each as smoke tests (``--benchmark-disable``); measure for real
with ``.venv/bin/python -m pytest bench --benchmark-enable`` or, better, ``npyio bench``, which
interleaves the pipelines in rounds in one process.

The from_generator pipelines run in a worker process here too, as in ``npyio bench``: run in
the test process, they would slow every tf.data test after them (see ``Worker``).
The functions of ``npyio bench`` and the reference pipelines are tested in
``tests/cli/test_bench.py`` and ``tests/cli/test_pipelines.py``.
"""

from __future__ import annotations

import dataclasses

import pytest

from npyio.cli import bench, sample

COUNT = 40


@pytest.fixture(scope="module", params=list(sample.PROFILES))
def profile_files(request, tmp_path_factory):
    count = COUNT if request.param != "large" else 12
    profile = dataclasses.replace(sample.PROFILES[request.param], count=count)
    root = sample.ensure(profile, str(tmp_path_factory.mktemp(request.param)), quiet=True)
    return profile, root


@pytest.fixture(scope="module")
def worker():
    with bench.Worker() as w:
        yield w


@pytest.mark.parametrize("pipeline", [bench.NATIVE, bench.NPYIO, *bench.REFERENCES, bench.BARE])
def test_pipeline(benchmark, profile_files, worker, pipeline):
    profile, root = profile_files
    native = pipeline in (bench.NATIVE, bench.BARE)
    if native and bench.native_off() is not None:
        pytest.skip(f"npyio's native reader is not active here: {bench.native_off()}")
    drain = bench.drains(profile, root, ["native"] if native else ["graph"], worker)[pipeline]
    n, _seconds = benchmark(drain)
    assert n == profile.count
