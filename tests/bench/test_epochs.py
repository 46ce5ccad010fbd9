"""bench/epochs.py: its configurations set what they say, a child process times every epoch
(to its last batch, to its end, and the wait between), and the table counts only waits past
`WAIT_MS` after the first epoch."""

import pytest

from tests.bench import load


@pytest.fixture(scope="module")
def epochs():
    module = load("epochs")
    module.PAIRS = 64  # a few batches: the figures are the benchmark's, not asserted here
    return module


@pytest.mark.parametrize(
    ("config", "parallelism", "prefetch", "autotune"),
    [("default", -1, -1, True), ("cores", 2, 2, True), ("cores+off", 2, 2, False),
     ("default+off", -1, -1, False)],
)  # fmt: skip
def test_each_configuration_sets_its_parallelism_and_autotune(
    tmp_path, epochs, monkeypatch, config, parallelism, prefetch, autotune
):
    monkeypatch.setattr(epochs.os, "cpu_count", lambda: 2)
    calls = {}

    def dataset(xs, ys, **kwargs):
        calls.update(kwargs)
        return real(xs, ys, **kwargs)

    import npyio

    real = npyio.dataset
    monkeypatch.setattr(npyio, "dataset", dataset)
    ds = epochs.build(config, *epochs.ensure(str(tmp_path)))
    assert calls.get("num_parallel_calls", -1) == parallelism
    assert calls.get("prefetch", -1) == prefetch
    assert ds.options().autotune.enabled is autotune


@pytest.mark.parametrize("mode", ["loop", "fit"])
def test_a_child_times_every_epoch(tmp_path, epochs, mode):
    out = epochs.child("default", mode, str(tmp_path), 3)
    assert len(out["last"]) == len(out["end"]) == len(out["wait"]) == 3
    assert all(0 < last <= end for last, end in zip(out["last"], out["end"]))
    if mode == "loop":  # the wait is the iterator's end after its last batch
        assert out["wait"] == pytest.approx([e - la for la, e in zip(out["last"], out["end"])])
    else:  # the start of each epoch, before its first batch, inside its time to the last one
        assert all(0 <= w < last for w, last in zip(out["wait"], out["last"]))


def test_the_summary_leaves_out_first_epochs_and_counts_waits_past_the_bound(epochs):
    runs = [
        {"last": [90.0, 10.0, 20.0], "end": [200.0, 60.0, 21.0], "wait": [110.0, 50.0, 1.0]},
        {"last": [80.0, 30.0, 40.0], "end": [85.0, 37.0, 44.0], "wait": [5.0, 7.0, 4.0]},
    ]
    s = epochs.summary(runs)
    assert s["epochs"] == 4 and s["waits"] == 2  # 50 and 7 are past 5 ms; 110 is a first epoch
    assert s["tail_max_ms"] == 50.0 and s["last_ms"] == 25.0 and s["first_ms"] == 142.5
