"""The command line keeps TensorFlow's start-up log off stderr (`npyio.cli.quiet`) unless the
user set ``TF_CPP_MIN_LOG_LEVEL``; npyio's own lines stay."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np

from npyio.cli import quiet

ROOT = Path(__file__).resolve().parents[2]
#: What TensorFlow logs as it starts: its C++ log lines, absl's note before them.
TF_LOG = re.compile(r"^[IWEF]\d{4} |cudart|cuInit|absl::InitializeLog", re.MULTILINE)


def test_log_lines_are_dropped_and_anything_else_kept():
    text = (
        "WARNING: All log messages before absl::InitializeLog() is called are written to STDERR\n"
        "I0000 00:00:1796310073.862253    6045 cudart_stub.cc:31] Could not find cuda drivers\n"
        "E0000 00:00:1796310082.131334    6045 cuda_platform.cc:52] failed call to cuInit: 303\n"
        "W1203 15:04:05.123456    6045 port.cc:153] a warning\n"
        "some.py:3: UserWarning: a Python warning\n"
        "I0000 is not a log line without its source\n"
    )
    assert quiet.drop_log_lines(text) == (
        "some.py:3: UserWarning: a Python warning\nI0000 is not a log line without its source\n"
    )


def test_a_level_the_user_set_is_kept(monkeypatch):
    monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", "0")
    assert quiet.quiet_tensorflow() is False
    assert os.environ["TF_CPP_MIN_LOG_LEVEL"] == "0"


def test_commands_that_import_tensorflow_print_no_start_up_log(tmp_path):
    """``verify --full`` decodes through TensorFlow: its stderr holds npyio's progress lines and
    none of TensorFlow's (``cudart_stub.cc``, ``cuInit`` on a machine without a GPU)."""
    for i in range(2):
        np.save(tmp_path / f"{i}.npy", np.full((2, 2), i, np.float32))
    env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    argv = ["verify", "--full", str(tmp_path / "0.npy"), str(tmp_path / "1.npy")]
    r = subprocess.run(
        [sys.executable, "-m", "npyio", *argv],
        env={**env, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    assert TF_LOG.search(r.stderr) is None, r.stderr
    assert "checking: 2/2" in r.stderr and "decoding: 2/2" in r.stderr  # npyio's own lines
    assert r.stdout.rstrip().endswith("all good")
