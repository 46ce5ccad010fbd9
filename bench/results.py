"""The recorded figures: one table per benchmark, each figure in one place.

Every measured figure that README.md and the guide quote lives in one table here:
``NAME.json`` in ``bench/results/`` holds the recorded runs, one row per run (and profile,
where a run has several), each with the date, machine, load and command it was measured with,
and ``NAME.md`` beside it is that table in Markdown, written from the JSON by this module and
never by hand. ``docs/gen/results.py`` copies the tables into the guide (`make docs`), and
``tests/bench/test_results.py`` fails on a figure that README.md or docs/performance.md quote
and no table holds.

A table's columns are the rows' keys (``date``, ``machine``, ``load``, ``command`` first, then
the others in the order they first appear), so a new profile is a new row and a new pipeline
(a native reader) a new column, as soon as the bench writes one.

Record a run of ``npyio bench`` (``make bench`` does)::

    npyio bench --json > run.json
    python bench/results.py npyio-bench run.json --load "idle" --command "npyio bench"

Another bench records its rows with `record`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"
#: What every row says first: when, where, under what load and how it was measured.
HEAD = ("date", "machine", "load", "command")
#: `npyio bench --json`'s pipelines that are references rather than rivals: their ratios are
#: the result's own fields (``vs_py_function`` ...), or none (the np.load loop is for scale).
_REFERENCES = {
    "py_function": "vs py_function",
    "floor (read only)": "vs floor",
    "from_generator": "vs best from_generator",
    "from_generator x4 interleave": "vs best from_generator",
}
_SCALE_ONLY = "np.load loop (no tf.data)"
_NPYIO = "npyio graph"
_NATIVE = "npyio native"
_BARE = "native bare read loop (no tf.data)"
_DALI = "DALI CPU fn.readers.numpy"
_GRAIN = "Grain, 16 threads of np.load"
#: The peers' pipeline names, shortened for a column's name.
_SHORT = {"DALI CPU fn.readers.numpy": "DALI", "Grain, 16 threads of np.load": "Grain"}


def load(name: str, root: Path = RESULTS) -> dict[str, Any]:
    """The recorded table ``name``: ``{"title", "about", "rows"}``."""
    return json.loads((root / f"{name}.json").read_text())


def names(root: Path = RESULTS) -> list[str]:
    """The tables recorded under ``root``, by name."""
    return sorted(p.stem for p in root.glob("*.json"))


def columns(rows: list[dict[str, str]]) -> list[str]:
    """`HEAD`, then every other key of ``rows`` in the order it first appears."""
    rest = [k for row in rows for k in row if k not in HEAD]
    return [*HEAD, *dict.fromkeys(rest)]


def markdown(table: dict[str, Any]) -> str:
    """The table as Markdown: its title and what it measures, then one line per row (a blank
    cell where a row has no figure of that column)."""
    cols = columns(table["rows"])
    lines = [
        f"# {table['title']}",
        "",
        table["about"],
        "",
        "Written by `bench/results.py` from the JSON beside this file: record a run there, "
        "never edit this table.",
        "",
        "| " + " | ".join(cols) + " |",
        "|" + "|".join("---" if c in HEAD else "---:" for c in cols) + "|",
    ]
    lines += ["| " + " | ".join(row.get(c, "") for c in cols) + " |" for row in table["rows"]]
    return "\n".join(lines) + "\n"


def write(name: str, table: dict[str, Any], root: Path = RESULTS) -> None:
    """Write ``table`` as ``name``'s JSON and its Markdown."""
    root.mkdir(parents=True, exist_ok=True)
    (root / f"{name}.json").write_text(json.dumps(table, indent=1, ensure_ascii=False) + "\n")
    (root / f"{name}.md").write_text(markdown(table))


def record(name: str, rows: list[dict[str, str]], root: Path = RESULTS) -> None:
    """Add ``rows`` (each with every key of `HEAD`) to the recorded table ``name``."""
    for row in rows:
        missing = [k for k in HEAD if not row.get(k)]
        if missing:
            raise ValueError(f"{root / name}.json: a row without {', '.join(missing)}: {row}")
    table = load(name, root)
    table["rows"] += rows
    write(name, table, root)


def ratio(value: float) -> str:
    """A ratio as the tables write it: three significant figures, ``x`` after."""
    return f"{value:.3g}x" if value < 100 else f"{value:.0f}x"


def rate(value: float) -> str:
    """Samples/s as the tables write them: a whole number with thousands separators."""
    return f"{value:,.0f}"


def native_cells(results: dict[str, dict[str, Any]]) -> dict[str, str]:
    """A profile's cells of the native reader, where it ran: its samples/s, the graph path's
    and the bare read loop's, and its ratio to py_function, to the floor, to the graph path of
    the same run (the before and after), to the bare loop, and to DALI and Grain (issues 41 and
    53's targets; each only where that pipeline ran)."""
    native = results.get(_NATIVE)
    if native is None:
        return {}
    cells = {"native samples/s": rate(native["samples_per_s"])}
    for name, column in ((_NPYIO, "graph samples/s"), (_BARE, "bare loop samples/s")):
        if name in results:
            cells[column] = rate(results[name]["samples_per_s"])
    for name, column in (
        ("py_function", "native vs py_function"),
        ("floor (read only)", "native vs floor"),
        (_NPYIO, "native vs graph"),
        (_BARE, "native vs bare loop"),
        (_DALI, "native vs DALI"),
        (_GRAIN, "native vs Grain"),
    ):
        if name in results and results[name]["samples_per_s"] > 0:
            cells[column] = ratio(native["samples_per_s"] / results[name]["samples_per_s"])
    return cells


def bench_rows(run: dict[str, Any], load: str, command: str) -> list[dict[str, str]]:
    """The rows of one ``npyio bench --json`` run: per profile, npyio graph's ratio to each
    other pipeline it ran (the references by their own fields, every other pipeline, a peer or
    a new reader, as a column of its own), then the native reader's cells (`native_cells`)."""
    head = {"date": run["date"], "machine": run["machine"], "load": load, "command": command}
    rows = []
    for profile in dict.fromkeys(r["profile"] for r in run["results"]):
        results = {r["pipeline"]: r for r in run["results"] if r["profile"] == profile}
        npyio = results.get(_NPYIO)
        if npyio is None:
            continue
        row = {**head, "profile": profile}
        for pipeline, result in results.items():
            if pipeline in (_NPYIO, _SCALE_ONLY, _NATIVE, _BARE):
                continue
            if pipeline in _REFERENCES:
                field = {"vs py_function": "vs_py_function", "vs floor": "vs_floor"}
                column = _REFERENCES[pipeline]
                row[column] = ratio(npyio[field.get(column, "vs_generator")])
            elif result["samples_per_s"] > 0:
                short = _SHORT.get(pipeline, pipeline)
                row[f"vs {short}"] = ratio(npyio["samples_per_s"] / result["samples_per_s"])
        rows.append(row | native_cells(results))
    return rows


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("table", help="the table to add to, e.g. npyio-bench")
    parser.add_argument("run", type=Path, help="the run: `npyio bench --json`'s output")
    parser.add_argument("--load", required=True, help="the machine's load during the run")
    parser.add_argument("--command", required=True, help="the command that measured it")
    args = parser.parse_args(argv)
    rows = bench_rows(json.loads(args.run.read_text()), args.load, args.command)
    record(args.table, rows)
    print(f"{len(rows)} rows added to {RESULTS / args.table}.md")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
