"""The resolver (`resolve`: what files a source stands for), the pairing rule (`pair`,
`unpaired`) and `parse_shard`: plain Python, run here on local directories."""

from __future__ import annotations

import os
import types
from pathlib import Path

import numpy as np
import pytest

from npyio._format.files import NO_SUCH_FILE, one_path
from npyio._pipeline.paths import pair, parse_shard, resolve, shard_list, unpaired


def touch(path: Path) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"")
    return str(path)


def names(paths: list[str]) -> list[str]:
    return [os.path.basename(p) for p in paths]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """x/ and y/ with 3 files of the same names each, written out of order, plus noise."""
    for side in ("x", "y"):
        for name in ("b.npy", "c.npy", "a.npy"):
            touch(tmp_path / side / name)
    touch(tmp_path / "x" / "notes.txt")
    touch(tmp_path / "x" / "a.npz")
    touch(tmp_path / "x" / "a.npy.bak")
    (tmp_path / "x" / "sub").mkdir()
    touch(tmp_path / "x" / "sub" / "deep.npy")  # directories are not listed recursively
    return tmp_path


# --- resolve ----------------------------------------------------------------------------------
def test_directory_is_its_npy_files_sorted_by_name(tmp_path):
    for name in ("b.npy", "10.npy", "9.npy", "a.npy", "B.npy"):
        touch(tmp_path / name)
    touch(tmp_path / "notes.txt")
    touch(tmp_path / "x.npz")
    source = resolve(str(tmp_path))
    assert source.kind == "dir" and source.by_name and source.problem is None
    assert source.paths == [
        str(tmp_path / n) for n in sorted(os.listdir(tmp_path)) if n.endswith(".npy")
    ]
    assert names(source.paths) == ["10.npy", "9.npy", "B.npy", "a.npy", "b.npy"]


def test_directory_with_npz_suffix_lists_archives_only(tree):
    source = resolve(str(tree / "x"), suffix=".npz")
    assert names(source.paths) == ["a.npz"]


def test_non_npy_files_and_subdirectories_are_ignored(tree):
    assert names(resolve(str(tree / "x")).paths) == ["a.npy", "b.npy", "c.npy"]


def test_glob_is_sorted_by_file_name_then_path(tmp_path):
    touch(tmp_path / "p" / "2.npy")
    touch(tmp_path / "q" / "1.npy")
    touch(tmp_path / "q" / "3.npy")
    touch(tmp_path / "q" / "3.txt")
    source = resolve(str(tmp_path / "*" / "*.npy"))
    assert source.kind == "glob" and source.by_name
    assert source.paths == [
        str(tmp_path / "q" / "1.npy"),
        str(tmp_path / "p" / "2.npy"),
        str(tmp_path / "q" / "3.npy"),
    ]
    # a glob takes what it matches, whatever the suffix
    assert names(resolve(str(tmp_path / "q" / "3.*")).paths) == ["3.npy", "3.txt"]


def test_one_file_is_taken_whatever_its_name(tmp_path):
    path = touch(tmp_path / "data.bin")
    source = resolve(path)
    assert (source.kind, source.paths, source.by_name) == ("file", [path], False)


def test_an_existing_file_with_glob_characters_is_a_file(tmp_path):
    path = touch(tmp_path / "weird[1].npy")
    assert resolve(path).kind == "file"


@pytest.mark.parametrize(
    "form",
    [
        list,
        tuple,
        lambda ps: [os.fsencode(p) for p in ps],
        lambda ps: [Path(p) for p in ps],
        lambda ps: [ps[0], os.fsencode(ps[1]), Path(ps[2])],
        np.array,
        lambda ps: np.array([os.fsencode(p) for p in ps]),
        lambda ps: np.array(ps, dtype=object),
        lambda ps: np.array([Path(p) for p in ps], dtype=object),
    ],
    ids=["list", "tuple", "bytes", "Path", "mixed", "np-str", "np-bytes", "np-object", "np-Path"],
)
def test_a_sequence_keeps_its_order(tree, form):
    ps = [str(tree / "y" / n) for n in ("c.npy", "a.npy", "b.npy")]
    source = resolve(form(ps))
    assert (source.kind, source.by_name) == ("list", False)
    assert source.paths == ps
    assert all(type(p) is str for p in source.paths)


@pytest.mark.parametrize(
    "form",
    [str, os.fsencode, Path, np.str_, np.bytes_, np.array, lambda p: np.array(p, dtype=object)],
    ids=["str", "bytes", "Path", "np.str_", "np.bytes_", "0-d", "0-d-object"],
)
def test_a_single_path_in_any_form(tree, form):
    source = resolve(form(str(tree / "y")))
    assert source.kind == "dir" and source.arg == str(tree / "y")
    assert one_path(form(str(tree / "y" / "a.npy"))) == str(tree / "y" / "a.npy")


def test_missing_path_is_named(tmp_path):
    missing = str(tmp_path / "no" / "such")
    with pytest.raises(ValueError) as info:
        resolve(missing, "labels")
    assert str(info.value) == f"labels: {missing!r} does not exist (no such file or directory)"
    source = resolve(missing, strict=False)
    assert (source.kind, source.paths, source.problem) == ("missing", [], NO_SUCH_FILE)


def test_empty_directory(tmp_path):
    touch(tmp_path / "notes.txt")
    with pytest.raises(ValueError, match=r"^inputs: directory '.*' has no \*\.npy files$"):
        resolve(str(tmp_path))
    with pytest.raises(ValueError, match=r"has no \*\.npz files$"):
        resolve(str(tmp_path), suffix=".npz")
    assert resolve(str(tmp_path), strict=False).problem == "directory has no .npy files"


def test_glob_that_matches_nothing(tmp_path):
    pattern = str(tmp_path / "*.npy")
    with pytest.raises(ValueError) as info:
        resolve(pattern)
    assert str(info.value) == f"inputs: glob {pattern!r} matches no files"
    # a misspelled directory is named as the reason
    pattern = str(tmp_path / "trian" / "*.npy")
    with pytest.raises(ValueError) as info:
        resolve(pattern)
    assert str(info.value).endswith(f"(directory {str(tmp_path / 'trian')!r} does not exist)")
    assert resolve(pattern, strict=False).problem == "no file matches this pattern"


@pytest.mark.parametrize("empty", [[], (), np.array([], dtype=str)], ids=["list", "tuple", "np"])
def test_empty_sequence(empty):
    with pytest.raises(ValueError, match=r"^inputs: the sequence of paths is empty$"):
        resolve(empty)


@pytest.mark.parametrize("empty", ["", b""], ids=["str", "bytes"])
def test_empty_path(empty):
    with pytest.raises(ValueError, match="inputs: the path is empty"):
        resolve(empty)
    with pytest.raises(ValueError, match="path: the path is empty"):
        one_path(empty)


@pytest.mark.parametrize(
    "bad, words",
    [
        (3, "expected a directory, a glob pattern or a sequence of paths, got int 3"),
        (None, "got NoneType None"),
        ({"a.npy"}, "got set"),
        ([1, "a.npy"], r"got 1 other item in list \[1, 'a.npy'\]: \[0\] 1$"),
        (["a.npy", ""], r"got 1 other item .*: \[1\] ''$"),
        (np.array([["a.npy"]]), "expected a 1-D array of paths, got 2-D ndarray"),
    ],
)
def test_bad_types(bad, words):
    with pytest.raises(TypeError, match=words):
        resolve(bad)


def test_a_bad_array_is_never_shown_whole():
    bad = np.arange(10_000)
    with pytest.raises(TypeError) as info:
        resolve(bad, "inputs")
    msg = str(info.value)
    assert len(msg) < 400, msg
    assert "10000 other items" in msg and "shape (10000,)" in msg and "(10000 in all)" in msg
    # nor a list of long strings, nor the many bad items of a mixed list
    with pytest.raises(TypeError) as info:
        resolve([1] * 5000 + ["x" * 100_000] * 5000)
    assert len(str(info.value)) < 800


def test_an_iterator_is_refused_without_being_consumed():
    it = iter(["a.npy", "b.npy"])
    with pytest.raises(TypeError, match="list_iterator"):
        resolve(it)
    assert next(it) == "a.npy"


def test_one_path_refuses_several_and_other_types():
    with pytest.raises(TypeError, match=r"expected a path \(str, bytes or os.PathLike\), got int"):
        one_path(3)
    with pytest.raises(TypeError, match="got list"):
        one_path(["a", "b"])


# --- pairing ----------------------------------------------------------------------------------
def pair_args(xs: object, ys: object) -> tuple[list[str], list[str]]:
    return pair(resolve(xs, "inputs"), resolve(ys, "labels"))


def test_dir_and_dir_pair_by_name(tree):
    xs, ys = pair_args(str(tree / "x"), str(tree / "y"))
    assert names(xs) == names(ys) == ["a.npy", "b.npy", "c.npy"]
    assert all(os.path.dirname(y) == str(tree / "y") for y in ys)


def test_dir_and_list_pair_by_name(tree):
    ys = [str(tree / "y" / n) for n in ("c.npy", "a.npy", "b.npy")]
    xs, paired = pair_args(str(tree / "x"), ys)
    assert names(xs) == names(paired) == ["a.npy", "b.npy", "c.npy"]
    xs, paired = pair_args(list(reversed(ys)), str(tree / "x"))  # either side may be the directory
    assert names(xs) == names(paired) == ["a.npy", "b.npy", "c.npy"]


def test_glob_pairs_by_name(tree):
    xs, ys = pair_args(str(tree / "x" / "*.npy"), str(tree / "y"))
    assert names(xs) == names(ys) == ["a.npy", "b.npy", "c.npy"]


def test_list_and_list_pair_by_position(tree):
    xs = [str(tree / "x" / n) for n in ("a.npy", "b.npy")]
    ys = [str(tree / "y" / n) for n in ("c.npy", "a.npy")]  # names differ: position rules
    assert pair_args(xs, ys) == (xs, ys)
    with pytest.raises(ValueError, match=r"pair by position .* 2 inputs, 3 labels"):
        pair_args(xs, [*ys, ys[0]])


def test_single_files_pair_by_position(tree):
    x, y = str(tree / "x" / "a.npy"), str(tree / "y" / "b.npy")
    assert pair_args(x, y) == ([x], [y])
    assert unpaired(resolve(x), resolve(y)) == ([], [])


def test_duplicate_names_cannot_pair_by_name(tmp_path):
    touch(tmp_path / "x" / "p" / "a.npy")
    touch(tmp_path / "x" / "q" / "a.npy")
    touch(tmp_path / "y" / "a.npy")
    with pytest.raises(ValueError, match=r"inputs: two files share the name 'a\.npy'"):
        pair_args(str(tmp_path / "x" / "*" / "*.npy"), str(tmp_path / "y"))


def test_unpaired_names_are_listed_first_ten(tmp_path):
    for i in range(3):
        touch(tmp_path / "x" / f"{i}.npy")
        touch(tmp_path / "y" / f"{i}.npy")
    for i in range(13):
        touch(tmp_path / "x" / f"extra{i:02d}.npy")
    touch(tmp_path / "y" / "orphan.npy")
    with pytest.raises(ValueError) as info:
        pair_args(str(tmp_path / "x"), str(tmp_path / "y"))
    msg = str(info.value)
    assert msg.startswith("inputs and labels do not pair up by file name: ")
    assert "13 found only in inputs: extra00.npy, " in msg and "extra09.npy and 3 more" in msg
    assert "extra10.npy" not in msg
    assert msg.endswith("; 1 found only in labels: orphan.npy")
    only_x, only_y = unpaired(resolve(str(tmp_path / "x")), resolve(str(tmp_path / "y")))
    assert names(only_x) == [f"extra{i:02d}.npy" for i in range(13)]
    assert names(only_y) == ["orphan.npy"]


def test_unpaired_by_position_is_the_longer_tail(tree):
    xs = [str(tree / "x" / n) for n in ("a.npy", "b.npy", "c.npy")]
    only_x, only_y = unpaired(resolve(xs), resolve(xs[:1]))
    assert (only_x, only_y) == (xs[1:], [])


# --- shards -----------------------------------------------------------------------------------
def test_parse_shard():
    assert parse_shard(None) is None
    assert parse_shard((3, 2)) == (3, 2)
    assert parse_shard([1, 0]) == (1, 0)
    # a tf.distribute.InputContext, by its attributes (no TensorFlow needed)
    context = types.SimpleNamespace(num_input_pipelines=4, input_pipeline_id=1)
    assert parse_shard(context) == (4, 1)
    for bad in ((2, 2), (0, 0), (2, -1), (2.0, 1)):
        with pytest.raises(ValueError, match="0 <= index < num_shards"):
            parse_shard(bad)
    with pytest.raises(ValueError, match="0 <= index < num_shards"):
        parse_shard(types.SimpleNamespace(num_input_pipelines=2, input_pipeline_id=2))
    for bad in (3, (1, 2, 3)):
        with pytest.raises(TypeError, match="shard must be"):
            parse_shard(bad)


def test_shard_list_gives_each_path_to_one_shard():
    paths = [f"{i}.npy" for i in range(10)]
    shards = [shard_list(paths, 3, i) for i in range(3)]
    assert sorted(p for shard in shards for p in shard) == sorted(paths)
    assert shards[1] == ["1.npy", "4.npy", "7.npy"]


# --- hidden files -------------------------------------------------------------------------------
def _hidden_tree(root: Path) -> Path:
    """d/ with 0.npy, 1.npy and macOS's ._0.npy beside them (not a .npy file at all)."""
    d = root / "d"
    d.mkdir()
    for name in ("0.npy", "1.npy"):
        np.save(d / name, 0)
    (d / "._0.npy").write_bytes(b"\x00\x05\x16\x07 AppleDouble")
    return d


def test_hidden_files_are_left_out_of_a_directory_and_a_glob(tmp_path):
    d = _hidden_tree(tmp_path)
    assert names(resolve(str(d)).paths) == ["0.npy", "1.npy"]
    assert names(resolve(str(d / "*.npy")).paths) == ["0.npy", "1.npy"]


def test_hidden_files_named_explicitly_are_read(tmp_path):
    d = _hidden_tree(tmp_path)
    assert names(resolve(str(d / ".*.npy")).paths) == ["._0.npy"]
    assert names(resolve(str(d / "._0.npy")).paths) == ["._0.npy"]
    assert names(resolve([str(d / "._0.npy"), str(d / "0.npy")]).paths) == ["._0.npy", "0.npy"]


def test_hidden_files_on_another_file_system_as_locally():
    import tensorflow as tf

    root = "ram://paths-hidden/d"
    for name in ("0.npy", "1.npy", "._0.npy"):
        with tf.io.gfile.GFile(f"{root}/{name}", "wb") as f:
            f.write(b"")
    assert names(resolve(root).paths) == ["0.npy", "1.npy"]
    assert names(resolve(f"{root}/*.npy").paths) == ["0.npy", "1.npy"]
    assert names(resolve(f"{root}/.*.npy").paths) == ["._0.npy"]
    assert names(resolve(f"{root}/._0.npy").paths) == ["._0.npy"]


# --- interrupted packs --------------------------------------------------------------------------
def test_the_shards_of_an_interrupted_pack_stand_for_no_file(tmp_path):
    from npyio._format.packed import INCOMPLETE, INDEX, IncompletePackError

    out = tmp_path / "out"
    for name in ("inputs-00000-of-00002.npy", "labels-00000-of-00002.npy"):
        touch(out / name)
    touch(out / INCOMPLETE)
    touch(out / ".inputs-00001-of-00002.npy.tmp")
    for spec in (str(out), str(out / "inputs-*.npy")):
        source = resolve(spec, strict=False)
        assert source.paths == []
        assert source.problem is not None and source.problem.startswith("incomplete pack")
        with pytest.raises(IncompletePackError, match=f"incomplete pack.* no {INDEX}"):
            resolve(spec)
    (out / "inputs-00000-of-00002.npy").unlink()
    (out / "labels-00000-of-00002.npy").unlink()  # killed before its first shard
    with pytest.raises(IncompletePackError, match="incomplete pack"):
        resolve(str(out))
    touch(out / INDEX)  # complete: its shards are ordinary files
    (out / INCOMPLETE).unlink()
    (out / ".inputs-00001-of-00002.npy.tmp").unlink()
    touch(out / "inputs-00000-of-00001.npy")
    assert names(resolve(str(out / "inputs-*.npy")).paths) == ["inputs-00000-of-00001.npy"]
