"""bench/ignore_errors.py: its three pipelines run on a few files and the table names each with
its rate and its ratio to the default (the figures are the benchmark's, not asserted here)."""

from __future__ import annotations

import sys

from tests.bench import load


def test_the_table_has_each_pipeline(monkeypatch, capsys):
    bench = load("ignore_errors")
    argv = ["ignore_errors.py", "--files", "24", "--bytes", "64", "--batch", "8", "--rounds", "1"]
    monkeypatch.setattr(sys, "argv", [*argv, "--epochs", "1"])
    bench.main()
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "24 files of 64 B, batch 8, 1 rounds"
    names = [line[:20].strip() for line in lines[1:]]
    assert names == ["default", "ignore_errors", "ignore_errors graph"]
    assert "1.00x" in lines[1]
