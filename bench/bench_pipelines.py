"""pytest-benchmark modules for the pipelines ``npyio bench`` compares.

``make test`` runs these once each as smoke tests (``--benchmark-disable``); measure for real
with ``.venv/bin/python -m pytest bench --benchmark-enable`` or, better, ``npyio bench``, which
interleaves the pipelines in rounds in one process.
"""

from __future__ import annotations

import pytest
import tensorflow as tf

import npyio
from npyio.cli import bench as _bench
from npyio.cli import pipelines as _pipelines
from npyio.cli import sample as _sample

COUNT = 40


@pytest.fixture(scope="module", params=list(_bench.PROFILES))
def profile_files(request, tmp_path_factory):
    base = _bench.PROFILES[request.param]
    count = COUNT if request.param != "large" else 12
    profile = _sample.Profile(base.name, base.input_shape, base.label_shape, count)
    root = _sample.ensure(profile, str(tmp_path_factory.mktemp(request.param)), quiet=True)
    return profile, root


def _pipeline_set(profile, root):
    return _bench.pipelines(profile, root, ["graph"])


@pytest.mark.parametrize(
    "pipeline", ["npyio graph", "py_function", "floor (read only)", "np.load loop"]
)
def test_pipeline(benchmark, profile_files, pipeline):
    profile, root = profile_files
    drain = _pipeline_set(profile, root)[pipeline]
    n, _seconds = benchmark(drain)
    assert n == profile.count


def test_pipelines_agree(profile_files):
    profile, root = profile_files
    xs = sorted(tf.io.gfile.glob(f"{root}/inputs/*.npy"))
    ys = sorted(tf.io.gfile.glob(f"{root}/labels/*.npy"))
    ours = npyio.dataset(xs, ys, batch_size=8)
    theirs = _pipelines.py_function_pipeline(xs, ys, profile.input_shape, profile.label_shape)
    assert ours.element_spec == theirs.element_spec
    for (x1, y1), (x2, y2) in zip(ours, theirs):
        tf.debugging.assert_equal(x1, x2)
        tf.debugging.assert_equal(y1, y2)


def test_bench_run_reports_every_ratio(tmp_path):
    results = _bench.run(
        ["small"],
        rounds=1,
        root=str(tmp_path),
        counts={"small": 16},
        backends=["graph"],
        log=lambda m: None,
    )
    names = {r.pipeline for r in results}
    assert names == {"npyio graph", "py_function", "floor (read only)", "np.load loop"}
    floor = next(r for r in results if r.pipeline == "floor (read only)")
    assert floor.vs_floor == pytest.approx(1.0)
    for r in results:
        assert r.samples == 16 and r.samples_per_s > 0 and r.peak_rss_mib > 0
    table = _bench.table(results)
    assert "vs floor" in table and "npyio graph" in table
