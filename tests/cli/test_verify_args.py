"""``npyio verify``'s arguments end to end: a missing side of INPUTS LABELS, INPUTS LABELS
checked as ``npyio.dataset`` reads them, and header checks (and a pack of local files) that run
without TensorFlow. (Unknown options and
the other usage errors: ``test_main.py``.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from npyio.cli import main as cli

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def pairs(tmp_path) -> tuple[Path, Path]:
    """x/ and y/: three good pairs, float32 (4, 3) and int64 ()."""
    x, y = tmp_path / "x", tmp_path / "y"
    x.mkdir()
    y.mkdir()
    for i in range(3):
        np.save(x / f"{i}.npy", np.full((4, 3), i, np.float32))
        np.save(y / f"{i}.npy", np.int64(i))
    return x, y


# --- a side of INPUTS LABELS that does not exist ---------------------------------------------
@pytest.mark.parametrize("side", ["INPUTS", "LABELS"])
def test_a_missing_side_is_one_line_naming_it(side, pairs, tmp_path, capsys):
    x, y = pairs
    missing = str(tmp_path / "nope")
    argv = [missing, str(y)] if side == "INPUTS" else [str(x), missing]
    code = cli.main(["verify", "-q", *argv])
    out = capsys.readouterr().out
    assert code == cli.EXIT_BAD_FILES
    problems = [line for line in out.splitlines() if ": " in line and not line[0].isspace()]
    problems = [line for line in problems if not line.startswith(("verified ", str(x), str(y)))]
    assert problems == [f"{missing}: no such file or directory ({side})"], out
    assert "unpaired" not in out  # the other side's files are not each reported
    assert out.rstrip().endswith("1 bad file"), out

    code = cli.main(["verify", "-q", "--json", *argv])
    doc = json.loads(capsys.readouterr().out)
    assert code == cli.EXIT_BAD_FILES
    assert doc["bad"] == [{"path": missing, "reason": f"no such file or directory ({side})"}]


def test_both_sides_missing(tmp_path, capsys):
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    assert cli.main(["verify", "-q", a, b]) == cli.EXIT_BAD_FILES
    out = capsys.readouterr().out
    assert out.splitlines()[:2] == [
        f"{a}: no such file or directory (INPUTS)",
        f"{b}: no such file or directory (LABELS)",
    ]


# --- no TensorFlow for header and size checks ----------------------------------------------
NO_TF = textwrap.dedent(
    """
    import json, sys
    sys.modules["tensorflow"] = None  # any import of TensorFlow now raises ImportError
    from npyio.cli.main import main
    x, y, bad, out = sys.argv[1:]
    codes = [
        main(["inspect", "-q", x]),
        main(["pack", "-q", x, y, "-o", out]),
        main(["verify", "-q", out]),
        main(["verify", "-q", x, y]),
        main(["verify", "-q", "--json", x, y, "--dtype", "float32", "--shape",
              "4,None", "--label-dtype", "int64", "--label-shape", ""]),
        main(["verify", "-q", bad, y]),
        main(["verify", "-q", "--each", x, y]),
    ]
    print(json.dumps({"codes": codes, "tf": "tensorflow" in sys.modules and
                      sys.modules["tensorflow"] is not None}))
    """
)


def test_inspect_verify_and_pack_of_local_files_do_not_import_tensorflow(pairs, tmp_path):
    x, y = pairs
    bad = tmp_path / "bad"
    bad.mkdir()
    for i in range(3):
        np.save(bad / f"{i}.npy", np.full((4, 3), i, np.float32))
    (bad / "1.npy").write_bytes((bad / "1.npy").read_bytes()[:-1])
    r = subprocess.run(
        [sys.executable, "-c", NO_TF, str(x), str(y), str(bad), str(tmp_path / "packed")],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout.strip().splitlines()[-1])
    assert result == {"codes": [0, 0, 0, 0, 0, 1, 0], "tf": False}, r.stdout
    assert "packed 3 rows into 1 shard" in r.stdout
    assert f"{bad / '1.npy'}: payload is shorter than the header says" in r.stdout


# --- verify INPUTS LABELS: what npyio.dataset(INPUTS, LABELS) reads, pairing included ----------
def test_inputs_and_labels_that_do_not_pair_are_refused_with_datasets_words(pairs, capsys):
    import npyio

    x, y = pairs
    (y / "1.npy").unlink()
    argv = [str(x), str(y)]
    with pytest.raises(ValueError) as refused:
        npyio.dataset(str(x), str(y))
    code = cli.main(["verify", "-q", *argv])
    out = capsys.readouterr().out
    assert code == cli.EXIT_BAD_FILES
    assert f"npyio.dataset(INPUTS, LABELS) refuses them: {refused.value}\n" in out
    assert f"{x}/1.npy: unpaired -- no file of this name in the labels directory {y}" in out
    assert "all good" not in out
    code = cli.main(["verify", "-q", "--json", *argv])
    doc = json.loads(capsys.readouterr().out)
    assert (code, doc["ok"], doc["refused"]) == (cli.EXIT_BAD_FILES, False, [str(refused.value)])


def test_two_paths_pair_and_each_checks_them_apart(pairs, capsys):
    x, y = pairs
    assert cli.main(["verify", "-q", str(x), str(y)]) == cli.EXIT_OK
    assert capsys.readouterr().out.rstrip().endswith("all good")
    z = y.parent / "z"
    z.mkdir()
    np.save(z / "other.npy", np.int64(0))  # a dataset of its own: no name in common with x
    assert cli.main(["verify", "-q", str(x), str(z)]) == cli.EXIT_BAD_FILES
    capsys.readouterr()
    assert cli.main(["verify", "-q", "--each", str(x), str(z)]) == cli.EXIT_OK


@pytest.mark.parametrize("command", ["verify", "inspect"])
def test_hidden_files_in_a_directory_are_left_out(pairs, capsys, command):
    x, y = pairs
    for d in (x, y):  # what macOS leaves beside each file: not a .npy file at all
        (d / "._0.npy").write_bytes(b"\x00\x05\x16\x07 AppleDouble")
    argv = [str(x), str(y)] if command == "verify" else [str(x)]
    assert cli.main([command, "-q", *argv]) == cli.EXIT_OK
    assert "._0.npy" not in capsys.readouterr().out
    assert cli.main([command, "-q", str(x / "._0.npy")]) == cli.EXIT_BAD_FILES  # named: read


# --- the spec: npyio.dataset's plan, words included --------------------------------------------
@pytest.mark.parametrize("form", ["INPUTS LABELS", "one file"])
def test_a_dtype_the_files_contradict_is_refused_in_datasets_words(pairs, capsys, form):
    """The spec comes from npyio.dataset's own plan: a file named on its own is checked against
    ``--dtype`` as ``npyio.dataset(FILE, dtype=...)`` checks it, and with labels the cast that
    the error suggests maps ``(x, y)``, as ``npyio.dataset(INPUTS, LABELS)`` says."""
    import npyio
    from npyio.errors import NpyFormatError

    x, y = pairs
    sources = [str(x), str(y)] if form == "INPUTS LABELS" else [str(x / "0.npy")]
    with pytest.raises(NpyFormatError) as refused:
        npyio.dataset(*sources, dtype="float64", batch_size=None)
    code = cli.main(["verify", "-q", *sources, "--dtype", "float64"])
    out = capsys.readouterr().out
    assert code == cli.EXIT_BAD_FILES
    assert str(refused.value) in out.splitlines(), out
    assert out.rstrip().endswith("1 file npyio.dataset would refuse"), out
