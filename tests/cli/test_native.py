"""``npyio native``: the status it prints, and ``--build``'s exit status where nothing can be
built."""

from __future__ import annotations

import json

from npyio._native import library
from npyio.cli import main as cli
from npyio.cli.native import status_lines


def test_status_lines_say_why_not():
    status = library.NativeStatus(
        "required", False, "/c/k/npyio_native.so", "not built yet", "k", False
    )
    assert status_lines(status) == [
        "native reader: not active",
        "  mode:    required (NPYIO_NATIVE=1: an error where it cannot be had)",
        "  library: /c/k/npyio_native.so (not built)",
        "  key:     k",
        "  why not: not built yet",
    ]
    off = library.NativeStatus("off", False, None, "no C++ compiler on PATH", "", False)
    assert status_lines(off)[0] == "native reader: off"
    assert status_lines(off)[-1] == "  why not: no C++ compiler on PATH"


def test_build_without_a_compiler_exits_1_with_the_reason(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("CXX", "")
    monkeypatch.setenv("NPYIO_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("NPYIO_NATIVE", raising=False)
    assert cli.main(["native", "--build", "--json"]) == cli.EXIT_BAD_FILES
    out, err = capsys.readouterr()
    assert "npyio native: npyio's native reader: no C++ compiler on PATH" in err
    assert json.loads(out) == {
        "mode": "auto",
        "available": False,
        "library": None,
        "reason": "no C++ compiler on PATH: install g++ and run `npyio native --build`",
        "key": "",
        "built": False,
    }
    assert cli.main(["native"]) == cli.EXIT_OK
    assert "native reader: not active" in capsys.readouterr().out
