"""Packs and `npyio.rows` know their length: the cardinality is what an epoch yields, shuffled
or not, batched or not, split and sharded; ``len(ds)`` works, and Keras ``fit`` counts its
steps without running out of data."""

from __future__ import annotations

import logging
import warnings
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

import npyio

N = 37  # rows: no batch size, split or shard below divides it

BATCHES = {
    "rows": {"batch_size": None},
    "by4": {"batch_size": 4},
    "by4-drop": {"batch_size": 4, "drop_remainder": True},
}
PACK_SUBSETS = {
    "all": {},
    "training": {"validation_split": 0.3, "subset": "training"},
    "validation": {"validation_split": 0.3, "subset": "validation"},
    "shard": {"shard": (3, 1)},
    "training-shard": {"validation_split": 0.3, "subset": "training", "shard": (2, 1)},
}


def make_sources(root: Path, n: int = N) -> tuple[str, str]:
    """``n`` pairs of loose files: (4,) float32 inputs, int64 labels 0/1 that a linear model
    separates."""
    rng = np.random.default_rng(0)
    for side in ("x", "y"):
        (root / side).mkdir(parents=True, exist_ok=True)
    for i in range(n):
        label = i % 2
        np.save(root / "x" / f"{i:03d}.npy", rng.normal(2.0 * label - 1, 0.5, 4).astype("f4"))
        np.save(root / "y" / f"{i:03d}.npy", np.int64(label))
    return str(root / "x"), str(root / "y")


@pytest.fixture(scope="module")
def packed(tmp_path_factory) -> str:
    root = tmp_path_factory.mktemp("length")
    x, y = make_sources(root)
    out = str(root / "packed")
    npyio.pack(x, y, out=out, shard_size=5 * 16)  # shards of 5 rows
    return out


@pytest.fixture(scope="module")
def big_arrays(tmp_path_factory) -> tuple[str, str]:
    """The same pairs as two big arrays, in two files each (for `npyio.rows`)."""
    root = tmp_path_factory.mktemp("arrays")
    rng = np.random.default_rng(1)
    labels = np.arange(N) % 2
    x = rng.normal(2.0 * labels[:, None] - 1, 0.5, (N, 4)).astype("f4")
    for side in ("x", "y"):
        (root / side).mkdir()
    for i, (a, b) in enumerate(((0, 20), (20, N))):
        np.save(root / "x" / f"{i}.npy", x[a:b])
        np.save(root / "y" / f"{i}.npy", labels[a:b])
    return str(root / "x"), str(root / "y")


def assert_length_known(ds: tf.data.Dataset) -> None:
    n = sum(1 for _ in ds)
    assert int(ds.cardinality()) == n
    assert len(ds) == n


@pytest.mark.parametrize("subset", list(PACK_SUBSETS))
@pytest.mark.parametrize("batch", list(BATCHES))
@pytest.mark.parametrize("shuffle", [False, True], ids=["ordered", "shuffled"])
def test_a_pack_knows_its_length(packed, shuffle, batch, subset):
    kw = {**BATCHES[batch], **PACK_SUBSETS[subset]}
    assert_length_known(npyio.dataset(packed, shuffle=shuffle, seed=2, **kw))


@pytest.mark.parametrize("shard", [None, (3, 1)], ids=["all", "shard"])
@pytest.mark.parametrize("batch", list(BATCHES))
@pytest.mark.parametrize("shuffle", [False, True], ids=["ordered", "shuffled"])
def test_rows_know_their_length(big_arrays, shuffle, batch, shard):
    x, y = big_arrays
    ds = npyio.rows(x, y, shuffle=shuffle, seed=2, shard=shard, **BATCHES[batch])
    assert_length_known(ds)


@pytest.mark.parametrize("batch", list(BATCHES))
def test_a_shuffle_by_cycles_reads_every_row_with_its_length_unknown(big_arrays, batch):
    """A shuffle by cycles is one split of tf.data service (docs/shuffling.md), which a worker
    without it would fail if the length were asserted: so tf.data does not know it."""
    ds = npyio.rows(*big_arrays, shuffle=True, shuffle_buffer=16, seed=2, **BATCHES[batch])
    assert int(ds.cardinality()) == tf.data.UNKNOWN_CARDINALITY
    size = BATCHES[batch]["batch_size"] or 1
    want = N // size if BATCHES[batch].get("drop_remainder") else -(-N // size)
    assert sum(1 for _ in ds) == want


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


# Keras warns on every Dataset passed with its default shuffle=True: not npyio's doing.
@pytest.mark.filterwarnings("ignore:`shuffle=True` was passed:UserWarning")
@pytest.mark.parametrize("source", ["pack", "rows"])
def test_keras_fit_counts_the_steps_and_does_not_run_out(packed, big_arrays, source, capsys):
    keras = pytest.importorskip("keras")
    if source == "pack":
        ds = npyio.dataset(packed, batch_size=8, shuffle=True, seed=1)
    else:
        ds = npyio.rows(*big_arrays, batch_size=8, shuffle=True, seed=1)
    steps = -(-N // 8)
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2, activation="softmax")])
    model.compile(optimizer=keras.optimizers.Adam(0.1), loss="sparse_categorical_crossentropy")
    records = _Records()
    logging.getLogger().addHandler(records)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            history = model.fit(ds, epochs=2, verbose=1)
    finally:
        logging.getLogger().removeHandler(records)
    out = capsys.readouterr()
    said = "\n".join([out.out, out.err, *records.messages, *(str(w.message) for w in caught)])
    assert "ran out of data" not in said
    assert "Unknown" not in said
    assert f"{steps}/{steps}" in out.out  # the progress bar knows the epoch's steps
    assert len(history.history["loss"]) == 2
