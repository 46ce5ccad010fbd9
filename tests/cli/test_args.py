"""`npyio.cli.args`: what the commands share: the argument types (each refusal a usage error
that says what was expected), running a command's module only when it runs (`lazy`), and a
command run for a terminal (`for_terminal`: Ctrl-C and a closed pipe end quietly, stdout is
flushed before it returns)."""

from __future__ import annotations

import argparse
import io
import os
import sys
import types

import numpy as np
import pytest

from npyio.cli import args as cli_args
from npyio.cli.args import EXIT_USAGE
from npyio.cli.main import main


# --- argument types -------------------------------------------------------------------------
@pytest.mark.parametrize("text", ["1", "32", " 7 "])
def test_positive_int(text):
    assert cli_args.positive_int(text) == int(text)


@pytest.mark.parametrize("text", ["0", "-3", "2.5", "many", ""])
def test_positive_int_refuses(text):
    with pytest.raises(argparse.ArgumentTypeError, match=f"positive integer, got {text!r}"):
        cli_args.positive_int(text)


@pytest.mark.parametrize(
    ("text", "shape"),
    [
        ("64,64,3", (64, 64, 3)),
        ("(64, 64, 3)", (64, 64, 3)),
        ("[10]", (10,)),
        ("10,", (10,)),
        ("None,3", (None, 3)),
        ("?,3", (None, 3)),
        ("-1,3", (None, 3)),
        ("", ()),
        ("()", ()),
    ],
    ids=["plain", "tuple", "list", "trailing-comma", "None", "?", "-1", "empty", "0-d"],
)
def test_shape_arg(text, shape):
    assert cli_args.shape_arg(text) == shape


@pytest.mark.parametrize("text", ["a,3", "3.5", "-2", "64x64"])
def test_shape_arg_refuses(text):
    with pytest.raises(argparse.ArgumentTypeError, match=r"expected a shape such as 64,64,3"):
        cli_args.shape_arg(text)


@pytest.mark.parametrize(
    ("text", "sizes"), [("64,64,64", (64, 64, 64)), ("(96, 96)", (96, 96)), ("[8]", (8,))]
)
def test_crop_arg(text, sizes):
    assert cli_args.crop_arg(text) == sizes


@pytest.mark.parametrize("text", ["", "0,4", "None,4", "4,-1", "4.5", "64x64"])
def test_crop_arg_refuses(text):
    with pytest.raises(argparse.ArgumentTypeError, match=r"expected a window's sizes such as"):
        cli_args.crop_arg(text)


def test_label_crop_arg():
    assert cli_args.label_crop_arg("same") == "same"
    assert cli_args.label_crop_arg("None") is None
    assert cli_args.label_crop_arg("32,32") == (32, 32)
    with pytest.raises(argparse.ArgumentTypeError, match=r"expected same, none or a window's"):
        cli_args.label_crop_arg("centre")


def test_dtype_arg():
    assert cli_args.dtype_arg("float32") == np.dtype("float32")
    assert cli_args.dtype_arg("int64") == np.dtype("int64")
    with pytest.raises(argparse.ArgumentTypeError, match="unsupported dtype 'zz'"):
        cli_args.dtype_arg("zz")


def test_size_arg():
    assert cli_args.size_arg("256MB") == 256 * 10**6
    assert cli_args.size_arg("64MiB") == 64 << 20
    assert cli_args.size_arg("1 kb") == 1000
    for bad in ("0", "12 parsecs", "-3", "MB"):
        with pytest.raises(argparse.ArgumentTypeError, match="positive size"):
            cli_args.size_arg(bad)


# --- running a command ----------------------------------------------------------------------
def test_lazy_imports_the_module_only_when_the_command_runs(monkeypatch):
    calls = []
    module = types.ModuleType("npyio.cli.fake")
    module.command = lambda args: calls.append(args) or 3  # type: ignore[attr-defined]
    run = cli_args.lazy("fake")  # nothing imported yet
    monkeypatch.setitem(sys.modules, "npyio.cli.fake", module)
    args = argparse.Namespace()
    assert run(args) == 3
    assert calls == [args]


def namespace(**kwargs: object) -> argparse.Namespace:
    return argparse.Namespace(**kwargs)


def test_for_terminal_passes_the_exit_status_through():
    assert cli_args.for_terminal(lambda args: 1)(namespace()) == 1


def test_for_terminal_ctrl_c_exits_130_without_a_traceback(capsys):
    def interrupted(args: argparse.Namespace) -> int:
        raise KeyboardInterrupt

    assert cli_args.for_terminal(interrupted)(namespace()) == cli_args.EXIT_INTERRUPTED == 130
    assert capsys.readouterr().err == "\ninterrupted\n"


@pytest.mark.parametrize("had_issues", [False, True])
def test_for_terminal_closed_pipe_ends_quietly(had_issues, monkeypatch, tmp_path):
    # stdout is pointed at devnull, so that Python's flush at exit is silent: give it a file
    # of its own, and check that it is the file's descriptor that now writes nowhere.
    target = open(tmp_path / "stdout", "w")  # noqa: SIM115
    monkeypatch.setattr(sys, "stdout", target)

    def closed(args: argparse.Namespace) -> int:
        args._had_issues = had_issues
        raise BrokenPipeError

    code = cli_args.for_terminal(closed)(namespace())
    assert code == (cli_args.EXIT_BAD_FILES if had_issues else cli_args.EXIT_OK)
    os.write(target.fileno(), b"after the pipe closed")
    target.close()
    assert (tmp_path / "stdout").read_text() == ""


def test_stdout_is_flushed_before_returning(monkeypatch):
    flushed = []

    class Stream(io.StringIO):
        def flush(self) -> None:
            flushed.append(True)

    monkeypatch.setattr(sys, "stdout", Stream())
    cli_args.for_terminal(lambda args: 0)(namespace())
    assert flushed


@pytest.mark.parametrize(
    "argv",
    [
        ["verify", ""],
        ["verify", "", "labels"],
        ["inspect", ""],
        ["bench", ""],
        ["pack", "", "-o", "out"],
        ["pack", "in", "-o", ""],
    ],
    ids=["verify", "verify-pair", "inspect", "bench", "pack-inputs", "pack-out"],
)
def test_an_empty_path_is_a_usage_error_not_a_traceback(argv, capsys):
    # a shell's unset "$DIR" expands to '': it names nothing
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == EXIT_USAGE
    assert "a path is empty ('')" in capsys.readouterr().err
