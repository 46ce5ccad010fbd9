"""Every example of the command line's help (``npyio --help`` and each command's) runs, on
sample data, and exits 0.

The examples are read from the help texts themselves, so a new one is run without being listed
here. Each runs in-process (``npyio.cli.main.main``) in a fresh copy of a small tree that has
what the examples name (``data/inputs``, ``data/labels``, ``data/labels.npy``,
``data/classes``); ``gs://bucket/`` becomes a ``ram://`` folder holding the same files, and a
``| jq '.KEY'`` is read as: the JSON on stdout has KEY. Two commands are made small, not
skipped: ``demo`` writes at most 24 pairs (its default is 10,000), and ``bench``'s measuring
(`npyio.cli.bench.run`, tested in ``test_bench.py``) returns a fixed result, so that its
arguments, table, JSON and plot are what runs here.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import shutil
import uuid
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from npyio.cli import bench, demo
from npyio.cli import main as cli

#: ``npyio ...  | jq '.KEY'``: the command, then the key.
_JQ = re.compile(r"^(?P<command>.*?)\s*\|\s*jq\s+'\.(?P<key>\w+)'$")


def help_examples() -> list[str]:
    """The example lines of ``npyio --help`` and of every command's ``--help``, each once."""
    parser = cli.build_parser()
    (commands,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    texts = [parser.format_help()] + [p.format_help() for p in commands.choices.values()]
    found: list[str] = []
    for text in texts:
        section = text.split("\nexamples:\n", 1)[1].split("\n\n", 1)[0]
        found += [line.strip() for line in section.splitlines()]
    return list(dict.fromkeys(found))


EXAMPLES = help_examples()


def _save_tree(root: str, n: int = 6) -> None:
    """``root/{inputs,labels}/000N.npy`` (float32 (4, 4), int64), through tf.io.gfile so that
    ``root`` may be a ``ram://`` folder."""
    for side in ("inputs", "labels"):
        tf.io.gfile.makedirs(f"{root}/{side}")
    for i in range(n):
        for side, value in (("inputs", np.full((4, 4), i, "f4")), ("labels", np.int64(i % 2))):
            with tf.io.gfile.GFile(f"{root}/{side}/{i:04d}.npy", "wb") as f:
                np.save(f, value)


@pytest.fixture(scope="module")
def sample(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("examples")
    _save_tree(str(root / "data"))
    np.save(root / "data" / "labels.npy", np.arange(6) % 2)
    for c in ("cat", "dog"):  # class folders of inputs
        (root / "data" / "classes" / c).mkdir(parents=True)
        for i in range(2):
            np.save(root / "data" / "classes" / c / f"{i:04d}.npy", np.full((4, 4), i, "f4"))
    return root


@pytest.fixture
def small_demo_and_bench(monkeypatch, tmp_path):
    monkeypatch.setenv("NPYIO_CACHE", str(tmp_path / "cache"))
    real_demo = demo.command

    def few_pairs(args: argparse.Namespace) -> int:
        args.count = min(args.count, 24)
        return real_demo(args)

    def measured(profiles: list[str], **kwargs: object) -> list[bench.Result]:
        assert set(profiles) <= set(bench.sample.PROFILES)
        return [
            bench.Result(name, pipeline, 8, samples_per_s=100.0 * v, mb_per_s=v, vs_floor=v,
                         vs_py_function=v, vs_generator=v, peak_rss_mib=700)
            for name in profiles
            for pipeline, v in (("npyio graph", 0.8), (bench.FLOOR, 1.0))
        ]  # fmt: skip

    monkeypatch.setattr(demo, "command", few_pairs)
    monkeypatch.setattr(bench, "run", measured)


def test_every_command_has_examples():
    assert {line.split()[1] for line in EXAMPLES} == {c.name for c in cli.COMMANDS}


@pytest.mark.parametrize("example", EXAMPLES)
def test_example_runs(example, sample, tmp_path, monkeypatch, capsys, small_demo_and_bench):
    tree = tmp_path / "tree"
    shutil.copytree(sample, tree)
    monkeypatch.chdir(tree)
    bucket = f"ram://npyio-examples-{uuid.uuid4().hex}"
    for d in (bucket, f"{bucket}/dataset"):
        _save_tree(d)
    m = _JQ.match(example)
    command = m.group("command") if m else example
    command = command.replace("gs://bucket", bucket).replace("/tmp/npyio-cache", str(tmp_path))
    argv = shlex.split(command)
    assert argv[0] == "npyio"
    if argv[1] == "native":  # the session's library (tests/native/conftest.py), built once
        monkeypatch.setenv("NPYIO_CACHE", str(Path(__file__).parents[2] / ".cache/native-tests"))
    code = cli.main(argv[1:])
    out, err = capsys.readouterr()
    assert code == cli.EXIT_OK, f"{example}\n{out}\n{err}"
    if m:
        assert m.group("key") in json.loads(out), out
