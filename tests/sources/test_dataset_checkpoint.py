"""Iterator checkpoints of npyio's pipelines: TensorFlow's default (the prefetched batches,
megabytes) unless the caller turns on ``experimental_symbolic_checkpoint``, under which npyio's
deterministic pipelines checkpoint kilobytes of positions and restore exactly. npyio does not
turn it on itself: the option reaches every step a caller appends, and under it TensorFlow's
``.cache(filename)`` and ``.snapshot()`` fail at their second epoch, which the default never
does (`test_what_a_caller_appends_works_by_default`).

The bounds here are the ones docs/keras.md quotes (`test_the_keras_page_quotes_the_bounds`)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

import npyio

pytestmark = pytest.mark.skipif(
    os.uname().sysname == "Darwin", reason="TensorFlow ignores symbolic checkpoints on macOS"
)

#: Samples of 8 KiB (2,048 float32), in batches of 128: an epoch of 8 batches, the last short.
COUNT, BATCH, SAMPLE = 1000, 128, 2048
#: What docs/keras.md says a symbolic checkpoint stays under, and what TensorFlow's default
#: holds at least (a prefetched batch is 1 MiB here).
SYMBOLIC_LIMIT = 64_000
DEFAULT_FLOOR = 1_000_000
KERAS_PAGE = Path(__file__).resolve().parents[2] / "docs" / "keras.md"


@pytest.fixture(scope="module")
def samples(tmp_path_factory) -> tuple[str, str]:
    """COUNT pairs: random float32 inputs (incompressible, as real data) whose first value is
    the sample's id, and int64 labels holding the id."""
    root = tmp_path_factory.mktemp("symbolic")
    rng = np.random.default_rng(0)
    (root / "x").mkdir()
    (root / "y").mkdir()
    for i in range(COUNT):
        x = rng.random(SAMPLE, dtype=np.float32)
        x[0] = i
        np.save(root / "x" / f"{i:04d}.npy", x)
        np.save(root / "y" / f"{i:04d}.npy", np.int64(i))
    return str(root / "x"), str(root / "y")


def _ids(batch: object) -> list[int]:
    x, y = batch  # type: ignore[misc]
    x, y = np.asarray(x), np.asarray(y)
    assert x[:, 0].astype(np.int64).tolist() == y.tolist(), "an input with another's label"
    return y.tolist()


def _save(it: object, folder: Path) -> int:
    """Writes ``it``'s checkpoint to ``folder``; returns its size in bytes."""
    tf.train.Checkpoint(iterator=it).write(str(folder / "c"))
    return sum(f.stat().st_size for f in folder.iterdir())


def _restored(ds: tf.data.Dataset, folder: Path, numpy: bool) -> list[list[int]]:
    it = ds.as_numpy_iterator() if numpy else iter(ds)
    tf.train.Checkpoint(iterator=it).read(str(folder / "c")).assert_consumed()
    return [_ids(batch) for batch in it]


def _make(samples: tuple[str, str], shuffle: bool) -> tf.data.Dataset:
    return npyio.dataset(*samples, batch_size=BATCH, shuffle=shuffle, seed=5)


def _symbolic(ds: tf.data.Dataset) -> tf.data.Dataset:
    """``ds`` with the caller's symbolic checkpoints, as docs/keras.md shows."""
    options = tf.data.Options()
    options.experimental_symbolic_checkpoint = True
    return ds.with_options(options)


@pytest.mark.slow
@pytest.mark.parametrize("numpy", [False, True], ids=["iter", "as_numpy_iterator"])
@pytest.mark.parametrize("shuffle", [False, True], ids=["in-order", "shuffled"])
@pytest.mark.parametrize("step", [3, 7], ids=["mid-epoch", "last-batch"])
def test_a_checkpoint_is_kilobytes_and_restores_exactly(samples, tmp_path, shuffle, numpy, step):
    """With the caller's symbolic checkpoints, saved mid-epoch or before an epoch's last batch,
    once the prefetch had time to fill: under SYMBOLIC_LIMIT; restored into a pipeline built
    anew, the rest of the epoch and the next epoch's order are the uninterrupted iterator's."""
    ds = _symbolic(_make(samples, shuffle).repeat(2))
    it = ds.as_numpy_iterator() if numpy else iter(ds)
    got = [_ids(next(it)) for _ in range(step)]
    time.sleep(0.5)  # (the default checkpoint would hold what the read-ahead fetched by now)
    size = _save(it, tmp_path)
    rest = [_ids(batch) for batch in it]
    assert size < SYMBOLIC_LIMIT, size
    ids = [i for batch in got + rest for i in batch]
    epochs = [ids[:COUNT], ids[COUNT:]]
    assert [sorted(epoch) for epoch in epochs] == [list(range(COUNT))] * 2
    assert (epochs[0] != epochs[1]) == shuffle
    assert _restored(_symbolic(_make(samples, shuffle).repeat(2)), tmp_path, numpy) == rest


@pytest.mark.slow
def test_the_default_holds_the_batches_and_restores_exactly(samples, tmp_path):
    """npyio leaves TensorFlow's default: the checkpoint holds the prefetched batches (over
    DEFAULT_FLOOR once the prefetch has filled), and restores exactly too."""
    ds = _make(samples, shuffle=True).repeat(2)
    assert ds.options().experimental_symbolic_checkpoint is None
    it = iter(ds)
    got = [_ids(next(it)) for _ in range(3)]
    size = 0
    for _ in range(40):  # until the read-ahead has filled the prefetch buffer
        size = _save(it, tmp_path)
        if size > DEFAULT_FLOOR:
            break
        time.sleep(0.25)
    rest = [_ids(batch) for batch in it]
    assert size > DEFAULT_FLOOR, size
    assert len(got) + len(rest) == 16
    assert _restored(_make(samples, shuffle=True).repeat(2), tmp_path, False) == rest


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"shuffle": True}, {"backend": "graph"}, {"backend": "py_function"}, {"batch_size": None}],
    ids=repr,
)
def test_every_deterministic_pipeline_checkpoints_under_the_callers_symbolic_mode(
    samples, tmp_path, kwargs
):
    """npyio sets no checkpoint option; under the caller's symbolic one, every deterministic
    pipeline (shuffled, each reader, unbatched) saves kilobytes and restores the rest."""
    assert npyio.dataset(*samples, **kwargs).options().experimental_symbolic_checkpoint is None

    def make() -> tf.data.Dataset:
        return _symbolic(npyio.dataset(*samples, seed=5, **{"batch_size": 64, **kwargs}).take(6))

    it = iter(make())
    next(it)
    assert _save(it, tmp_path) < SYMBOLIC_LIMIT
    rest = [np.asarray(e[1]).tolist() for e in it]
    assert [np.asarray(e[1]).tolist() for e in _restored_raw(make(), tmp_path)] == rest


def _restored_raw(ds: tf.data.Dataset, folder: Path) -> list[object]:
    it = iter(ds)
    tf.train.Checkpoint(iterator=it).read(str(folder / "c")).assert_consumed()
    return list(it)


def test_dataset_from_directory_and_rows_set_no_checkpoint_option(tmp_path):
    for name in ("a", "b"):
        (tmp_path / "classes" / name).mkdir(parents=True)
        np.save(tmp_path / "classes" / name / "0.npy", np.zeros(3, np.float32))
    np.save(tmp_path / "rows.npy", np.arange(10))
    ds = npyio.dataset_from_directory(str(tmp_path / "classes"), batch_size=2)
    assert ds.options().experimental_symbolic_checkpoint is None
    for shuffle in (False, True):
        rows = npyio.rows(str(tmp_path / "rows.npy"), shuffle=shuffle)
        assert rows.options().experimental_symbolic_checkpoint is None


@pytest.fixture(scope="module")
def sources(samples, tmp_path_factory) -> dict[str, Callable[..., tf.data.Dataset]]:
    """The samples as each kind whose shuffled epoch is an index stream: a function of extra
    options to its dataset."""
    root = tmp_path_factory.mktemp("sources")
    npyio.pack(*samples, out=str(root / "pack"))
    np.save(root / "x.npy", np.stack([np.load(p) for p in sorted(Path(samples[0]).iterdir())]))
    np.save(root / "y.npy", np.arange(COUNT))
    return {
        "files": lambda **kw: npyio.dataset(*samples, **kw),
        "graph": lambda **kw: npyio.dataset(*samples, backend="graph", **kw),
        "crop": lambda **kw: npyio.dataset(*samples, crop=(1024,), label_crop=None, **kw),
        "ignore_errors": lambda **kw: npyio.dataset(*samples, ignore_errors=True, **kw),
        "pack": lambda **kw: npyio.dataset(str(root / "pack"), **kw),
        "rows": lambda **kw: npyio.rows(str(root / "x.npy"), str(root / "y.npy"), **kw),
    }


@pytest.mark.parametrize("kind", ["files", "graph", "crop", "ignore_errors", "pack", "rows"])
def test_an_epoch_left_early_leaves_the_next_ones_exact(sources, kind):
    """A peek (``next(iter(ds))``) leaves an epoch before its end; every later epoch still
    has each sample once. An epoch of 1,000 once ended on a gather of its own, keyed by a second
    generator drawn when that gather started: a peek left it a draw behind, and every later
    epoch's last 10 samples repeated others (990 of 1,000 distinct, no error)."""
    ds = sources[kind](batch_size=BATCH, shuffle=True, seed=5)
    next(iter(ds))
    it = iter(ds.repeat(2))
    batches = -(-COUNT // BATCH)
    epochs = [[i for _ in range(batches) for i in np.asarray(next(it)[1])] for _ in range(2)]
    assert [sorted(epoch) for epoch in epochs] == [list(range(COUNT))] * 2
    assert epochs[0] != epochs[1]


#: What a caller appends after npyio's dataset: each checkpoints and restores exactly.
APPENDED: dict[str, Callable[[tf.data.Dataset], tf.data.Dataset]] = {
    "shuffle": lambda ds: ds.shuffle(4, seed=1),
    # (sequential: a parallel map reads ahead, past the anchor; docs/keras.md says what it costs)
    "map": lambda ds: ds.map(lambda x, y: (x + 0.0, y)),
    "cache": lambda ds: ds.cache(),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(APPENDED))
def test_what_a_caller_appends_checkpoints_and_restores(samples, tmp_path, name):
    """``.shuffle``, ``.map`` and a memory ``.cache()`` appended after npyio's dataset
    checkpoint and restore under TensorFlow's default, which npyio leaves."""

    def make() -> tf.data.Dataset:
        return APPENDED[name](_make(samples, shuffle=True)).repeat(2)

    it = iter(make())
    got = [_ids(next(it)) for _ in range(3)]
    _save(it, tmp_path)
    rest = [_ids(batch) for batch in it]
    assert sorted(i for batch in got + rest for i in batch) == sorted(list(range(COUNT)) * 2)
    assert _restored(make(), tmp_path, False) == rest


@pytest.mark.parametrize("kind", ["cache", "snapshot"])
def test_what_a_caller_appends_works_by_default(tmp_path, kind):
    """A file ``.cache(path)`` or ``.snapshot(path)`` after npyio's dataset reads back in its
    second and third epochs: under symbolic checkpoints TensorFlow (2.16, 2.21) fails there
    with a NotFoundError naming a file it wrote, which is why npyio does not set them."""
    for i in range(10):
        np.save(tmp_path / f"{i}.npy", np.full(3, i, np.float32))
    ds = npyio.dataset(str(tmp_path), batch_size=4, shuffle=True, seed=0)
    path = str(tmp_path / kind)
    kept = ds.cache(path) if kind == "cache" else ds.snapshot(path)
    epochs = [sorted(int(x[0]) for batch in kept for x in batch.numpy()) for _ in range(3)]
    assert epochs == [list(range(10))] * 3


def test_the_keras_page_quotes_the_bounds():
    """docs/keras.md quotes the bounds these tests measure, and names this file."""
    text = " ".join(KERAS_PAGE.read_text().split())
    assert "under 64 KB" in text
    assert "over 1 MB" in text
    assert "tests/sources/test_dataset_checkpoint.py" in text
