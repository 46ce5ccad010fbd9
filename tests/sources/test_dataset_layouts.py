"""Layouts beyond paired directories: nested sources, labels as values, validation splits, and
per-element paths (``npyio.dataset``)."""

from __future__ import annotations

import os
from collections import Counter

import numpy as np
import pytest
import tensorflow as tf

import npyio
from tests._graph_util import python_ops

N = 23  # not a multiple of the batch size


def _write(path: str, value: np.ndarray) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    np.save(path, value)


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> str:
    """img/NNNN.npy float32 (4, 4) filled with i, mask/NNNN.npy uint8 (4,) filled with i % 7,
    labels/NNNN.npy int64 i, and a stray mask/extra.npy for pairing errors elsewhere."""
    base = str(tmp_path_factory.mktemp("layouts"))
    for i in range(N):
        _write(f"{base}/img/{i:04d}.npy", np.full((4, 4), i, np.float32))
        _write(f"{base}/mask/{i:04d}.npy", np.full((4,), i % 7, np.uint8))
        _write(f"{base}/labels/{i:04d}.npy", np.int64(i))
    return base


def _ids(x: object) -> list[int]:
    image = x["image"] if isinstance(x, dict) else x
    return [int(v) for v in np.asarray(image).reshape(len(image), -1)[:, 0]]


# --- nested sources -------------------------------------------------------------------------------
def test_dict_of_sources_pairs_every_part_by_name(root):
    ds = npyio.dataset(
        {"image": f"{root}/img", "mask": f"{root}/mask"},
        f"{root}/labels",
        batch_size=5,
        shuffle=True,
        seed=1,
    )
    x_spec, y_spec = ds.element_spec
    assert x_spec["image"] == tf.TensorSpec([None, 4, 4], tf.float32)
    assert x_spec["mask"] == tf.TensorSpec([None, 4], tf.uint8)
    assert y_spec == tf.TensorSpec([None], tf.int64)
    for _ in range(3):  # several shuffled epochs: every sample once, every part aligned
        seen = []
        for x, y in ds:
            ids = _ids(x)
            assert ids == y.numpy().tolist()
            assert (x["mask"].numpy()[:, 0] == np.array(ids) % 7).all()
            seen += ids
        assert sorted(seen) == list(range(N))


def test_tuple_of_sources_and_per_part_specs(root):
    ds = npyio.dataset(
        (f"{root}/img", f"{root}/mask"),
        f"{root}/labels",
        batch_size=4,
        dtype=("float32", "uint8"),
        shape=((4, 4), (None,)),
    )
    (img, mask), _ = ds.element_spec
    assert img.shape.as_list() == [None, 4, 4] and mask.shape.as_list() == [None, None]
    (a, b), labels = next(iter(ds))
    assert a.shape == (4, 4, 4) and b.dtype == tf.uint8 and labels.numpy().tolist() == [0, 1, 2, 3]


def test_nested_part_that_does_not_pair_is_named(root, tmp_path):
    for i in range(N - 1):  # one mask short
        _write(f"{tmp_path}/mask/{i:04d}.npy", np.zeros(4, np.uint8))
    with pytest.raises(ValueError, match=r"missing from inputs\['mask'\]: 0022\.npy"):
        npyio.dataset({"image": f"{root}/img", "mask": f"{tmp_path}/mask"}, f"{root}/labels")


def test_a_tuple_of_file_paths_is_still_one_source(root):
    files = tuple(f"{root}/img/{i:04d}.npy" for i in range(3))
    ds = npyio.dataset(files, batch_size=None)
    assert ds.element_spec == tf.TensorSpec([4, 4], tf.float32)
    assert [int(x[0, 0]) for x in ds] == [0, 1, 2]


# --- labels as values -------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["array", "list", "rows"])
def test_labels_as_values_follow_their_files_through_shuffles(root, kind):
    values = {
        "array": np.arange(N) * 10,
        "list": [float(i) / 2 for i in range(N)],
        "rows": np.stack([np.arange(N), -np.arange(N)], axis=1).astype(np.int32),
    }[kind]
    ds = npyio.dataset(f"{root}/img", values, batch_size=4, shuffle=True, seed=5)
    expected = np.asarray(values)
    for _ in range(2):
        seen = []
        for x, y in ds:
            ids = _ids(x)
            assert (y.numpy() == expected[ids]).all()
            seen += ids
        assert sorted(seen) == list(range(N))


def test_labels_values_length_and_dtype(root):
    with pytest.raises(ValueError, match=r"got 5 values for 23 input files"):
        npyio.dataset(f"{root}/img", np.arange(5))
    ds = npyio.dataset(f"{root}/img", np.arange(N), label_dtype=tf.float32, batch_size=2)
    assert ds.element_spec[1] == tf.TensorSpec([None], tf.float32)


# --- validation splits ------------------------------------------------------------------------
def _all_ids(ds: tf.data.Dataset) -> list[int]:
    return [i for x, _ in ds for i in _ids(x)]


def test_split_is_disjoint_complete_and_reproducible(root):
    kw = dict(batch_size=4, shuffle=True, seed=7, validation_split=0.3)
    train, val = npyio.dataset(f"{root}/img", f"{root}/labels", subset="both", **kw)
    t, v = _all_ids(train), _all_ids(val)
    assert len(v) == int(0.3 * N) and len(t) == N - len(v)
    assert sorted(t + v) == list(range(N)) and not set(t) & set(v)
    again = npyio.dataset(f"{root}/img", f"{root}/labels", subset="validation", **kw)
    assert sorted(_all_ids(again)) == sorted(v)  # the same seed, the same split
    other = npyio.dataset(f"{root}/img", f"{root}/labels", subset="validation", **{**kw, "seed": 8})
    assert sorted(_all_ids(other)) != sorted(v)


def test_split_does_not_move_with_shuffle_and_comes_in_file_order_unshuffled(root):
    kw = dict(validation_split=0.3, subset="validation", seed=3, batch_size=None)
    plain = [int(x[0, 0]) for x in npyio.dataset(f"{root}/img", **kw)]
    shuffled = [int(x[0, 0]) for x in npyio.dataset(f"{root}/img", shuffle=True, **kw)]
    assert plain == sorted(shuffled) and len(plain) == int(0.3 * N)
    assert plain != list(range(N - len(plain), N))  # drawn, not the last files (Keras's)


@pytest.mark.parametrize(
    "kw, message",
    [
        (dict(validation_split=1.0, subset="training"), "between 0 and 1"),
        (dict(validation_split=0.0, subset="training"), "between 0 and 1"),
        (dict(subset="training"), "needs validation_split"),
        (dict(validation_split=0.2), "subset must be"),
        (dict(validation_split=0.2, subset="train"), "subset must be"),
        (dict(validation_split=0.2, subset="both", shuffle=True), "needs a seed"),
        (dict(validation_split=0.2, subset="validation"), "needs a seed"),
        (dict(validation_split=0.01, subset="validation", seed=0), "validation subset empty"),
    ],
    ids=[
        "one",
        "zero",
        "subset-alone",
        "split-alone",
        "bad-subset",
        "no-seed",
        "no-seed-unshuffled",
        "empty",
    ],
)
def test_split_errors(root, kw, message):
    with pytest.raises(ValueError, match=message):
        npyio.dataset(f"{root}/img", **kw)


# --- per-element paths ------------------------------------------------------------------------
def test_with_paths_names_each_element_and_runs_no_python(root):
    ds = npyio.dataset(
        f"{root}/img", f"{root}/labels", batch_size=4, shuffle=True, seed=2, with_paths=True
    )
    assert ds.element_spec[2] == tf.TensorSpec([None], tf.string)
    count = Counter()
    for x, _, paths in ds:
        for i, p in zip(_ids(x), paths.numpy()):
            assert os.path.basename(p.decode()) == f"{i:04d}.npy"
            count[p] += 1
    assert len(count) == N and set(count.values()) == {1}
    assert not python_ops(ds)
    # serializable: the graph goes through a variant and back, as on tf.data service
    back = tf.data.experimental.from_variant(tf.data.experimental.to_variant(ds), ds.element_spec)
    assert sum(int(tf.shape(p)[0]) for _, _, p in back) == N


def test_with_paths_on_the_large_file_path_and_without_labels(root):
    ds = npyio.dataset(f"{root}/img", with_paths=True, shape=(None, 4), batch_size=3)
    x, paths = next(iter(ds))
    assert x.shape == (3, 4, 4) and paths.shape == (3,)


def test_nested_values_and_splits_run_no_python(root):
    nested = npyio.dataset(
        {"image": f"{root}/img", "mask": f"{root}/mask"}, f"{root}/labels", batch_size=4
    )
    values = npyio.dataset(f"{root}/img", np.arange(N), batch_size=4, shuffle=True, seed=0)
    train = npyio.dataset(
        f"{root}/img", validation_split=0.2, subset="training", seed=0, batch_size=None
    )
    for ds in (nested, values, train):
        assert not python_ops(ds)
