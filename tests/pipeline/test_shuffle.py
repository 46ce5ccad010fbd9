"""Shuffling by index (`npyio._pipeline.shuffle`): a permutation each epoch, uniform, repeatable by
seed, with checkpoints of a few kilobytes that resume exactly in a new process."""

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
from scipy import stats

import npyio
import npyio._sources.rows_plan
from npyio._pipeline.shuffle import (
    MAX_GATHER,
    IndexShuffle,
    gather_size,
    permute,
    resolve_seed,
    shuffled_indices,
)
from tests.sources.test_dataset import ids_of, make_pairs

REPO = Path(__file__).resolve().parents[2]


def orders(ds: tf.data.Dataset, epochs: int, n: int) -> np.ndarray:
    """``epochs`` epochs of a dataset of indices, one row per epoch."""
    flat = next(iter(ds.repeat(epochs).batch(epochs * n))).numpy()
    return flat.reshape(epochs, n)


# --- the permutation ------------------------------------------------------------------------
@pytest.mark.parametrize("n", [0, 1, 2, 3, 10, 1000, 65_537])
def test_every_index_once_per_epoch(n):
    # 65,537 (max_index 2**16) is a size RandomIndexShuffle alone gets wrong: index 2**k never
    # comes and another comes twice (2**18 + 1 too: the test below, without a dataset's cost)
    got = orders(shuffled_indices(n, seed=1), 2, n) if n else np.zeros((2, 0), np.int64)
    for epoch in got:
        assert sorted(epoch.tolist()) == list(range(n))


@pytest.mark.parametrize("n", [65_537, 262_145])
def test_permute_is_a_bijection_where_the_kernel_alone_is_not(n):
    key = tf.constant([1, 2, 3], tf.int64)
    alone = tf.raw_ops.RandomIndexShuffle(
        index=tf.range(n, dtype=tf.int64),
        seed=key,
        max_index=tf.constant(n - 1, tf.int64),
        rounds=8,
    ).numpy()
    assert len(set(alone.tolist())) < n, "the kernel got fixed: the walk may go"
    ours = permute(tf.range(n, dtype=tf.int64), key, n).numpy()
    assert sorted(ours.tolist()) == list(range(n))


def test_same_seed_same_sequence_of_orders_new_order_each_epoch():
    a, b = (orders(shuffled_indices(50, seed=9), 4, 50) for _ in range(2))
    np.testing.assert_array_equal(a, b)
    assert len({tuple(e) for e in a}) == 4, "epochs should differ"
    c = orders(shuffled_indices(50, seed=10), 4, 50)
    assert not np.array_equal(a, c)


def test_a_seed_gives_the_same_orders_on_every_tensorflow():
    # written down on TF 2.21; make test's TF 2.16 leg runs this too (Makefile, TF216_TESTS),
    # so a seed's orders, and so a resumed run's, are the same on both. As every TensorFlow
    # op seed, the epochs' keys also take tf.random.set_seed's global seed: none here, then one.
    try:
        tf.random.set_seed(None)
        assert orders(shuffled_indices(12, seed=7), 2, 12).tolist() == [
            [1, 4, 11, 3, 5, 0, 6, 10, 9, 8, 2, 7],
            [3, 8, 10, 11, 2, 5, 1, 4, 0, 7, 9, 6],
        ]
        tf.random.set_seed(1234)
        assert orders(shuffled_indices(12, seed=7), 1, 12).tolist() == [
            [8, 11, 9, 3, 6, 4, 1, 2, 0, 5, 7, 10]
        ]
    finally:
        tf.random.set_seed(None)


def test_without_reshuffling_every_epoch_has_the_first_order():
    got = orders(shuffled_indices(50, seed=9, reshuffle_each_iteration=False), 3, 50)
    assert (got == got[0]).all()
    assert got[0].tolist() != list(range(50))


def test_the_order_does_not_depend_on_the_gather_size():
    first = orders(shuffled_indices(100, seed=4, gather_size=1), 2, 100)
    for size in (3, 16, MAX_GATHER, 1000):
        np.testing.assert_array_equal(
            orders(shuffled_indices(100, seed=4, gather_size=size), 2, 100), first
        )


def test_gather_size_is_the_largest_divisor_that_leaves_64_gathers():
    assert [gather_size(n) for n in (0, 1, 63, 64, 160, 4095)] == [1, 1, 1, 1, 2, 63]
    assert gather_size(4096) == gather_size(10**6) == MAX_GATHER
    # a divisor: no epoch ends on a shorter gather (the module docstring says why)
    assert [gather_size(n) for n in (1000, 4000, 5000)] == [10, 50, 50]
    # where only slow small ones are, the smallest above: a prime count is one gather
    assert [gather_size(n) for n in (1009, 2 * 1009, 2 * 100_003)] == [1009, 1009, 100_003]
    # (and, above `MAX_DIVISOR_GATHER`, the small one: a prime past it is gathers of one)
    assert [gather_size(n) for n in (2 * 1_048_583, 1_048_583)] == [2, 1]


@pytest.mark.parametrize("n", [1000, 1009, 2 * 1009, 97 * 89])
def test_an_epoch_left_early_leaves_the_next_ones_permutations(n):
    shuffle = IndexShuffle(n, 5, gather_size=gather_size(n))
    ds = shuffle.anchor(shuffle.indices())
    assert ds.cardinality() == n
    next(iter(ds))
    list(ds.take(n // 2))
    epochs = np.asarray(list(ds.repeat(2))).reshape(2, n)
    np.testing.assert_array_equal(np.sort(epochs, axis=1), [np.arange(n)] * 2)


def test_every_position_is_equally_likely_for_every_element():
    # A chi-square test on where each element lands, over 2000 epochs of 10 elements, with a
    # fixed seed: the same draws every run, so the test cannot flake. (RandomIndexShuffle with
    # the 4 rounds of tf.random.experimental.index_shuffle fails it: p ~ 1e-77.)
    n, epochs = 10, 2000
    got = orders(shuffled_indices(n, seed=2024), epochs, n)
    counts = np.zeros((n, n), np.int64)
    for epoch in got:
        counts[epoch, np.arange(n)] += 1
    chi2 = ((counts - epochs / n) ** 2 / (epochs / n)).sum()
    p = stats.chi2.sf(chi2, (n - 1) ** 2)
    assert p > 0.001, f"positions not uniform: chi2={chi2:.1f}, p={p:.2g}\n{counts}"
    # every order of 4 elements, over 4800 epochs
    got = orders(shuffled_indices(4, seed=7), 4800, 4)
    seen = Counter(tuple(e) for e in got.tolist())
    assert len(seen) == 24
    assert stats.chisquare(list(seen.values())).pvalue > 0.001


def test_consecutive_epochs_differ():
    got = orders(shuffled_indices(20, seed=3), 200, 20)
    assert all((got[i] != got[i + 1]).any() for i in range(len(got) - 1))


def test_seed_none_is_random_unless_tensorflow_has_a_global_seed():
    assert resolve_seed(5) == 5
    assert resolve_seed(None) != resolve_seed(None)
    tf.random.set_seed(3)
    first = [resolve_seed(None) for _ in range(2)]
    tf.random.set_seed(3)
    assert [resolve_seed(None) for _ in range(2)] == first


def test_refuses_what_it_cannot_shuffle():
    with pytest.raises(ValueError, match="got -1"):
        shuffled_indices(-1)
    with pytest.raises(ValueError, match="2\\*\\*52"):
        shuffled_indices(2**52)


# --- through npyio.dataset ------------------------------------------------------------------
N = 40


@pytest.fixture(scope="module")
def pairs(tmp_path_factory):
    return make_pairs(str(tmp_path_factory.mktemp("shuffle")), n=N, shape=(2,))


@pytest.mark.parametrize("batch_size", [None, 4, 7])
@pytest.mark.parametrize("kwargs", [{}, {"shape": (None,)}, {"ignore_errors": True}])
def test_dataset_shuffles_every_pair_once_on_every_strategy(pairs, batch_size, kwargs):
    ds = npyio.dataset(*pairs, batch_size=batch_size, shuffle=True, seed=1, **kwargs)
    epochs = [ids_of(ds) for _ in range(2)]
    for ids in epochs:
        assert sorted(ids) == list(range(N))
    assert epochs[0] != epochs[1] and epochs[0] != sorted(epochs[0])


def test_dataset_order_depends_on_the_seed_only(pairs):
    def order(**kwargs):
        return ids_of(npyio.dataset(*pairs, shuffle=True, seed=5, **kwargs))

    assert order(batch_size=None) == order(batch_size=4) == order(batch_size=9, deterministic=True)


def test_a_dataset_iterator_is_only_a_position_and_a_key(pairs):
    # no node of the pipeline holds the file list as state: no shuffle buffer
    ds = npyio.dataset(*pairs, batch_size=4, shuffle=True, seed=1)
    graph = tf.compat.v1.GraphDef.FromString(ds._as_serialized_graph().numpy())
    ops = {node.op for node in graph.node}
    assert "ShuffleDatasetV3" not in ops and "ShuffleDatasetV2" not in ops
    assert "RandomDatasetV2" in ops or "RandomDataset" in ops


CHECKPOINT = """
import json, os, sys, time
import tensorflow as tf
import npyio
import npyio._sources.rows_plan
path, n, shuffle, ckpt = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1", sys.argv[4]
ds = npyio.dataset([path] * n, [path] * n, batch_size=32, shuffle=shuffle, seed=1,
                   dtype="float32", shape=(2,), label_dtype="float32", label_shape=(2,))
it = iter(ds)
next(it)
checkpoint = tf.train.Checkpoint(iterator=it)
start = time.perf_counter()
saved = checkpoint.write(ckpt)
seconds = time.perf_counter() - start
folder = os.path.dirname(ckpt)
size = sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder))
print(json.dumps({"bytes": size, "seconds": seconds}))
"""


@pytest.mark.slow
def test_checkpoint_of_a_million_shuffled_pairs_is_kilobytes(tmp_path):
    one = tmp_path / "one.npy"
    np.save(one, np.zeros(2, np.float32))
    sizes = {}
    for shuffle in ("0", "1"):
        folder = tmp_path / f"ckpt{shuffle}"
        folder.mkdir()
        run = _python(CHECKPOINT, str(one), str(1_000_000), shuffle, str(folder / "ckpt"))
        assert run.returncode == 0, run.stderr[-3000:]
        sizes[shuffle] = json.loads(run.stdout.strip().splitlines()[-1])["bytes"]
    assert sizes["1"] <= 64 * 1024, sizes
    # a few scalars more than the unshuffled iterator: the position, the key, its generator
    assert sizes["1"] <= sizes["0"] + 16 * 1024, sizes


#: Set by tests/sources/conftest.py's ``row_backend``: the child reads packs and rows through that
#: backend's reader of row ranges, as the parent does.
ROW_BACKEND_ENV = "NPYIO_TEST_ROW_BACKEND"


def _python(code: str, *args: str, timeout: int = 300) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    backend = os.environ.get(ROW_BACKEND_ENV)
    if backend:
        code = f"import npyio._sources.rows as r\nr._BACKEND = {backend!r}\ndel r\n{code}"
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
    )


NEW_ITERATORS = """
import json, sys
import tensorflow as tf
import npyio
import npyio._sources.rows_plan
xs, ys, ckpt, mode, take = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
if ys == "rows":  # npyio.rows of the one array xs, in 10 pieces, through a buffer of rows
    npyio._sources.rows_plan.MAX_PIECE_BYTES = 800
    ds = npyio.rows(
        xs, batch_size=50, shuffle=True, shuffle_buffer=64, seed=4, num_parallel_reads=2
    )
else:
    ds = npyio.dataset(xs, ys, batch_size=4, shuffle=True, seed=7)
def ids(it):
    return [int(v) for e in it for v in (e if ys == "rows" else e[1]).numpy().reshape(-1)]
it = iter(ds)
first = []
if mode == "save":
    first = ids(next(it) for _ in range(take))
    tf.train.Checkpoint(iterator=it).write(ckpt)
else:
    tf.train.Checkpoint(iterator=it).read(ckpt).assert_consumed()
# the rest of the epoch, then two more epochs, each from a new iterator, as Keras's fit reads
print(json.dumps({"first": first, "rest": ids(it), "later": [ids(ds), ids(ds)]}))
"""


@pytest.mark.parametrize(
    "source, take",
    [("pairs", N // 4 - 1), ("pairs", N // 4), ("rows", 20)],  # the last batch, and after it
)
def test_a_checkpoint_at_an_epochs_end_keeps_the_next_orders_with_new_iterators(
    pairs, tmp_path, source, take
):
    # Nothing reads ahead of the anchor (tf.data's injected prefetch is turned off), so even a
    # checkpoint written after the epoch's last batch holds the key generator's state, and the
    # next epochs' iterators take the orders they would have had
    n = N
    args = pairs
    if source == "rows":
        n, args = 1000, (str(tmp_path / "x.npy"), "rows")
        np.save(args[0], np.arange(n, dtype=np.int64))
    ckpt = str(tmp_path / "ckpt")
    saved = _python(NEW_ITERATORS, *args, ckpt, "save", str(take))
    assert saved.returncode == 0, saved.stderr[-3000:]
    before = json.loads(saved.stdout.strip().splitlines()[-1])
    restored = _python(NEW_ITERATORS, *args, ckpt, "restore", "0")
    assert restored.returncode == 0, restored.stderr[-3000:]
    after = json.loads(restored.stdout.strip().splitlines()[-1])
    assert sorted(before["first"] + after["rest"]) == list(range(n))
    assert after["rest"] == before["rest"]
    assert after["later"] == before["later"]
    assert before["later"][0] != before["later"][1], "each epoch should get a new order"


def test_a_caller_can_turn_the_injected_prefetch_back_on(pairs):
    ds = npyio.dataset(*pairs, shuffle=True, seed=1, batch_size=None)
    assert ds.options().experimental_optimization.inject_prefetch is False
    options = tf.data.Options()
    options.experimental_optimization.inject_prefetch = True
    again = ds.with_options(options)
    assert again.options().experimental_optimization.inject_prefetch is True
    assert sorted(ids_of(again)) == list(range(N))
    assert (
        npyio.dataset(*pairs, batch_size=None).options().experimental_optimization.inject_prefetch
        is None
    )


def test_split_keeps_its_files_while_each_subset_reshuffles(pairs):
    def subsets():
        return npyio.dataset(
            *pairs, validation_split=0.25, subset="both", shuffle=True, seed=8, batch_size=4
        )

    (train, val), (train2, val2) = subsets(), subsets()
    assert sorted(ids_of(train)) == sorted(ids_of(train2))
    assert sorted(ids_of(val)) == sorted(ids_of(val2))
    assert not set(ids_of(train)) & set(ids_of(val))
    assert ids_of(train) != ids_of(train), "each epoch of a subset should get a new order"


ROWS_RESUME = """
import json, sys
import tensorflow as tf
import npyio
import npyio._sources.rows_plan
x, ckpt, mode = sys.argv[1], sys.argv[2], sys.argv[3]
rows = dict(shuffle=True, shuffle_buffer=64, seed=4, num_parallel_reads=2)
ds = npyio.rows(x, batch_size=50, **rows).repeat(2)
it = iter(ds)
checkpoint = tf.train.Checkpoint(iterator=it)
def drain(it):
    return [int(v) for b in it for v in b.numpy().reshape(-1)]
if mode == "save":
    first = [int(v) for _ in range(7) for v in next(it).numpy().reshape(-1)]
    checkpoint.write(ckpt)
    print(json.dumps({"first": first, "rest": drain(it)}))
else:
    checkpoint.read(ckpt).assert_consumed()
    print(json.dumps({"rest": drain(it)}))
"""


def test_rows_shuffle_their_pieces_by_index_and_resume_exactly(tmp_path, monkeypatch, row_backend):
    # rows: the order of the pieces is a permutation by index (no buffer of pieces), and so is
    # the order of the rows in each window of pieces (no buffer of rows): a checkpoint holds
    # positions only, and restores exactly
    x = tmp_path / "x.npy"
    np.save(x, np.arange(1000, dtype=np.int64))
    monkeypatch.setattr(npyio._sources.rows_plan, "MAX_PIECE_BYTES", 800)  # 100-row pieces: 10
    ds = npyio.rows(str(x), shuffle=True, shuffle_buffer=64, seed=4, batch_size=None)
    graph = tf.compat.v1.GraphDef.FromString(ds._as_serialized_graph().numpy())
    nodes = [*graph.node, *(n for f in graph.library.function for n in f.node_def)]
    shuffles = [node for node in nodes if node.op.startswith("ShuffleDataset")]
    assert shuffles == [], "no buffer shuffles"
    ckpt = str(tmp_path / "ckpt")
    saved = _python(ROWS_RESUME, str(x), ckpt, "save")
    assert saved.returncode == 0, saved.stderr[-3000:]
    before = json.loads(saved.stdout.strip().splitlines()[-1])
    restored = _python(ROWS_RESUME, str(x), ckpt, "restore")
    assert restored.returncode == 0, restored.stderr[-3000:]
    assert json.loads(restored.stdout.strip().splitlines()[-1])["rest"] == before["rest"]
    assert Counter(before["first"] + before["rest"]) == Counter({i: 2 for i in range(1000)})


@pytest.mark.parametrize("n", [10, 200, 4099])  # gathers of 1; of 3 with a tail of 2; of 64 with 3
def test_a_shuffled_dataset_knows_its_length(tmp_path, n):
    # Keras reads an epoch's length from the cardinality (without it, it warns "Your input ran
    # out of data" after the first epoch). The gathers have static sizes, so unbatch keeps the
    # count; nothing asserts it, which tf.data service workers under dynamic sharding (each
    # reading some gathers) would fail.
    xs = tmp_path / "x"
    xs.mkdir()
    for i in range(n):
        np.save(xs / f"{i:04d}.npy", np.int32(i))
    for batch_size, drop in ((4, True), (4, False), (None, False)):
        kw = dict(batch_size=batch_size, drop_remainder=drop)
        shuffled = npyio.dataset(str(xs), shuffle=True, seed=1, **kw)
        in_order = npyio.dataset(str(xs), **kw)
        assert int(shuffled.cardinality()) == int(in_order.cardinality()) > 0
        got = [int(v) for e in shuffled for v in np.ravel(e)]
        assert len(got) == len([v for e in in_order for v in np.ravel(e)])
        if not drop:
            assert sorted(got) == list(range(n))


# --- resuming: save, then restore into a dataset built again ----------------------------------
# Most cases save and restore in this process: the restore builds a new dataset from the same
# arguments, as a new process would (with seed=None it draws a new seed, so the checkpoint must
# carry the key). One case per source kind, seeded and not, crosses a real process boundary.
SEEDLESS_N = 200  # shuffled in gathers of 3 positions, with a tail gather of 2
ROWS_PIECE_BYTES = 160  # rows: pieces of 20 rows of [i, i] float32


@pytest.fixture(scope="module")
def seedless(tmp_path_factory):
    """The same 200 samples, [i, i] float32, as loose pairs, class folders, a pack and rows."""
    root = tmp_path_factory.mktemp("seedless")
    n = SEEDLESS_N
    for side in ("inputs", "labels", "classes/a", "classes/b"):
        (root / side).mkdir(parents=True)
    for i in range(n):
        x = np.full(2, i, np.float32)
        np.save(root / f"inputs/{i:04d}.npy", x)
        np.save(root / f"labels/{i:04d}.npy", np.int64(i))
        np.save(root / f"classes/{'ab'[i * 2 // n]}/{i:04d}.npy", x)
    npyio.pack(str(root / "inputs"), str(root / "labels"), out=str(root / "pack"))
    np.save(root / "rows.npy", np.repeat(np.arange(n, dtype=np.float32), 2).reshape(n, 2))
    return str(root)


def resume_dataset(root: str, kind: str, epochs: int = 1, **kwargs) -> tf.data.Dataset:
    """The `seedless` samples of one source kind, shuffled, over ``epochs`` epochs of one
    iterator; ``kwargs`` go to the reader (rows expect `ROWS_PIECE_BYTES` to be set)."""
    kw = dict(shuffle=True, **kwargs)
    if kind == "files":
        ds = npyio.dataset(f"{root}/inputs", f"{root}/labels", **kw)
    elif kind == "directory":
        ds = npyio.dataset_from_directory(f"{root}/classes", **kw)
    elif kind == "pack":
        ds = npyio.dataset(f"{root}/pack", **kw)
    else:  # npyio.rows of one array, in pieces, through a buffer of rows
        ds = npyio.rows(f"{root}/rows.npy", shuffle_buffer=16, **kw)
    return ds.repeat(epochs) if epochs > 1 else ds


def _sample_ids(element) -> list[int]:
    x = element[0] if isinstance(element, tuple) else element
    return [int(v) for v in np.reshape(x.numpy(), (-1, 2))[:, 0]]


def _drain(it) -> list[int]:
    return [v for element in it for v in _sample_ids(element)]


def save(ds: tf.data.Dataset, take: int, ckpt: str) -> tuple[list[int], list[int]]:
    """(the first ``take`` or more samples, the rest after a checkpoint written there)."""
    it = iter(ds)
    first: list[int] = []
    while len(first) < take:
        first += _sample_ids(next(it))
    tf.train.Checkpoint(iterator=it).write(ckpt)
    return first, _drain(it)


def restore(ds: tf.data.Dataset, ckpt: str) -> list[int]:
    """The rest of a new iterator of ``ds`` restored from ``ckpt``."""
    it = iter(ds)
    tf.train.Checkpoint(iterator=it).read(ckpt).assert_consumed()
    return _drain(it)


RESUME = """
import json, sys
import npyio._sources.rows as rows
import npyio._sources.rows_plan
from tests.pipeline.test_shuffle import ROWS_PIECE_BYTES, restore, resume_dataset, save
root, mode, cases = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
npyio._sources.rows_plan.MAX_PIECE_BYTES = ROWS_PIECE_BYTES
out = []
for case in cases:  # each through its own reader of row ranges, to its own checkpoint
    rows._BACKEND = case["row_backend"]
    ds = resume_dataset(root, case["kind"], **case["kwargs"])
    ckpt = case["ckpt"]
    out.append(save(ds, case["take"], ckpt) if mode == "save" else restore(ds, ckpt))
print(json.dumps(out))
"""


def assert_resumed(first, saved, restored, kwargs) -> None:
    """The restored rest is the saved one: with seed=None only the epoch under way (the next
    draws its order from the restoring dataset's new seed)."""
    epochs = kwargs.get("epochs", 1)
    if kwargs["seed"] is None and epochs > 1:
        rest = SEEDLESS_N - len(first)
        saved, restored, epochs = saved[:rest], restored[:rest], 1
    assert restored == saved
    assert Counter(first + restored) == Counter({i: epochs for i in range(SEEDLESS_N)})


def resume_here(root: str, kind: str, take: int, ckpt: str, monkeypatch, **kwargs) -> None:
    monkeypatch.setattr(npyio._sources.rows_plan, "MAX_PIECE_BYTES", ROWS_PIECE_BYTES)
    # a new process has no global seed (a test above sets one): seed=None draws at random
    tf.random.set_seed(None)
    assert resolve_seed(None) != resolve_seed(None), "seed=None should draw at random"
    first, saved = save(resume_dataset(root, kind, **kwargs), take, ckpt)
    restored = restore(resume_dataset(root, kind, **kwargs), ckpt)
    assert_resumed(first, saved, restored, kwargs)


#: (kind, kwargs, take, row_backend): packs and rows through each reader of row ranges, each kind
#: once (files: the native reader on, or off; whether a seed was drawn at random enters the keys,
#: not the reader). seed=None: the new process draws another base seed, but the epoch under way
#: continues from its checkpointed key.
NEW_PROCESS_CASES = {
    "files": ("files", {"batch_size": 3, "seed": 11}, 15, "native"),
    "files-seedless": ("files", {"batch_size": 4, "seed": None, "epochs": 2}, 12, "graph"),
    "pack": ("pack", {"batch_size": 8, "seed": 7, "epochs": 2}, 24, "graph"),
    "pack-seedless": ("pack", {"batch_size": None, "seed": None}, 150, "native"),
    "rows-seedless": ("rows", {"batch_size": 8, "seed": None}, 40, "native"),  # seeded: below
    "rows-graph": ("rows", {"batch_size": 8, "seed": None}, 40, "graph"),
}


def test_a_shuffled_iterator_resumes_exactly_in_a_new_process(seedless, tmp_path):
    """Every case saved in one process and restored in another: one pair of processes for all
    (a process costs seconds of TensorFlow's import), each case its own checkpoint."""
    cases = [
        {"kind": k, "kwargs": kw, "take": take, "row_backend": b, "ckpt": str(tmp_path / name)}
        for name, (k, kw, take, b) in NEW_PROCESS_CASES.items()
    ]
    runs = []
    for mode in ("save", "restore"):
        done = _python(RESUME, seedless, mode, json.dumps(cases))
        assert done.returncode == 0, done.stderr[-3000:]
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    for name, case, (first, saved), restored in zip(NEW_PROCESS_CASES, cases, *runs, strict=True):
        try:
            assert_resumed(first, saved, restored, case["kwargs"])
        except AssertionError as e:
            raise AssertionError(f"{name}: {e}") from None


@pytest.mark.parametrize(
    "kwargs",
    [
        {"batch_size": 3, "seed": 11},
        {"batch_size": 3, "seed": 11, "epochs": 3},
        {"batch_size": 4, "seed": 2, "shape": (None,)},
        {"batch_size": None, "seed": 5, "num_parallel_calls": 4},
        {"batch_size": 3, "seed": 11, "reshuffle_each_iteration": False, "epochs": 2},
        {"batch_size": 5, "seed": 3, "ignore_errors": True},
    ],
    ids=["batched", "three-epochs", "padded", "unbatched", "no-reshuffle", "ignore-errors"],
)
def test_a_shuffled_iterator_resumes_exactly(seedless, tmp_path, monkeypatch, kwargs):
    take = 5 * (kwargs["batch_size"] or 1)  # five elements
    resume_here(seedless, "files", take, str(tmp_path / "ckpt"), monkeypatch, **kwargs)


@pytest.mark.parametrize(
    "kind, take, batch, epochs",
    [
        ("files", 12, 4, 2),  # outside the tail gather
        ("files", 199, None, 1),  # inside it: the last position but one
        ("files", 56, 8, 1),
        ("directory", 12, 4, 2),
        ("directory", 199, None, 1),
        ("pack", 24, 8, 2),
        ("pack", 150, None, 1),
        ("rows", 40, 8, 1),
    ],
)
def test_without_a_seed_a_restore_continues_the_epoch_exactly(
    seedless, tmp_path, monkeypatch, kind, take, batch, epochs
):
    # seed=None draws a seed at random when the dataset is built, and the restoring dataset
    # draws another; the epoch under way must still continue exactly: every sample once, in
    # the saved order (the tail gather's key used to come from the new seed: 2 samples twice,
    # 2 never, in an epoch of 200)
    kwargs = dict(batch_size=batch, seed=None, epochs=epochs)
    resume_here(seedless, kind, take, str(tmp_path / "ckpt"), monkeypatch, **kwargs)
