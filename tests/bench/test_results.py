"""bench/results.py and docs/gen/results.py: each measured figure lives in one generated table,
the guide holds the tables as they are, and README.md and docs/performance.md quote no figure
that no table holds."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

from tests.bench import load

REPO = Path(__file__).resolve().parents[2]
#: The pages that quote measured figures (the others link to their own pages' figures).
QUOTING = ("README.md", "docs/performance.md")
#: A measured ratio as the pages write it: ``14.2x``, or a range ``0.42-0.52x`` (both ends).
RATIO = re.compile(r"(?<![\w.])(?:(\d+(?:\.\d+)?)-)?(\d+(?:\.\d+)?)x\b")


def gen_results():
    path = REPO / "docs" / "gen" / "results.py"
    spec = importlib.util.spec_from_file_location("npyio_docs_gen_results", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def figures(text: str) -> list[str]:
    """Every ratio ``text`` quotes, each end of a range on its own, as ``N.Nx``."""
    return [f"{n}x" for m in RATIO.finditer(text) for n in m.groups() if n is not None]


def recorded() -> set[str]:
    results = load("results")
    return {
        figure
        for name in results.names()
        for row in results.load(name)["rows"]
        for key, cell in row.items()
        if key not in results.HEAD
        for figure in figures(cell)
    }


def unrecorded(text: str) -> list[str]:
    """The figures of ``text``, outside the tables it includes, that no table holds."""
    outside = gen_results().MARKS.sub("", text)
    held = recorded()
    return [f for f in figures(outside) if f not in held]


def test_figures_reads_ratios_and_both_ends_of_a_range():
    assert figures("14.2x faster, 0.42-0.52x DALI, 96x; 64x64x3 and 2x2 are shapes") == [
        "14.2x",
        "0.42x",
        "0.52x",
        "96x",
    ]


def test_a_figure_that_no_table_holds_is_found():
    assert unrecorded("npyio read at 14.2x py_function and 0.70x the floor") == []
    assert unrecorded("npyio read at 14.3x py_function, 0.42-0.98x DALI") == ["14.3x", "0.98x"]


@pytest.mark.parametrize("page", QUOTING)
def test_every_figure_a_page_quotes_is_in_a_generated_table(page):
    assert unrecorded((REPO / page).read_text()) == [], (
        f"{page} quotes figures that no table in bench/results/ holds: record the run there "
        "(bench/results.py) and quote it, or drop the figure"
    )


def test_every_table_is_written_from_its_runs():
    results = load("results")
    assert results.names(), "no recorded table in bench/results/"
    for name in results.names():
        table = results.load(name)
        md = (results.RESULTS / f"{name}.md").read_text()
        assert md == results.markdown(table), f"bench/results/{name}.md: not written from its JSON"
        for row in table["rows"]:
            assert all(row.get(k) for k in results.HEAD), f"{name}: a row without its run: {row}"


def test_the_pages_hold_the_tables_as_they_are():
    gen = gen_results()
    stale = [p.name for p in gen.PAGES if gen.fill(p.read_text()) != p.read_text()]
    assert not stale, f"{stale}: run docs/gen/results.py (make docs) and commit what it changed"
    assert "<!-- results: npyio-bench -->" in (REPO / "docs" / "performance.md").read_text()


def test_a_bench_run_is_rows_per_profile_and_a_new_pipeline_is_a_new_column(tmp_path):
    results = load("results")
    run = json.loads((REPO / "docs" / "bench" / "run.json").read_text())
    npyio = next(r for r in run["results"] if r["pipeline"] == "npyio graph")
    later = {**npyio, "pipeline": "npyio later", "samples_per_s": npyio["samples_per_s"] / 2}
    run["results"].append(later)
    rows = results.bench_rows(run, "idle", "`npyio bench`")
    assert [r["profile"] for r in rows] == ["small", "medium"]
    small = rows[0]
    assert small["date"] == run["date"] and small["machine"] == run["machine"]
    assert small["vs py_function"] == results.ratio(npyio["vs_py_function"])
    assert small["vs floor"] == results.ratio(npyio["vs_floor"])
    assert small["vs npyio later"] == "2x"
    assert "vs npyio later" not in rows[1]
    assert not any(k.startswith("native") for k in small)  # no native reader in that run

    (tmp_path / "t.json").write_text(json.dumps({"title": "T", "about": "A.", "rows": []}))
    results.record("t", rows, tmp_path)
    md = (tmp_path / "t.md").read_text()
    assert md.splitlines()[6].endswith("| vs npyio later |")
    assert md == results.markdown(results.load("t", tmp_path))
    with pytest.raises(ValueError, match="without load"):
        results.record("t", [{**small, "load": ""}], tmp_path)


def test_the_native_readers_cells_are_its_rates_and_its_ratios_to_each_target():
    results = load("results")
    run = json.loads((REPO / "docs" / "bench" / "run.json").read_text())
    small = [r for r in run["results"] if r["profile"] == "small"]
    graph = next(r for r in small if r["pipeline"] == "npyio graph")
    floor = next(r for r in small if r["pipeline"] == "floor (read only)")
    rate = graph["samples_per_s"]
    extra = [
        {**graph, "pipeline": "npyio native", "samples_per_s": rate * 2.5},
        {**graph, "pipeline": "native bare read loop (no tf.data)", "samples_per_s": rate * 5},
        {**graph, "pipeline": "DALI CPU fn.readers.numpy", "samples_per_s": rate},
        {**graph, "pipeline": "Grain, 16 threads of np.load", "samples_per_s": rate / 4},
    ]
    run["results"] = small + extra
    (row,) = results.bench_rows(run, "idle", "`npyio bench`")
    assert row["native samples/s"] == f"{rate * 2.5:,.0f}"
    assert row["graph samples/s"] == f"{rate:,.0f}"
    assert row["bare loop samples/s"] == f"{rate * 5:,.0f}"
    assert row["native vs graph"] == "2.5x" and row["native vs DALI"] == "2.5x"
    assert row["native vs Grain"] == "10x" and row["vs Grain"] == "4x"
    assert row["native vs bare loop"] == "0.5x"
    assert row["native vs floor"] == results.ratio(rate * 2.5 / floor["samples_per_s"])
    py_function = next(r for r in small if r["pipeline"] == "py_function")["samples_per_s"]
    assert row["native vs py_function"] == results.ratio(rate * 2.5 / py_function)
    assert row["vs DALI"] == "1x"  # the graph path's, as before
    assert "vs npyio native" not in row and "vs native bare read loop (no tf.data)" not in row
    # Without DALI (not installed), its column stays empty.
    run["results"] = small + extra[:2]
    (row,) = results.bench_rows(run, "idle", "`npyio bench`")
    assert "native vs DALI" not in row and row["native vs bare loop"] == "0.5x"
    assert "native vs Grain" not in row
