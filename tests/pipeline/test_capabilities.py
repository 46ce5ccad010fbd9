"""The capability table holds when run: every option on every source kind is honoured (its
effect, `EFFECTS`, seen against the same call without it), or refused with the table's message,
or not an argument of that kind's function (tests/sources/test_kinds.py: the page that holds the
table)."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np
import pytest
import tensorflow as tf

import npyio
from npyio._pipeline.capabilities import ABSENT, HONOURED, OPTIONS, REFUSED, Column, honoured
from npyio._pipeline.options import ROWS_OPTIONS, LoaderOptions, ReadOptions, SplitOptions
from npyio._read import DEFAULT_BACKEND
from npyio._sources import rows_plan
from npyio._sources.kinds import COLUMNS, KINDS
from npyio._sources.pack_plan import PACK
from npyio._sources.plan import FILES, NPZ
from npyio._sources.rows_plan import ROWS
from tests._graph_util import graph_def, python_ops

N = 4

#: A value for each option that is not its default (with what it needs to be valid).
SAMPLES: dict[str, dict[str, object]] = {
    "batch_size": {"batch_size": 2},
    "drop_remainder": {"drop_remainder": True, "batch_size": 3},
    "shuffle": {"shuffle": True},
    "seed": {"seed": 1},
    "reshuffle_each_iteration": {"reshuffle_each_iteration": False},
    "shard": {"shard": (2, 1)},
    "num_parallel_calls": {"num_parallel_calls": 2},
    "deterministic": {"deterministic": False},
    "prefetch": {"prefetch": 1},
    "with_paths": {"with_paths": True},
    "padding_value": {"padding_value": -1.0, "shape": (3, None), "batch_size": 2},
    "dtype": {"dtype": "float32"},
    "shape": {"shape": (3, 2)},
    "label_dtype": {"label_dtype": "int64"},
    "label_shape": {"label_shape": (3,)},
    "label_key": {"label_key": "y"},
    "crop": {"crop": (2,)},
    "label_crop": {"label_crop": (2,)},
    "crops_per_file": {"crops_per_file": 2},
    "foreground": {"foreground": 0.5},
    "backend": {"backend": "py_function"},
    "ignore_errors": {"ignore_errors": True},
    "max_file_size": {"max_file_size": 10**6},
    "max_header_size": {"max_header_size": 20_000},
    "validation_split": {"validation_split": 0.5, "subset": "training", "seed": 0},
    "subset": {"validation_split": 0.5, "subset": "both", "seed": 0},
    "shuffle_buffer": {"shuffle": True, "shuffle_buffer": 4},
    "num_parallel_reads": {"num_parallel_reads": 2},
}


@pytest.fixture(scope="module")
def sources(tmp_path_factory) -> dict[str, object]:
    """One small source per kind (`write_sources`)."""
    return write_sources(tmp_path_factory.mktemp("kinds"), N)


def write_sources(root: Path, n: int) -> dict[str, object]:
    """One source per kind: ``n`` files of (3, 2) float32 inputs (file ``i`` all ``i``) and
    (3,) int64 labels (``3 * i`` to ``3 * i + 2``: row ``r`` of the labels is ``r``), the same
    as ``.npz`` archives and as a pack; `npyio.rows` reads their rows."""
    for side in ("x", "y", "z"):
        (root / side).mkdir()
    for i in range(n):
        x = np.full((3, 2), i, np.float32)
        y = np.arange(3, dtype=np.int64) + 3 * i
        np.save(root / "x" / f"{i}.npy", x)
        np.save(root / "y" / f"{i}.npy", y)
        np.savez(root / "z" / f"{i}.npz", x=x, y=y)
    npyio.pack(str(root / "x"), str(root / "y"), out=str(root / "p"))
    return {"x": str(root / "x"), "y": str(root / "y"), "z": str(root / "z"), "p": str(root / "p")}


def open_kind(kind: str, sources: dict[str, object], option: str, **kw: object) -> object:
    kw = {"batch_size": None, **kw}  # single elements, unless the sample batches
    if kind == FILES:
        return npyio.dataset(sources["x"], sources["y"], **kw)
    if kind == NPZ:
        if (option.startswith("label_") and option != "label_key") or option == "foreground":
            kw["label_key"] = "y"  # (the foreground's masks are the labels)
        return npyio.dataset(sources["z"], key="x", **kw)
    if kind == PACK:
        return npyio.dataset(sources["p"], **kw)
    return npyio.rows(sources["x"], sources["y"], **kw)


def cells() -> list[tuple[str, str]]:
    return [(option, kind) for option in OPTIONS for kind in KINDS]


Open = Callable[..., Any]


def sigs(ds: Any) -> list[tuple[float, ...]]:
    """Each element's numbers, flattened: a sample's identity (file ``i`` is all ``i``, row
    ``r`` is labelled ``r``), in the order the dataset yields them."""
    return [
        tuple(
            np.concatenate(
                [np.ravel(t.numpy()) for t in tf.nest.flatten(e) if t.dtype != tf.string]
            )
        )
        for e in ds
    ]


def consts_into(ds: Any, op: str, index: int | None = None) -> list[float]:
    """The values of the constants feeding input ``index`` (None: every input; -1: the last,
    which follows a map's captured tensors) of each ``op`` node in the dataset's graph."""
    nodes = {n.name: n for n in graph_def(ds).node}
    values = []
    for node in nodes.values():
        if node.op != op:
            continue
        data = [name for name in node.input if not name.startswith("^")]
        names = data if index is None else data[index:][:1]
        for name in names:
            source = nodes.get(name.split(":")[0])
            if source is not None and source.op == "Const":
                values.extend(np.ravel(tf.make_ndarray(source.attr["value"].tensor)).tolist())
    return values


def _batch_size(open_: Open, kind: str, tmp: Path) -> None:
    one, two = open_(), open_(batch_size=2)
    first = tf.nest.flatten(one.element_spec)[0].shape
    assert tf.nest.flatten(next(iter(two)))[0].shape == (2, *first)
    assert sum(len(tf.nest.flatten(b)[0]) for b in two) == len(sigs(one))


def _drop_remainder(open_: Open, kind: str, tmp: Path) -> None:
    kept, dropped = open_(batch_size=3), open_(batch_size=3, drop_remainder=True)
    assert tf.nest.flatten(kept.element_spec)[0].shape[0] is None
    assert tf.nest.flatten(dropped.element_spec)[0].shape[0] == 3  # the static batch dim
    assert all(len(tf.nest.flatten(b)[0]) == 3 for b in dropped)


def _shuffle(open_: Open, kind: str, tmp: Path) -> None:
    plain = sigs(open_(seed=0))
    orders = [sigs(open_(shuffle=True, seed=s)) for s in range(5)]
    assert all(sorted(o) == sorted(plain) for o in orders)
    assert any(o != plain for o in orders), "shuffle=True left the order as it was"


def _seed(open_: Open, kind: str, tmp: Path) -> None:
    orders = [sigs(open_(shuffle=True, seed=s)) for s in (1, 1, 2, 3, 4)]
    assert orders[0] == orders[1], "the same seed gave another order"
    assert len({tuple(o) for o in orders}) > 1, "every seed gave the same order"


def _reshuffle(open_: Open, kind: str, tmp: Path) -> None:
    for s in range(5):
        ds = open_(shuffle=True, seed=s, reshuffle_each_iteration=False)
        assert sigs(ds) == sigs(ds), "reshuffle_each_iteration=False gave each epoch an order"
    anew = [open_(shuffle=True, seed=s) for s in range(5)]
    assert any(sigs(ds) != sigs(ds) for ds in anew)  # the default, for contrast


def _shard(open_: Open, kind: str, tmp: Path) -> None:
    whole, half = sigs(open_()), sigs(open_(shard=(2, 1)))
    assert len(half) == len(whole) // 2 and set(half) < set(whole)


def _parallelism(option: str, index: int) -> Check:
    def check(open_: Open, kind: str, tmp: Path) -> None:
        op = "PrefetchDataset" if option == "prefetch" else "ParallelMapDatasetV2"
        assert 2 not in consts_into(open_(), op, index)
        assert 2 in consts_into(open_(**{option: 2}), op, index), f"{option}=2 not in the graph"

    return check


def _deterministic(open_: Open, kind: str, tmp: Path) -> None:
    def modes(ds: Any) -> set[bytes]:
        out = set()
        for n in graph_def(ds).node:
            if n.op == "ParallelMapDatasetV2":
                out.add(n.attr["deterministic"].s)
            elif n.op == "NpyioBatchDataset":  # the native batch source: a bool
                out.add(b"true" if n.attr["deterministic"].b else b"false")
        return out

    assert b"false" not in modes(open_())
    assert b"false" in modes(open_(deterministic=False))


def _with_paths(open_: Open, kind: str, tmp: Path) -> None:
    plain, named = open_(), open_(with_paths=True)
    strings = [t for t in tf.nest.flatten(named.element_spec) if t.dtype == tf.string]
    assert len(tf.nest.flatten(named.element_spec)) == len(tf.nest.flatten(plain.element_spec)) + 1
    assert len(strings) == 1
    paths = [t.numpy().decode() for e in named for t in tf.nest.flatten(e) if t.dtype == tf.string]
    assert paths and all(p.startswith(str(tmp)) for p in paths), paths  # the source's files
    assert sigs(named) == sigs(plain)


def _padding_value(open_: Open, kind: str, tmp: Path) -> None:
    kw = {"shape": (3, None), "batch_size": 2}
    # a value no padded shape holds (-1 is an unknown dim's)
    assert -7.5 not in consts_into(open_(**kw), "PaddedBatchDatasetV2")
    assert -7.5 in consts_into(open_(padding_value=-7.5, **kw), "PaddedBatchDatasetV2")


def _refused(open_: Open, *args: object, **kw: object) -> str:
    """The error that building or reading ``open_(*args, **kw)`` raises."""
    with pytest.raises((npyio.NpyFormatError, tf.errors.OpError, ValueError)) as info:
        list(open_(*args, **kw))
    return str(info.value)


def _dtype(option: str, given: str, other: str) -> Check:
    def check(open_: Open, kind: str, tmp: Path) -> None:
        spec = tf.nest.flatten(open_(**{option: given}).element_spec)
        assert given in {t.dtype.name for t in spec}
        assert other in _refused(open_, **{option: other})  # checked, not ignored

    return check


def _shape(option: str, given: tuple, other: tuple) -> Check:
    def check(open_: Open, kind: str, tmp: Path) -> None:
        spec = [t.shape for t in tf.nest.flatten(open_(**{option: given}).element_spec)]
        if kind == PACK:  # a pack's shapes are known when written: the option is checked
            assert any(tf.TensorShape(given).is_compatible_with(t) for t in spec)
        else:  # the files' shapes are read from the first file, unless given
            assert tf.TensorShape(given) in spec
            assert tf.TensorShape(given) not in [
                t.shape for t in tf.nest.flatten(open_().element_spec)
            ]
        assert f"shape={other}" in _refused(open_, **{option: other})  # checked, not ignored

    return check


def _crop(open_: Open, kind: str, tmp: Path) -> None:
    # the inputs ((3, 2) arrays) read as windows of 2 rows; a centre window of all 3 rows
    # reads what the whole does
    def first_shape(ds: tf.data.Dataset) -> list[int | None]:
        return tf.nest.flatten(ds.element_spec)[0].shape.as_list()

    assert first_shape(open_(crop=(2,), seed=0)) == [2, 2]
    assert first_shape(open_()) == [3, 2]
    whole = npyio.Crop((3,), start="center")
    assert [np.asarray(e).tolist() for e in tf.nest.flatten(next(iter(open_(crop=whole))))] == [
        np.asarray(e).tolist() for e in tf.nest.flatten(next(iter(open_())))
    ]


def _label_crop(open_: Open, kind: str, tmp: Path) -> None:
    plain = [t.shape.as_list() for t in tf.nest.flatten(open_().element_spec)]
    own = [t.shape.as_list() for t in tf.nest.flatten(open_(label_crop=(2,), seed=0).element_spec)]
    assert plain[-1] == [3] and own[-1] == [2] and own[0] == plain[0]  # the labels' own window
    both = [
        t.shape.as_list() for t in tf.nest.flatten(open_(crop=(2,), label_crop=None).element_spec)
    ]
    assert both[0] == [2, 2] and both[-1] == [3]


def _crops_per_file(open_: Open, kind: str, tmp: Path) -> None:
    # each file (all i) three times an epoch, each unit with its own window
    files = [int(s[0]) for s in sigs(open_(crop=(2,), crops_per_file=3, seed=0))]
    assert sorted(files) == sorted(list(range(N)) * 3)


def _foreground(open_: Open, kind: str, tmp: Path) -> None:
    # windows of one row: file 0's labels are [0, 1, 2], so a uniform window is labelled 0 a
    # third of the time; one centred on the foreground never is
    def labels(**kw: object) -> list[float]:
        ds = open_(crop=(1,), crops_per_file=8, seed=0, **kw)
        return [s[-1] for s in sigs(ds)]

    assert 0.0 in labels() and 0.0 not in labels(foreground=1.0)


def _label_key(open_: Open, kind: str, tmp: Path) -> None:
    plain, labelled = open_(), open_(label_key="y")
    assert len(tf.nest.flatten(plain.element_spec)) == 1
    assert [y.numpy().tolist() for _, y in labelled] == [
        [3 * i, 3 * i + 1, 3 * i + 2] for i in range(N)
    ]


def _backend(open_: Open, kind: str, tmp: Path) -> None:
    assert not python_ops(open_())
    assert python_ops(open_(backend="py_function"))
    assert sigs(open_(backend="py_function")) == sigs(open_()) == sigs(open_(backend="graph"))
    # the default reads loose local files with the native reader's op; .npz members (which it
    # does not serve) with the graph parser, as backend="graph" reads everything
    assert native_op(open_()) == (kind == FILES)
    assert not native_op(open_(backend="graph"))


def native_op(ds: object) -> bool:
    """Whether the dataset's graph holds the native reader's op."""
    return "NpyioReadFiles" in str(graph_def(ds))


def _ignore_errors(open_: Open, kind: str, tmp: Path) -> None:
    message = _refused(open_, tmp)  # the same files, file 2 of them cut short
    assert "2.np" in message, message
    kept = sigs(open_(tmp, ignore_errors=True))
    assert kept == [s for s in sigs(open_()) if s[0] != 2.0]


def _limit(option: str, measure: Callable[[Path], int]) -> Check:
    def check(open_: Open, kind: str, tmp: Path) -> None:
        limit = measure(tmp)
        assert len(sigs(open_(**{option: limit}))) == N  # just enough
        assert "0.np" in _refused(open_, **{option: limit - 1})  # one byte short

    return check


def _file_size(tmp: Path) -> int:
    return max(p.stat().st_size for p in tmp.glob("*/*.np*") if p.parent.name in ("x", "y"))


def _header_size(tmp: Path) -> int:
    data = (tmp / "x" / "0.npy").read_bytes()
    return int.from_bytes(data[8:10], "little")  # version 1.0's header length


def _split(open_: Open, kind: str, tmp: Path) -> None:
    whole = sigs(open_(seed=0))
    train = sigs(open_(validation_split=0.5, subset="training", seed=0))
    assert len(train) == len(whole) // 2 and set(train) < set(whole)


def _subset(open_: Open, kind: str, tmp: Path) -> None:
    whole = sigs(open_(seed=0))
    train, val = (sigs(ds) for ds in open_(validation_split=0.5, subset="both", seed=0))
    assert len(train) == len(val) == len(whole) // 2
    assert sorted(train + val) == sorted(whole)


def _shuffle_buffer(open_: Open, kind: str, tmp: Path) -> None:
    # Pieces of 1 to 3 rows (the rows are 8 bytes wide): shuffle_buffer=6 over 2 reads at a
    # time asks for pieces of 3 rows, whole files here, so each window of 6 rows comes from 2
    # files; without it, pieces of the smallest size (1 row) mix more files into a window.
    def files_per_window(**kw: object) -> list[int]:
        order = [int(y) for _, y in open_(shuffle=True, num_parallel_reads=2, **kw)]
        return [len({r // 3 for r in order[i : i + 6]}) for i in range(0, len(order), 6)]

    with mock.patch.multiple(rows_plan, MAX_PIECE_BYTES=24, MIN_PIECE_BYTES=8):
        assert all(files_per_window(seed=s, shuffle_buffer=6) == [2, 2] for s in range(5))
        assert any(max(files_per_window(seed=s)) > 2 for s in range(5))


Check = Callable[[Open, str, Path], None]

#: What each honoured option does, checked against the same call without it: a cell whose
#: option is ignored fails here.
EFFECTS: dict[str, Check] = {
    "batch_size": _batch_size,
    "drop_remainder": _drop_remainder,
    "shuffle": _shuffle,
    "seed": _seed,
    "reshuffle_each_iteration": _reshuffle,
    "shard": _shard,
    "num_parallel_calls": _parallelism("num_parallel_calls", -1),
    "deterministic": _deterministic,
    "prefetch": _parallelism("prefetch", -1),
    "with_paths": _with_paths,
    "padding_value": _padding_value,
    "dtype": _dtype("dtype", "float32", "float64"),
    "shape": _shape("shape", (3, None), (4, 2)),
    "label_dtype": _dtype("label_dtype", "int64", "int32"),
    "label_shape": _shape("label_shape", (None,), (4,)),
    "label_key": _label_key,
    "crop": _crop,
    "label_crop": _label_crop,
    "crops_per_file": _crops_per_file,
    "foreground": _foreground,
    "backend": _backend,
    "ignore_errors": _ignore_errors,
    "max_file_size": _limit("max_file_size", _file_size),
    "max_header_size": _limit("max_header_size", _header_size),
    "validation_split": _split,
    "subset": _subset,
    "shuffle_buffer": _shuffle_buffer,
    "num_parallel_reads": _parallelism("num_parallel_reads", -1),
}


@pytest.fixture(scope="module")
def broken(tmp_path_factory) -> Path:
    """The sources again, with file 2's inputs cut short (for ignore_errors)."""
    root = tmp_path_factory.mktemp("broken")
    write_sources(root, N)
    for path in (root / "x" / "2.npy", root / "z" / "2.npz"):
        path.write_bytes(path.read_bytes()[:-8])
    return root


@pytest.mark.parametrize(("option", "kind"), cells(), ids=[f"{o}-{k}" for o, k in cells()])
def test_every_option_on_every_kind_does_what_the_table_says(sources, broken, option, kind):
    use = KINDS[kind].uses[option]
    kw = dict(SAMPLES[option])
    if use.status == HONOURED:

        def open_(root: Path | None = None, **given: object) -> Any:
            where = sources if root is None else {k: str(root / k) for k in "xyzp"}
            return open_kind(kind, where, option, **given)

        EFFECTS[option](
            open_, kind, broken if option == "ignore_errors" else Path(sources["x"]).parent
        )
    elif use.status == REFUSED:
        message = use.message.format(value=kw[option])
        with pytest.raises(ValueError, match=re.escape(message)):
            open_kind(kind, sources, option, **kw)
    else:
        assert use.status == ABSENT
        with pytest.raises(TypeError, match=rf"\b{option}\b"):
            open_kind(kind, sources, option, **kw)


def test_the_table_has_a_row_for_every_option_and_a_cell_for_every_kind():
    options = {
        f.name
        for cls in (ReadOptions, LoaderOptions, SplitOptions)
        for f in dataclasses.fields(cls)
        if f.init
    } | ROWS_OPTIONS
    assert set(OPTIONS) == options - {"key"}  # key picks the kind: it is no row
    assert set(SAMPLES) == set(EFFECTS) == set(OPTIONS)
    for column in COLUMNS:
        assert set(column.uses) == set(OPTIONS), column.kind


def test_a_kind_declares_every_option_and_no_other():
    everything = {name: honoured() for name in OPTIONS}
    Column("new", "a new kind", everything)  # a whole column
    with pytest.raises(ValueError, match=r"the new column: missing \['shuffle'\], unknown \[\]"):
        Column("new", "a new kind", {k: v for k, v in everything.items() if k != "shuffle"})
    with pytest.raises(ValueError, match=r"missing \[\], unknown \['shufle'\]"):
        Column("new", "a new kind", {**everything, "shufle": honoured()})
    with pytest.raises(TypeError):  # a column is not edited once declared
        KINDS[FILES].uses["shuffle"] = honoured()  # type: ignore[index]


def test_a_refused_value_is_refused_and_the_default_is_not(sources):
    KINDS[PACK].refuse({"deterministic": True})
    with pytest.raises(ValueError, match=r"^p: deterministic=False does not apply"):
        KINDS[PACK].refuse({"deterministic": False}, "p")
    defaults = {"backend": DEFAULT_BACKEND, "max_header_size": 10_000, "deterministic": None}
    defaults["batch_size"] = None  # an element per file, to count them
    assert len(list(npyio.dataset(sources["p"], **defaults))) == N  # the defaults, given


def test_shard_means_by_file_for_files_and_by_row_for_rows_and_packs(sources):
    by_file = [
        float(x[0, 0])
        for x, _ in npyio.dataset(sources["x"], sources["y"], shard=(2, 1), batch_size=None)
    ]
    assert by_file == [1.0, 3.0]  # every 2nd file
    by_row = [
        y.numpy().tolist()
        for _, y in npyio.rows(sources["x"], sources["y"], shard=(2, 1), batch_size=None)
    ]
    assert by_row == list(range(6, 12))  # the second half of the rows
    assert "by file" in KINDS[FILES].uses["shard"].meaning
    assert all("by row" in KINDS[k].uses["shard"].meaning for k in (PACK, ROWS))


def labels_of(ds) -> list[int]:
    return [int(y) for _, y in ds]


def test_rows_hold_out_rows_as_a_pack_does(sources):
    x, y, n = sources["x"], sources["y"], 3 * N  # label i is row i
    held = sorted(np.random.RandomState(3).permutation(n)[n - 3 :].tolist())  # as files are
    train, val = npyio.rows(x, y, validation_split=0.25, subset="both", seed=3, batch_size=None)
    assert labels_of(val) == held  # unshuffled: in row order
    assert labels_of(train) == [r for r in range(n) if r not in held]
    shuffled = dict(validation_split=0.25, shuffle=True, shuffle_buffer=4, seed=3, batch_size=None)
    val = npyio.rows(x, y, subset="validation", **shuffled)
    assert sorted(labels_of(val)) == held  # the shuffle does not move the split
    # each subset is then sharded by row: shard 0 of 2 reads the first 4 of its 9 rows
    train = npyio.rows(x, y, subset="training", shard=(2, 0), **shuffled)
    assert sorted(labels_of(train)) == [r for r in range(n) if r not in held][:4]
