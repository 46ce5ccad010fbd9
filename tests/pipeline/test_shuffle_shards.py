"""Shards shuffle independently (`npyio._pipeline.shuffle.shard_seed`) and yield the same number of
batches under ``drop_remainder``, on every source kind that takes ``shard=``: hosts with one
seed used to draw one permutation each, so host 1's sample was host 0's plus one at every step
(issue 50, point 3)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

import npyio
from npyio._pipeline.shuffle import IndexShuffle, resolve_seed, shard_seed
from tests.pipeline.test_shuffle import REPO

N = 240  # samples: [i, i] float32, as loose files, .npz members, class folders, a pack, rows


def lockstep(first: list[int], second: list[int]) -> float:
    """The share of steps taken by the most common difference between two hosts' samples."""
    steps = min(len(first), len(second))
    diffs = Counter(b - a for a, b in zip(first[:steps], second[:steps]))
    return diffs.most_common(1)[0][1] / steps


def _ids(element) -> list[int]:
    """The sample numbers of a batch (or an element), cropped or not."""
    x = element[0] if isinstance(element, tuple) else element
    x = x.numpy()
    return [int(v) for v in np.reshape(x, (-1, x.shape[-1]) if x.ndim > 1 else (1, -1))[:, 0]]


def _rest(it) -> list[int]:
    return [v for element in it for v in _ids(element)]


@pytest.fixture(scope="module")
def samples(tmp_path_factory) -> str:
    root = tmp_path_factory.mktemp("shards")
    for side in ("inputs", "npz", "classes/a", "classes/b"):
        (root / side).mkdir(parents=True)
    for i in range(N):
        x = np.full(2, i, np.float32)
        np.save(root / f"inputs/{i:04d}.npy", x)
        np.savez(root / f"npz/{i:04d}.npz", x=x)
        np.save(root / f"classes/{'ab'[i * 2 // N]}/{i:04d}.npy", x)
    npyio.pack(str(root / "inputs"), out=str(root / "pack"))
    np.save(root / "rows.npy", np.repeat(np.arange(N, dtype=np.float32), 2).reshape(N, 2))
    return str(root)


def source(root: str, kind: str, shard: object, **kwargs) -> tf.data.Dataset:
    """The `samples` of one source kind, as shard ``shard`` reads them."""
    kw = dict(shard=shard, **kwargs)
    if kind == "files":
        return npyio.dataset(f"{root}/inputs", **kw)
    if kind == "npz":
        return npyio.dataset(f"{root}/npz", key="x", backend="graph", **kw)
    if kind == "directory":
        return npyio.dataset_from_directory(f"{root}/classes", **kw)
    if kind == "pack":
        return npyio.dataset(f"{root}/pack", **kw)
    return npyio.rows(f"{root}/rows.npy", **kw)


def epochs_of(ds: tf.data.Dataset, epochs: int) -> list[list[int]]:
    """Each epoch's sample numbers, in order."""
    it = iter(ds.repeat(epochs))
    per_epoch = len(_rest(iter(ds)))
    flat = _rest(it)
    return [flat[e * per_epoch : (e + 1) * per_epoch] for e in range(epochs)]


KINDS = ["files", "npz", "directory", "pack", "rows"]


#: An InputContext becomes (n, i) where the options are checked (`npyio._pipeline.options`'s
#: ``shard`` field, `LoaderOptions`' for every kind), before any source kind
#: is looked at: a kind of each option class reads it here, every kind reads the tuple.
SHARD_CASES = [(kind, False) for kind in KINDS] + [("files", True), ("rows", True)]


@pytest.mark.parametrize(
    ("kind", "context"),
    SHARD_CASES,
    ids=[f"{'input-context' if c else 'tuple'}-{k}" for k, c in SHARD_CASES],
)
def test_shards_draw_independent_orders_and_cover_every_sample(samples, kind, context):
    def shard(i: int) -> object:
        if context:
            return tf.distribute.InputContext(num_input_pipelines=2, input_pipeline_id=i)
        return (2, i)

    # the default batch_size of 32: dataset_from_directory's labels then come per batch
    kw = dict(shuffle=True, seed=5)
    hosts = [epochs_of(source(samples, kind, shard(i), **kw), 2) for i in range(2)]
    for e in range(2):
        seen = hosts[0][e] + hosts[1][e]
        assert Counter(seen) == Counter(range(N)), f"epoch {e}: not every sample once"
    first = [v for epoch in hosts[0] for v in epoch]
    second = [v for epoch in hosts[1] for v in epoch]
    assert lockstep(first, second) < 0.05, (first[:12], second[:12])
    # each host keeps its own samples: the same as unshuffled, in another order
    for i, host in enumerate(hosts):
        own = [v for e in epochs_of(source(samples, kind, shard(i)), 1) for v in e]
        assert sorted(host[0]) == sorted(own)


HOST = """
import json, sys
import npyio
root, index = sys.argv[1], int(sys.argv[2])
ds = npyio.dataset(root, batch_size=None, shuffle=True, seed=7, shard=(2, index))
print(json.dumps([int(x[0]) for x in ds.repeat(2).as_numpy_iterator()]))
"""


def test_two_host_processes_with_one_seed_do_not_step_in_lockstep(samples):
    # as the multi-worker recipe runs it: one process per host, the same seed, shard=(2, i);
    # the hosts used to step together (host 1's sample host 0's plus one, 100% of steps)
    env = {**os.environ, "PYTHONPATH": str(REPO), "TF_CPP_MIN_LOG_LEVEL": "2"}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", HOST, f"{samples}/inputs", str(i)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for i in range(2)
    ]
    outs = []
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err[-3000:]
        outs.append(json.loads(out.strip().splitlines()[-1]))
    first, second = outs
    half = N // 2
    for e in range(2):
        epoch = first[e * half : (e + 1) * half] + second[e * half : (e + 1) * half]
        assert sorted(epoch) == list(range(N)), f"epoch {e}: not every sample once"
    assert lockstep(first, second) < 0.05, (first[:12], second[:12])


# --- drop_remainder: the same number of batches on every shard --------------------------------
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("shuffle", [False, True], ids=["in-order", "shuffled"])
def test_drop_remainder_gives_every_shard_the_same_batches(samples, kind, shuffle):
    # 241 samples... here 240 over 7 shards: 35 or 34 files (rows) each; batches of 5 gave 7 or
    # 6 batches per shard, and a collective step waited forever on the host that ran out.
    # The rule: every shard reads 240 // 7 = 34 samples an epoch, 6 batches of 5.
    # Two shards stand for all seven: the first (35 samples before the rule, as shard 1) and
    # the last (34, as shards 2-5); each of the seven took 1-2 s per kind.
    counts = []
    for i in (0, 6):
        ds = source(
            samples, kind, (7, i), batch_size=5, drop_remainder=True, shuffle=shuffle, seed=3
        )
        got = epochs_of(ds, 3)
        assert int(ds.cardinality()) == 6, "the length must stay known"
        counts.append([len(epoch) // 5 for epoch in got])
        for epoch in got:
            assert len(set(epoch)) == len(epoch), "a sample twice in an epoch"
    assert counts == [[6, 6, 6]] * 2


def test_drop_remainder_on_ten_files_three_shards_batch_two(samples):
    # the example: shards of 4, 3 and 3 files gave 2, 1 and 1 batches
    files = sorted(str(p) for p in Path(samples, "inputs").glob("*.npy"))[:10]
    for shuffle in (False, True):
        batches = [
            len(list(npyio.dataset(files, batch_size=2, drop_remainder=True, shard=(3, i),
                                   shuffle=shuffle, seed=1)))
            for i in range(3)
        ]  # fmt: skip
        assert batches == [1, 1, 1]


def test_without_drop_remainder_every_shard_reads_all_its_files(samples):
    files = sorted(str(p) for p in Path(samples, "inputs").glob("*.npy"))[:10]
    got = [_rest(iter(npyio.dataset(files, batch_size=2, shard=(3, i)))) for i in range(3)]
    assert [len(g) for g in got] == [4, 3, 3]
    assert sorted(v for g in got for v in g) == list(range(10))


def test_a_shuffled_shard_reads_a_new_choice_of_its_files_each_epoch(samples):
    # the remainder a shard drops is drawn anew each epoch: no file is left out for good
    files = sorted(str(p) for p in Path(samples, "inputs").glob("*.npy"))[:10]
    ds = npyio.dataset(files, batch_size=2, drop_remainder=True, shard=(3, 0), shuffle=True, seed=1)
    seen = {v for epoch in epochs_of(ds, 12) for v in epoch}
    assert seen == {0, 3, 6, 9}


# --- the seed, and resuming ----------------------------------------------------------------------
def test_an_unsharded_seed_is_kept_and_shards_fold_theirs():
    assert shard_seed(7, None) == shard_seed(7, (1, 0)) == 7
    folded = {shard_seed(7, (n, i)) for n in (2, 3) for i in range(n)}
    assert len(folded) == 5 and 7 not in folded
    assert shard_seed(7, (2, 1)) == shard_seed(7, (2, 1)) != shard_seed(8, (2, 1))
    assert all(0 <= s < 2**62 for s in folded)


def test_count_delivers_the_first_positions_of_the_permutation():
    whole = IndexShuffle(50, 4, gather_size=3)
    part = IndexShuffle(50, 4, gather_size=3, count=20)
    a = whole.anchor(whole.indices()).repeat(2).batch(100)
    b = part.anchor(part.indices()).repeat(2).batch(100)
    got_whole, got_part = next(iter(a)).numpy(), next(iter(b)).numpy()
    assert got_part.tolist() == got_whole[:20].tolist() + got_whole[50:70].tolist()
    with pytest.raises(ValueError, match="0 to 50 of 50 positions, got 51"):
        IndexShuffle(50, 4, count=51)


@pytest.mark.parametrize(
    "kind, kwargs, take",
    [
        ("files", {"batch_size": 3, "seed": 11, "drop_remainder": True}, 15),
        ("files", {"batch_size": 4, "seed": None}, 40),
        ("files", {"batch_size": 4, "seed": 2, "crop": (1,), "drop_remainder": True}, 20),
        ("npz", {"batch_size": 4, "seed": 2}, 20),
        ("directory", {"batch_size": 4, "seed": 2, "drop_remainder": True}, 20),
        ("pack", {"batch_size": 8, "seed": 7, "drop_remainder": True}, 24),
        ("rows", {"batch_size": 8, "seed": 7, "drop_remainder": True}, 40),
    ],
    ids=["files", "files-seedless", "crops", "npz", "directory", "pack", "rows"],
)
def test_a_sharded_iterator_resumes_exactly(samples, tmp_path, kind, kwargs, take):
    # over three epochs, restored into a dataset built again: the shard's keys, and with
    # drop_remainder the samples each epoch leaves out, come back alike
    tf.random.set_seed(None)
    assert resolve_seed(None) != resolve_seed(None), "seed=None should draw at random"

    def build() -> tf.data.Dataset:
        return source(samples, kind, (3, 1), shuffle=True, **kwargs).repeat(3)

    it, first = iter(build()), []
    while len(first) < take:
        first += _ids(next(it))
    ckpt = tf.train.Checkpoint(iterator=it).write(str(tmp_path / "ckpt"))
    saved = _rest(it)
    it = iter(build())
    tf.train.Checkpoint(iterator=it).read(ckpt).assert_consumed()
    restored = _rest(it)
    per_epoch = (len(first) + len(saved)) // 3
    if kwargs["seed"] is None:  # later epochs draw from the restoring dataset's own seed
        saved, restored = saved[: per_epoch - len(first)], restored[: per_epoch - len(first)]
    else:
        assert first + restored == _rest(iter(build())), "not the stream a seed gives"
    assert restored == saved
    epoch = (first + restored)[:per_epoch]
    assert len(set(epoch)) == per_epoch, "a sample twice in an epoch"
