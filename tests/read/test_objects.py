"""`npyio._read.objects`: `read_sized` reads an object of the size the plan expects as one record,
an object of another whole number of records (none included) whole (``tf.io.read_file``), and
refuses any other, naming it and its length. What it does to requests on object storage:
``tests/gcs/test_defaults.py``."""

from __future__ import annotations

import pytest
import tensorflow as tf

from npyio._read.objects import read_sized

SIZE = 24


@pytest.mark.parametrize(
    "data",
    [bytes(range(SIZE)), b"", bytes(range(SIZE)) * 2],
    ids=["exact", "empty", "two-records"],
)
@pytest.mark.parametrize("where", ["local", "ram"])
def test_read_sized_gives_the_whole_object(tmp_path, data, where):
    path = str(tmp_path / "a.npy") if where == "local" else f"ram://objects/{len(data)}.npy"
    with tf.io.gfile.GFile(path, "wb") as f:
        f.write(data)
    assert read_sized(tf.constant(path), SIZE).numpy() == data
    read = tf.function(lambda p: read_sized(p, SIZE), autograph=False)
    assert read(tf.constant(path)).numpy() == data


@pytest.mark.parametrize("length", [5, SIZE + 1])
def test_an_object_of_another_length_is_refused_naming_it(tmp_path, length):
    path = str(tmp_path / "a.npy")
    (tmp_path / "a.npy").write_bytes(bytes(length))
    with pytest.raises(tf.errors.InvalidArgumentError, match=f"{path}.* {length} bytes"):
        read_sized(tf.constant(path), SIZE)


def test_read_sized_in_a_parallel_map(tmp_path):
    paths = []
    for i in range(20):
        paths.append(str(tmp_path / f"{i}.npy"))
        (tmp_path / f"{i}.npy").write_bytes(bytes([i]) * SIZE)
    ds = tf.data.Dataset.from_tensor_slices(paths).map(
        lambda p: read_sized(p, SIZE), num_parallel_calls=8, deterministic=True
    )
    assert [x.numpy() for x in ds] == [bytes([i]) * SIZE for i in range(20)]


def test_a_missing_object_is_not_found(tmp_path):
    with pytest.raises(tf.errors.NotFoundError):
        read_sized(tf.constant(str(tmp_path / "missing.npy")), SIZE)
