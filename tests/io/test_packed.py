"""`npyio._io.packed`: a shard written under its temporary name and committed, the index written
last, and a pack read back: its state, its files, its index checked against every shard's header
(`read_index`), and every shard's hash (`verify_pack`). The commands on top of it:
``tests/cli/test_pack.py``."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

import npyio
from npyio._format.packed import INCOMPLETE, INDEX
from npyio._io.packed import (
    ShardFile,
    check_shards,
    load_index,
    ours,
    read_index,
    state,
    verify_pack,
    write_index,
)
from npyio.errors import IncompletePackError, PackIndexError


@pytest.fixture
def pack(tmp_path) -> Path:
    """6 rows of x (2,) float32 and y int64, packed 2 rows a shard (3 shards)."""
    for i in range(6):
        for side, value in (("x", np.full(2, i, np.float32)), ("y", np.int64(i))):
            (tmp_path / side).mkdir(exist_ok=True)
            np.save(tmp_path / side / f"{i}.npy", value)
    out = tmp_path / "p"
    npyio.pack(str(tmp_path / "x"), str(tmp_path / "y"), out=str(out), shard_size=16)
    return out


def test_a_shard_is_written_hashed_and_committed(tmp_path):
    shard = ShardFile(str(tmp_path), "x-00000-of-00001.npy", np.dtype("<i4"), 3, (2,))
    shard.append(np.arange(4).reshape(2, 2))
    shard.append(np.arange(4, 6).reshape(1, 2))
    assert not (tmp_path / "x-00000-of-00001.npy").exists()
    name, size, digest = shard.commit()
    path = tmp_path / name
    assert np.array_equal(np.load(path), np.arange(6).reshape(3, 2))
    assert size == path.stat().st_size and digest == hashlib.sha256(path.read_bytes()).hexdigest()
    assert ours(str(tmp_path)) == [name]


def test_a_short_shard_is_not_committed_and_abort_removes_it(tmp_path):
    shard = ShardFile(str(tmp_path), "x-00000-of-00001.npy", np.dtype("<f8"), 2, ())
    shard.append(np.zeros(1))
    with pytest.raises(AssertionError, match="wrote 1 rows, expected 2"):
        shard.commit()
    assert state(str(tmp_path)) == "incomplete"  # its temporary file
    shard.abort()
    assert list(tmp_path.iterdir()) == [] and state(str(tmp_path)) is None


def test_state_ours_and_the_index(tmp_path, pack):
    assert state(str(pack)) == "complete"
    assert ours(str(pack)) == sorted([INDEX] + [p.name for p in pack.glob("*-of-*.npy")])
    index = load_index(str(pack))
    assert index.count == 6 and len(index.shards) == 3
    assert read_index(str(pack)) == index
    (pack / INDEX).unlink()
    write_index(index)  # the same index, written again (via its temporary name)
    assert load_index(str(pack)) == index and INDEX + ".tmp" not in ours(str(pack))


def test_state_is_the_one_pack_rule_with_or_without_a_listing(tmp_path, pack):
    assert state(str(pack)) == state(str(pack), listing=False) == "complete"
    (pack / INDEX).unlink()
    assert state(str(pack)) is None and state(str(pack), listing=False) is None  # shards alone
    (pack / INCOMPLETE).write_text("")
    assert state(str(pack)) == state(str(pack), listing=False) == "incomplete"
    (pack / INCOMPLETE).unlink()
    (pack / ".x-00000-of-00003.npy.tmp").write_bytes(b"")
    assert state(str(pack)) == "incomplete"  # a temporary shard: found by the listing
    assert state(str(pack), listing=False) is None  # two look-ups, nothing listed
    assert state(str(tmp_path / "absent")) is None


def test_load_index_refuses_what_is_not_a_pack(tmp_path, pack):
    with pytest.raises(FileNotFoundError, match="not a packed directory"):
        load_index(str(tmp_path))
    (pack / INDEX).unlink()
    with pytest.raises(FileNotFoundError, match="not a packed directory"):
        load_index(str(pack))  # shards alone: no marker, no temporary file
    (pack / INCOMPLETE).write_text("")
    with pytest.raises(IncompletePackError):
        load_index(str(pack))
    (pack / INCOMPLETE).unlink()
    (pack / INDEX).write_bytes(b"\xff")
    with pytest.raises(PackIndexError, match="not UTF-8"):
        load_index(str(pack))


def test_read_index_checks_every_shard_header(pack):
    shards = sorted(pack.glob("inputs-*.npy"))
    for shard in shards[:2]:
        shard.write_bytes(shard.read_bytes()[:-4])
    problems = check_shards(load_index(str(pack)))
    assert [p for p, _ in problems] == [str(s) for s in shards[:2]]
    with pytest.raises(PackIndexError) as caught:
        read_index(str(pack))
    message = str(caught.value)
    assert message.startswith(f"{pack / INDEX}: {shards[0]}: ")
    assert message.endswith("(and 1 more shard files)")


def test_verify_pack_hashes_every_shard(pack):
    index, problems = verify_pack(str(pack))
    assert index is not None and problems == []
    flipped = sorted(pack.glob("labels-*.npy"))[1]
    data = bytearray(flipped.read_bytes())
    data[-1] ^= 1
    flipped.write_bytes(bytes(data))
    assert verify_pack(str(pack))[1] == [
        (str(flipped), "damaged shard -- its SHA-256 differs from the index's")
    ]
    (pack / INDEX).unlink()
    index, problems = verify_pack(str(pack))
    assert index is None and [p for p, _ in problems] == [str(pack / INDEX)]
