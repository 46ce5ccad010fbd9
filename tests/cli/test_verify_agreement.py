"""``npyio verify X Y`` exits 0 if and only if ``npyio.dataset(X, Y)`` delivers every pair.

``verify`` plans what it checks with ``dataset``'s own plan (`npyio._sources.plan`: pairing and
specs), so the two agree by construction; these cases keep one of each failure class on each
side as a check of it: a spec mismatch, a bad size, a bad header, an unpaired file, and valid
oddities that both must accept. Each plants its defect (or oddity) in a small generated pair of
directories and asks both: ``verify`` (in-process ``npyio.cli.main.main``, its exit code) and
``dataset`` (built and iterated to the end). Their verdicts must agree, and must be the
expected one. A case runs with the spec derived from the files (as ``dataset`` derives it from
the first pair) or given (``--dtype ... --label-shape ''`` and ``dataset(dtype=...,
label_shape=...)``), with the defect in the first pair or in a later one (``dataset`` takes its
spec from the first file), each where it matters.

All files are written by numpy's own ``np.save`` (or ``np.lib.format.write_array``); the byte-level
defects cut, extend or overwrite what it wrote.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

import npyio
from npyio.cli import main as cli
from npyio.errors import NpyFormatError
from tests._npy_testing import assert_same, header_text, with_header

PAIRS = 6
X_SHAPE = (4, 3)
NAMES = [f"{i:03d}.npy" for i in range(PAIRS)]
#: Where a defect is planted: the first pair (the one dataset derives its spec from) or a later one.
POSITIONS = {"first": 0, "later": 3}
SPEC_ARGS = ["--dtype", "float32", "--shape", "4,3", "--label-dtype", "int64", "--label-shape", ""]
SPEC_KWARGS = {"dtype": "float32", "shape": X_SHAPE, "label_dtype": "int64", "label_shape": ()}


def good(side: str, i: int) -> np.ndarray:
    """The array of pair ``i`` on ``side``: float32 (4, 3) inputs, int64 () labels."""
    if side == "x":
        return (np.arange(12, dtype=np.float32).reshape(X_SHAPE) + 100 * i).astype(np.float32)
    return np.array(i, dtype=np.int64)


# --- what is planted ------------------------------------------------------------------------
Plant = Callable[[Path, np.ndarray], None]


def saved(make: Callable[[np.ndarray], np.ndarray], **kwargs: object) -> Plant:
    """Writes ``make(good array)`` with ``np.save``."""

    def plant(path: Path, arr: np.ndarray) -> None:
        np.save(path, make(arr), **kwargs)  # type: ignore[arg-type]

    return plant


def edited(edit: Callable[[bytes], bytes]) -> Plant:
    """Writes the good array with ``np.save``, then rewrites its bytes with ``edit``."""

    def plant(path: Path, arr: np.ndarray) -> None:
        np.save(path, arr)
        path.write_bytes(edit(path.read_bytes()))

    return plant


def removed(path: Path, arr: np.ndarray) -> None:
    """Leaves ``path`` out: its partner on the other side is then unpaired."""
    path.unlink()


def versioned(version: tuple[int, int]) -> Plant:
    def plant(path: Path, arr: np.ndarray) -> None:
        with open(path, "wb") as f:
            np.lib.format.write_array(f, arr, version=version)

    return plant


def by_hand(arr: np.ndarray, align: int, fortran_order: bool = False) -> bytes:
    """A v1.0 file with numpy's header text, padded to ``align`` bytes."""
    text = header_text(arr.dtype.str, fortran_order, arr.shape)
    text += " " * (-(10 + len(text) + 1) % align) + "\n"
    payload = arr.tobytes(order="F" if fortran_order else "C")
    return with_header(text, payload)


def aligned_16(path: Path, arr: np.ndarray) -> None:
    """A v1.0 header padded to 16 bytes, as numpy before 1.14 (and many other writers) wrote."""
    data = by_hand(arr, 16)
    assert (len(data) - arr.nbytes) % 64 != 0  # not what today's numpy writes
    path.write_bytes(data)


def fortran(path: Path, arr: np.ndarray) -> None:
    """Fortran order. ``np.save`` writes ``fortran_order: True`` only for arrays with 2 or more
    dims (``np.asfortranarray`` makes a 0-d array 1-d), so a 0-d label gets it by hand: a
    valid header that ``np.load`` reads."""
    if arr.ndim >= 2:
        np.save(path, np.asfortranarray(arr))
    else:
        path.write_bytes(by_hand(arr, 64, fortran_order=True))


def _obj(arr: np.ndarray) -> np.ndarray:
    return np.array([arr, "x"], dtype=object)


@dataclass(frozen=True)
class Case:
    id: str
    side: str  # "x" or "y": where it is planted
    plant: Plant
    ok: bool  # the expected verdict of both
    #: The file named in the errors, when it is not the planted one (an unpaired partner).
    partner: bool = False
    #: A valid file on its own, only not like the others: planted first with the spec derived,
    #: it would set the spec, so both refuse it as the odd one (the files sampled when the
    #: dataset is built, and most of verify's files, agree on another header).
    mismatch: bool = False


CASES = {
    c.id: c
    for c in [
        # a spec mismatch: inputs float32 (4, 3), labels int64 ()
        Case("x-shape", "x", saved(lambda a: np.zeros((4, 4), a.dtype)), False, mismatch=True),
        Case("y-int32", "y", saved(lambda a: a.astype(np.int32)), False, mismatch=True),
        # a size the header does not declare
        Case("x-truncated", "x", edited(lambda b: b[:-5]), False),
        Case("y-trailing", "y", edited(lambda b: b + b"\0"), False),
        # a header npyio refuses
        Case("x-bad-magic", "x", edited(lambda b: b"\x93NUMPZ" + b[6:]), False),
        Case("y-object", "y", saved(_obj, allow_pickle=True), False),
        # a file without a partner
        Case("x-unpaired", "y", removed, False, partner=True),  # an input with no label
        Case("y-unpaired", "x", removed, False, partner=True),  # a label with no input
        # valid oddities: both accept them
        Case("x-fortran", "x", fortran, True),
        Case("y-big-endian", "y", saved(lambda a: a.astype(a.dtype.newbyteorder(">"))), True),
        Case("x-v3.0", "x", versioned((3, 0)), True),
        Case("y-16-byte-aligned", "y", aligned_16, True),
    ]
}
#: (case, where it is planted, the spec given): each case where its class differs. A mismatch
#: planted first with the spec derived is the odd one, refused by name when the dataset is
#: built; a first file that is bad with the spec given is read by dataset only when it reaches
#: it.
RUNS = [
    ("x-shape", "first", False),
    ("x-shape", "later", True),
    ("y-int32", "later", False),
    ("x-truncated", "first", True),
    ("y-trailing", "later", False),
    ("x-bad-magic", "later", True),
    ("y-object", "first", False),
    ("x-unpaired", "later", False),
    ("y-unpaired", "first", True),
    ("x-fortran", "later", False),
    ("y-big-endian", "first", True),
    ("x-v3.0", "first", False),
    ("y-16-byte-aligned", "later", True),
]


def make_pairs(
    root: Path, case: Case | None, where: int, spec: bool = False
) -> tuple[Path, Path, str | None]:
    """x/ and y/ with PAIRS good pairs, ``case`` planted in pair ``where``. Returns the dirs
    and the path the errors must name (with ``spec``: when the spec is given)."""
    dirs = {"x": root / "x", "y": root / "y"}
    for side, d in dirs.items():
        d.mkdir()
        for i, name in enumerate(NAMES):
            np.save(d / name, good(side, i))
    if case is None:
        return dirs["x"], dirs["y"], None
    target = dirs[case.side] / NAMES[where]
    case.plant(target, good(case.side, where))
    named = dirs["y" if case.side == "x" else "x"] / NAMES[where] if case.partner else target
    return dirs["x"], dirs["y"], str(named)


# --- the two verdicts -----------------------------------------------------------------------
def verify_verdict(x: Path, y: Path, spec: bool, capsys) -> tuple[bool, str]:
    """``npyio verify x y``: (exit 0, its stdout)."""
    code = cli.main(["verify", "-q", str(x), str(y), *(SPEC_ARGS if spec else [])])
    out = capsys.readouterr().out
    assert code in (cli.EXIT_OK, cli.EXIT_BAD_FILES), out
    return code == cli.EXIT_OK, out


def dataset_verdict(x: Path, y: Path, spec: bool, batch_size: int | None) -> tuple[bool, str]:
    """``npyio.dataset(x, y)`` built and iterated to the end: (every pair delivered, bit for
    bit as ``np.load`` reads it; else the error's text)."""
    try:
        ds = npyio.dataset(str(x), str(y), batch_size=batch_size, **(SPEC_KWARGS if spec else {}))
        got = [(xb.numpy(), yb.numpy()) for xb, yb in ds]
    except (ValueError, TypeError, NpyFormatError, tf.errors.OpError) as e:
        return False, str(e)
    xs = np.concatenate([b[0].reshape(-1, *X_SHAPE) for b in got])
    ys = np.concatenate([b[1].reshape(-1) for b in got])
    assert len(xs) == len(ys) == PAIRS
    for i, name in enumerate(NAMES):
        assert_same(xs[i], np.load(x / name), name)
        assert_same(ys[i], np.load(y / name), name)
    return True, ""


@pytest.mark.parametrize(
    ("case", "where", "spec"),
    [
        pytest.param(
            CASES[name], where, spec, id=f"{name}-{where}-{'given' if spec else 'derived'}"
        )
        for name, where, spec in RUNS
    ],
)
def test_verify_agrees_with_dataset(case, where, spec, tmp_path, capsys):
    x, y, named = make_pairs(tmp_path, case, POSITIONS[where], spec)
    verified, out = verify_verdict(x, y, spec, capsys)
    # decode-then-batch (one file at a time) and batch-then-decode (whole batches of raw bytes)
    # are different graphs: both must agree with verify. Where the first pair is planted, what
    # differs is how the spec is derived, which both share; one graph then suffices.
    for batch_size in (None, 4) if where == "later" else (None,):
        loaded, error = dataset_verdict(x, y, spec, batch_size)
        assert (verified, loaded) == (case.ok, case.ok), (batch_size, out, error)
        if not case.ok:
            assert named is not None
            assert Path(named).name in error, error  # the error names the file...
    if not case.ok:
        bad = [line for line in out.splitlines() if line.startswith(f"{named}: ")]
        assert bad, out  # ...and so does verify, in its "path: reason" line
    else:
        assert out.rstrip().endswith(": all good"), out


def test_good_pairs_pass_both(tmp_path, capsys):
    x, y, _ = make_pairs(tmp_path, None, 0)
    for spec in (False, True):
        assert verify_verdict(x, y, spec, capsys)[0]
        assert dataset_verdict(x, y, spec, None)[0]


# --- plain ``verify DIR``: a directory is one dataset of inputs -------------------------------
@pytest.fixture
def mixed(tmp_path) -> Path:
    """float32 (4, 3) files, one float32 (5, 3) and one float64 (4, 3)."""
    d = tmp_path / "mixed"
    d.mkdir()
    for i, name in enumerate(NAMES):
        np.save(d / name, good("x", i))
    np.save(d / NAMES[2], np.zeros((5, 3), np.float32))
    np.save(d / NAMES[4], np.zeros(X_SHAPE, np.float64))
    return d


def dataset_loads(d: Path, **kwargs: object) -> bool:
    try:
        return sum(1 for _ in npyio.dataset(str(d), batch_size=None, **kwargs)) == PAIRS
    except (ValueError, TypeError, NpyFormatError, tf.errors.OpError):
        return False


def run_json(capsys, *argv: str) -> tuple[int, dict]:
    code = cli.main(["verify", "-q", "--json", *argv])
    return code, json.loads(capsys.readouterr().out)


def test_verify_dir_reports_mixed_dtypes_and_shapes(mixed, capsys):
    code = cli.main(["verify", "-q", str(mixed)])
    out = capsys.readouterr().out
    assert code == cli.EXIT_BAD_FILES
    assert not dataset_loads(mixed)
    lines = out.splitlines()
    assert [line.split(": ")[0] for line in lines if line.startswith(f"{mixed}/")] == [
        str(mixed / NAMES[2]),
        str(mixed / NAMES[4]),
    ]
    assert f"{mixed}: 6 files, " in out  # the summary still lists the groups
    assert "  4  float32  (4, 3)" in lines
    assert "  1  float32  (5, 3)" in lines
    assert "  1  float64  (4, 3)" in lines
    assert lines[-1].endswith("2 files npyio.dataset would refuse")

    code, doc = run_json(capsys, str(mixed))
    assert code == cli.EXIT_BAD_FILES
    assert doc["ok"] is False and doc["bad"] == []
    assert [m["path"] for m in doc["mismatched"]] == [str(mixed / NAMES[2]), str(mixed / NAMES[4])]
    assert {(g["dtype"], tuple(g["shape"]), g["count"]) for g in doc["groups"]} == {
        ("float32", (4, 3), 4),
        ("float32", (5, 3), 1),
        ("float64", (4, 3), 1),
    }


def test_verify_dir_shape_with_none_dims_covers_the_shapes(mixed, capsys):
    np.save(mixed / NAMES[4], np.zeros(X_SHAPE, np.float32))  # only the shapes differ now
    code, doc = run_json(capsys, str(mixed), "--shape", "None,3")
    assert (code, doc["ok"], doc["mismatched"]) == (cli.EXIT_OK, True, [])
    assert dataset_loads(mixed, shape=(None, 3))
    # without --shape, or with one that does not cover (5, 3), both refuse
    for shape_args, shape in (([], None), (["--shape", "4,None"], (4, None))):
        code, doc = run_json(capsys, str(mixed), *shape_args)
        assert code == cli.EXIT_BAD_FILES
        assert [m["path"] for m in doc["mismatched"]] == [str(mixed / NAMES[2])]
        assert not dataset_loads(mixed, shape=shape)


def test_verify_dir_allow_mixed(mixed, capsys):
    code, doc = run_json(capsys, str(mixed), "--allow-mixed")
    assert (code, doc["ok"], doc["mismatched"]) == (cli.EXIT_OK, True, [])
    assert len(doc["groups"]) == 3


def test_verify_dir_mixed_byte_orders_are_one_dtype(mixed, capsys):
    # >f4 and <f4 load as the same float32: dataset accepts them, so verify must too
    for name in NAMES:
        arr = good("x", 0)
        np.save(mixed / name, arr.astype(">f4") if name == NAMES[1] else arr)
    code, doc = run_json(capsys, str(mixed))
    assert (code, doc["mismatched"]) == (cli.EXIT_OK, [])
    assert dataset_loads(mixed)


def test_spec_mismatch_in_the_first_file_with_the_spec_given(tmp_path, capsys):
    """With dtype and shape both given dataset reads no header when built, and refuses the
    first file when it reaches it: verify must report that file too."""
    x, y, named = make_pairs(tmp_path, CASES["x-shape"], 0, spec=True)
    shutil.rmtree(y)
    code, doc = run_json(capsys, str(x), "--dtype", "float32", "--shape", "4,3")
    assert code == cli.EXIT_BAD_FILES
    assert [m["path"] for m in doc["mismatched"]] == [named]
    assert not dataset_loads(x, dtype="float32", shape=X_SHAPE)
