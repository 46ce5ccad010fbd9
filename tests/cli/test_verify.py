"""``npyio.cli.verify``: planning a run, the spec comparison, pairing, scanning and decoding.

The commands built on these are tested end to end in ``test_main_end_to_end.py``, and against
``npyio.dataset`` in ``test_verify_agreement.py``.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

import npyio
from npyio._format import header, npy
from npyio._format.files import NO_SUCH_FILE
from npyio._io import header as io_header
from npyio._io import spec as io_spec
from npyio._pipeline.options import ReadOptions
from npyio._pipeline.paths import resolve
from npyio._sources.plan import SpecRule, resolve_parts
from npyio.cli import verify
from npyio.errors import NpyFormatError
from tests._npy_testing import npy_bytes

X_SHAPE = (4, 3)


def save(path: Path, arr: np.ndarray) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(npy_bytes(arr))
    return str(path)


@pytest.fixture
def mixed(tmp_path) -> list[str]:
    """d/0..4.npy: float32 (4, 3), but 2.npy is (5, 3) and 4.npy is float64."""
    paths = [save(tmp_path / "d" / f"{i}.npy", np.zeros(X_SHAPE, "<f4")) for i in range(5)]
    save(tmp_path / "d" / "2.npy", np.zeros((5, 3), "<f4"))
    save(tmp_path / "d" / "4.npy", np.zeros(X_SHAPE, "<f8"))
    return paths


def check_all(paths: list[str]) -> dict[str, header.Checked]:
    return {p: io_header.check_file(p, {}) for p in paths}


# --- sources --------------------------------------------------------------------------------
def test_resolve_paths_keeps_problems_instead_of_raising(tmp_path, mixed):
    (tmp_path / "empty").mkdir()
    sources = verify.resolve_paths(
        [str(tmp_path / "d"), str(tmp_path / "empty"), str(tmp_path / "nope"), mixed[0]]
    )
    assert [s.kind for s in sources] == ["dir", "dir", "missing", "file"]
    assert [s.problem for s in sources] == [
        None,
        "directory has no .npy files",
        NO_SUCH_FILE,
        None,
    ]
    assert sources[0].paths == mixed


def test_directories_are_the_dir_and_glob_sources_with_files_each_once(tmp_path, mixed):
    (tmp_path / "empty").mkdir()
    args = [str(tmp_path / "d"), f"{tmp_path}/d/*.npy", str(tmp_path / "empty"), mixed[0],
            str(tmp_path / "d"), f"{tmp_path}/none*"]  # fmt: skip
    found = verify.directories(verify.resolve_paths(args))
    assert [(s.arg, s.kind) for s in found] == [(args[0], "dir"), (args[1], "glob")]


# --- op_reason ------------------------------------------------------------------------------
def test_op_reason_unescapes_npyio_s_own_message_and_drops_the_path():
    message = 'assertion failed: [a.npy: caf\\303\\251 \\"x\\"]\n\t [[{{node Assert}}]]'
    err = tf.errors.InvalidArgumentError(None, None, message)
    assert verify.op_reason(err, "a.npy") == 'café "x"'
    assert verify.op_reason(err, "other.npy") == 'a.npy: café "x"'


def test_op_reason_of_other_errors():
    assert verify.op_reason(tf.errors.NotFoundError(None, None, "a.npy; No such"), "a.npy") == (
        NO_SUCH_FILE
    )
    noisy = tf.errors.InternalError(None, None, "first\n  it broke {{node ReadFile}} here  \n")
    assert verify.op_reason(noisy, "a.npy") == "it broke here"
    assert verify.op_reason(RuntimeError(""), "a.npy") == "RuntimeError"


# --- spec_issues ----------------------------------------------------------------------------
def rule(dtype: object = None, shape: object = None, what: str = "inputs") -> SpecRule:
    return SpecRule(dtype, shape, what)


def test_spec_issues_derive_the_spec_from_the_first_file(mixed):
    issues = verify.spec_issues(mixed, rule(), check_all(mixed))
    loads_as = f"(npyio.dataset loads the inputs as float32 (4, 3), from {mixed[0]})"
    assert issues == [
        # with npyio.dataset's hint: shape= with None where the dims differ
        (
            mixed[2],
            f"{npy.shape_mismatch('(4, 3)', '(5, 3)')}{npy.vary_hint('(None, 3)')} {loads_as}",
        ),
        (mixed[4], f"{npy.dtype_mismatch('float32', 'float64')} {loads_as}"),
    ]


def test_spec_issues_with_the_spec_given_check_the_first_file_too(mixed):
    issues = verify.spec_issues(mixed, rule("float32", (5, 3), "labels"), check_all(mixed))
    assert [p for p, _ in issues] == [mixed[0], mixed[1], mixed[3], mixed[4]]
    assert all(r.endswith("(npyio.dataset loads the labels as float32 (5, 3), as given)")
               for _, r in issues)  # fmt: skip


def test_spec_issues_with_any_size_dims(mixed):
    issues = verify.spec_issues(mixed, rule("float32", (None, 3)), check_all(mixed))
    assert [p for p, _ in issues] == [mixed[4]]
    assert issues[0][1].endswith("loads the inputs as float32 (None, 3), as given)")


def test_spec_issues_skip_bad_files_and_compare_with_the_first_good_one(mixed):
    Path(mixed[0]).write_bytes(b"broken")
    checked = check_all(mixed)
    issues = verify.spec_issues(mixed, rule(), checked)
    assert [p for p, _ in issues] == [mixed[2], mixed[4]]
    assert all(f"from {mixed[1]})" in r for _, r in issues)
    for p in mixed:
        Path(p).write_bytes(b"broken")
    assert verify.spec_issues(mixed, rule(), check_all(mixed)) == []


def test_spec_issues_read_no_header_again(mixed, monkeypatch):
    """The first file's header was read by the check: the spec is derived from that verdict."""
    checked = check_all(mixed)

    def no_read(*args: object, **kwargs: object) -> None:
        raise AssertionError("a header was read again")

    monkeypatch.setattr(io_spec, "read_checked", no_read)
    assert [p for p, _ in verify.spec_issues(mixed, rule(), checked)] == [mixed[2], mixed[4]]


def test_a_spec_argument_the_first_header_contradicts_is_reported_on_that_file(mixed):
    issues = verify.spec_issues(mixed, rule(shape=(9, 9)), check_all(mixed))
    assert len(issues) == 1
    path, reason = issues[0]
    assert path == mixed[0]
    assert "(9, 9)" in reason


# --- plan: pairing ---------------------------------------------------------------------------
def pairs_tree(root: Path, inputs: list[str], labels: list[str]) -> tuple[str, str]:
    for name in inputs:
        save(root / "x" / name, np.zeros(X_SHAPE, "<f4"))
    for name in labels:
        save(root / "y" / name, np.int64(0))
    return str(root / "x"), str(root / "y")


def test_inputs_and_labels_pair_by_name(tmp_path):
    x, y = pairs_tree(tmp_path, ["1.npy", "0.npy"], ["0.npy", "1.npy"])
    (call,) = verify.plan([x, y])
    assert call.unpaired == () and call.refused is None
    assert [[os.path.basename(p) for p in column] for column in call.parts.columns] == [
        ["0.npy", "1.npy"],
        ["0.npy", "1.npy"],
    ]
    assert [r.what for r in call.rules] == ["inputs", "labels"]


def test_plan_lists_each_unpaired_file_and_pairs_nothing(tmp_path):
    x, y = pairs_tree(tmp_path, ["0.npy", "1.npy"], ["0.npy", "2.npy", "3.npy"])
    labels_glob = f"{y}/*.npy"
    (call,) = verify.plan([x, labels_glob])
    assert call.rules == ()
    with pytest.raises(ValueError) as refused:  # the error npyio.dataset raises, word for word
        npyio.dataset(x, labels_glob)
    assert call.refused == str(refused.value)
    assert call.unpaired == (
        (f"{x}/1.npy", f"unpaired -- no file of this name in the labels glob {labels_glob}"),
        (f"{y}/2.npy", f"unpaired -- no file of this name in the inputs directory {x}"),
        (f"{y}/3.npy", f"unpaired -- no file of this name in the inputs directory {x}"),
    )


@pytest.mark.parametrize("side", verify.SIDES)
def test_plan_pairs_nothing_and_names_the_side_with_a_problem(tmp_path, side):
    x, _ = pairs_tree(tmp_path, ["0.npy"], [])
    missing = str(tmp_path / "nope")
    (call,) = verify.plan([missing, x] if side == "INPUTS" else [x, missing])
    bad = [s for s in call.sources if s.problem is not None]
    assert [(s.arg, s.problem) for s in bad] == [(missing, f"{NO_SUCH_FILE} ({side})")]
    assert (call.rules, call.unpaired, call.refused) == ((), (), None)


def test_plan_two_files_of_one_name_is_one_line(tmp_path):
    for d in ("a", "b"):
        save(tmp_path / d / "0.npy", np.zeros(1, "<f4"))
    save(tmp_path / "y" / "0.npy", np.int64(0))
    inputs = f"{tmp_path}/*/0.npy"
    (call,) = verify.plan([inputs, str(tmp_path / "y")])
    assert call.rules == () and call.refused == call.unpaired[0][1]
    assert len(call.unpaired) == 1 and call.unpaired[0][0] == inputs
    assert "0.npy" in call.unpaired[0][1]


# --- plan: the spec rules ----------------------------------------------------------------------
def test_plan_checks_each_path_as_one_dataset_of_inputs(tmp_path, mixed):
    d = str(tmp_path / "d")
    read = ReadOptions(dtype="float32", shape=(None, 3))
    calls = verify.plan([d, mixed[0], d, f"{d}/*.npy"], read=read)
    assert [[s.arg for s in call.sources] for call in calls] == [
        [d],
        [mixed[0]],
        [d],
        [f"{d}/*.npy"],
    ]
    assert calls[0].parts.columns == [mixed]
    assert calls[0].rules == (SpecRule(np.dtype("float32"), (None, 3), "inputs"),)
    assert all(call.unpaired == () and call.refused is None for call in calls)
    assert all(call.rules == () for call in verify.plan([d, d, d], allow_mixed=True))
    assert len(verify.plan([d, str(tmp_path / "d")], each=True)) == 2


def test_plan_takes_each_parts_rule_from_the_plan_of_npyio_dataset(tmp_path):
    """The rules are `npyio._sources.plan`'s: labels have the label spec, and elements are pairs
    (the cast a dtype error suggests maps ``(x, y)``)."""
    x, y = pairs_tree(tmp_path, ["0.npy", "1.npy"], ["0.npy", "1.npy"])
    read = ReadOptions(dtype="float32", shape=X_SHAPE, label_shape=())
    (call,) = verify.plan([x, y], read=read, allow_mixed=True)
    assert [s.arg for s in call.sources] == [x, y]
    # --allow-mixed is about PATHs checked on their own: INPUTS and LABELS are one dataset each
    assert [(r.what, r.dtype, r.shape, r.paired) for r in call.rules] == [
        ("inputs", np.dtype("float32"), X_SHAPE, True),
        ("labels", None, (), True),
    ]
    (wrong,) = verify.plan([x, y], read=ReadOptions(dtype="float64"))
    with pytest.raises(NpyFormatError) as refused:
        npyio.dataset(x, y, dtype="float64")
    [(path, reason)] = verify.spec_issues(wrong.parts.columns[0], wrong.rules[0], check_all(
        wrong.parts.columns[0]))  # fmt: skip
    assert (path, reason) == (refused.value.path, refused.value.reason)
    assert "lambda x, y: (tf.cast(x, tf.float64), y)" in reason


# --- scan -----------------------------------------------------------------------------------
def test_scan_reports_problems_and_reasons_in_argument_order_each_file_once(tmp_path, mixed):
    Path(mixed[3]).write_bytes(npy_bytes(np.zeros(X_SHAPE, "<f4"))[:-1])
    d, missing = str(tmp_path / "d"), str(tmp_path / "nope")
    sources = verify.resolve_paths([missing, mixed[3], d])
    unpaired = ((mixed[3], "also this"), (mixed[0], "and this"))
    calls = [verify.Call(resolve_parts(d, None, ReadOptions()), unpaired=unpaired)]
    out = verify.scan(sources, jobs=2, progress=False, calls=calls)
    assert [c.path for c in out.checked] == [mixed[3], *mixed[:3], mixed[4]]
    short = npy.payload_short("48", "47")
    assert out.issues == [
        (missing, NO_SUCH_FILE),
        (mixed[3], short),
        (mixed[3], "also this"),
        (mixed[0], "and this"),
    ]
    assert out.bad_paths == {missing, mixed[3], mixed[0]}
    assert out.mismatches == [] and out.nonfinite == {} and not out.ok
    assert out.summary().files == 5
    summary = out.summary(sources[2])
    assert (summary.files, summary.bad) == (5, 2)


def test_scan_runs_the_spec_checks(tmp_path, mixed):
    calls = verify.plan([str(tmp_path / "d")])
    out = verify.scan(calls[0].sources, jobs=1, progress=False, calls=calls)
    assert out.issues == []
    assert [p for p, _ in out.mismatches] == [mixed[2], mixed[4]]
    assert not out.ok


def test_scan_full_counts_nan_and_inf_in_file_order(tmp_path):
    paths = [
        save(tmp_path / "b.npy", np.array([np.nan, 1, np.inf], "<f4")),
        save(tmp_path / "a.npy", np.array([1 + 1j, complex(np.inf, 0)], "<c8")),
        save(tmp_path / "c.npy", np.arange(3, dtype="<i2")),
        save(tmp_path / "d.npy", np.array([np.nan] * 4, ">f8")),
    ]
    out = verify.scan(verify.resolve_paths(paths), jobs=2, progress=False, full=True)
    assert out.nonfinite == {paths[0]: 2, paths[1]: 1, paths[3]: 4}
    assert list(out.nonfinite) == [paths[0], paths[1], paths[3]]
    assert out.ok  # NaN is noted, not bad


def test_scan_shows_progress_on_stderr(tmp_path, mixed, capsys):
    verify.scan(verify.resolve_paths([str(tmp_path / "d")]), jobs=1, progress=True, full=True)
    err = capsys.readouterr().err
    assert "checking: 5/5" in err and "decoding: 5/5" in err
    verify.scan(verify.resolve_paths([str(tmp_path / "nope")]), jobs=1, progress=True)
    assert capsys.readouterr().err == ""  # nothing to check: no progress


def test_jobs_give_the_same_verdicts_in_the_same_order(tmp_path):
    data = npy_bytes(np.zeros((3,), "<u2"))
    for i in range(header.CHUNK * 3 + 7):
        (tmp_path / f"{i:05d}.npy").write_bytes(data if i % 97 else data[:-1])
    source = resolve(str(tmp_path))
    one = verify.scan([source], jobs=1, progress=False)
    four = verify.scan([source], jobs=4, progress=False)
    assert [(c.path, c.reason) for c in one.checked] == [(c.path, c.reason) for c in four.checked]
    assert len(one.issues) == len(range(0, header.CHUNK * 3 + 7, 97))


# --- decode_files ---------------------------------------------------------------------------
def test_full_reports_each_file_the_decoder_refuses(tmp_path):
    """Files that change after the header check: the pipeline goes on past each error."""
    data = npy_bytes(np.arange(6, dtype="<i4").reshape(2, 3))
    paths = [str(tmp_path / f"{i}.npy") for i in range(6)]
    for p in paths:
        Path(p).write_bytes(data)
    checked = [io_header.check_file(p, {}) for p in paths]
    Path(paths[1]).write_bytes(data[:-4])
    os.remove(paths[4])
    bad, nonfinite = verify.decode_files(checked, jobs=2)
    assert bad == {paths[1]: npy.payload_short("24", "20"), paths[4]: "no such file or directory"}
    assert nonfinite == {}


def test_decode_files_calls_back_once_per_file(tmp_path, mixed):
    done: list[int] = []
    bad, nonfinite = verify.decode_files(list(check_all(mixed).values()), 1, done.append)
    assert (bad, nonfinite, done) == ({}, {}, [1] * len(mixed))


# --- the odd file, and pairs that share a window (issue 50) ---------------------------------
def test_spec_issues_report_a_first_file_unlike_most_as_the_bad_one(tmp_path):
    """A stray file that sorts first (labels.npy beside sample_*.npy) is the one reported, not
    every file that disagrees with it."""
    d = tmp_path / "train"
    paths = [save(d / f"sample_{i}.npy", np.zeros((8, 8, 1), "<f2")) for i in range(6)]
    stray = save(d / "labels.npy", np.arange(6))
    column = [stray, *paths]
    issues = verify.spec_issues(column, rule(), check_all(column))
    assert [p for p, _ in issues] == [stray]
    assert issues[0][1].startswith("dtype mismatch -- expected float16, got int64")
    assert "as most of its files hold" in issues[0][1]
    # a tie keeps the first file's header as the spec, as npyio.dataset derives it
    tie = [stray, paths[0]]
    assert [p for p, _ in verify.spec_issues(tie, rule(), check_all(tie))] == [paths[0]]


def test_scan_reports_pairs_whose_cropped_axes_differ(tmp_path):
    """verify INPUTS LABELS --crop: a mask narrower than its image on the window's axes is
    reported on the mask, naming both files and both sizes; labels read whole are not checked."""
    x, y = tmp_path / "x", tmp_path / "y"
    for i, w in enumerate((20, 22, 24)):
        save(x / f"{i}.npy", np.zeros((16, 18, w, 1), "<f4"))
        save(y / f"{i}.npy", np.zeros((16, 18, w - 5 if i == 1 else w), "u1"))
    read = ReadOptions(crop=(8, 8, 8), shape=(None, None, None, 1), label_shape=(None,) * 3)
    calls = verify.plan([str(x), str(y)], read=read)
    out = verify.scan(calls[0].sources, jobs=2, progress=False, calls=calls)
    assert out.mismatches == [
        (
            str(y / "1.npy"),
            f"the cropped axes have sizes (16, 18, 17), but those of {x / '1.npy'} are "
            "(16, 18, 22): one window cannot be cut from both -- each pair must agree on the "
            "cropped axes (npyio verify INPUTS LABELS --crop SIZES lists every pair that does not)",
        )
    ]
    whole = ReadOptions(
        crop=(8, 8, 8), label_crop=None, shape=(None, None, None, 1), label_shape=(None,) * 3
    )
    calls = verify.plan([str(x), str(y)], read=whole)
    assert verify.scan(calls[0].sources, jobs=2, progress=False, calls=calls).mismatches == []


def test_scan_checks_per_case_shapes_as_a_plain_crop_reads_them(tmp_path):
    """verify INPUTS LABELS --crop on per-case shapes, with no shape hints: the window's axes
    are sized by each file, as npyio.dataset(x, y, crop=...) reads them (no case reported for
    its size alone), and a case smaller than the window is reported, image and mask, with the
    hints or without, as the dataset refuses it when it reaches it."""
    x, y = tmp_path / "x", tmp_path / "y"
    for i, shape in enumerate(((40, 64, 72), (52, 80, 56), (20, 30, 30))):
        save(x / f"case_{i}.npy", np.zeros((*shape, 1), "<f4"))
        save(y / f"case_{i}.npy", np.zeros(shape, "u1"))

    def mismatches(**read):
        calls = verify.plan([str(x), str(y)], read=ReadOptions(**read))
        return verify.scan(calls[0].sources, jobs=2, progress=False, calls=calls).mismatches

    assert mismatches(crop=(16, 16, 16)) == []
    hints = {"shape": (None, None, None, 1), "label_shape": (None,) * 3}
    for given in ({}, hints):
        found = mismatches(crop=(32, 48, 48), **given)
        assert [p for p, _ in found] == [str(x / "case_2.npy"), str(y / "case_2.npy")], given
        assert (
            "crop window of size 32 on axis 0 is outside the array of shape (20, 30, 30, 1)"
            in (found[0][1])
        )
    assert mismatches(crop=npyio.Crop((32, 48, 48), out_of_bounds="pad"), **hints) == []
