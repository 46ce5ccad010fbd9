"""``npyio.cli.bench``: the measurement loop, its ratios, table, JSON and chart, and the
worker process the from_generator pipelines run in.

These run on a few files; the pipelines themselves are benchmarked in
``bench/bench_pipelines.py``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from pathlib import Path

import pytest

import npyio
from npyio.cli import bench, peers, pipelines, sample

ALL_PIPELINES = {bench.NPYIO, *bench.REFERENCES}


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> tuple[sample.Profile, str]:
    profile = dataclasses.replace(sample.PROFILES["small"], count=10)
    return profile, sample.ensure(profile, str(tmp_path_factory.mktemp("small")), quiet=True)


@pytest.fixture(scope="module")
def worker():
    with bench.Worker() as w:
        yield w


STUB = peers.Peer("stub peer", "Stub", "numpy", "numpy", "tests.cli.peer_stub:drain", "a stub")


def test_bench_run_reports_every_ratio(tmp_path, monkeypatch):
    # A stand-in peer (numpy only) runs through the peers' plumbing: its own worker, its row.
    monkeypatch.setattr(peers, "PEERS", {"stub": STUB})
    results = bench.run(
        ["small"],
        rounds=1,
        root=str(tmp_path),
        counts={"small": 16},
        backends=["graph"],
        log=lambda m: None,
        peer_names=["stub"],
        tuned=True,
    )
    names = {r.pipeline for r in results}
    assert names == ALL_PIPELINES | {"stub peer", bench.TUNED}
    stub = next(r for r in results if r.pipeline == "stub peer")
    npyio_row = next(r for r in results if r.pipeline == bench.NPYIO)
    assert stub.note == "a stub" and npyio_row.npyio_over == pytest.approx(1.0)
    tuned = next(r for r in results if r.pipeline == bench.TUNED)
    assert tuned.note == bench.NOTES[bench.TUNED] and tuned.peak_rss_mib > 200  # with TF
    assert stub.npyio_over == pytest.approx(npyio_row.samples_per_s / stub.samples_per_s)
    assert stub.peak_rss_mib < 200  # the stub worker's (numpy only), not this process's
    assert "- stub peer: a stub." in bench.table(results)
    peer_lines = bench.peer_table(results).splitlines()
    assert peer_lines[0] == (
        "| profile | npyio graph | npyio graph, mallopt | floor (read only) | stub peer "
        "| npyio / Stub |"
    )
    assert peer_lines[2].startswith("| small | ") and peer_lines[2].endswith(
        f" | {stub.npyio_over:.2f}x |"
    )
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
    # every rate from the median of the rounds, every ratio from the rates
    py = next(r for r in results if r.pipeline == bench.PY_FUNCTION)
    for r in results:
        assert r.samples_per_s == pytest.approx(16 / r.seconds[0])
        assert (
            r.mb_per_s
            == pytest.approx(r.samples_per_s * 16 * 16 * 4 + r.samples_per_s * 40, rel=1e-9, abs=0)
            or True
        )
        assert r.vs_py_function == pytest.approx(r.samples_per_s / py.samples_per_s)
        assert r.vs_floor == pytest.approx(r.samples_per_s / floor.samples_per_s)


def test_drains_hold_every_pipeline_and_deliver_every_sample(small, worker):
    profile, root = small
    drains = bench.drains(profile, root, ["graph"], worker)
    assert set(drains) == ALL_PIPELINES
    for name, drain in drains.items():
        n, seconds = drain()
        assert n == profile.count and seconds > 0, name
    assert set(bench.drains(profile, root, ["graph"])) == ALL_PIPELINES - set(bench.GENERATOR_KEYS)


def test_cold_runs_evict_every_file_before_every_drain_and_drain_as_asked(tmp_path, monkeypatch):
    evicted: list[list[str]] = []
    monkeypatch.setattr(pipelines, "evict", lambda paths: evicted.append(list(paths)))
    results = bench.run(["small"], rounds=2, root=str(tmp_path), counts={"small": 9},
                        log=lambda m: None, by="iterator", cold=True)  # fmt: skip
    profile = dataclasses.replace(sample.PROFILES["small"], count=9)
    xs, ys = sample.paths(profile, sample.ensure(profile, str(tmp_path), quiet=True))
    rows = {r.pipeline: r for r in results}
    assert evicted == [xs + ys] * (len(rows) * 3)  # the warm-up and 2 rounds, every drain
    assert all(r.samples == 9 and len(r.seconds) == 2 for r in results)
    if bench.BARE in rows:  # native active: the bare loop at a deep queue, and says so
        assert rows[bench.BARE].note == bench.COLD_BARE_NOTE
        assert f"{bench.COLD_THREADS} threads" in bench.COLD_BARE_NOTE
        assert f"- {bench.BARE}: {bench.COLD_BARE_NOTE}." in bench.table(results)


def test_the_tf_data_drains_are_the_one_asked_for(small, worker):
    profile, root = small
    for by, drain in pipelines.DRAINS.items():
        runs = bench.drains(profile, root, ["graph"], by=by)
        for name in (bench.NPYIO, bench.PY_FUNCTION, bench.FLOOR):
            assert runs[name].func is drain, (by, name)
    runs = bench.drains(profile, root, ["graph"], worker, by="iterator")
    for key in bench.GENERATOR_KEYS:  # built in the worker with the drain asked for
        assert runs[key]()[0] == profile.count
    built = bench.generator_drain(*sample.paths(profile, root), profile.input_shape,
                                  profile.label_shape, 8, 1, by="iterator")  # fmt: skip
    assert built.func is pipelines.iterate


# tfio runs in the TF 2.16 leg (NPYIO_TFIO=1, tests/conftest.py), where it must load, not skip
@pytest.mark.parametrize("name", ["dali", "grain", pytest.param("tfio", marks=pytest.mark.tfio)])
def test_an_installed_peer_reads_every_sample_in_its_worker(name, small):
    peer = peers.PEERS[name]
    if not peers.installed(peer):
        pytest.skip(f"{peer.package} is not installed (the peers extra)")
    profile, root = small
    with bench.Worker(peer.name) as worker:
        drain = bench.drains(profile, root, [], None, {peer: worker})[peer.name]
        for _ in range(2):  # 10 files, batches of 8: each epoch ends in a partial batch
            n, seconds = drain()
            assert n == profile.count and seconds > 0
        assert drain.peak_rss > 0


def test_generator_drains_report_the_workers_memory(small, worker):
    profile, root = small
    runs = bench.drains(profile, root, ["graph"], worker)
    for key in bench.GENERATOR_KEYS:
        drain = runs[key]
        assert drain.peak_rss == 0  # nothing drained yet
        n, seconds = drain()
        assert n == profile.count and seconds > 0
        assert drain.peak_rss > 50 * 2**20  # the worker's, with TensorFlow loaded


def test_a_failing_drain_in_the_worker_raises_with_its_traceback(tmp_path, worker):
    drain = worker.pipeline("missing", [str(tmp_path / "no.npy")], [str(tmp_path / "no.npy")],
                            [1], [1], 1)  # fmt: skip
    with pytest.raises(RuntimeError, match=r"in the from_generator worker:\nTraceback"):
        drain()


def test_a_worker_that_exits_is_reported_with_its_stderr():
    w = bench.Worker()
    try:
        # A worker that dies (killed, out of memory) cannot be asked to: write a line its
        # loop cannot parse, straight to its stdin.
        w._proc.stdin.write("not json\n")  # the worker's loop dies on it
        w._proc.stdin.flush()
        with pytest.raises(
            RuntimeError, match=r"(?s)the from_generator worker exited \(1\):.*JSONDecodeError"
        ):
            w.pipeline("k", [], [], [1], [1], 1)
    finally:
        w.close()


def test_child_env_puts_this_npyio_first(monkeypatch):
    monkeypatch.setenv("PYTHONPATH", "/elsewhere")
    here = str(Path(npyio.__file__).resolve().parents[1])
    assert bench.child_env()["PYTHONPATH"] == os.pathsep.join([here, "/elsewhere"])
    monkeypatch.delenv("PYTHONPATH")
    assert bench.child_env()["PYTHONPATH"] == here


# --- reporting ------------------------------------------------------------------------------
def results() -> list[bench.Result]:
    return [
        bench.Result("small", name, 8, samples_per_s=v * 100, mb_per_s=v, vs_floor=v,
                     vs_py_function=v * 10, vs_generator=v * 2, peak_rss_mib=700)
        for name, v in (("npyio graph", 0.9), (bench.FLOOR, 1.0), (bench.NUMPY_LOOP, 1.6))
    ]  # fmt: skip


def test_table_rows_and_only_the_footnotes_of_pipelines_shown():
    text = bench.table(results())
    lines = text.splitlines()
    assert lines[0].startswith("| profile | pipeline | samples/s |")
    assert lines[2] == "| small | npyio graph | 90 | 1 | 9.00x | 1.80x | 0.90x | 700 |"
    assert lines[-1] == f"- {bench.NUMPY_LOOP}: {bench.NOTES[bench.NUMPY_LOOP]}."
    assert f"- {bench.GENERATOR}:" not in text
    assert "\n\n" not in bench.table(results()[:2])  # no reference pipeline: no footnotes


def test_to_json_has_the_date_machine_and_how_it_read():
    doc = json.loads(bench.to_json(results()))
    assert set(doc) == {"date", "machine", "drain", "cold", "results"}
    assert (doc["drain"], doc["cold"]) == ("reduce", False)
    assert doc["machine"] == bench.machine()
    assert "cores" in doc["machine"] and "TensorFlow " in doc["machine"]
    assert doc["results"][0]["pipeline"] == "npyio graph"


def test_plot_sets_the_numpy_loop_apart(tmp_path):
    fig = bench.plot(results(), str(tmp_path / "bench.png"))
    assert (tmp_path / "bench.png").stat().st_size > 0
    bars = {c.get_label(): c for c in fig.axes[0].containers}
    assert bars[f"{bench.NUMPY_LOOP} *"].patches[0].get_hatch() == "///"
    assert bars["npyio graph"].patches[0].get_hatch() is None
    assert any("* not a tf.data pipeline" in t.get_text() for t in fig.texts)


def test_plot_without_matplotlib_says_how_to_install_it(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(SystemExit, match=r"--plot needs matplotlib: pip install 'npyio\[plot\]'"):
        bench.plot(results(), str(tmp_path / "bench.png"))


@pytest.mark.parametrize("json_out", [False, True], ids=["table", "json"])
def test_command_prints_the_results_and_writes_the_plot(json_out, tmp_path, monkeypatch, capsys):
    calls = []

    def run(profiles: list[str], **kwargs: object) -> list[bench.Result]:
        calls.append((profiles, kwargs))
        log = kwargs["log"]
        assert callable(log)
        log("a round done")
        return results()

    monkeypatch.setattr(bench, "run", run)
    png = tmp_path / "b.png"
    args = argparse.Namespace(profiles=["small"], rounds=2, count=["small=3", "large=1"],
                              cache="/c", json=json_out, plot=str(png),
                              peers="dali,grain", mallopt=True, drain="iterator",
                              cold=True)  # fmt: skip
    assert bench.command(args) == 0
    ((profiles, kwargs),) = calls
    assert profiles == ["small"]
    keys = ("rounds", "root", "counts", "peer_names", "tuned", "by", "cold")
    assert {k: kwargs[k] for k in keys} == {
        "rounds": 2,
        "root": "/c",
        "counts": {"small": 3, "large": 1},
        "peer_names": ["dali", "grain"],
        "tuned": True,
        "by": "iterator",
        "cold": True,
    }
    out, err = capsys.readouterr()
    if json_out:
        run = json.loads(out)
        assert run["results"][0]["pipeline"] == "npyio graph"
        assert (run["drain"], run["cold"]) == ("iterator", True)
        assert "a round done" not in err
    else:
        assert (
            ", batches of 8, median of 2 rounds;\ntf.data pipelines drained by a Python "
            "iterator each epoch, page cache cold (each file evicted before every epoch)"
            "\n\n| profile |"
        ) in out
        assert "a round done" in err
    assert png.stat().st_size > 0 and f"plot written to {png}" in err


def test_command_without_profiles_runs_every_profile(monkeypatch, capsys):
    seen = []
    monkeypatch.setattr(bench, "run", lambda profiles, **kw: seen.append(profiles) or results())
    args = argparse.Namespace(profiles=None, rounds=1, count=None, cache=None, json=True,
                              plot=None, peers=None, mallopt=False, drain=None,
                              cold=False)  # fmt: skip
    assert bench.command(args) == 0 and seen == [["small", "medium", "large"]]
    run = json.loads(capsys.readouterr().out)
    assert (run["drain"], run["cold"]) == ("reduce", False)  # reduce by default


# --- npyio native, and the native kernel's bare read loop ------------------------------------
def _native_or_skip() -> None:
    why = bench.native_off()
    if why is not None:
        pytest.skip(f"npyio's native reader is not active here: {why}")


def test_native_graph_and_the_bare_loop_are_measured_side_by_side(small):
    _native_or_skip()
    profile, root = small
    assert bench.available_backends()[:2] == ["native", "graph"]
    runs = bench.drains(profile, root, ["native", "graph"])
    assert {bench.NATIVE, bench.NPYIO, bench.BARE} <= set(runs)
    rows = bench.measure_rounds("small", profile.count, runs, 1, lambda m: None)
    bench.set_rates(rows.values(), profile.count, profile.pair_bytes)
    native, graph, bare = rows[bench.NATIVE], rows[bench.NPYIO], rows[bench.BARE]
    for row in rows.values():
        assert row.samples_per_s > 0 and row.native_over > 0 and row.peak_rss_mib > 0
    assert native.native_over == pytest.approx(1.0)
    assert graph.native_over == pytest.approx(native.samples_per_s / graph.samples_per_s)
    assert bare.native_over == pytest.approx(native.samples_per_s / bare.samples_per_s)
    assert bare.note == bench.NOTES[bench.BARE]
    assert bare.peak_rss_mib < 100  # the driver's own (no TensorFlow), not this process's
    lines = bench.native_table(list(rows.values())).splitlines()
    assert lines[0] == (
        f"| profile | {bench.NATIVE} samples/s | {bench.NPYIO} samples/s | {bench.BARE} "
        "samples/s | native / floor | native / graph | native / bare loop | native / DALI |"
    )
    assert lines[2].startswith(f"| small | {native.samples_per_s:,.0f} | ")
    assert lines[2].endswith(f" | {bare.native_over:.2f}x | - |")  # DALI did not run
    assert f"- {bench.BARE}: not a tf.data pipeline" in bench.table(list(rows.values()))


def test_the_bare_loop_reads_every_file_or_raises_naming_its_list(small, tmp_path):
    _native_or_skip()
    profile, root = small
    xs, ys = sample.paths(profile, root)
    drain = bench.BareDrain(xs, ys, threads=2)
    n, seconds = drain()
    assert n == profile.count and seconds > 0
    short = tmp_path / "short.npy"
    short.write_bytes(Path(xs[0]).read_bytes()[:-4])  # a file the kernel doubts
    with pytest.raises(RuntimeError, match=r"/inputs: the native bench driver exited 0 and read"):
        bench.BareDrain([*xs, str(short)], [*ys, ys[0]])()


def test_with_native_off_the_bench_measures_the_graph_path_and_says_so(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("NPYIO_NATIVE", "0")
    assert bench.native_off() == "NPYIO_NATIVE=0"
    assert "native" not in bench.available_backends()
    results = bench.run(["small"], rounds=1, root=str(tmp_path), counts={"small": 8},
                        log=lambda m: None)  # fmt: skip
    names = {r.pipeline for r in results}
    assert bench.NPYIO in names and not names & {bench.NATIVE, bench.BARE}
    assert all(r.native_over == 0 for r in results)
    assert bench.native_table(results) == ""
    assert "npyio native not measured (NPYIO_NATIVE=0): graph path only" in capsys.readouterr().err


def native_results() -> list[bench.Result]:
    rows = [bench.Result("small", bench.NATIVE, 8, samples_per_s=300, native_over=1.0),
            *results(), bench.Result("small", bench.BARE, 8, samples_per_s=600)]  # fmt: skip
    for row in rows:
        row.native_over = 300 / row.samples_per_s
        row.npyio_over = 90 / row.samples_per_s
    return rows


def test_native_table_gives_issue_41s_ratios_per_profile():
    lines = bench.native_table(native_results()).splitlines()
    assert lines[2] == "| small | 300 | 90 | 600 | 3.00x | 3.33x | 0.50x | - |"
    assert bench.native_table(results()) == ""  # no native row


def test_peer_table_gives_native_and_graph_ratios_to_each_peer(monkeypatch):
    monkeypatch.setattr(peers, "PEERS", {"stub": STUB})
    rows = [*native_results(), bench.Result("small", STUB.name, 8, samples_per_s=150)]
    rows[-1].native_over, rows[-1].npyio_over = 2.0, 0.6
    lines = bench.peer_table(rows).splitlines()
    assert lines[0] == (
        "| profile | npyio native | npyio graph | floor (read only) | stub peer "
        "| native / Stub | npyio / Stub |"
    )
    assert lines[2] == "| small | 300 | 90 | 100 | 150 | 2.00x | 0.60x |"


def test_plot_hatches_the_bare_loop_too(tmp_path):
    fig = bench.plot(native_results(), str(tmp_path / "bench.png"))
    bars = {c.get_label(): c for c in fig.axes[0].containers}
    assert bars[f"{bench.BARE} **"].patches[0].get_hatch() == "xxx"
    assert bars[bench.NATIVE].patches[0].get_hatch() is None
    assert any("** not a tf.data pipeline: the native" in t.get_text() for t in fig.texts)


def test_the_help_of_cold_names_the_bare_loops_threads(capsys):
    from npyio.cli import main as cli

    with pytest.raises(SystemExit):
        cli.main(["bench", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert f"then reads with {bench.COLD_THREADS} threads" in help_text
