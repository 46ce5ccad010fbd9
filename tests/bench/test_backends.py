"""bench/backends.py: each backend's child reports a rate and a CPU time per sample;
``native+on`` is the native reader with tf.data's autotune on (npyio turns it off)."""

import pytest

from tests.bench import load


@pytest.fixture(scope="module")
def backends():
    module = load("backends")
    module.COUNTS = {"small": 24}  # the figures are the benchmark's, not asserted here
    return module


@pytest.mark.parametrize("backend", ["native", "graph", "native+on", "floor"])
def test_a_child_reports_a_rate_and_a_cpu_time_per_epoch(tmp_path, backends, backend):
    out = backends.child(backend, "small", str(tmp_path), 2)
    assert out["backend"] == backend and len(out["rates"]) == len(out["cpu"]) == 2
    assert all(r > 0 for r in out["rates"]) and all(c >= 0 for c in out["cpu"])


@pytest.mark.parametrize(
    ("backend", "autotune"), [("native", False), ("native+on", True), ("graph", None)]
)
def test_native_pipelines_have_autotune_off_unless_asked_on(tmp_path, backends, backend, autotune):
    from npyio.cli import sample

    profile = sample.PROFILES["small"].__class__("small", (16, 16), count=8)
    xs, ys = sample.paths(profile, sample.ensure(profile, str(tmp_path), quiet=True))
    ds = backends.build(backend, xs, ys)
    assert ds.options().autotune.enabled is autotune
    assert sum(int(x.shape[0]) for x, _ in ds) == 8
