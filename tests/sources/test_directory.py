"""npyio.dataset_from_directory: the same files, order, labels, splits and messages as Keras's
``*_dataset_from_directory``, delivered exactly once, with no Python in the graph."""

from __future__ import annotations

import os
import uuid
from collections import Counter

import numpy as np
import pytest
import tensorflow as tf

import npyio
from npyio._sources.directory import index_directory
from tests._graph_util import graph_def, op_types, python_ops

keras = pytest.importorskip("keras")
dataset_utils = pytest.importorskip("keras.src.utils.dataset_utils")

CLASSES = ("ant", "bee", "cow")


def _write(path: str, value: object) -> None:
    with tf.io.gfile.GFile(path, "wb") as f:
        np.save(f, np.asarray(value))


def _touch(path: str, text: str = "") -> None:
    with tf.io.gfile.GFile(path, "w") as f:
        f.write(text)


def make_tree(
    root: str, counts: tuple[int, ...] = (5, 4, 6), classes: tuple[str, ...] = CLASSES
) -> dict[int, str]:
    """``root/<class>/...``: each file holds ``[id, class position]`` (int32; the position in
    ``classes``), every third one in a nested subfolder, with non-``.npy`` files beside them
    and one ``.npy`` file at the top (no class). Each ``.npy`` file has a ``.txt`` twin holding
    its id, which Keras's ``text_dataset_from_directory`` reads (and npyio ignores), so that
    the two can be compared on the same tree. Returns {id: class}."""
    owner: dict[int, str] = {}
    i = 0
    for c, (cls, n) in enumerate(zip(classes, counts)):
        for j in range(n):
            folder = f"{root}/{cls}" + (f"/sub{j % 2}/deeper" if j % 3 == 2 else "")
            tf.io.gfile.makedirs(folder)
            _write(f"{folder}/f{i:03d}.npy", np.array([i, c], np.int32))
            _touch(f"{folder}/f{i:03d}.txt", str(i))
            owner[i] = cls
            i += 1
        _touch(f"{root}/{cls}/readme.md", "not data")
        _touch(f"{root}/{cls}/f.npy.bak", "not data")
    _write(f"{root}/top.npy", np.array([999, -1], np.int32))  # no class: read with labels=None
    _touch(f"{root}/top.txt", "999")
    return owner


@pytest.fixture
def tree(tmp_path):
    return str(tmp_path), make_tree(str(tmp_path))


def elements(ds: tf.data.Dataset) -> list[tuple[int, object]]:
    """(file id, label) per element, in delivery order (the tests check the labels against
    the class each id was written in)."""
    return [
        (int(x[0]), y.numpy().tolist())
        for x, y in (ds.unbatch() if ds.element_spec[0].shape.rank == 2 else ds)
    ]


# --- the listing: Keras's own index_directory is the reference ---------------------------------
@pytest.fixture
def tricky(tmp_path):
    """A tree whose order and contents trip up a naive walk: a path that sorts differently
    from a depth-first walk (``b-c`` before ``b/d``), a space, an upper-case suffix, hidden
    files and a hidden folder, non-.npy files, an empty folder, symlinks to a file and to a
    folder (inside a class and as a class), and files outside any class."""
    root = tmp_path / "tricky"
    files = [
        "a/z.npy",
        "a/B.NPY",
        "a/.hidden.npy",
        "a/b/1.npy",
        "a/b/2.npy",
        "a/b/d/4.npy",
        "a/b-c/3.npy",
        "a/b c/5.npy",
        "a/ä/6.npy",
        "b/1.npy",
        "b/deep/er/7.npy",
        ".hidden_class/8.npy",
        "top.npy",
    ]
    for name in files:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        _write(str(root / name), np.int32(0))  # (np.save would make B.NPY B.NPY.npy)
    for name in ["a/x.npy.txt", "a/notnpy", "a/data.npz", "b/readme"]:
        (root / name).write_text("not data")
    (root / "a" / "empty_sub").mkdir()
    (root / "a" / "ln").symlink_to(root / "b", target_is_directory=True)
    (root / "a" / "lnfile.npy").symlink_to(root / "b" / "1.npy")
    (root / "link_to_b").symlink_to(root / "b", target_is_directory=True)
    return str(root)


def keras_index(directory, labels, class_names=None, follow_links=False, shuffle=False, seed=None):
    return dataset_utils.index_directory(
        directory,
        labels,
        formats=(".npy",),
        class_names=class_names,
        shuffle=shuffle,
        seed=seed,
        follow_links=follow_links,
        verbose=False,
    )


@pytest.mark.parametrize("follow_links", [False, True], ids=["no-links", "follow-links"])
@pytest.mark.parametrize(
    "labels, class_names",
    [
        ("inferred", None),
        ("inferred", ["link_to_b", "a"]),
        (None, None),
        ("list", None),
    ],
    ids=["inferred", "class_names", "no-labels", "labels-list"],
)
def test_index_matches_keras_index_directory(tricky, labels, class_names, follow_links):
    keras_labels = labels
    if labels == "list":
        n = len(keras_index(tricky, None, follow_links=follow_links)[0])
        keras_labels = [i % 3 for i in range(n)]
    want = keras_index(tricky, keras_labels, class_names, follow_links)
    # Keras lists hidden files inside a class folder (it skips hidden class folders only);
    # npyio leaves every hidden name out, as glob("*.npy") does
    shown = [i for i, p in enumerate(want[0]) if "/." not in p[len(tricky) :]]
    want_paths, want_names = [want[0][i] for i in shown], want[2]
    want_labels = None if want[1] is None else np.asarray(want[1])[shown]
    if labels == "list":
        labels = [keras_labels[i] for i in shown]
    got = index_directory(tricky, labels, class_names, follow_links)
    assert got.paths == want_paths
    assert got.class_names == want_names
    if want_labels is None:
        assert got.labels is None
    else:
        assert got.labels.tolist() == list(want_labels)
        if labels == "inferred":
            assert got.labels.dtype == want_labels.dtype == np.int32


def test_order_is_by_directory_path_then_name(tricky):
    # the order Keras defines (and a depth-first walk does not give): "a/b c" < "a/b-c" <
    # "a/b/..." because " " < "-" < "/"
    paths = index_directory(tricky, "inferred", ["a"]).paths
    rel = [os.path.relpath(p, tricky) for p in paths]
    assert rel == [
        "a/B.NPY",
        "a/lnfile.npy",
        "a/z.npy",
        "a/b/1.npy",
        "a/b/2.npy",
        "a/b c/5.npy",
        "a/b-c/3.npy",
        "a/b/d/4.npy",
        "a/ä/6.npy",
    ]


def test_remote_listing_matches_keras(tmp_path):
    root = f"ram://npyio-test/{uuid.uuid4().hex}"
    owner = make_tree(root)
    for labels in ("inferred", None):
        want_paths, want_labels, want_names = keras_index(root, labels)
        got = index_directory(root, labels)
        assert got.paths == want_paths
        assert got.class_names == want_names
        assert (got.labels is None) == (want_labels is None)
    ds = npyio.dataset_from_directory(root, batch_size=4, shuffle=True, seed=0, verbose=False)
    got_ids = elements(ds)
    assert Counter(i for i, _ in got_ids) == Counter(list(owner))
    assert all(CLASSES[y] == owner[i] for i, y in got_ids)


# --- the public function, against Keras's text_dataset_from_directory on the same tree ---------
def _keras_text(root, **kwargs):
    return keras.utils.text_dataset_from_directory(root, **kwargs)


def _keras_ids(ds) -> list[int]:
    out = []
    for element in ds:
        text = element[0] if isinstance(element, tuple) else element
        out.extend(int(t) for t in np.reshape(text.numpy(), -1))
    return out


def _ids(ds) -> list[int]:
    out = []
    for element in ds:
        x = element[0] if isinstance(element, tuple) else element
        out.extend(int(v) for v in x.numpy().reshape(-1, 2)[:, 0])
    return out


def _labels(ds) -> list[object]:
    """The labels of every element, batched or not (a batch's first dim is unknown)."""
    ys = [y.numpy() for _, y in ds]
    batched = ds.element_spec[1].shape.rank > 0 and ds.element_spec[1].shape[0] is None
    return (np.concatenate(ys) if batched else np.stack(ys)).tolist()


@pytest.mark.parametrize("label_mode", ["int", "categorical", "binary", None])
@pytest.mark.parametrize("batch_size", [4, None], ids=["batched", "unbatched"])
def test_label_modes_match_keras(tmp_path, capsys, label_mode, batch_size):
    classes = CLASSES[:2] if label_mode == "binary" else CLASSES
    root = str(tmp_path)
    make_tree(root, counts=(5, 4, 6)[: len(classes)], classes=classes)
    kw = {"label_mode": label_mode, "batch_size": batch_size, "shuffle": False}
    theirs = _keras_text(root, **kw)
    keras_out = capsys.readouterr().out
    ours = npyio.dataset_from_directory(root, **kw)
    assert capsys.readouterr().out == keras_out
    assert ours.class_names == theirs.class_names
    if label_mode is None:
        assert isinstance(ours.element_spec, tf.TensorSpec)
        assert _ids(ours) == _keras_ids(theirs)  # includes the top-level file: no classes
        assert 999 in _ids(ours)
        return
    assert ours.element_spec[1] == theirs.element_spec[1]  # dtype and shape of the labels
    assert _ids(ours) == _keras_ids(theirs)
    assert _labels(ours) == _labels(theirs)


def test_labels_list_matches_keras(tree, capsys):
    root, owner = tree
    n = len(owner) + 1  # with the top-level file: labels=list walks the whole directory
    values = [(3 * i) % 4 for i in range(n)]
    theirs = _keras_text(root, labels=values, batch_size=4, shuffle=False)
    keras_out = capsys.readouterr().out
    ours = npyio.dataset_from_directory(root, labels=values, batch_size=4, shuffle=False)
    assert capsys.readouterr().out == keras_out == "Found 16 files belonging to 4 classes.\n"
    assert ours.class_names == theirs.class_names == ["0", "1", "2", "3"]
    assert ours.element_spec[1] == theirs.element_spec[1]
    assert _ids(ours) == _keras_ids(theirs)
    assert _labels(ours) == _labels(theirs) == [int(v) for v in values]
    cat = npyio.dataset_from_directory(
        root, labels=np.array(values), label_mode="categorical", shuffle=False, verbose=False
    )
    assert _labels(cat) == np.eye(4)[values].tolist()


@pytest.mark.parametrize("subset", ["training", "validation", "both"])
@pytest.mark.parametrize("shuffle", [True, False], ids=["shuffled", "sorted"])
def test_split_counts_and_messages_match_keras(tree, capsys, subset, shuffle):
    # Keras's counts and words; its files differ on purpose (stratified, not moved by shuffle)
    root, _ = tree
    kw = {"validation_split": 0.3, "subset": subset, "seed": 5, "shuffle": shuffle}
    theirs = _keras_text(root, batch_size=4, **kw)
    keras_out = capsys.readouterr().out
    ours = npyio.dataset_from_directory(root, batch_size=4, **kw)
    assert capsys.readouterr().out == keras_out
    theirs = list(theirs) if subset == "both" else [theirs]
    ours_list = list(ours) if subset == "both" else [ours]
    for mine, keras_ds in zip(ours_list, theirs):
        assert len(_ids(mine)) == len(_keras_ids(keras_ds))
        assert mine.file_paths == sorted(mine.file_paths)  # alphanumeric, as without a split
        assert sorted(_ids(mine)) == sorted(int(np.load(p)[0]) for p in mine.file_paths)


def test_split_is_stratified_and_does_not_move_with_other_options(tree):
    root, owner = tree  # ant 5, bee 4, cow 6 files
    base = {"validation_split": 0.3, "seed": 5, "verbose": False}
    val = npyio.dataset_from_directory(root, subset="validation", shuffle=False, **base)
    classes = Counter(owner[i] for i in _ids(val))
    # int(0.3 * 15) = 4: the floors of 1.5, 1.2 and 1.8, and cow's largest remainder
    assert classes == {"ant": 1, "bee": 1, "cow": 2}
    variants = [
        {"shuffle": True},
        {"shuffle": False, "batch_size": 1},
        {"shuffle": True, "batch_size": None, "num_parallel_calls": 1, "deterministic": False},
        {"shuffle": True, "label_mode": "categorical", "with_paths": True, "prefetch": 0},
    ]
    for other in variants:
        train = npyio.dataset_from_directory(root, subset="training", **base, **other)
        assert set(train.file_paths).isdisjoint(val.file_paths), other
        assert sorted(train.file_paths + val.file_paths) == sorted(
            npyio.dataset_from_directory(root, verbose=False).file_paths
        )
        again = npyio.dataset_from_directory(root, subset="validation", **base, **other)
        assert again.file_paths == val.file_paths, other


# --- delivery ---------------------------------------------------------------------------------
def test_exactly_once_with_correct_labels_over_shuffled_epochs(tree):
    root, owner = tree
    ds = npyio.dataset_from_directory(
        root, batch_size=4, seed=3, num_parallel_calls=4, deterministic=False, verbose=False
    )
    assert ds.class_names == list(CLASSES)
    orders = []
    for _ in range(3):
        got = elements(ds)
        assert Counter(i for i, _ in got) == Counter(list(owner))
        assert all(CLASSES[y] == owner[i] for i, y in got), "a file got another class's label"
        orders.append([i for i, _ in got])
    assert len({tuple(o) for o in orders}) == 3, "each epoch should have a new order"
    sizes = [int(x.shape[0]) for x, _ in ds]
    assert sizes == [4, 4, 4, 3]


def test_file_contents_carry_their_class(tree):
    # the class each file was written for (its second value) is the label it is given
    root, _ = tree
    ds = npyio.dataset_from_directory(root, batch_size=None, seed=1, verbose=False)
    for x, y in ds:
        assert int(x[1]) == int(y)


def test_split_disjoint_complete_reproducible(tree):
    root, owner = tree

    def both(seed):
        return npyio.dataset_from_directory(
            root, validation_split=0.25, subset="both", seed=seed, batch_size=3, verbose=False
        )

    train, val = both(11)
    t_ids, v_ids = _ids(train), _ids(val)
    assert len(t_ids) == len(set(t_ids)) and len(v_ids) == len(set(v_ids))
    assert set(t_ids).isdisjoint(v_ids)
    assert set(t_ids) | set(v_ids) == set(owner)
    assert len(v_ids) == int(0.25 * len(owner))
    # the ids delivered are those of the files the attributes name
    assert sorted(t_ids) == sorted(int(np.load(p)[0]) for p in train.file_paths)
    assert v_ids == [int(np.load(p)[0]) for p in val.file_paths]  # validation: in split order
    again_train, again_val = both(11)
    assert again_train.file_paths == train.file_paths
    assert again_val.file_paths == val.file_paths
    assert both(12)[1].file_paths != val.file_paths
    # "training" and "validation" alone give the same subsets as "both"
    for subset, part in (("training", train), ("validation", val)):
        alone = npyio.dataset_from_directory(
            root, validation_split=0.25, subset=subset, seed=11, verbose=False
        )
        assert alone.file_paths == part.file_paths
        assert alone.class_names == part.class_names == list(CLASSES)


def test_shards_of_a_subset(tree):
    root, _ = tree
    kw = {"validation_split": 0.25, "subset": "training", "seed": 2, "verbose": False}
    whole = npyio.dataset_from_directory(root, **kw)
    shards = [npyio.dataset_from_directory(root, shard=(2, i), **kw) for i in range(2)]
    assert sorted(shards[0].file_paths + shards[1].file_paths) == sorted(whole.file_paths)
    assert set(shards[0].file_paths).isdisjoint(shards[1].file_paths)
    assert sorted(_ids(shards[0]) + _ids(shards[1])) == sorted(_ids(whole))


def test_class_names_select_and_order(tree):
    root, owner = tree
    ds = npyio.dataset_from_directory(
        root, class_names=["cow", "ant"], batch_size=None, shuffle=False, verbose=False
    )
    assert ds.class_names == ["cow", "ant"]
    got = elements(ds)
    assert {i for i, _ in got} == {i for i, c in owner.items() if c in ("cow", "ant")}
    assert all(["cow", "ant"][y] == owner[i] for i, y in got)
    assert [y for _, y in got] == sorted(y for _, y in got)  # class by class, cow first


def test_recursion_and_non_npy_ignored(tree):
    root, owner = tree
    ds = npyio.dataset_from_directory(root, shuffle=False, verbose=False)
    assert len(ds.file_paths) == len(owner)
    assert all(p.endswith(".npy") for p in ds.file_paths)
    assert any("/deeper/" in p for p in ds.file_paths)
    assert not any(p.endswith("top.npy") for p in ds.file_paths)  # not in a class folder


def test_with_paths_names_each_file(tree):
    root, _ = tree
    ds = npyio.dataset_from_directory(
        root, label_mode="categorical", with_paths=True, seed=0, batch_size=4, verbose=False
    )
    for x, y, path in ds.unbatch():
        assert int(np.load(path.numpy().decode())[0]) == int(x[0])
        assert int(tf.argmax(y)) == int(x[1])


def test_follow_links_refuses_a_loop(tmp_path):
    make_tree(str(tmp_path))
    (tmp_path / "ant" / "loop").symlink_to(tmp_path / "ant", target_is_directory=True)
    ok = npyio.dataset_from_directory(str(tmp_path), verbose=False)
    assert not any("/loop/" in p for p in ok.file_paths)
    with pytest.raises(ValueError, match=r"follow_links: .*loop.* links to .*ant"):
        npyio.dataset_from_directory(str(tmp_path), follow_links=True, verbose=False)


def test_declared_spec(tree):
    root, _ = tree
    ds = npyio.dataset_from_directory(
        root, dtype="int32", shape=(2,), batch_size=4, drop_remainder=True, verbose=False
    )
    assert ds.element_spec == (
        tf.TensorSpec((4, 2), tf.int32),
        tf.TensorSpec((4,), tf.int32),
    )


# --- the graph --------------------------------------------------------------------------------
@pytest.mark.parametrize("label_mode", ["int", "categorical", "binary", None])
def test_graph_runs_no_python(tmp_path, label_mode):
    classes = CLASSES[:2] if label_mode == "binary" else CLASSES
    owner = make_tree(str(tmp_path), classes=classes, counts=(5, 4, 6)[: len(classes)])
    ds = npyio.dataset_from_directory(
        str(tmp_path), label_mode=label_mode, seed=0, with_paths=True, verbose=False
    )
    assert python_ops(ds) == set()
    if label_mode == "categorical":
        # one-hot in the graph, from the class indices: no N x C matrix of labels
        assert "OneHot" in op_types(ds)
        n, c = len(owner), len(classes)
        for node in graph_def(ds).node:
            if node.op == "Const":
                dims = [d.size for d in node.attr["value"].tensor.tensor_shape.dim]
                assert dims != [n, c]


def test_a_pack_is_refused_naming_npyio_dataset(tmp_path):
    """A pack's shards are .npy files: read as loose files (labels=None), each shard would be
    one element. dataset_from_directory refuses the directory whatever its labels, and
    npyio.dataset reads it."""
    for cls in ("a", "b"):
        for i in range(2):
            (tmp_path / "src" / cls).mkdir(parents=True, exist_ok=True)
            np.save(tmp_path / "src" / cls / f"{i}.npy", np.full((3,), i, np.float32))
    out = str(tmp_path / "packed")
    npyio.pack(str(tmp_path / "src"), out=out, from_directory=True)
    for labels in ("inferred", None):
        with pytest.raises(ValueError, match=rf"directory: '{out}' is a pack .*npyio\.dataset"):
            npyio.dataset_from_directory(out, labels=labels, verbose=False)
    assert len(npyio.dataset(out, batch_size=2)) == 2


# --- errors -----------------------------------------------------------------------------------
def test_errors(tree, tmp_path):
    root, owner = tree
    n = len(owner) + 1

    def call(directory=root, **kw):
        return npyio.dataset_from_directory(directory, verbose=False, **kw)

    missing = f"{root}/nope"
    with pytest.raises(ValueError, match=rf"directory: '{missing}' does not exist"):
        call(missing)
    with pytest.raises(ValueError, match=r"top\.npy' is not a directory"):
        call(f"{root}/top.npy")
    with pytest.raises(ValueError, match=r"got 3 labels for 16 files"):
        call(labels=[0, 1, 0])
    for bad in (0, 1, 1.5, -0.1):
        with pytest.raises(ValueError, match=rf"validation_split .* got {bad!r}"):
            call(validation_split=bad, subset="training", seed=1)
    with pytest.raises(ValueError, match=r"subset='training' needs validation_split"):
        call(subset="training")
    with pytest.raises(ValueError, match=r"subset must be .* got None"):
        call(validation_split=0.2, seed=1)
    with pytest.raises(ValueError, match=r"subset must be .* got 'test'"):
        call(validation_split=0.2, subset="test", seed=1)
    with pytest.raises(ValueError, match=r"needs a seed"):
        call(validation_split=0.2, subset="training")
    with pytest.raises(ValueError, match=r"label_mode='binary' needs exactly 2 classes, got 3"):
        call(label_mode="binary")
    with pytest.raises(ValueError, match=r"\['nope'\] name no subdirectory .*'ant', 'bee'"):
        call(class_names=["ant", "nope"])
    with pytest.raises(ValueError, match=r"\['ant'\] appear more than once"):
        call(class_names=["ant", "bee", "ant"])
    with pytest.raises(ValueError, match=r"label_mode must be .* got label_mode='sparse'"):
        call(label_mode="sparse")
    with pytest.raises(ValueError, match=r"labels must be 'inferred'.*'folders'"):
        call(labels="folders")
    with pytest.raises(ValueError, match=r"labels: expected a list of numbers"):
        call(labels=["a"] * n)
    with pytest.raises(ValueError, match=r"class_names needs labels='inferred'"):
        call(labels=None, class_names=["ant"])
    with pytest.raises(ValueError, match=r"labels to be 0 \.\. C-1.* \['0', '2'\]"):
        call(labels=[0, 2] * (n // 2), label_mode="categorical")
    # the arguments are checked before the directory is looked at (or walked)
    with pytest.raises(ValueError, match=r"validation_split"):
        call(missing, validation_split=2.0, subset="training")

    tf.io.gfile.makedirs(f"{root}/dog/empty/inside")
    _touch(f"{root}/dog/empty/notes.txt")
    with pytest.raises(ValueError, match=r"class directory \['.*/dog'\] has no \.npy files"):
        call()
    call(class_names=list(CLASSES))  # leaving the empty class out

    flat = tmp_path / "flat"
    flat.mkdir()
    np.save(flat / "a.npy", np.int32(1))
    with pytest.raises(ValueError, match=r"'.*flat' has no class subdirectories"):
        call(str(flat))
    assert call(str(flat), labels=None, batch_size=None).file_paths == [str(flat / "a.npy")]
    (tmp_path / "none").mkdir()
    with pytest.raises(ValueError, match=r"'.*none' has no \.npy files"):
        call(str(tmp_path / "none"), labels=None)


@pytest.mark.parametrize("where", ["local", "ram"])
def test_hidden_files_and_folders_are_skipped(tmp_path, where):
    """macOS's ``._f000.npy`` (not a .npy file) and a hidden folder inside a class are left
    out, as ``glob("*.npy")`` leaves them out: the dataset reads the visible files only."""
    root = str(tmp_path) if where == "local" else f"ram://npyio-test/{uuid.uuid4().hex}"
    owner = make_tree(root, counts=(2, 2, 2))
    _touch(f"{root}/ant/._f000.npy", "\x00\x05\x16\x07 AppleDouble")
    tf.io.gfile.makedirs(f"{root}/bee/.ipynb_checkpoints")
    _write(f"{root}/bee/.ipynb_checkpoints/f002.npy", np.array([2, 1], np.int32))
    ds = npyio.dataset_from_directory(root, batch_size=None, shuffle=False, verbose=False)
    assert sorted(i for i, _ in elements(ds)) == sorted(owner)
