"""npyio.dataset: pairing, exactly-once delivery, shuffling, sharding, errors, Keras."""

from __future__ import annotations

import os
import re
import uuid
from collections import Counter

import numpy as np
import pytest
import tensorflow as tf

import npyio
from npyio._read import CAPABILITIES
from tests._graph_util import PYTHON_OPS, graph_def, op_types

N = 45  # not a multiple of the batch size


def _write(path: str, value: np.ndarray) -> None:
    with tf.io.gfile.GFile(path, "wb") as f:
        np.save(f, value)


def make_pairs(root: str, n: int = N, shape: tuple[int, ...] = (4, 3)) -> tuple[str, str]:
    """inputs/NNNN.npy filled with i (float32) and labels/NNNN.npy holding i (int64)."""
    xs, ys = f"{root}/inputs", f"{root}/labels"
    tf.io.gfile.makedirs(xs)
    tf.io.gfile.makedirs(ys)
    for i in range(n):
        _write(f"{xs}/{i:04d}.npy", np.full(shape, i, np.float32))
        _write(f"{ys}/{i:04d}.npy", np.int64(i))
    return xs, ys


@pytest.fixture
def pairs(tmp_path):
    return make_pairs(str(tmp_path))


def ids_of(ds: tf.data.Dataset) -> list[int]:
    """The sample ids in delivery order, checking every input matches its label."""
    out: list[int] = []
    for x, y in ds:
        x, y = x.numpy(), y.numpy()
        ids = x.reshape(x.shape[0], -1) if x.ndim > 1 else x
        assert (ids == y.reshape(-1, 1)).all(), "an input was paired with another file's label"
        out.extend(int(v) for v in y.reshape(-1))
    return out


def test_exactly_once_and_aligned_over_two_epochs(pairs):
    ds = npyio.dataset(
        *pairs, batch_size=8, shuffle=True, seed=3, num_parallel_calls=4, deterministic=False
    )
    epochs = [ids_of(ds) for _ in range(2)]
    for ids in epochs:
        assert Counter(ids) == Counter(range(N))
    assert epochs[0] != epochs[1], "reshuffle_each_iteration should give a new order"
    sizes = [int(x.shape[0]) for x, _ in ds]
    assert sizes == [8] * (N // 8) + [N % 8]


@pytest.mark.parametrize("backend", ["native", "graph"])
def test_short_batch_comes_last_when_order_is_not_deterministic(pairs, backend):
    # deterministic=False lets samples move between batches, never the short batch ahead of a
    # full one (map(...).batch(...) semantics). Timing decides whether a reordering shows, so
    # check many epochs and, for certain, that every map after the batch keeps its order, or
    # that the batches come from the native batch source, which lets only full batches go
    # ahead (tests/native/test_library_batch.py shows one going ahead).
    ds = npyio.dataset(
        *pairs, batch_size=8, num_parallel_calls=4, deterministic=False, backend=backend
    )
    for _ in range(20):
        sizes = ds.reduce(
            tf.zeros([0], tf.int32), lambda acc, b: tf.concat([acc, tf.shape(b[0])[:1]], 0)
        )
        assert sizes.numpy().tolist() == [8] * (N // 8) + [N % 8]
    gd = graph_def(ds)
    batch = [n for n in gd.node if n.op.startswith("BatchDataset")]
    after = [
        n
        for n in gd.node
        if n.op.startswith("ParallelMapDataset")
        and any(i.split(":")[0] in {b.name for b in batch} for i in n.input)
    ]
    source = [n for n in gd.node if n.op == "NpyioBatchDataset"]
    assert (backend == "native") == bool(source)
    assert source or (batch and after)
    assert all(n.attr["deterministic"].s == b"true" for n in after)


def test_unbatched_without_labels(pairs):
    ds = npyio.dataset(pairs[0], batch_size=None)
    assert ds.element_spec == tf.TensorSpec((4, 3), tf.float32)
    assert [int(x[0, 0]) for x in ds] == list(range(N))


def test_same_seed_same_orders_new_epoch_new_order(pairs):
    def orders(seed):
        ds = npyio.dataset(*pairs, shuffle=True, seed=seed, batch_size=5)
        return [ids_of(ds) for _ in range(3)]

    a, b = orders(7), orders(7)
    assert a == b
    assert a[0] != a[1] != a[2]
    assert orders(8) != a
    fixed = npyio.dataset(
        *pairs, shuffle=True, seed=7, reshuffle_each_iteration=False, batch_size=None
    )
    assert ids_of(fixed.batch(N)) == ids_of(fixed.batch(N)) != list(range(N))


def test_shuffle_is_full_not_windowed(pairs):
    # A full shuffle can move the last file to the front; a small window never could.
    firsts = set()
    for seed in range(12):
        firsts.add(ids_of(npyio.dataset(*pairs, shuffle=True, seed=seed, batch_size=N))[0])
    assert max(firsts) > N // 2


def test_static_spec_from_first_header_and_drop_remainder(pairs):
    ds = npyio.dataset(*pairs, batch_size=8)
    assert ds.element_spec == (
        tf.TensorSpec((None, 4, 3), tf.float32),
        tf.TensorSpec((None,), tf.int64),
    )
    ds = npyio.dataset(*pairs, batch_size=8, drop_remainder=True)
    assert ds.element_spec == (tf.TensorSpec((8, 4, 3), tf.float32), tf.TensorSpec((8,), tf.int64))
    assert len(ids_of(ds)) == 8 * (N // 8)


@pytest.mark.parametrize("kind", ["directory", "glob", "list", "ram"])
def test_input_kinds(tmp_path, kind):
    if kind == "ram":
        xs, ys = make_pairs(f"ram://npyio-test-{uuid.uuid4().hex}", n=10)
    else:
        xs, ys = make_pairs(str(tmp_path), n=10)
    if kind == "glob":
        xs, ys = f"{xs}/00*.npy", f"{ys}/*.npy"
    elif kind == "list":
        xs = [f"{xs}/{i:04d}.npy" for i in range(10)]
        ys = [f"{ys}/{i:04d}.npy" for i in range(10)]
    assert ids_of(npyio.dataset(xs, ys, batch_size=4)) == list(range(10))


def test_directory_lists_only_npy_sorted_by_name(tmp_path):
    xs, ys = make_pairs(str(tmp_path), n=3)
    with open(f"{xs}/README.txt", "w") as f:
        f.write("not data")
    assert ids_of(npyio.dataset(xs, ys, batch_size=3)) == [0, 1, 2]


def test_unpaired_names_are_named(tmp_path):
    xs, ys = make_pairs(str(tmp_path), n=3)
    for i in range(12):
        _write(f"{xs}/extra{i:02d}.npy", np.zeros((4, 3), np.float32))
    _write(f"{ys}/orphan.npy", np.int64(0))
    with pytest.raises(ValueError) as info:
        npyio.dataset(xs, ys)
    msg = str(info.value)
    assert "12 found only in inputs" in msg and "extra00.npy" in msg and "extra09.npy" in msg
    assert "extra10.npy" not in msg and "and 2 more" in msg
    assert "1 found only in labels: orphan.npy" in msg


def test_unequal_lists(pairs):
    xs = [f"{pairs[0]}/{i:04d}.npy" for i in range(3)]
    ys = [f"{pairs[1]}/{i:04d}.npy" for i in range(2)]
    with pytest.raises(ValueError, match="3 inputs, 2 labels"):
        npyio.dataset(xs, ys)


def test_no_files(tmp_path):
    with pytest.raises(ValueError, match=r"has no \*\.npy files"):
        npyio.dataset(str(tmp_path))
    with pytest.raises(ValueError, match="matches no files"):
        npyio.dataset(f"{tmp_path}/*.npy")


def test_variable_shapes_are_zero_padded(tmp_path):
    root = str(tmp_path)
    for i, rows in enumerate([1, 3, 2, 5, 4]):
        _write(f"{root}/{i}.npy", np.full((rows, 2), i + 1, np.int32))
    ds = npyio.dataset(root, batch_size=2, shape=(None, 2))
    assert ds.element_spec == tf.TensorSpec((None, None, 2), tf.int32)
    batches = [b.numpy() for b in ds]
    assert [b.shape for b in batches] == [(2, 3, 2), (2, 5, 2), (1, 4, 2)]
    np.testing.assert_array_equal(batches[0][0], [[1, 1], [0, 0], [0, 0]])
    np.testing.assert_array_equal(batches[0][1], np.full((3, 2), 2))
    ds = npyio.dataset(root, batch_size=2, shape=(None, 2), drop_remainder=True)
    assert ds.element_spec == tf.TensorSpec((2, None, 2), tf.int32)


@pytest.mark.parametrize("order", ["C", "F"])
def test_arrays_of_no_elements_keep_their_batch_dim(tmp_path, order):
    """Files whose shape has a 0 decode batched as [B, *shape]: the header fast path once
    reshaped with -1, which tf.reshape infers as 1 for no elements (a batch of 5 came out as
    one). Packed and read back, they stay 5 rows."""
    xs, ys = f"{tmp_path}/x", f"{tmp_path}/y"
    os.makedirs(xs)
    os.makedirs(ys)
    for i in range(7):
        _write(f"{xs}/{i}.npy", np.zeros((0, 3, 2), np.int32, order=order))
        _write(f"{ys}/{i}.npy", np.int64(i))
    ds = npyio.dataset(xs, ys, batch_size=5)
    got = [(x.shape, y.numpy().tolist()) for x, y in ds]
    assert got == [((5, 0, 3, 2), [0, 1, 2, 3, 4]), ((2, 0, 3, 2), [5, 6])]
    npyio.pack(xs, ys, out=f"{tmp_path}/packed")
    for kw in (
        {"batch_size": 5},
        {"batch_size": None},
        {"shuffle": True, "seed": 1, "batch_size": 5},
    ):
        packed = list(npyio.dataset(f"{tmp_path}/packed", **kw))
        shapes = [tuple(x.shape) for x, _ in packed]
        labels = sorted(int(v) for _, y in packed for v in np.reshape(y.numpy(), -1))
        assert labels == list(range(7)), kw
        assert shapes == ([(5, 0, 3, 2), (2, 0, 3, 2)] if kw["batch_size"] else [(0, 3, 2)] * 7), kw


def test_declared_spec_reads_no_header_and_checks_every_file(pairs):
    xs, ys = pairs
    with open(f"{xs}/0000.npy", "wb") as f:
        f.write(b"corrupt")  # the dataset must not read it when built
    ds = npyio.dataset(
        xs, ys, dtype="float32", shape=(4, 3), label_dtype=tf.int64, label_shape=(), batch_size=None
    )
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"0000\.npy: not a \.npy file"):
        list(ds)


@pytest.mark.parametrize(
    "value, reason",
    [
        (np.zeros((4, 3), np.float64), "dtype mismatch -- expected float32, got float64"),
        (np.zeros((4, 4), np.float32), r"shape mismatch -- expected \(4, 3\), got \(4, 4\)"),
    ],
    ids=["dtype", "shape"],
)
def test_later_file_that_differs_is_named(pairs, value, reason):
    _write(f"{pairs[0]}/0030.npy", value)
    ds = npyio.dataset(*pairs, batch_size=8, num_parallel_calls=4)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"inputs/0030\.npy: " + reason):
        list(ds)


def test_ignore_errors_skips_and_names_bad_files(pairs, capfd):
    xs, ys = pairs
    with open(f"{xs}/0020.npy", "wb") as f:
        f.write(b"\x93NUMPY\x01\x00garbage")
    with open(f"{ys}/0031.npy", "r+b") as f:
        f.truncate(100)
    os.remove(f"{xs}/0040.npy")
    os.remove(f"{ys}/0041.npy")
    ds = npyio.dataset(
        [f"{xs}/{i:04d}.npy" for i in range(N)],
        [f"{ys}/{i:04d}.npy" for i in range(N)],
        batch_size=8,
        shuffle=True,
        seed=1,
        ignore_errors=True,
    )
    for _ in range(2):
        assert Counter(ids_of(ds)) == Counter(set(range(N)) - {20, 31, 40, 41})
    err = capfd.readouterr().err
    for name in ("inputs/0020.npy", "labels/0031.npy", "inputs/0040.npy", "labels/0041.npy"):
        assert name in err, f"no warning names {name}"


def test_fails_fast_by_default_naming_the_file(pairs):
    with open(f"{pairs[1]}/0012.npy", "wb") as f:
        f.write(b"")
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"labels/0012\.npy: not a \.npy"):
        list(npyio.dataset(*pairs, batch_size=8))


def test_sharding_covers_every_file_once(pairs):
    seen = []
    for i in range(3):
        seen += ids_of(npyio.dataset(*pairs, batch_size=4, shard=(3, i), shuffle=True, seed=i))
    assert Counter(seen) == Counter(range(N))
    ctx = tf.distribute.InputContext(num_input_pipelines=2, input_pipeline_id=1)
    assert ids_of(npyio.dataset(*pairs, batch_size=50, shard=ctx)) == list(range(1, N, 2))
    with pytest.raises(ValueError, match="0 <= index < num_shards"):
        npyio.dataset(*pairs, shard=(2, 2))
    with pytest.raises(TypeError, match="shard must be"):
        npyio.dataset(*pairs, shard=3)


def test_bad_arguments(pairs):
    with pytest.raises(ValueError, match="unknown backend"):
        npyio.dataset(*pairs, backend="nope")
    with pytest.raises(ValueError, match="batch_size"):
        npyio.dataset(*pairs, batch_size=0)
    with pytest.raises(TypeError, match="unsupported dtype"):
        npyio.dataset(*pairs, dtype="U5", shape=(4, 3))


def test_graph_has_no_python_callbacks(pairs):
    ds = npyio.dataset(*pairs, batch_size=8, shuffle=True, ignore_errors=True)
    assert not op_types(ds) & PYTHON_OPS
    assert op_types(npyio.dataset(*pairs, backend="py_function", batch_size=None)) & PYTHON_OPS


def test_py_function_backend_agrees(pairs):
    graph = ids_of(npyio.dataset(*pairs, batch_size=8))
    assert ids_of(npyio.dataset(*pairs, batch_size=8, backend="py_function")) == graph


# Keras warns on every Dataset passed with its default shuffle=True: not npyio's doing.
@pytest.mark.filterwarnings("ignore:`shuffle=True` was passed:UserWarning")
@pytest.mark.parametrize("jit_compile", [False, True], ids=["eager-graph", "xla"])
def test_keras_fit_evaluate_predict(tmp_path, jit_compile):
    keras = pytest.importorskip("keras")
    xs, ys = f"{tmp_path}/x", f"{tmp_path}/y"
    rng = np.random.default_rng(0)
    w = rng.normal(size=(6,)).astype(np.float32)
    tf.io.gfile.makedirs(xs)
    tf.io.gfile.makedirs(ys)
    for i in range(64):
        x = rng.normal(size=(2, 3)).astype(np.float32)
        _write(f"{xs}/{i:03d}.npy", x)
        _write(f"{ys}/{i:03d}.npy", np.array([x.reshape(-1) @ w], np.float32))
    ds = npyio.dataset(xs, ys, batch_size=8, shuffle=True, seed=0, drop_remainder=True)
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((2, 3)), keras.layers.Flatten(), keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.Adam(0.05), loss="mse", jit_compile=jit_compile)
    before = model.evaluate(ds, verbose=0)
    history = model.fit(ds, epochs=15, verbose=0)
    after = model.evaluate(ds, verbose=0)
    assert after < before / 10, (before, after)
    assert history.history["loss"][-1] < history.history["loss"][0]
    predictions = model.predict(npyio.dataset(xs, batch_size=8), verbose=0)
    assert predictions.shape == (64, 1)


def test_the_default_batch_size_is_32_and_none_yields_single_elements(tmp_path):
    """As Keras's ``*_dataset_from_directory``: batches of 32 (the last smaller), for loose
    files and for their pack; ``batch_size=None`` yields one element per file."""
    n = 70
    xs, ys = make_pairs(str(tmp_path), n=n)
    want = [min(32, n - start) for start in range(0, n, 32)]
    npyio.pack(xs, ys, out=f"{tmp_path}/packed")
    for ds in (npyio.dataset(xs, ys), npyio.dataset(f"{tmp_path}/packed")):
        assert len(ds) == -(-n // 32)
        assert [int(y.shape[0]) for _, y in ds] == want
        assert ids_of(ds) == list(range(n))
        assert ds.element_spec[0].shape.as_list() == [None, 4, 3]
    single = npyio.dataset(xs, ys, batch_size=None)
    assert len(single) == n and single.element_spec[0].shape == (4, 3)
    assert ids_of(single) == list(range(n))


def _classes(root: str, n: int) -> tuple[str, str]:
    """``n`` pairs of (8, 8) float32 inputs around -1 (label 0) or +1 (label 1)."""
    xs, ys = f"{root}/x", f"{root}/y"
    tf.io.gfile.makedirs(xs)
    tf.io.gfile.makedirs(ys)
    rng = np.random.default_rng(0)
    for i in range(n):
        _write(f"{xs}/{i:03d}.npy", rng.normal(2.0 * (i % 2) - 1.0, 0.3, (8, 8)).astype("f4"))
        _write(f"{ys}/{i:03d}.npy", np.int64(i % 2))
    return xs, ys


@pytest.mark.filterwarnings("ignore:`shuffle=True` was passed:UserWarning")
def test_keras_fit_takes_a_dataset_without_batch_size(tmp_path):
    """The default batches go straight to ``fit``; ``batch_size=None`` is the mistake
    docs/keras.md says Keras reports late, in the words it quotes."""
    keras = pytest.importorskip("keras")
    xs, ys = _classes(str(tmp_path), 80)
    keras.utils.set_random_seed(0)

    def model() -> keras.Model:
        layers = [keras.layers.Flatten(), keras.layers.Dense(2, activation="softmax")]
        out = keras.Sequential([keras.Input((8, 8)), *layers])
        out.compile(
            keras.optimizers.Adam(0.1), "sparse_categorical_crossentropy", metrics=["accuracy"]
        )
        return out

    ds = npyio.dataset(xs, ys, shuffle=True, seed=0)
    trained = model()
    history = trained.fit(ds, epochs=3, verbose=0).history
    assert history["loss"][-1] < history["loss"][0]
    assert trained.evaluate(ds, verbose=0, return_dict=True)["accuracy"] == 1.0
    single = npyio.dataset(xs, ys, batch_size=None)
    expected = "Expected shape (None, 8, 8), but input has incompatible shape (8, 8)"
    with pytest.raises(ValueError, match=re.escape(expected)):
        model().fit(single, epochs=1, verbose=0)


@pytest.mark.parametrize("backend", ["native", "graph"])
def test_large_files(tmp_path, backend):
    # Over the graph parser's batch limit (512 KiB): it decodes them one by one (whole-file
    # decode_raw + aligned slice), not as a batch of raw bytes; the native reader reads them
    # into the batch, and the files it doubts (big-endian, Fortran) go through the graph
    # parser. The results must be the same.
    rng = np.random.default_rng(1)
    arrays = [rng.random((300, 500), dtype=np.float32) for _ in range(5)]
    arrays[3] = np.asfortranarray(arrays[3])
    root = str(tmp_path)
    for i, a in enumerate(arrays):
        _write(f"{root}/{i}.npy", a.astype(">f4") if i == 2 else a)
    assert (CAPABILITIES["graph"].batch_limit or 0) <= 300 * 500 * 4
    ds = npyio.dataset(root, batch_size=2, backend=backend)
    assert ds.element_spec == tf.TensorSpec((None, 300, 500), tf.float32)
    got = np.concatenate([b.numpy() for b in ds])
    np.testing.assert_array_equal(got, np.stack(arrays))


@pytest.mark.parametrize("big", [False, True], ids=["batch-path", "per-file-path"])
def test_one_side_off_the_fast_path(tmp_path, big):
    # Inputs and labels share one header fast-path cond per batch (or file): when a label's
    # header differs from the first label's (another writer: version 2.0 here), both sides of
    # that batch go through the full parser, and every value must still be right. The decode
    # function holds one cond for both sides, not one each. (The graph parser's structure:
    # the native reader's is tests/read/test_native.py's.)
    shape = (300, 500) if big else (4, 3)
    xs, ys = f"{tmp_path}/x", f"{tmp_path}/y"
    tf.io.gfile.makedirs(xs)
    tf.io.gfile.makedirs(ys)
    for i in range(6):
        _write(f"{xs}/{i}.npy", np.full(shape, i, np.float32))
        with tf.io.gfile.GFile(f"{ys}/{i}.npy", "wb") as f:
            np.lib.format.write_array(f, np.int64(i), version=(2, 0) if i == 4 else (1, 0))
    ds = npyio.dataset(xs, ys, batch_size=4, backend="graph")
    got_x, got_y = zip(*((x.numpy(), y.numpy()) for x, y in ds))
    np.testing.assert_array_equal(np.concatenate(got_y), np.arange(6))
    np.testing.assert_array_equal(
        np.concatenate(got_x), np.stack([np.full(shape, i, np.float32) for i in range(6)])
    )
    gd = graph_def(ds)
    decoders = [
        f for f in gd.library.function if any(n.op == "PartitionedCall" for n in f.node_def)
    ]  # the full-parser branch
    assert len(decoders) == 1, [f.signature.name for f in decoders]
