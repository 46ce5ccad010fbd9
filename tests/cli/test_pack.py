"""``npyio pack`` and ``npyio verify OUT``: the command, its progress and summary, and the
verification of a packed directory against its index (damaged and missing shards named)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest

import npyio
from npyio.cli import main as cli
from npyio.cli import pack as pack_cli
from npyio.cli.progress import Progress

N = 23


@pytest.fixture
def tree(tmp_path) -> Path:
    for side in ("x", "y"):
        (tmp_path / side).mkdir()
    for i in range(N):
        np.save(tmp_path / "x" / f"{i:03d}.npy", np.full((2, 3), i, "f4"))
        np.save(tmp_path / "y" / f"{i:03d}.npy", np.int64(i))
    return tmp_path


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_pack_defaults():
    args = cli.build_parser().parse_args(["pack", "a", "-o", "out"])
    assert (args.inputs, args.labels, args.out) == ("a", None, "out")
    assert args.shard_size == 256 * 10**6
    assert (args.shuffle, args.seed, args.overwrite, args.from_directory) == (
        False,
        None,
        False,
        False,
    )


def test_pack_json_summary_then_verify(capsys, tree):
    out = str(tree / "p")
    code, stdout, _ = run(
        capsys,
        "pack",
        str(tree / "x"),
        str(tree / "y"),
        "-o",
        out,
        "--shard-size",
        "100",
        "-q",
        "--json",
    )
    assert code == 0
    summary = json.loads(stdout)
    assert (summary["rows"], summary["out"]) == (N, out)
    assert summary["shards"] == -(-N // 4)  # 100 bytes hold 4 rows of 24 bytes
    assert [p["name"] for p in summary["parts"]] == ["inputs", "labels"]
    assert summary["bytes"] == sum(f.stat().st_size for f in Path(out).glob("*-of-*.npy"))
    ys = [int(y) for _, y in npyio.dataset(out, batch_size=None)]
    assert ys == list(range(N))
    code, stdout, _ = run(capsys, "verify", out)
    assert code == 0
    assert stdout.strip().endswith("sizes and SHA-256: all good")
    assert f"verified pack {out}: {N} rows" in stdout


def test_pack_refusal_is_one_line_and_exit_1(capsys, tree):
    np.save(tree / "x" / "005.npy", np.zeros((2, 4), "f4"))
    code, stdout, stderr = run(capsys, "pack", str(tree / "x"), "-o", str(tree / "p"), "-q")
    assert code == 1 and stdout == ""
    assert f"npyio pack: {tree / 'x' / '005.npy'}: shape mismatch" in stderr
    assert not (tree / "p").exists()


def test_verify_names_damaged_and_missing_shards(capsys, tree):
    out = tree / "p"
    npyio.pack(str(tree / "x"), str(tree / "y"), out=str(out), shard_size=100)
    flipped = out / "inputs-00001-of-00006.npy"
    data = bytearray(flipped.read_bytes())
    data[-1] ^= 0xFF
    flipped.write_bytes(bytes(data))
    (out / "labels-00003-of-00006.npy").unlink()
    cut = out / "order-00002-of-00006.npy"
    cut.write_bytes(cut.read_bytes()[:-8])
    code, stdout, _ = run(capsys, "verify", str(out))
    assert code == 1
    lines = stdout.splitlines()
    assert f"{flipped}: damaged shard -- its SHA-256 differs from the index's" in lines
    assert f"{out / 'labels-00003-of-00006.npy'}: missing shard (no such file)" in lines
    assert any(line.startswith(f"{cut}: damaged shard -- expected ") for line in lines)
    assert lines[-1].endswith("3 bad shard files")
    code, stdout, _ = run(capsys, "verify", "--json", str(out))
    doc = json.loads(stdout)
    assert code == 1 and doc["ok"] is False
    assert {b["path"] for b in doc["packs"][0]["bad"]} == {
        str(flipped),
        str(out / "labels-00003-of-00006.npy"),
        str(cut),
    }


def test_verify_of_an_incomplete_pack_says_so(capsys, tree):
    out = tree / "p"
    npyio.pack(str(tree / "x"), out=str(out))
    (out / "npyio-pack.json").unlink()
    (out / "npyio-pack.incomplete").write_text("")
    code, stdout, _ = run(capsys, "verify", str(out))
    assert code == 1 and "incomplete pack" in stdout
    assert stdout.splitlines()[-1] == f"verified pack {out}: incomplete pack, nothing checked"
    assert "bad shard" not in stdout
    # inspect of the directory, or of its shards, names it incomplete too
    for path in (str(out), str(out / "inputs-*.npy")):
        code, stdout, stderr = run(capsys, "inspect", "-q", path)
        assert code == 1 and f"npyio inspect: {path}: incomplete pack" in stderr
        assert "inputs-00000" not in stdout


def test_progress_counts_every_row(tree):
    stream = io.StringIO()
    bar = Progress(0, "packing", stream)
    npyio.pack(str(tree / "x"), out=str(tree / "p"), progress=pack_cli.progress_callback(bar))
    bar.close()
    assert bar.done == N and bar.total == N
    assert stream.getvalue().splitlines()[-1] == f"packing: {N}/{N}"  # not a terminal: lines
