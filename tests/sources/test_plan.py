"""Planning without TensorFlow: `plan_dataset` decides files, pairs, shards, specs and strategy
in plain Python, so it is run here in a subprocess where TensorFlow cannot be imported at all
(`plan_json`, which ``tests/sources/test_rows_plan.py`` shares). `choose_strategy` is a pure
function, checked directly."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from npyio._format.header import make_hint
from npyio._format.packed import INCOMPLETE
from npyio._format.spec import Spec
from npyio._pipeline.options import DatasetOptions
from npyio._read import CAPABILITIES
from npyio._sources.plan import (
    BATCH_THEN_DECODE,
    DECODE_THEN_BATCH,
    choose_strategy,
    plan,
    plan_dataset,
)
from npyio.errors import IncompletePackError
from tests.test_structure import run_without_tf

#: Run before each snippet: the plan's results as JSON-able values.
PRELUDE = """
import json, sys, types
import numpy as np
import npyio._sources.rows_plan
from npyio._pipeline.options import DatasetOptions
from npyio._sources.plan import plan_dataset
from npyio._sources.rows_plan import plan_rows
from npyio.errors import NpyFormatError

def plan(inputs, labels=None, **arguments):
    return plan_dataset(inputs, labels, DatasetOptions.from_arguments(arguments))

def rows_plan(inputs, labels=None, **arguments):
    return plan_rows(inputs, labels, DatasetOptions.from_arguments(arguments, "rows"))

def spec(s):
    return {
        "dtype": s.file.dtype.name,
        "shape": None if s.file.shape is None else list(s.file.shape),
        "hint": s.hint is not None,
        "member": s.member,
    }

def names(column):
    return [p.rsplit("/", 1)[-1] for p in column]

def error(call):
    try:
        call()
    except (ValueError, TypeError) as e:
        return [type(e).__name__, str(e)]
    return None
"""


#: The graph parser's batch limit: files this large are decoded one by one.
GRAPH_LIMIT = CAPABILITIES["graph"].batch_limit or 0


def plan_json(code: str, **values: object) -> Any:
    """Runs ``code`` (which sets ``out``) with TensorFlow blocked and returns ``out``."""
    given = "".join(f"{k} = {v!r}\n" for k, v in values.items())
    check = "\nassert sys.modules.get('tensorflow') is None, 'TensorFlow was imported'\n"
    r = run_without_tf(PRELUDE + given + textwrap.dedent(code) + check + "print(json.dumps(out))\n")
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.splitlines()[-1])


def save(path: Path, value: np.ndarray) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, value)
    return str(path)


@pytest.fixture
def pairs(tmp_path: Path) -> tuple[str, str]:
    """x/ and y/ with files 0..5: x float32 (4, 3), y int64 scalars; written out of order."""
    for i in (3, 1, 5, 0, 2, 4):
        save(tmp_path / "x" / f"{i}.npy", np.full((4, 3), i, np.float32))
        save(tmp_path / "y" / f"{i}.npy", np.int64(i))
    return str(tmp_path / "x"), str(tmp_path / "y")


# --- plan_dataset -----------------------------------------------------------------------------
def test_pairs_specs_from_headers_and_strategy(pairs):
    out = plan_json(
        """
        p = plan(xs, ys, batch_size=4)
        q = plan(xs, batch_size=None)
        out = {
            "x": names(p.columns[0]), "y": names(p.columns[1]), "count": p.count,
            "specs": [spec(s) for s in p.specs], "strategy": p.strategy,
            "q": [len(q.columns), q.strategy, spec(q.specs[0])],
        }
        """,
        xs=pairs[0],
        ys=pairs[1],
    )
    assert out["x"] == out["y"] == [f"{i}.npy" for i in range(6)]
    assert out["count"] == 6
    assert out["specs"] == [
        {"dtype": "float32", "shape": [4, 3], "hint": True, "member": None},
        {"dtype": "int64", "shape": [], "hint": True, "member": None},
    ]
    assert out["strategy"] == BATCH_THEN_DECODE
    # no batch: nothing to decode a batch of
    assert out["q"] == [1, DECODE_THEN_BATCH, out["specs"][0]]


def test_shards(pairs):
    out = plan_json(
        """
        context = types.SimpleNamespace(num_input_pipelines=3, input_pipeline_id=2)
        out = {
            "tuple": [names(c) for c in plan(xs, ys, shard=(2, 1)).columns],
            "context": names(plan(xs, shard=context).columns[0]),
            "all": sorted(n for i in range(4) for n in names(
                plan(xs, shard=(4, i)).columns[0])),
            "empty": error(lambda: plan(xs, shard=(7, 6))),
        }
        """,
        xs=pairs[0],
        ys=pairs[1],
    )
    assert out["tuple"] == [["1.npy", "3.npy", "5.npy"]] * 2
    assert out["context"] == ["2.npy", "5.npy"]
    assert out["all"] == [f"{i}.npy" for i in range(6)]
    assert out["empty"] == ["ValueError", "shard 6 of 7 has no files (6 in all)"]


def test_given_specs_read_no_file(pairs):
    with open(f"{pairs[0]}/0.npy", "wb") as f:
        f.write(b"corrupt")  # the first file: a spec read from it would fail
    out = plan_json(
        """
        p = plan(xs, ys, dtype="float32", shape=(4, 3), batch_size=2)
        out = {"specs": [spec(s) for s in p.specs], "strategy": p.strategy,
               "header": error(lambda: plan(xs, ys, dtype="float32")),
               "partial": spec(plan(xs, dtype="float32", shape=(None, 3)).specs[0])}
        """,
        xs=pairs[0],
        ys=pairs[1],
    )
    assert out["specs"][0] == {"dtype": "float32", "shape": [4, 3], "hint": True, "member": None}
    assert out["specs"][1]["dtype"] == "int64"  # the labels' spec still comes from their header
    assert out["strategy"] == BATCH_THEN_DECODE
    assert out["header"][0] == "NpyFormatError"  # dtype alone: the shape is read, and refused
    assert out["header"][1].startswith(f"{pairs[0]}/0.npy: ")
    assert out["partial"] == {"dtype": "float32", "shape": [None, 3], "hint": False, "member": None}


def test_given_spec_contradicting_the_header(pairs):
    out = plan_json(
        """
        out = [error(lambda: plan(xs, ys, label_dtype="int32")),
               error(lambda: plan(xs, shape=(3, 4))),
               error(lambda: plan(xs, dtype="float64"))]
        """,
        xs=pairs[0],
        ys=pairs[1],
    )
    assert out[0] == [
        "NpyFormatError",
        f"{pairs[1]}/0.npy: dtype mismatch -- expected label_dtype=int32, got int64; to load the "
        "labels as int32, leave label_dtype out (it is read from the files) and cast: "
        "ds = ds.map(lambda x, y: (x, tf.cast(y, tf.int32)))",
    ]
    assert out[1] == [
        "NpyFormatError",
        f"{pairs[0]}/0.npy: shape mismatch -- expected shape=(3, 4), got (4, 3); to read arrays "
        "whose dims vary, pass shape=(None, None)",
    ]
    assert out[2][1].endswith("ds = ds.map(lambda x: tf.cast(x, tf.float64))")  # no labels


@pytest.mark.parametrize(
    "kwargs, strategy",
    [
        ({"batch_size": 2}, BATCH_THEN_DECODE),
        ({"batch_size": None}, DECODE_THEN_BATCH),
        ({"batch_size": 2, "ignore_errors": True}, BATCH_THEN_DECODE),  # native: doubts
        ({"batch_size": 2, "backend": "py_function"}, DECODE_THEN_BATCH),
        ({"batch_size": 2, "shape": (None, 3)}, DECODE_THEN_BATCH),
        ({"batch_size": 2, "dtype": "float32", "shape": (4, 3)}, BATCH_THEN_DECODE),
        ({"batch_size": 2, "backend": "graph"}, BATCH_THEN_DECODE),
    ],
    ids=["small", "no-batch", "ignore_errors", "py_function", "variable-shape", "given", "graph"],
)
def test_strategy(pairs, kwargs, strategy):
    out = plan_json(
        "out = plan(xs, ys, **kwargs).strategy", xs=pairs[0], ys=pairs[1], kwargs=kwargs
    )
    assert out == strategy


def test_large_files_are_batched_by_the_native_reader_only(tmp_path):
    """The graph parser decodes files over its ``batch_limit`` one by one (its batch decode
    would copy them once more); the native reader reads any size straight into the batch."""
    big = save(tmp_path / "big" / "0.npy", np.zeros(GRAPH_LIMIT // 4, np.float32))
    code = """
out = []
for backend in ("native", "graph"):
    p = plan(x, batch_size=2, backend=backend)
    out.append([p.backend, p.strategy, p.specs[0].hint.size])
"""
    out = plan_json(code, x=big)
    assert out == [
        ["native", BATCH_THEN_DECODE, GRAPH_LIMIT + 128],
        ["graph", DECODE_THEN_BATCH, GRAPH_LIMIT + 128],
    ]


def test_the_plan_says_which_reader_it_chose(tmp_path):
    """The native reader serves local files of one static native-order C-order shape, read
    strictly, and local files of per-case shapes whole (each header parsed by the kernel, the
    files it doubts decided by the graph parser); everything else is read by its fallback, the
    graph parser, as the plan says."""
    x = save(tmp_path / "x" / "0.npy", np.zeros((2, 3), np.float32))
    big = save(tmp_path / "be" / "0.npy", np.zeros((2, 3), ">f4"))
    fortran = save(tmp_path / "f" / "0.npy", np.asfortranarray(np.zeros((2, 3), np.float32)))
    np.savez(tmp_path / "a.npz", x=np.zeros(3))
    code = """
cases = [
    (x, {}),
    (x, {"shape": (None, 3)}),  # per-case shapes: one file at a time, its header parsed
    (x, {"shape": (None, 3), "ignore_errors": True}),  # skipping reads batches of one shape
    (x, {"ignore_errors": True}),  # read in batches; the files it doubts, by the graph
    (x, {"max_file_size": 10, "dtype": "float32", "shape": (2, 3)}),  # no file read
    (big, {}),
    (fortran, {}),
    (npz, {"key": "x"}),
    (x, {"backend": "graph"}),
    (x, {"backend": "py_function"}),
]
out = [plan(path, **kwargs).backend for path, kwargs in cases]
"""
    out = plan_json(code, x=x, big=big, fortran=fortran, npz=str(tmp_path / "a.npz"))
    assert out == ["native", "native", "graph", "native"] + ["graph"] * 5 + ["py_function"]


def test_npz_members(tmp_path):
    for i in range(3):
        np.savez(tmp_path / f"{i}.npz", x=np.full((2, 2), i, np.int16), y=np.float64(i))
    out = plan_json(
        """
        p = plan(root, key="x", label_key="y", batch_size=2)
        out = {"columns": [names(c) for c in p.columns], "specs": [spec(s) for s in p.specs],
               "error": error(lambda: plan(root, key="x", label_key="y",
                                                      label_dtype="int64"))}
        """,
        root=str(tmp_path),
    )
    assert out["columns"] == [["0.npz", "1.npz", "2.npz"]] * 2
    assert out["specs"] == [
        {"dtype": "int16", "shape": [2, 2], "hint": True, "member": "x"},
        {"dtype": "float64", "shape": [], "hint": True, "member": "y"},
    ]
    assert out["error"][1].startswith(
        f"{tmp_path}/0.npz[y]: dtype mismatch -- expected label_dtype=int64, got float64; "
    )


def test_missing_sources_are_named_before_pairing(pairs, tmp_path):
    out = plan_json(
        """
        out = [error(lambda: plan(missing, ys)),
               error(lambda: plan(xs, missing)),
               error(lambda: rows_plan(missing))]
        """,
        xs=pairs[0],
        ys=pairs[1],
        missing=str(tmp_path / "lables"),
    )
    where = repr(str(tmp_path / "lables"))
    assert out == [
        ["ValueError", f"inputs: {where} does not exist (no such file or directory)"],
        ["ValueError", f"labels: {where} does not exist (no such file or directory)"],
        ["ValueError", f"inputs: {where} does not exist (no such file or directory)"],
    ]


# --- the source kind and what it refuses: decided once, by the plan ----------------------------
@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"key": "x", "max_file_size": 10}, "max_file_size is not supported with key"),
        ({"label_key": "y"}, "label_key needs key"),
        ({"key": "x", "backend": "py_function"}, "needs backend='native' or 'graph'"),
    ],
)
def test_the_plan_refuses_what_the_kind_refuses_before_reading_anything(
    tmp_path, arguments, message
):
    options = DatasetOptions.from_arguments(arguments)  # each value valid on its own
    missing = str(tmp_path / "nothing-here")
    for planner in (plan, plan_dataset):
        with pytest.raises(ValueError, match=re.escape(message)):
            planner(missing, options=options)


def test_a_pack_refuses_its_options_before_its_index_is_read(tmp_path):
    (tmp_path / INCOMPLETE).write_text("")  # an interrupted pack: no index to read
    where = str(tmp_path)
    for arguments, labels, message in [
        ({"backend": "py_function"}, None, "a packed directory is read by npyio's row reader"),
        ({"key": "x"}, None, "key= does not apply to a packed directory"),
        ({}, "labels", "a packed directory holds its labels"),
    ]:
        with pytest.raises(ValueError, match=re.escape(f"{where}: {message}")):
            plan(where, labels, DatasetOptions.from_arguments(arguments))
    with pytest.raises(IncompletePackError, match="incomplete pack"):
        plan(where)


# --- pure functions ---------------------------------------------------------------------------
def spec(shape: tuple[int | None, ...] | None, size: int = 1000) -> Spec:
    dt = np.dtype("float32")
    hint = make_hint(dt, shape)
    if hint is not None and size != hint.size:
        hint = type(hint)(hint.header, size, hint.little_endian, hint.fortran_order)
    return Spec.whole(dt, shape, hint)


@pytest.mark.parametrize(
    "specs, batch_size, ignore_errors, backend, expected",
    [
        ((spec((2,)),), 8, False, "graph", BATCH_THEN_DECODE),
        ((spec((2,)), spec(())), 8, False, "graph", BATCH_THEN_DECODE),
        ((spec((2,)),), None, False, "graph", DECODE_THEN_BATCH),
        ((spec((2,)),), 8, True, "graph", DECODE_THEN_BATCH),
        ((spec((2,)),), 8, False, "py_function", DECODE_THEN_BATCH),
        ((spec((None, 2)),), 8, False, "graph", DECODE_THEN_BATCH),
        ((spec(None),), 8, False, "graph", DECODE_THEN_BATCH),
        ((spec((2,), GRAPH_LIMIT - 1),), 8, False, "graph", BATCH_THEN_DECODE),
        ((spec((2,), GRAPH_LIMIT),), 8, False, "graph", DECODE_THEN_BATCH),
        ((spec((2,), GRAPH_LIMIT),), 8, False, "native", BATCH_THEN_DECODE),
        ((spec((2,)), spec((2,), GRAPH_LIMIT)), 8, False, "graph", DECODE_THEN_BATCH),
        ((spec((2,)),), 8, True, "native", BATCH_THEN_DECODE),
        ((spec((2,)),), None, True, "native", BATCH_THEN_DECODE),
        ((spec((None, 2)),), 8, True, "native", DECODE_THEN_BATCH),
    ],
    ids=[
        "small",
        "small-pair",
        "no-batch",
        "ignore_errors",
        "py_function",
        "variable",
        "any-shape",
        "just-small",
        "large",
        "native-large",
        "one-side-large",
        "native-ignore_errors",
        "native-ignore_errors-no-batch",
        "native-ignore_errors-variable",
    ],
)
def test_choose_strategy(specs, batch_size, ignore_errors, backend, expected):
    assert choose_strategy(specs, batch_size, ignore_errors, backend) == expected
