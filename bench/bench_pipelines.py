"""pytest-benchmark modules for the pipelines ``npyio bench`` compares.

``make test`` runs these once each as smoke tests (``--benchmark-disable``); measure for real
with ``.venv/bin/python -m pytest bench --benchmark-enable`` or, better, ``npyio bench``, which
interleaves the pipelines in rounds in one process.

The from_generator pipelines run in a worker process here too, as in ``npyio bench``: run in
the test process, they would slow every tf.data test after them (see ``GeneratorWorker``).
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import pytest
import tensorflow as tf

import npyio
from npyio.cli import bench, pipelines, sample

COUNT = 40


@pytest.fixture(scope="module", params=list(sample.PROFILES))
def profile_files(request, tmp_path_factory):
    count = COUNT if request.param != "large" else 12
    profile = dataclasses.replace(sample.PROFILES[request.param], count=count)
    root = sample.ensure(profile, str(tmp_path_factory.mktemp(request.param)), quiet=True)
    return profile, root


@pytest.fixture(scope="module")
def worker():
    with bench.GeneratorWorker() as w:
        yield w


def _pipeline_set(profile, root, worker):
    return bench.drains(profile, root, ["graph"], worker)


@pytest.mark.parametrize(
    "pipeline",
    [
        "npyio graph",
        "py_function",
        "from_generator",
        "from_generator x4 interleave",
        "floor (read only)",
        "np.load loop (no tf.data)",
    ],
)
def test_pipeline(benchmark, profile_files, worker, pipeline):
    profile, root = profile_files
    drain = _pipeline_set(profile, root, worker)[pipeline]
    n, _seconds = benchmark(drain)
    assert n == profile.count


def test_generator_drains_report_the_workers_memory(profile_files, worker):
    profile, root = profile_files
    runs = _pipeline_set(profile, root, worker)
    for key in (bench.GENERATOR, bench.GENERATOR_INTERLEAVED):
        drain = runs[key]
        assert drain.peak_rss == 0  # nothing drained yet
        n, seconds = drain()
        assert n == profile.count and seconds > 0
        assert drain.peak_rss > 50 * 2**20  # the worker's, with TensorFlow loaded


# Runs in a fresh process: from_generator would slow the tf.data tests after it in this one.
_AGREE = r"""
import json, sys
import numpy as np
import tensorflow as tf
import npyio
from npyio.cli import pipelines

xs, ys, input_shape, label_shape = json.loads(sys.argv[1])
ours = npyio.dataset(xs, ys, batch_size=8)
expected = [(x.numpy(), y.numpy()) for x, y in ours]
for generators in (1, 4):
    theirs = pipelines.generator_pipeline(xs, ys, input_shape, label_shape, 8, generators)
    assert theirs.element_spec == ours.element_spec, (theirs.element_spec, ours.element_spec)
    got = [(x.numpy(), y.numpy()) for x, y in theirs]
    assert [len(x) for x, _ in got] == [len(x) for x, _ in expected], generators
    for (x1, y1), (x2, y2) in zip(got, expected):
        np.testing.assert_array_equal(x1, x2)
        np.testing.assert_array_equal(y1, y2)
print("agree")
"""


def test_generator_pipelines_yield_every_pair_once_in_order(tmp_path):
    # 13 pairs: the 4 generators get 4, 3, 3 and 3, and the last batch is partial. Input i
    # holds i in its first element, so a pair lost, repeated or out of order fails.
    profile = dataclasses.replace(sample.PROFILES["small"], count=13)
    root = sample.ensure(profile, str(tmp_path), quiet=True)
    xs, ys = sample.paths(profile, root)
    env = dict(bench.child_env(), TF_CPP_MIN_LOG_LEVEL="2")
    args = json.dumps([xs, ys, list(profile.input_shape), list(profile.label_shape)])
    done = subprocess.run(
        [sys.executable, "-c", _AGREE, args], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0 and done.stdout.strip().endswith("agree"), done.stderr[-3000:]


def test_pipelines_agree(profile_files):
    profile, root = profile_files
    xs = sorted(tf.io.gfile.glob(f"{root}/inputs/*.npy"))
    ys = sorted(tf.io.gfile.glob(f"{root}/labels/*.npy"))
    ours = npyio.dataset(xs, ys, batch_size=8)
    theirs = pipelines.py_function_pipeline(xs, ys, profile.input_shape, profile.label_shape)
    assert ours.element_spec == theirs.element_spec
    for (x1, y1), (x2, y2) in zip(ours, theirs):
        tf.debugging.assert_equal(x1, x2)
        tf.debugging.assert_equal(y1, y2)


def test_bench_run_reports_every_ratio(tmp_path):
    results = bench.run(
        ["small"],
        rounds=1,
        root=str(tmp_path),
        counts={"small": 16},
        backends=["graph"],
        log=lambda m: None,
    )
    names = {r.pipeline for r in results}
    assert names == {
        "npyio graph",
        "py_function",
        "from_generator",
        "from_generator x4 interleave",
        "floor (read only)",
        "np.load loop (no tf.data)",
    }
    floor = next(r for r in results if r.pipeline == "floor (read only)")
    assert floor.vs_floor == pytest.approx(1.0)
    # Ratios to the faster from_generator pipeline: it is 1.0, the other at most 1.0.
    generators = sorted(r.vs_generator for r in results if r.pipeline.startswith("from_gen"))
    assert generators[0] <= 1.0 and generators[1] == pytest.approx(1.0)
    for r in results:
        assert r.samples == 16 and r.samples_per_s > 0 and r.peak_rss_mib > 0
        assert r.vs_generator > 0
    table = bench.table(results)
    assert "vs floor" in table and "npyio graph" in table
    assert "vs best from_generator" in table
    # The np.load loop is labelled as no pipeline in the table's footnote and in the JSON.
    assert "- np.load loop (no tf.data): not a tf.data pipeline" in table
    rows = {r["pipeline"]: r for r in json.loads(bench.to_json(results))["results"]}
    assert rows["np.load loop (no tf.data)"]["note"].startswith("not a tf.data pipeline")
    assert "worker process" in rows["from_generator"]["note"]
    assert rows["npyio graph"]["note"] == ""
    assert max(rows[k]["vs_generator"] for k in bench.GENERATOR_KEYS) == pytest.approx(1.0)


def test_plot_sets_the_numpy_loop_apart(tmp_path):
    pytest.importorskip("matplotlib")
    results = [
        bench.Result("small", name, 8, vs_floor=v)
        for name, v in (("npyio graph", 0.9), ("floor (read only)", 1.0), (bench.NUMPY_LOOP, 1.6))
    ]
    fig = bench.plot(results, str(tmp_path / "bench.png"))
    assert (tmp_path / "bench.png").stat().st_size > 0
    bars = {c.get_label(): c for c in fig.axes[0].containers}
    assert bars[f"{bench.NUMPY_LOOP} *"].patches[0].get_hatch() == "///"
    assert bars["npyio graph"].patches[0].get_hatch() is None
    assert any("* not a tf.data pipeline" in t.get_text() for t in fig.texts)
