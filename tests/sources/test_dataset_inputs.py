"""What users pass as paths, at every entry point: every form a path comes in, missing paths,
bad arguments, and spec arguments that the files' headers contradict (refused when the
pipeline is built, naming the file, with the cast to write instead)."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

import npyio

N = 3


def save(path: Path, value: np.ndarray) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, value)
    return path


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """x/i.npy: float32 [i, i] (2 rows); y/i.npy: int64 [i, i] (2 rows); a/i.npz: x and y."""
    root = tmp_path_factory.mktemp("inputs")
    for i in range(N):
        save(root / "x" / f"{i}.npy", np.full(2, i, np.float32))
        save(root / "y" / f"{i}.npy", np.full(2, i, np.int64))
        (root / "a").mkdir(exist_ok=True)
        np.savez(root / "a" / f"{i}.npz", x=np.full(2, i, np.float32), y=np.int64(i))
    return root


def files(root: Path, side: str) -> list[Path]:
    return [root / side / f"{i}.npy" for i in range(N)]


ONE = {  # a single path
    "str": str,
    "bytes": os.fsencode,
    "Path": lambda p: p,
    "np.str_": lambda p: np.str_(p),
    "np.bytes_": lambda p: np.bytes_(os.fsencode(p)),
    "0-d array": lambda p: np.array(str(p)),
}
MANY = {  # a sequence of paths
    "list-str": lambda ps: [str(p) for p in ps],
    "list-bytes": lambda ps: [os.fsencode(p) for p in ps],
    "list-Path": list,
    "tuple-Path": tuple,
    "mixed": lambda ps: [str(ps[0]), os.fsencode(ps[1]), *ps[2:]],
    "np-str": lambda ps: np.array([str(p) for p in ps]),
    "np-bytes": lambda ps: np.array([os.fsencode(p) for p in ps]),
    "np-object": lambda ps: np.array([str(p) for p in ps], dtype=object),
    "tensor": lambda ps: tf.constant([str(p) for p in ps]),
}


def values(ds: tf.data.Dataset) -> list:
    return [tf.nest.map_structure(lambda t: t.numpy().tolist(), e) for e in ds]


# --- every form, every entry point ------------------------------------------------------------
@pytest.mark.parametrize("form", [*ONE, "scalar tensor"])
def test_single_path_entry_points(root, form):
    to = ONE.get(form, lambda p: tf.constant(str(p)))
    x0 = root / "x" / "1.npy"
    assert npyio.read_npy(to(x0), tf.float32, (2,)).numpy().tolist() == [1, 1]
    assert npyio.inspect(to(x0)).shape == (2,)
    assert npyio.read_npz(to(root / "a" / "2.npz"), "x", tf.float32).numpy().tolist() == [2, 2]
    if form == "scalar tensor":
        return
    # a directory in that form
    assert values(npyio.dataset(to(root / "x"), to(root / "y"), batch_size=N)) == [
        ([[i, i] for i in range(N)], [[i, i] for i in range(N)])
    ]
    assert values(npyio.dataset(to(root / "a"), key="x", label_key="y", batch_size=None)) == [
        ([i, i], i) for i in range(N)
    ]
    assert values(npyio.rows(to(root / "x"), to(root / "y"), batch_size=2 * N)) == [
        ([i for i in range(N) for _ in range(2)],) * 2
    ]
    # and one file
    assert values(npyio.rows(to(x0), batch_size=None)) == [1, 1]
    assert values(npyio.dataset(to(x0), to(root / "y" / "2.npy"), batch_size=None)) == [
        ([1, 1], [2, 2])
    ]


@pytest.mark.parametrize("form", MANY)
def test_sequences_of_paths(root, form):
    to = MANY[form]
    xs, ys = files(root, "x"), files(root, "y")
    order = [2, 0, 1]  # a sequence keeps its order, and pairs by position
    xs, ys = [xs[i] for i in order], [ys[i] for i in order]
    assert values(npyio.dataset(to(xs), to(ys), batch_size=None)) == [
        ([i, i], [i, i]) for i in order
    ]
    assert values(npyio.rows(to(xs), to(ys), batch_size=2)) == [([i, i], [i, i]) for i in order]
    # against a directory, by name
    assert values(npyio.dataset(to(xs), str(root / "y"), batch_size=None)) == [
        ([i, i], [i, i]) for i in range(N)
    ]
    archives = [root / "a" / f"{i}.npz" for i in order]
    assert values(npyio.dataset(to(archives), key="y", batch_size=None)) == order


def test_graph_ops_take_string_tensors(root):
    paths = [str(p) for p in files(root, "x")]
    ds = tf.data.Dataset.from_tensor_slices(paths)  # the classic pattern, now without Python
    read = ds.map(lambda p: npyio.read_npy(p, tf.float32, (2,)))
    decoded = ds.map(lambda p: npyio.decode_npy(tf.io.read_file(p), tf.float32, (2,)))
    assert values(read) == values(decoded) == [[i, i] for i in range(N)]

    @tf.function
    def first(p: tf.Tensor) -> tf.Tensor:
        return npyio.read_npy(p, tf.float32) + npyio.read_npz(
            tf.strings.regex_replace(p, r"/x/(\d)\.npy$", r"/a/\1.npz"), "x", tf.float32
        )

    assert first(tf.constant(paths[2])).numpy().tolist() == [4, 4]


@pytest.mark.skipif(sys.platform != "linux", reason="file names as raw bytes")
def test_file_names_that_are_not_utf8(tmp_path):
    name = os.path.join(os.fsencode(tmp_path), b"\xff.npy")
    with open(name, "wb") as f:
        np.save(f, np.arange(4, dtype=np.int32).reshape(2, 2))
    assert npyio.read_npy(name, tf.int32).numpy().tolist() == [[0, 1], [2, 3]]
    assert npyio.inspect(name).shape == (2, 2)
    assert values(npyio.rows(name, batch_size=None)) == [[0, 1], [2, 3]]
    assert values(npyio.rows(str(tmp_path), batch_size=None)) == [[0, 1], [2, 3]]
    # a directory lists such a name as a str with surrogate escapes (os.fsdecode)
    for backend in ("native", "graph"):
        ds = npyio.dataset(str(tmp_path), batch_size=None, backend=backend)
        assert values(ds) == [[[0, 1], [2, 3]]]


# --- bad arguments ----------------------------------------------------------------------------
BAD = np.arange(10_000)


@pytest.mark.parametrize(
    "call",
    [
        lambda: npyio.dataset(BAD, batch_size=None),
        lambda: npyio.dataset(tf.constant(BAD), batch_size=None),
        lambda: npyio.dataset(list(BAD), batch_size=None),
        lambda: npyio.rows(BAD, batch_size=None),
        lambda: npyio.inspect(BAD),
    ],
    ids=["dataset-array", "dataset-tensor", "dataset-list", "rows", "inspect"],
)
def test_a_bad_array_is_not_shown_whole(call):
    with pytest.raises(TypeError) as info:
        call()
    assert len(str(info.value)) < 400, str(info.value)
    assert "(10000 in all)" in str(info.value)


def test_bad_labels_are_named_labels(root):
    # (a numeric array is label values, one per input file: here, objects that are neither)
    with pytest.raises(TypeError, match=r"^labels: expected paths .* 10000 other items"):
        npyio.dataset(str(root / "x"), np.array([None] * 10_000, dtype=object))
    with pytest.raises(TypeError, match=r"^labels: expected a 1-D array of paths, got 2-D"):
        npyio.rows(str(root / "x"), np.array([[str(root / "y")]]))


def test_one_path_arguments_refuse_several(root):
    with pytest.raises(ValueError, match=r"path must be a scalar string \(one path\), got 10000"):
        npyio.read_npy(BAD, tf.float32)
    with pytest.raises(ValueError, match="scalar string"):
        npyio.read_npz([str(root / "a" / "0.npz")] * 2, "x", tf.float32)
    with pytest.raises(TypeError, match="path: expected a path"):
        npyio.read_npy(3, tf.float32)


def test_a_symbolic_tensor_cannot_list_files(root):
    # Without autograph: it would convert npyio's whole call graph first (3 s alone, about a
    # minute late in the suite), and the check sees the same symbolic tensor either way.
    @tf.function(autograph=False)
    def build(paths: tf.Tensor) -> tf.Tensor:
        npyio.dataset(paths, batch_size=None)
        return paths

    with pytest.raises(TypeError, match="inputs: a symbolic tensor has no value"):
        build(tf.constant([str(root / "x" / "0.npy")]))


# --- a missing path says so -------------------------------------------------------------------
def does_not_exist(what: str, path: Path | str) -> str:
    return "^" + re.escape(f"{what}: {str(path)!r} does not exist (no such file or directory)")


def test_missing_inputs_and_labels_are_named_before_pairing(root):
    with pytest.raises(ValueError, match=does_not_exist("inputs", "/no/such/dir")):
        npyio.dataset("/no/such/dir", str(root / "y"))
    with pytest.raises(ValueError, match=does_not_exist("labels", root / "lables")):
        npyio.dataset(str(root / "x"), str(root / "lables"))
    with pytest.raises(ValueError, match=does_not_exist("labels", root / "lables")):
        npyio.dataset(root / "x", root / "lables")
    with pytest.raises(ValueError, match=does_not_exist("inputs", root / "x" / "9.npy")):
        npyio.dataset(str(root / "x" / "9.npy"))
    with pytest.raises(ValueError, match=does_not_exist("inputs", root / "a" / "9.npz")):
        npyio.dataset(root / "a" / "9.npz", key="x")
    with pytest.raises(ValueError, match=does_not_exist("inputs", "/no/such/dir")):
        npyio.rows("/no/such/dir")
    with pytest.raises(ValueError, match=does_not_exist("labels", root / "y" / "9.npy")):
        npyio.rows(root / "x" / "0.npy", root / "y" / "9.npy")


def test_missing_single_files(root):
    with pytest.raises(npyio.NpyFormatError, match=r"9\.npy: no such file or directory$"):
        npyio.inspect(root / "x" / "9.npy")
    with pytest.raises(tf.errors.NotFoundError, match=r"9\.npy"):
        npyio.read_npy(root / "x" / "9.npy", tf.float32)
    # in a list, the first file is read when the dataset is built
    with pytest.raises(npyio.NpyFormatError, match=r"9\.npy: no such file or directory$"):
        npyio.dataset([root / "x" / "9.npy", root / "x" / "0.npy"])


def test_empty_directory_and_glob_that_matches_nothing(tmp_path):
    (tmp_path / "notes.txt").write_text("no arrays here")
    for build in (npyio.dataset, npyio.rows):
        with pytest.raises(ValueError, match=r"^inputs: directory '.*' has no \*\.npy files$"):
            build(tmp_path)
        with pytest.raises(ValueError, match=r"^inputs: glob '.*/\*\.npy' matches no files$"):
            build(f"{tmp_path}/*.npy")
        with pytest.raises(ValueError, match=r"matches no files \(directory '.*/trian' does not"):
            build(f"{tmp_path}/trian/*.npy")
        with pytest.raises(ValueError, match=r"^inputs: the sequence of paths is empty$"):
            build([])
    with pytest.raises(ValueError, match=r"has no \*\.npz files$"):
        npyio.dataset(tmp_path, key="x")


# --- build-time errors for specs the headers contradict ---------------------------------------
def cast_of(message: str) -> str:
    """The map function an error suggests."""
    found = re.search(r"ds = ds\.map\((lambda .*)\)$", message)
    assert found, message
    return found.group(1)


@pytest.mark.parametrize("kind", ["npy", "npz"])
@pytest.mark.parametrize(
    "arg, value, expected, got",
    [
        ("dtype", tf.float64, "dtype=float64", "float32"),
        ("label_dtype", tf.int32, "label_dtype=int32", "int64"),
        ("shape", (3,), "shape=(3,)", "(2,)"),
        ("label_shape", (1,), "label_shape=(1,)", "()"),
    ],
)
def test_contradicting_spec_is_a_build_error(root, kind, arg, value, expected, got):
    if kind == "npy":
        xs, ys, where = root / "x", root / "y", {"dtype": "x/0.npy", "label": "y/0.npy"}
        if arg == "label_shape":  # the .npy labels are [i, i]
            got = "(2,)"
        kwargs: dict = {}
    else:
        xs, ys, where = root / "a", None, {"dtype": "a/0.npz[x]", "label": "a/0.npz[y]"}
        kwargs = {"key": "x", "label_key": "y"}
    file = where["label" if arg.startswith("label") else "dtype"]
    with pytest.raises(npyio.NpyFormatError) as info:
        npyio.dataset(xs, ys, **kwargs, **{arg: value})
    msg = str(info.value)
    assert isinstance(info.value, ValueError)
    what = "dtype mismatch" if arg.endswith("dtype") else "shape mismatch"
    assert msg.startswith(f"{root}/{file}: {what} -- expected {expected}, got {got}"), msg
    if arg.endswith("shape"):
        assert "tf.cast" not in msg
        return
    # the cast it suggests is valid and gives the dtype asked for
    ds = npyio.dataset(xs, ys, **kwargs).map(eval(cast_of(msg), {"tf": tf}))
    x_spec, y_spec = ds.element_spec
    assert (x_spec if arg == "dtype" else y_spec).dtype == value
    other = (y_spec, tf.int64) if arg == "dtype" else (x_spec, tf.float32)
    assert other[0].dtype == other[1]  # the other part is untouched


def test_cast_suggestions_for_inputs_alone_and_implausible_casts(tmp_path, root):
    with pytest.raises(npyio.NpyFormatError) as info:
        npyio.dataset(root / "x", dtype="int32")
    assert cast_of(str(info.value)) == "lambda x: tf.cast(x, tf.int32)"
    # complex to real would drop the imaginary part: no cast is suggested
    save(tmp_path / "c" / "0.npy", np.ones(2, np.complex64))
    with pytest.raises(npyio.NpyFormatError) as info:
        npyio.dataset(tmp_path / "c", dtype="float32")
    assert str(info.value).endswith("dtype mismatch -- expected dtype=float32, got complex64")


def test_both_given_reads_no_file_and_checks_each_file_when_read(root):
    ds = npyio.dataset(
        root / "x", root / "y", dtype=tf.float64, shape=(2,), batch_size=None
    )  # builds
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"x/0\.npy: dtype mismatch"):
        list(ds)
