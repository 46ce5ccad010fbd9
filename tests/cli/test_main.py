"""``npyio.cli.main``: the parser (help, usage errors) and how ``main`` runs a command. The
argument types and how a command runs for a terminal: ``test_args.py``.

The commands' outputs are tested end to end in ``test_main_end_to_end.py``,
``test_verify_args.py`` and ``test_verify_agreement.py``.
"""

from __future__ import annotations

import argparse
import os

import numpy as np
import pytest

from npyio.cli import main as cli
from npyio.cli import sample


# --- the parser -----------------------------------------------------------------------------
def parse(*argv: str) -> argparse.Namespace:
    return cli.build_parser().parse_args(list(argv))


def test_commands_are_listed_in_order(capsys):
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    out = capsys.readouterr().out
    positions = [out.index(f"    {c.name} ") for c in cli.COMMANDS]
    assert positions == sorted(positions)
    assert [c.name for c in cli.COMMANDS] == [
        "demo",
        "bench",
        "inspect",
        "verify",
        "pack",
        "native",
    ]


def test_verify_defaults():
    args = parse("verify", "data")
    assert args.paths == ["data"]
    assert args.dtype is None and args.shape is None and args.each is False
    assert (args.full, args.json, args.quiet, args.allow_mixed) == (False, False, False, False)
    assert args.jobs == min(32, (os.cpu_count() or 1) + 4)
    assert args.run is cli.VERIFY.run


def test_verify_options():
    args = parse(
        "verify", "-q", "-j", "3", "x", "y", "--dtype", "float32", "--shape",
        "4,None", "--label-dtype", "int64", "--label-shape", "", "--full", "--json",
    )  # fmt: skip
    assert args.paths == ["x", "y"]
    assert (args.dtype, args.shape) == (np.dtype("float32"), (4, None))
    assert (args.label_dtype, args.label_shape) == (np.dtype("int64"), ())
    assert (args.jobs, args.quiet, args.full, args.json) == (3, True, True, True)


def test_bench_and_demo_defaults_come_from_the_profiles():
    args = parse("bench")
    # No INPUTS: the profiles' bench, every profile (None: bench.command's default, tested there)
    assert args.sources == [] and args.profiles is None
    assert (args.sample, args.batch_size, args.pack_dir) == (None, None, None)
    assert (args.rounds, args.count, args.cache, args.json, args.plot) == (
        5,
        None,
        None,
        False,
        None,
    )
    args = parse("demo")
    assert (args.count, args.batch_size, args.cache) == (sample.DEMO.count, 8, None)


def test_bench_help_lists_the_profiles_default_counts(capsys):
    with pytest.raises(SystemExit):
        cli.main(["bench", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    counts = " ".join(f"{name}={p.count}" for name, p in sample.PROFILES.items())
    assert f"(defaults: {counts})" in out
    assert "{small,medium,large}" in out


@pytest.mark.parametrize(
    "command",
    [[], ["inspect"], ["verify"], ["demo"], ["bench"], ["pack"]],
    ids=["npyio", "inspect", "verify", "demo", "bench", "pack"],
)
def test_help_has_examples(command, capsys):
    with pytest.raises(SystemExit) as info:
        cli.main([*command, "--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert "examples:\n  npyio " in out
    if command in (["inspect"], ["verify"]):
        assert "exit status:" in out


@pytest.mark.parametrize(
    "spec", [cli.DEMO, cli.BENCH, cli.INSPECT, cli.VERIFY], ids=lambda spec: spec.name
)
def test_epilog_lists_the_examples_then_the_exit_policy(spec):
    lines = spec.epilog().splitlines()
    assert lines[0] == "examples:"
    assert lines[1 : 1 + len(spec.examples)] == [f"  {e}" for e in spec.examples]
    assert ("exit status:" in lines) is spec.exit_policy


@pytest.mark.parametrize(
    "argv",
    [
        ["verify"],
        ["verify", "x", "--jobs", "0"],
        ["inspect"],
        ["verify", "--pairs", "x", "y"],
        ["inspect", "x", "--frobnicate"],
    ],
    # --pairs INPUTS LABELS, once kept from earlier versions, is gone: two PATHs say it
    ids=["verify-nothing", "jobs-0", "inspect-nothing", "pairs-is-gone", "unknown-option"],
)
def test_usage_errors_exit_2(argv, capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(argv)
    assert info.value.code == cli.EXIT_USAGE
    assert "error:" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv",
    [
        ["verify", "--bogus"],
        ["verify", "x", "--bogus"],
        ["verify", "x", "y", "--bogus"],
        ["inspect", "x", "--bogus"],
    ],
    ids=["verify", "verify-path", "verify-inputs-labels", "inspect"],
)
def test_unknown_option_prints_the_commands_usage(argv, capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(argv)
    assert info.value.code == cli.EXIT_USAGE
    err = capsys.readouterr().err
    assert err.startswith(f"usage: npyio {argv[0]} "), err
    assert f"npyio {argv[0]}: error: unrecognized arguments: --bogus" in err


def test_no_command_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as info:
        cli.main([])
    assert info.value.code == cli.EXIT_USAGE
    assert "the following arguments are required: COMMAND" in capsys.readouterr().err


# --- running a command ----------------------------------------------------------------------
def test_main_runs_the_command_with_its_start_time(monkeypatch):
    seen = []

    def probe(args: argparse.Namespace) -> int:
        seen.append(args)
        return 7

    monkeypatch.setattr(
        cli, "COMMANDS", (cli.CommandSpec("probe", "h", "d", ("npyio probe",), (), probe),)
    )
    assert cli.main(["probe"]) == 7
    (args,) = seen
    assert args.command == "probe" and isinstance(args._started, float)
    assert os.environ["TF_CPP_MIN_LOG_LEVEL"]
