"""``npyio demo``: what ``make demo`` runs, on a few pairs."""

from __future__ import annotations

import os
import re

from npyio.cli import demo
from npyio.cli import main as cli


def test_demo_end_to_end(tmp_path, capsys):
    # What `make demo` runs, on 20 pairs: generates the data once, streams it, compares.
    argv = ["demo", "--count", "20", "--cache", str(tmp_path)]
    assert cli.main(argv) == 0
    first = capsys.readouterr()
    out = first.out
    assert "writing 20 pairs" in first.err + first.out
    assert "dataset: 20 pairs in " in out
    assert "first batch: inputs (8, 64, 64, 3) float32, labels (8, 10) float32" in out
    lines = re.findall(r"^  (\S+(?: \S+)?) +([\d,]+) samples ", out, re.MULTILINE)
    native = demo.reader_line("native") in out
    names = ["npyio native", "npyio graph"] if native else ["npyio graph"]
    assert [name for name, _ in lines] == [*names, "py_function(np.load)"]
    assert all(n == "20" for _, n in lines), lines
    if native:
        assert re.search(r"^  npyio native / graph path: \d+\.\d\dx$", out, re.MULTILINE), out
    # the ratio names the load it was measured under (whatever its value)
    load = r"\d+ cores, 1-min load average \d+\.\d\d before the epochs, \d+\.\d\d after"
    assert re.search(rf"^  npyio / py_function: \d+\.\d\dx \({load}\)$", out, re.MULTILINE), out
    written = sorted(p.name for p in (tmp_path / "demo-64x64x3-n20" / "inputs").iterdir())
    assert len(written) == 20
    assert cli.main(argv) == 0  # the second run reuses the data
    again = capsys.readouterr()
    assert "writing" not in again.err + again.out


def test_demo_batch_size(tmp_path, capsys):
    assert cli.main(["demo", "--count", "5", "--batch-size", "2", "--cache", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "first batch: inputs (2, 64, 64, 3) float32, labels (2, 10) float32" in out
    assert "one epoch, batches of 2 " in out


def test_demo_load(monkeypatch):
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    assert demo.load(1.5, 10.0) == "2 cores, 1-min load average 1.50 before the epochs, 10.00 after"
    assert demo.load(None, None) == "2 cores, load average unknown"
    monkeypatch.setattr(os, "getloadavg", lambda: (2.25, 1.0, 0.5))
    assert demo._load_average() == 2.25

    def unavailable() -> tuple[float, float, float]:
        raise OSError("no load average")

    monkeypatch.setattr(os, "getloadavg", unavailable)
    assert demo._load_average() is None


def test_demo_says_which_reader_read(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("NPYIO_NATIVE", "0")
    assert cli.main(["demo", "--count", "5", "--cache", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "reader: graph (the native reader is off: NPYIO_NATIVE=0)\n" in out
    assert "npyio native" not in out and "  npyio graph " in out
