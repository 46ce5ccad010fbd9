"""``npyio demo``: what ``make demo`` runs, on a few pairs."""

from __future__ import annotations

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
    lines = [line.split() for line in out.splitlines() if "samples/s" in line]
    assert [line[0] for line in lines] == ["npyio", "py_function(np.load)"]
    assert all(line[1] == "20" for line in lines), lines
    assert "npyio / py_function: " in out
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
