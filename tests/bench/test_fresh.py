"""bench/fresh.py: each variant runs once per round in a process of its own, the order rotated
each round, and a failing child is named with its stderr."""

import os

import pytest

from tests.bench import load

CHILD = """
import json, os, sys
args = sys.argv[sys.argv.index("--child") + 1:]
if args[0] == "bad":
    sys.exit("no such variant")
print("noise")
print(json.dumps({"args": args, "pid": os.getpid()}))
"""


def test_variants_run_in_fresh_processes_in_rotated_order(tmp_path):
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    runs = load("fresh").interleaved(str(script), [("a", "x"), ("b", "y")], 2, ["--n", "3"])
    assert [r["args"] for r in runs] == [
        ["a", "x", "--n", "3"], ["b", "y", "--n", "3"], ["b", "y", "--n", "3"],
        ["a", "x", "--n", "3"],
    ]  # fmt: skip
    assert len({r["pid"] for r in runs} | {os.getpid()}) == 5


def test_a_failing_child_is_named_with_its_stderr(tmp_path):
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    with pytest.raises(SystemExit, match=r"bad failed:\nno such variant"):
        load("fresh").interleaved(str(script), [("bad",)], 1)
