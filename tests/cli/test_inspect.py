"""`npyio.cli.inspect`: ``npyio inspect``'s options, its rows and JSON of good files, the bad
files on stderr with exit 1. (End to end in a real process: ``test_main_end_to_end.py``.)"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from npyio.cli import main as cli
from tests.cli.test_main import parse


def test_inspect_options():
    args = parse("inspect", "a", "b", "-s", "--json", "-j", "2", "-q")
    assert args.paths == ["a", "b"]
    assert (args.summary, args.json, args.jobs, args.quiet) == (True, True, 2, True)
    assert args.run is cli.INSPECT.run


def test_inspect_prints_nothing_when_there_is_nothing_to_show(capsys):
    # inspect --summary of a single file prints no table and no summary: not even a newline
    code = cli.main(["inspect", "-q", "-s", os.devnull])
    captured = capsys.readouterr()
    assert code == cli.EXIT_BAD_FILES
    assert captured.out == ""
    assert captured.err.startswith(f"npyio inspect: {os.devnull}: ")


def test_inspect_lists_good_files_and_names_bad_ones(tmp_path, capsys):
    np.save(tmp_path / "a.npy", np.zeros((2, 3), ">f4"))
    np.save(tmp_path / "b.npy", np.arange(4, dtype=np.int16))
    (tmp_path / "c.npy").write_bytes(b"not npy")
    code = cli.main(["inspect", "-q", "--json", str(tmp_path)])
    captured = capsys.readouterr()
    assert code == cli.EXIT_BAD_FILES
    doc = json.loads(captured.out)
    got = {Path(f["path"]).name: (f["descr"], f["shape"]) for f in doc["files"]}
    assert got == {"a.npy": (">f4", [2, 3]), "b.npy": ("<i2", [4])}
    assert [Path(b["path"]).name for b in doc["bad"]] == ["c.npy"]
    assert captured.err.startswith(f"npyio inspect: {tmp_path / 'c.npy'}: ")
    (tmp_path / "c.npy").unlink()
    assert cli.main(["inspect", "-q", str(tmp_path)]) == cli.EXIT_OK
    assert "a.npy" in capsys.readouterr().out
