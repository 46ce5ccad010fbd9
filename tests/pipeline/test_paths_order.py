"""Label values pair with a directory's or glob's files in text order: where the names hold
numbers that are not zero-padded, that is not the order the values were written in, and every
entry point that pairs values with a listing refuses it (`npyio._pipeline.paths.refuse_text_order`),
saying how to pass an explicit order and how to take text order knowingly."""

from __future__ import annotations

import glob
import os

import numpy as np
import pytest

import npyio
from npyio._pipeline.paths import refuse_text_order, text_order_clash

N = 12


@pytest.mark.parametrize(
    ("names", "clash"),
    [
        (["0.npy", "1.npy", "10.npy", "11.npy", "2.npy"], ("11.npy", "2.npy")),
        (["img_1.npy", "img_10.npy", "img_9.npy"], ("img_10.npy", "img_9.npy")),
        (["0000.npy", "0001.npy", "0010.npy"], None),  # zero-padded
        (["a.npy", "b.npy", "c.npy"], None),
        (["0.npy", "1.npy", "2.npy"], None),  # fewer than ten: the orders agree
        (["x1y.npy", "x1z.npy", "x2a.npy"], None),
    ],
)
def test_text_order_clash(names, clash):
    paths = [f"d/{n}" for n in names]
    got = text_order_clash(paths)
    assert (None if got is None else tuple(os.path.basename(p) for p in got)) == clash


def test_a_clash_in_the_directories_of_a_glob_counts_too():
    paths = ["run/1/x.npy", "run/10/x.npy", "run/2/x.npy"]  # one name, sorted by path
    assert text_order_clash(paths) == ("run/10/x.npy", "run/2/x.npy")


@pytest.fixture
def unpadded(tmp_path) -> str:
    """``x/0.npy`` .. ``x/11.npy``, file ``i`` holding ``i``."""
    (tmp_path / "x").mkdir()
    for i in range(N):
        np.save(tmp_path / "x" / f"{i}.npy", np.full(2, i, np.int64))
    return str(tmp_path / "x")


@pytest.mark.parametrize("source", ["dir", "glob"])
@pytest.mark.parametrize("labels", ["array", "list"])
def test_dataset_refuses_values_paired_in_text_order(unpadded, source, labels):
    inputs = unpadded if source == "dir" else os.path.join(unpadded, "*.npy")
    values = np.arange(N) if labels == "array" else list(range(N))
    with pytest.raises(ValueError, match=r"'11\.npy' comes before '2\.npy'") as info:
        npyio.dataset(inputs, values)
    message = str(info.value)
    assert message.startswith("labels: ") and "not zero-padded" in message
    assert "key=lambda p: int(os.path.basename(p).split('.')[0])" in message
    assert f"sorted(glob.glob({os.path.join(unpadded, '*.npy')!r}))" in message


def test_the_remedies_the_error_gives_work(unpadded):
    numeric = sorted(
        glob.glob(os.path.join(unpadded, "*.npy")),
        key=lambda p: int(os.path.basename(p).split(".")[0]),
    )
    ds = npyio.dataset(numeric, np.arange(N), batch_size=None)
    assert [(int(x[0]), int(y)) for x, y in ds] == [(i, i) for i in range(N)]
    text = sorted(glob.glob(os.path.join(unpadded, "*.npy")))  # knowingly
    ds = npyio.dataset(text, np.arange(N), batch_size=None)
    assert [int(x[0]) for x, _ in ds] == sorted(range(N), key=str)


def test_pack_and_nested_inputs_refuse_it_too(unpadded, tmp_path):
    with pytest.raises(ValueError, match=r"comes before '2\.npy'"):
        npyio.pack(unpadded, np.arange(N), out=str(tmp_path / "packed"))
    assert not (tmp_path / "packed").exists()
    with pytest.raises(ValueError, match=r"comes before '2\.npy'"):
        npyio.dataset({"a": unpadded, "b": unpadded}, np.arange(N))


def test_label_files_and_padded_names_pair_as_before(unpadded, tmp_path):
    # label files pair by name: no order is involved
    assert len(npyio.dataset(unpadded, unpadded, batch_size=None)) == N
    (tmp_path / "p").mkdir()
    for i in range(N):
        np.save(tmp_path / "p" / f"{i:04d}.npy", np.full(2, i))
    ds = npyio.dataset(str(tmp_path / "p"), np.arange(N), batch_size=None)
    assert [(int(x[0]), int(y)) for x, y in ds] == [(i, i) for i in range(N)]


def test_dataset_from_directory_refuses_a_labels_list_in_text_order(unpadded, tmp_path):
    top = tmp_path / "top"
    (top / "a").mkdir(parents=True)
    for i in range(N):
        np.save(top / "a" / f"{i}.npy", np.full(2, i))
    with pytest.raises(ValueError, match=r"'11\.npy' comes before '2\.npy'.*Reorder the labels"):
        npyio.dataset_from_directory(str(top), labels=list(range(N)), verbose=False)


def test_refuse_text_order_names_the_source_and_the_remedy():
    with pytest.raises(ValueError, match=r"^labels: .* files of 'src' .* REMEDY$"):
        refuse_text_order(["1.npy", "10.npy", "9.npy"], "'src'", "labels", "REMEDY")
    refuse_text_order(["a.npy"], "'src'", "labels", "REMEDY")


def test_a_clash_is_judged_in_the_order_the_listing_was_sorted_by():
    walk = ["t/top.npy", "t/a/B.NPY", "t/a/b/2.npy", "t/a/b/10.npy"]  # a walk: by directory

    def by_directory(p: str) -> tuple[str, str]:
        return os.path.dirname(p), os.path.basename(p)

    assert text_order_clash(walk, by_directory) is None  # sorted by it, and numbers agree
    walk = ["t/a/1.npy", "t/a/10.npy", "t/a/2.npy"]
    assert text_order_clash(walk, by_directory) == ("t/a/10.npy", "t/a/2.npy")
