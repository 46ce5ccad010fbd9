"""`npyio._pipeline.loader`: one loader for every source kind. A kind the loader has never seen
(`Squares`, defined here) gets the index stream, shuffle, shard, equal counts, prefetch,
autotune setting and checkpoints from it alone; and the loader never imports a kind's module."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import tensorflow as tf

import npyio
from npyio._pipeline.capabilities import OPTIONS, Column, honoured
from npyio._pipeline.loader import Source, load, stream
from npyio._pipeline.options import DatasetOptions, LoaderOptions, ReadOptions
from npyio._sources.kinds import KINDS
from npyio._sources.pack_plan import PACK
from npyio._sources.plan import FILES, NPZ
from npyio._sources.rows_plan import ROWS

PIPELINE = Path(npyio.__file__).parent / "_pipeline"


def toy_column(kind: str) -> Column:
    """A new kind's column of the capability table: every option honoured."""
    return Column(kind, f"{kind} (a test)", {name: honoured() for name in OPTIONS})


class Squares(Source):
    """A toy source kind: unit i is the element i * i, read a batch at a time."""

    column = toy_column("squares")

    def __init__(self, n: int, loader: LoaderOptions, epoch_count: int | None = None) -> None:
        self.loader, self.count = loader, n
        self.epoch_count = n if epoch_count is None else epoch_count
        self.reads: list[int] = []

    def gather(self, indices: tf.Tensor, *key: tf.Tensor) -> tf.Tensor:
        return indices

    def read_batch(self, units: tf.Tensor) -> tf.Tensor:
        return units * units

    def read(self, units: tf.data.Dataset) -> tf.data.Dataset:
        # its own read: single elements without batch_size, the loader's batches with one
        return units.map(self.read_batch) if self.loader.batch_size is None else super().read(units)


def epoch(ds: tf.data.Dataset) -> list[int]:
    return [int(v) for batch in ds for v in np.atleast_1d(batch.numpy())]


def test_a_new_kind_reads_in_order_in_batches():
    ds = load(Squares(10, LoaderOptions(batch_size=4)))
    assert [b.numpy().tolist() for b in ds] == [[0, 1, 4, 9], [16, 25, 36, 49], [64, 81]]


class Cubes(Source):
    """A kind that reads only batches of units: the loader batches them (`Source.read`)."""

    column = toy_column("cubes")

    def __init__(self, n: int, loader: LoaderOptions) -> None:
        self.loader, self.count, self.epoch_count = loader, n, n

    def gather(self, indices: tf.Tensor, *key: tf.Tensor) -> tf.Tensor:
        return indices

    def read_batch(self, units: tf.Tensor) -> tf.Tensor:
        return units * units * units


def test_the_loader_batches_the_units_a_kind_reads_by_the_batch():
    ds = load(Cubes(7, LoaderOptions(batch_size=3)))
    assert [b.numpy().tolist() for b in ds] == [[0, 1, 8], [27, 64, 125], [216]]
    dropped = load(Cubes(7, LoaderOptions(batch_size=3, drop_remainder=True)))
    assert dropped.element_spec.shape.as_list() == [3]
    assert [b.numpy().tolist() for b in dropped] == [[0, 1, 8], [27, 64, 125]]


def test_a_new_kind_is_shuffled_by_index_each_unit_once_anew_each_epoch():
    ds = load(Squares(50, LoaderOptions(batch_size=None, shuffle=True, seed=3))).repeat(2)
    values = epoch(ds)
    first, second = values[:50], values[50:]
    assert sorted(first) == sorted(second) == [i * i for i in range(50)]
    assert first != second and first != sorted(first)
    again = epoch(load(Squares(50, LoaderOptions(batch_size=None, shuffle=True, seed=3))))
    assert again == first  # the same seed, the same order


def test_the_epoch_count_is_what_every_shard_delivers():
    """``drop_remainder`` under ``shard=``: the source says how many units every shard
    delivers, and the loader cuts each epoch to it, in order and shuffled."""
    for shuffle in (False, True):
        loader = LoaderOptions(batch_size=None, shuffle=shuffle, seed=1, shard=(2, 0))
        values = epoch(load(Squares(7, loader, epoch_count=5)))
        assert len(values) == 5 and len(set(values)) == 5


def test_an_in_order_stream_of_the_kinds_own():
    class Sliced(Squares):
        def in_order(self) -> tf.data.Dataset:
            return tf.data.Dataset.from_tensor_slices(
                tf.range(100, 100 + self.count, dtype=tf.int64)
            )

    assert epoch(load(Sliced(3, LoaderOptions(batch_size=None)))) == [10000, 10201, 10404]
    units, _ = stream(Sliced(3, LoaderOptions(batch_size=None, shuffle=True, seed=0)))
    assert sorted(int(u) for u in units) == [0, 1, 2]  # shuffled: gathers of positions


def test_the_options_apply_to_every_kind():
    source = Squares(4, LoaderOptions(batch_size=2, prefetch=None))
    source.autotune = False
    ds = load(source)
    assert ds.options().autotune.enabled is False
    assert "Prefetch" not in type(ds._input_dataset).__name__  # no prefetch asked


def test_a_shuffled_kind_restores_exactly_from_a_checkpoint(tmp_path):
    ds = load(Squares(40, LoaderOptions(batch_size=4, shuffle=True, seed=5))).repeat(3)
    it = iter(ds)
    for _ in range(12):  # into the second epoch
        next(it)
    checkpoint = tf.train.Checkpoint(it=it)
    path = checkpoint.save(str(tmp_path / "ckpt"))
    expected = [next(it).numpy().tolist() for _ in range(10)]
    it2 = iter(ds)
    tf.train.Checkpoint(it=it2).restore(path)
    assert [next(it2).numpy().tolist() for _ in range(10)] == expected


def imported_modules(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
    return names


def sources_imported(directory: Path) -> dict[str, list[str]]:
    return {
        path.name: sorted(m for m in imported_modules(path) if m.startswith("npyio._sources"))
        for path in sorted(directory.glob("*.py"))
        if any(m.startswith("npyio._sources") for m in imported_modules(path))
    }


def test_the_loader_never_imports_a_source_kind():
    """The line between "which units, in what order" and "read these units": nothing in
    ``npyio/_pipeline/`` imports ``npyio._sources``, lazily or not."""
    assert sources_imported(PIPELINE) == {}


def test_the_check_of_that_line_finds_an_import(tmp_path):
    (tmp_path / "loader.py").write_text("def f():\n    from npyio._sources import rows\n")
    assert sources_imported(tmp_path) == {"loader.py": ["npyio._sources", "npyio._sources.rows"]}


def test_every_kind_is_a_source_of_its_column(tmp_path):
    """Each kind's plan makes a `Source` that carries its column of the capability table (what
    options it honours), and the loader reads it."""
    from npyio._sources.dataset import source
    from npyio._sources.plan import plan
    from npyio._sources.rows import rows_source
    from npyio._sources.rows_plan import plan_rows

    for i in range(3):
        np.save(tmp_path / f"{i}.npy", np.full(2, i, np.float32))
        np.savez(tmp_path / f"{i}.npz", a=np.full(2, i, np.float32))
    npyio.pack(str(tmp_path / "*.npy"), out=str(tmp_path / "pack"))
    options = DatasetOptions(loader=LoaderOptions(batch_size=None))
    npz = DatasetOptions(ReadOptions(key="a", backend="graph"), options.loader)
    sources = {
        FILES: source(plan(str(tmp_path / "*.npy"), None, options)),
        NPZ: source(plan(str(tmp_path / "*.npz"), None, npz)),
        PACK: source(plan(str(tmp_path / "pack"), None, options)),
        ROWS: rows_source(plan_rows(str(tmp_path / "*.npy"), None, options)),
    }
    assert set(sources) == set(KINDS)
    for kind, made in sources.items():
        assert isinstance(made, Source) and made.kind == kind and made.column is KINDS[kind]
        values = sorted(float(np.ravel(x)[0]) for x in load(made))
        assert values == ([0.0, 0.0, 1.0, 1.0, 2.0, 2.0] if kind == ROWS else [0.0, 1.0, 2.0])
