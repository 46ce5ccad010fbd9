"""A shuffled pack's iterator checkpoint (and that of `npyio.rows`' shuffle by cycles) holds
positions, not rows: at most 256 KiB at every step of an epoch, and a restore in a new process
continues exactly. (The reader of row ranges does not enter a checkpoint: these run on the
native one, the default; tests/pipeline/test_shuffle.py restores through both.)"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import npyio
from tests.pipeline.test_shuffle import _python

LIMIT = 256 << 10
ROWS = 200_000

#: ``save``: two epochs (``.repeat(2)``), a checkpoint written before each step of ``steps``
#: (each in its own folder), then prints every element's ids. ``restore``: a new iterator from
#: each checkpoint, drained. The first of every row's values is its id.
SCRIPT = """
import json, os, sys
import numpy as np
import tensorflow as tf
import npyio
import npyio._sources.pack_plan
kind, source, root, mode, batch, steps = sys.argv[1:7]
batch, steps = int(batch) or None, json.loads(steps)
if kind == "rows":
    ds = npyio.rows(f"{source}/x.npy", f"{source}/y.npy", shuffle=True, shuffle_buffer=100_000,
                    batch_size=batch, seed=3)
else:
    ds = npyio.dataset(source, batch_size=batch, shuffle=True, seed=6)
ds = ds.repeat(2)
def ids(e):
    return [int(v) for v in np.reshape(e[1].numpy(), -1)]
def size(folder):
    return sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder))
if mode == "save":
    it, got, sizes = iter(ds), [], {}
    for step in range(max(steps) + 1):
        if step in steps:
            folder = os.path.join(root, str(step))
            tf.train.Checkpoint(iterator=it).write(os.path.join(folder, "c"))
            sizes[step] = size(folder)
        got.append(ids(next(it)))
    got.extend(ids(e) for e in it)
    print(json.dumps({"got": got, "sizes": sizes}))
else:
    rest = {}
    for step in steps:
        it = iter(ds)
        tf.train.Checkpoint(iterator=it).read(os.path.join(root, str(step), "c")).assert_consumed()
        rest[step] = [ids(e) for e in it]
    print(json.dumps(rest))
"""


def _run(*args: str) -> dict:
    done = _python(SCRIPT, *args, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def pack_of_8000(tmp_path_factory) -> str:
    """8,000 pairs of 1 KiB inputs (256 float32) and int64 labels (the pair's id), packed."""
    root = tmp_path_factory.mktemp("ckpt-size")
    (root / "x").mkdir()
    (root / "y").mkdir()
    x = np.zeros(256, np.float32)
    for i in range(8000):
        np.save(root / "x" / f"{i:05d}.npy", x)
        np.save(root / "y" / f"{i:05d}.npy", np.int64(i))
    npyio.pack(str(root / "x"), str(root / "y"), out=str(root / "packed"))
    return str(root / "packed")


@pytest.fixture(scope="module")
def million_rows(tmp_path_factory) -> str:
    """200,000 rows: a uint8 input and an int32 label (the row's id), for `npyio.rows`: two
    windows of 100,000 rows an epoch, each 500 KB of rows, which a checkpoint holding rows
    would exceed the limit with."""
    root = tmp_path_factory.mktemp("ckpt-rows")
    n = ROWS
    np.save(root / "x.npy", (np.arange(n) % 251).astype(np.uint8))
    np.save(root / "y.npy", np.arange(n, dtype=np.int32))
    return str(root)


def _check(kind: str, source: str, root: Path, batch: int, steps: list[int], n: int) -> None:
    args = [kind, source, str(root)]
    saved = _run(*args, "save", str(batch), json.dumps(steps))
    got, sizes = saved["got"], {int(k): v for k, v in saved["sizes"].items()}
    per_epoch = len(got) // 2
    for epoch in (got[:per_epoch], got[per_epoch:]):
        assert sorted(v for e in epoch for v in e) == list(range(n))
    assert got[:per_epoch] != got[per_epoch:], "a new order each epoch"
    assert max(sizes.values()) <= LIMIT, sizes
    restored = _run(*args, "restore", str(batch), json.dumps(steps))
    for step in steps:
        assert restored[str(step)] == got[step:], f"restored at step {step}"


@pytest.mark.slow
@pytest.mark.parametrize(
    "kind, batch, steps",
    [
        # 250 batches of 32 an epoch: at its start, inside, at its end and across it
        ("batched", 32, [0, 1, 2, 100, 249, 250, 251, 420]),
        # single rows, read a gather (64) at a time: inside gathers, at their ends, across the
        # epoch's end
        ("unbatched", 0, [1, 63, 64, 3000, 7999, 8000, 8257, 12345]),
    ],
)
def test_a_shuffled_pack_checkpoint_is_small_and_restores_exactly(
    pack_of_8000, tmp_path, kind, batch, steps
):
    _check(kind, pack_of_8000, tmp_path, batch, steps, 8000)


@pytest.mark.slow
def test_a_shuffle_by_cycles_checkpoint_is_small_and_restores_exactly(million_rows, tmp_path):
    steps = [0, 1, 99, 100, 101, 199, 200, 201, 300]  # 200 batches of 1,000 an epoch
    _check("rows", million_rows, tmp_path, 1000, steps, ROWS)
