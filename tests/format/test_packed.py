"""A pack's index is input: an index that lies is refused, naming the index and the entry, by
`npyio.dataset`, ``npyio verify`` and ``npyio inspect`` alike (issue #35's table is the first
six cases), before anything is sized by it."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import tensorflow as tf

import npyio
from npyio._format.packed import INDEX
from npyio.cli import main as cli

N = 24  # rows: one file each, 16x16 float32 as in the issue

Edit = Callable[[dict[str, Any]], None]


@pytest.fixture(scope="module")
def valid(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("valid")
    (root / "x").mkdir()
    for i in range(N):
        np.save(root / "x" / f"{i:03d}.npy", np.full((16, 16), i, "f4"))
    npyio.pack(str(root / "x"), np.arange(N) % 3, out=str(root / "p"))
    return root / "p"


def edited(valid: Path, tmp_path: Path, edit: Edit) -> str:
    out = tmp_path / "p"
    shutil.copytree(valid, out)
    doc = json.loads((out / INDEX).read_text())
    edit(doc)
    (out / INDEX).write_text(json.dumps(doc))
    return str(out)


def _set_rows(n: int, names: bool) -> Edit:
    def edit(doc: dict[str, Any]) -> None:
        doc["rows"] = doc["shards"][0]["rows"] = n
        if names:
            doc["names"] = doc["names"][:n]

    return edit


def _set(path: tuple, value: Any) -> Edit:
    def edit(doc: dict[str, Any]) -> None:
        node = doc
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value

    return edit


# (what the index says, the edit, the entry the error names)
LIES = [
    ("a billion rows", _set_rows(10**9, names=False), "names"),
    ("one row fewer", _set_rows(N - 1, names=True), "shards[0].rows"),
    ("absolute name", _set(("shards", 0, "files", 0, "name"), "/etc/x.npy"), "files[0].name"),
    ("parent name", _set(("shards", 0, "files", 0, "name"), "../x/00000.npy"), "files[0].name"),
    ("object dtype", _set(("parts", 0, "dtype"), "|O"), "parts[0].dtype"),
    ("ten names", lambda doc: doc.update(names=doc["names"][:10]), "names"),
    ("scheme name", _set(("shards", 0, "files", 1, "name"), "gs://b/x.npy"), "files[1].name"),
    ("empty name", _set(("shards", 0, "files", 2, "name"), ""), "files[2].name"),
    (
        "duplicate name",
        lambda doc: doc["shards"][0]["files"][1].update(name=doc["shards"][0]["files"][0]["name"]),
        "files[1].name",
    ),
    ("files swapped", lambda doc: doc["shards"][0]["files"].reverse(), "files[0].name"),
    ("wrong dtype", _set(("parts", 0, "dtype"), "<f8"), "parts[0].dtype"),
    ("wrong shape", _set(("parts", 0, "shape"), [16, 8]), "parts[0].shape"),
    ("order dtype", _set(("parts", 2, "dtype"), "<i4"), "parts[2]"),
    ("missing part", lambda doc: doc["parts"].pop(1), "parts"),
    ("bytes off by one", _set(("shards", 0, "files", 0, "bytes"), 1), "files[0].bytes"),
    ("negative rows", _set_rows(-1, names=False), "shards[0].rows"),
    ("rows as text", _set(("rows",), "24"), "rows"),
]
IDS = [lie[0] for lie in LIES]


@pytest.mark.parametrize(("edit", "entry"), [lie[1:] for lie in LIES], ids=IDS)
def test_dataset_refuses_an_index_that_lies(valid, tmp_path, edit, entry):
    out = edited(valid, tmp_path, edit)
    with pytest.raises(npyio.PackIndexError) as e:
        npyio.dataset(out, batch_size=8)
    assert str(e.value).startswith(f"{out}/{INDEX}: ")
    assert entry in str(e.value)
    assert e.value.path == f"{out}/{INDEX}"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(("edit", "entry"), [lie[1:] for lie in LIES[:6]], ids=IDS[:6])
def test_verify_and_inspect_say_what_dataset_says(valid, tmp_path, capsys, edit, entry):
    out = edited(valid, tmp_path, edit)
    with pytest.raises(npyio.PackIndexError) as e:
        npyio.dataset(out)
    said = str(e.value).removeprefix(f"{out}/{INDEX}: ")
    if said.startswith(out + "/"):  # a shard's problem: verify prints each shard's line
        said = re.sub(r" \(and \d+ more shard files\)$", "", said)
    code, stdout, _ = run(capsys, "verify", out)
    assert code == 1 and said in stdout
    code, _, stderr = run(capsys, "inspect", out)
    assert code == 1 and f"npyio inspect: {e.value}" in stderr.splitlines()


def test_an_index_that_lies_about_a_remote_pack_is_refused(valid, tmp_path):
    remote = f"ram://{tmp_path.name}/p"
    tf.io.gfile.makedirs(remote)
    for f in valid.iterdir():
        tf.io.gfile.copy(str(f), f"{remote}/{f.name}")
    assert len(list(npyio.dataset(remote, batch_size=8))) == 3
    doc = json.loads((valid / INDEX).read_text())
    doc["shards"][0]["files"][0]["name"] = "../p/" + doc["shards"][0]["files"][0]["name"]
    tf.io.gfile.remove(f"{remote}/{INDEX}")  # (ram:// does not truncate on "w")
    with tf.io.gfile.GFile(f"{remote}/{INDEX}", "w") as f:
        f.write(json.dumps(doc))
    with pytest.raises(npyio.PackIndexError, match=r"shards\[0\]\.files\[0\]\.name"):
        npyio.dataset(remote)


def test_an_index_that_agrees_gives_the_packed_rows(valid, tmp_path):
    # extra keys are not read, and key order does not matter
    out = edited(valid, tmp_path, lambda doc: doc.update(comment="x"))
    rows = np.concatenate([x for x, _ in npyio.dataset(out, batch_size=8).as_numpy_iterator()])
    np.testing.assert_array_equal(rows[:, 0, 0], np.arange(N))


def test_names_are_the_paths_as_given(valid):
    # relative sources give relative names; nothing is made absolute (docs/packing.md, "Names")
    names = json.loads((valid / INDEX).read_text())["names"]
    assert names == [str(valid.parent / "x" / f"{i:03d}.npy") for i in range(N)]


def test_a_billion_rows_fail_fast_under_a_memory_limit():
    # the table's first row in the index fuzzer's child (RLIMIT_AS: its warm size plus 2 GiB):
    # total and shard agree on a billion rows more than the shard holds
    from tests.fuzz import pack_index

    doc = json.loads(pack_index.child().valid)
    doc["rows"] += 10**9 - doc["shards"][0]["rows"]
    doc["shards"][0]["rows"] = 10**9
    kind, error, message, problems = pack_index.outcome(json.dumps(doc))
    assert (kind, error) == ("refused", "PackIndexError") and problems
    assert message.startswith(pack_index.child().index + ": ") and "names" in message
