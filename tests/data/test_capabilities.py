"""The capability table holds when run: every option on every source kind is honoured, or
refused with the table's message, or not an argument of that kind's function; the README's
table is the one `markdown` writes."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import numpy as np
import pytest

import npyio
from npyio._data import capabilities
from npyio._data.capabilities import ABSENT, FILES, HONOURED, KINDS, NPZ, PACK, REFUSED, ROWS, TABLE
from npyio._data.options import LoaderOptions, ReadOptions, RowsOptions, SplitOptions

ROOT = Path(__file__).resolve().parents[2]
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
        if option.startswith("label_") and option != "label_key":
            kw["label_key"] = "y"
        return npyio.dataset(sources["z"], key="x", **kw)
    if kind == PACK:
        return npyio.dataset(sources["p"], **kw)
    return npyio.rows(sources["x"], sources["y"], **kw)


def cells() -> list[tuple[str, str]]:
    return [(option, kind) for option in TABLE for kind in KINDS]


@pytest.mark.parametrize(("option", "kind"), cells(), ids=[f"{o}-{k}" for o, k in cells()])
def test_every_option_on_every_kind_does_what_the_table_says(sources, option, kind):
    use = TABLE[option][kind]
    kw = dict(SAMPLES[option])
    if use.status == HONOURED:
        built = open_kind(kind, sources, option, **kw)
        for ds in built if isinstance(built, tuple) else (built,):
            assert len(list(ds)) > 0, f"{option} on {kind}: no elements"
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
        for cls in (ReadOptions, LoaderOptions, SplitOptions, RowsOptions)
        for f in dataclasses.fields(cls)
        if f.init
    }
    assert set(TABLE) == options - {"key"}  # key picks the kind: it is no row
    assert set(SAMPLES) == set(TABLE)
    for option, row in TABLE.items():
        assert set(row) == set(KINDS), option


def test_a_refused_value_is_refused_and_the_default_is_not(sources):
    capabilities.refuse(PACK, {"deterministic": True})
    with pytest.raises(ValueError, match=r"^p: deterministic=False does not apply"):
        capabilities.refuse(PACK, {"deterministic": False}, "p")
    defaults = {"backend": "graph", "max_header_size": 10_000, "deterministic": None}
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
    assert "by file" in TABLE["shard"][FILES].meaning
    assert all("by row" in TABLE["shard"][k].meaning for k in (PACK, ROWS))


def readme_and_docs() -> str:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("**/*.md"))]
    return "\n".join(p.read_text(encoding="utf-8") for p in pages if p.exists())


def test_the_readme_holds_the_table_the_capabilities_write():
    assert capabilities.markdown() in readme_and_docs()


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
