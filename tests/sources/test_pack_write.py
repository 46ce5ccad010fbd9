"""npyio.pack and npyio.dataset of a packed directory: what the sources give, from shards.

Every comparison is against `npyio.dataset` of the loose sources (never a hard-coded result):
the same element_spec, the same elements in the same order unshuffled; shuffling, sharding,
splits, paths and checkpoints keep their meaning; the safety rules hold (refusals before
anything is written, the incomplete marker, overwrite, a full disk, a real SIGKILL).
"""

from __future__ import annotations

import fnmatch
import importlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

import npyio
from npyio._format.packed import INCOMPLETE, INDEX, IncompletePackError
from tests._npy_testing import (
    DTYPE_NAMES,
    byte_orders,
    header_text,
    npy_bytes,
    sample,
    with_header,
    write_gfile,
)

REPO = Path(__file__).resolve().parents[2]
N = 37


def drain(ds: tf.data.Dataset) -> list:
    return [tf.nest.map_structure(lambda t: t.numpy(), e) for e in ds]


def assert_same(a: list, b: list) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b):
        fx, fy = tf.nest.flatten(x), tf.nest.flatten(y)
        assert len(fx) == len(fy)
        for u, v in zip(fx, fy):
            np.testing.assert_array_equal(u, v)
            assert np.asarray(u).dtype == np.asarray(v).dtype


def make_tree(root: Path, n: int = N) -> Path:
    rng = np.random.default_rng(0)
    for side in ("x", "y", "m"):
        (root / side).mkdir(parents=True, exist_ok=True)
    for i in range(n):
        name = f"{i:03d}.npy"
        np.save(root / "x" / name, rng.standard_normal((3, 4)).astype(">f4" if i % 2 else "<f4"))
        np.save(root / "y" / name, np.int64(i))
        np.save(root / "m" / name, rng.integers(0, 255, (3, 4), dtype=np.uint8))
    return root


def loose(tree: Path, **kw):
    return npyio.dataset(str(tree / "x"), str(tree / "y"), **kw)


# --- what a pack holds -------------------------------------------------------------------------
def test_shards_are_standard_npy_files_described_by_the_index(tree, packed):
    index = json.loads(Path(packed, INDEX).read_text())
    assert index["format"] == "npyio-pack" and index["version"] == 1
    assert index["rows"] == N and len(index["shards"]) == 8
    assert [p["name"] for p in index["parts"]] == ["inputs", "labels", "order"]
    assert index["names"] == [str(tree / "x" / f"{i:03d}.npy") for i in range(N)]
    xs = np.concatenate([np.load(Path(packed, s["files"][0]["name"])) for s in index["shards"]])
    want = np.stack([np.load(tree / "x" / f"{i:03d}.npy").astype("=f4") for i in range(N)])
    np.testing.assert_array_equal(xs, want)
    mm = np.load(Path(packed, "labels-00001-of-00008.npy"), mmap_mode="r")
    assert mm.tolist() == list(range(5, 10))
    assert not Path(packed, INCOMPLETE).exists()


@pytest.mark.parametrize(
    "kw",
    [
        {"batch_size": None},
        {"batch_size": 4},
        {"batch_size": 8, "drop_remainder": True},
        {"batch_size": 6, "with_paths": True},
        {"batch_size": 5, "prefetch": None},
    ],
    ids=["elements", "batches", "drop-remainder", "with-paths", "no-prefetch"],
)
def test_a_pack_yields_what_the_sources_yield(tree, packed, kw):
    a, b = loose(tree, **kw), npyio.dataset(packed, **kw)
    assert b.element_spec == a.element_spec
    assert_same(drain(b), drain(a))


def test_dict_sources_and_label_values(tmp_path, tree):
    sources = {"image": str(tree / "x"), "mask": str(tree / "m")}
    values = np.arange(N, dtype=np.int32) * 3
    out = str(tmp_path / "p")
    npyio.pack(sources, values, out=out, shard_size=1000)
    a = npyio.dataset(sources, values, batch_size=7, with_paths=True)
    b = npyio.dataset(out, batch_size=7, with_paths=True)
    assert b.element_spec == a.element_spec
    assert_same(drain(b), drain(a))


def test_npz_members(tmp_path):
    for i in range(6):
        np.savez(tmp_path / f"{i}.npz", x=np.full(3, i, "i2"), y=np.int64(i))
    out = str(tmp_path / "p")
    npyio.pack(str(tmp_path), key="x", label_key="y", out=out)
    a = npyio.dataset(str(tmp_path), key="x", label_key="y", batch_size=4)
    assert_same(drain(npyio.dataset(out, batch_size=4)), drain(a))


def test_class_folders(tmp_path):
    for i in range(9):
        cls = tmp_path / "classes" / ("cat" if i % 3 else "dog")
        cls.mkdir(parents=True, exist_ok=True)
        np.save(cls / f"{i}.npy", np.full(2, i, "f8"))
    out = str(tmp_path / "p")
    npyio.pack(str(tmp_path / "classes"), from_directory=True, out=out)
    a = npyio.dataset_from_directory(
        str(tmp_path / "classes"), batch_size=4, shuffle=False, verbose=False
    )
    b = npyio.dataset(out, batch_size=4)
    assert b.element_spec == a.element_spec
    assert_same(drain(b), drain(a))
    assert json.loads(Path(out, INDEX).read_text())["class_names"] == ["cat", "dog"]


# --- the loader's options ----------------------------------------------------------------------
def labels_of(ds: tf.data.Dataset) -> list[int]:
    return [int(v) for e in ds for v in np.atleast_1d(e[1].numpy())]


def test_shuffle_every_row_once_new_order_each_epoch_reproducible(packed):
    ds = npyio.dataset(packed, batch_size=4, shuffle=True, seed=5)
    epochs = [labels_of(ds) for _ in range(3)]
    for epoch in epochs:
        assert sorted(epoch) == list(range(N))
    assert epochs[0] != epochs[1] != epochs[2]
    again = npyio.dataset(packed, batch_size=4, shuffle=True, seed=5)
    assert [labels_of(again) for _ in range(3)] == epochs
    fixed = npyio.dataset(
        packed, shuffle=True, seed=5, reshuffle_each_iteration=False, batch_size=None
    )
    assert labels_of(fixed) == labels_of(fixed)


def test_shards_by_row_are_balanced_and_cover_every_row_once(packed):
    got = [labels_of(npyio.dataset(packed, batch_size=3, shard=(3, i))) for i in range(3)]
    assert sorted(v for shard in got for v in shard) == list(range(N))
    assert max(map(len, got)) - min(map(len, got)) <= 1
    context = tf.distribute.InputContext(num_input_pipelines=3, input_pipeline_id=1)
    assert labels_of(npyio.dataset(packed, shard=context, batch_size=None)) == got[1]


@pytest.mark.parametrize("shuffle", [False, True])
def test_validation_split_holds_out_the_rows_the_sources_hold_out(tree, packed, shuffle):
    kw = dict(
        validation_split=0.3,
        subset="both",
        shuffle=shuffle,
        seed=3,
        with_paths=True,
        batch_size=None,
    )
    for a, b in zip(loose(tree, **kw), npyio.dataset(packed, **kw)):
        assert b.element_spec == a.element_spec
        got, want = drain(b), drain(a)
        if shuffle:  # the same rows (and their paths), in another order
            key = lambda e: int(e[1])  # noqa: E731
            got, want = sorted(got, key=key), sorted(want, key=key)
        assert_same(got, want)


@pytest.mark.parametrize("wait", [0.0, 0.03, 0.06, 0.2])
@pytest.mark.parametrize("taken", [5, 12])
def test_exact_checkpoint_and_resume(packed, taken, wait):
    # after a pause, the read-ahead has reached the end of the first epoch: a buffer with a
    # seed generator of its own then lost its state, and about 1 checkpoint in 10 restored
    # another order for the second epoch
    ds = npyio.dataset(packed, batch_size=3, shuffle=True, seed=9).repeat(2)
    it = iter(ds)
    for _ in range(taken):
        next(it)
    time.sleep(wait)
    ckpt = tf.train.Checkpoint(iterator=it)
    path = ckpt.write(os.path.join(os.path.dirname(packed), f"ckpt{taken}-{wait}", "c"))
    rest = [b[1].numpy().tolist() for b in it]
    it2 = iter(ds)
    tf.train.Checkpoint(iterator=it2).read(path).assert_consumed()
    assert [b[1].numpy().tolist() for b in it2] == rest
    fresh = iter(npyio.dataset(packed, batch_size=3, shuffle=True, seed=9).repeat(2))
    tf.train.Checkpoint(iterator=fresh).read(path).assert_consumed()
    assert [b[1].numpy().tolist() for b in fresh] == rest


@pytest.mark.parametrize("source", ["packed", "loose"])
def test_every_checkpoint_of_a_shuffled_iterator_holds_the_key_generator(tree, packed, source):
    # The next epoch's order comes from the key generator, whose position a checkpoint records
    # only through a live iterator of it. tf.data puts a prefetch of its own above a pipeline,
    # which reads an epoch's end ahead of the caller: an anchor that let go of the generator
    # before then (a map, which tf.data made parallel) left checkpoints near the end of an
    # epoch without it, and a restored .repeat() gave its next epoch another order.
    make = lambda: npyio.dataset(packed, batch_size=3, shuffle=True, seed=9)  # noqa: E731
    if source == "loose":
        make = lambda: loose(tree, batch_size=3, shuffle=True, seed=9)  # noqa: E731
    it = iter(make().repeat(2))
    for step in range(2 * -(-N // 3)):
        time.sleep(0.02)  # the read-ahead reaches as far as it can
        state = tf.io.serialize_tensor(
            tf.raw_ops.SerializeIterator(resource_handle=it._iterator_resource)
        ).numpy()
        assert b"::Random" in state, f"no key generator in the checkpoint after {step} batches"
        assert len(state) < 64 * 1024  # (a row buffer wider than the rows saved every slot)
        next(it)


# --- packing options ---------------------------------------------------------------------------
def test_pack_shuffle_writes_a_seeded_permutation_and_keeps_the_paths(tmp_path, tree):
    one, two = str(tmp_path / "a"), str(tmp_path / "b")
    npyio.pack(str(tree / "x"), str(tree / "y"), out=one, shuffle=True, seed=1)
    npyio.pack(str(tree / "x"), str(tree / "y"), out=two, shuffle=True, seed=1)
    got = drain(npyio.dataset(one, with_paths=True, batch_size=None))
    assert [int(e[1]) for e in got] == [
        int(e[1]) for e in drain(npyio.dataset(two, batch_size=None))
    ]
    assert sorted(int(e[1]) for e in got) == list(range(N))
    assert [int(e[1]) for e in got] != list(range(N))
    for x, y, path in got:  # each row with its own file's name
        assert path.decode() == str(tree / "x" / f"{int(y):03d}.npy")
        np.testing.assert_array_equal(x, np.load(path.decode()))


def _pack_local_and_by_graph(tmp_path: Path, files: list[bytes], **kw) -> tuple[Path, Path]:
    """The same files packed from a local directory (read in Python) and from ``ram://`` (read
    by `npyio.dataset`'s graph, the path of every non-local source)."""
    for root in (str(tmp_path / "src"), f"ram://{tmp_path.name}/src"):
        tf.io.gfile.makedirs(root)
        for i, data in enumerate(files):
            write_gfile(f"{root}/{i:02d}.npy", data)
    npyio.pack(str(tmp_path / "src"), out=str(tmp_path / "local"), **kw)
    npyio.pack(f"ram://{tmp_path.name}/src", out=str(tmp_path / "graph"), **kw)
    return tmp_path / "local", tmp_path / "graph"


def _assert_same_shards(a: Path, b: Path) -> None:
    names = sorted(n for n in os.listdir(a) if n.endswith(".npy"))
    assert names == sorted(n for n in os.listdir(b) if n.endswith(".npy"))
    for name in names:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_local_files_pack_as_the_graph_decodes_them(tmp_path, name):
    """Every dtype, both byte orders, C and Fortran order: the Python read of local files
    writes byte for byte the shards that the graph's decode writes, and np.load agrees."""
    orders = byte_orders(name)
    arrays = [
        sample(np.dtype(name).newbyteorder(orders[i % len(orders)]).str, (2, 3), seed=i)
        for i in range(6)
    ]
    arrays = [np.asfortranarray(a) if i % 3 == 1 else a for i, a in enumerate(arrays)]
    local, graph = _pack_local_and_by_graph(tmp_path, [npy_bytes(a) for a in arrays])
    _assert_same_shards(local, graph)
    (shard,) = [n for n in os.listdir(local) if n.startswith("inputs")]
    np.testing.assert_array_equal(np.load(local / shard), np.stack(arrays))


@pytest.mark.parametrize(
    ("files", "want"),
    [
        (  # any nonzero byte is True, as the graph decodes it (np.load keeps the byte)
            [with_header(header_text("|b1", shape=(4,)), bytes([0, 1, 2, 255]))] * 2,
            np.array([[False, True, True, True]] * 2),
        ),
        ([npy_bytes(np.int32(i)) for i in range(3)], np.arange(3, dtype=np.int32)),
        ([npy_bytes(np.zeros((0, 3), ">f4"))] * 3, np.zeros((3, 0, 3), np.float32)),
    ],
    ids=["bool-bytes", "0-d", "no-elements"],
)
def test_local_files_pack_as_the_graph_decodes_them_edge_cases(tmp_path, files, want):
    local, graph = _pack_local_and_by_graph(tmp_path, files)
    _assert_same_shards(local, graph)
    (shard,) = [n for n in os.listdir(local) if n.startswith("inputs")]
    got = np.load(local / shard)
    np.testing.assert_array_equal(got, want)
    assert got.dtype == want.dtype and got.shape == want.shape


def test_local_files_shuffle_as_the_graph_does(tmp_path):
    files = [npy_bytes(np.full((2,), i, np.int16)) for i in range(23)]
    local, graph = _pack_local_and_by_graph(tmp_path, files, shuffle=True, seed=5, shard_size=20)
    _assert_same_shards(local, graph)
    got = [int(x[0]) for x in drain(npyio.dataset(str(local), batch_size=None))]
    assert sorted(got) != got and sorted(got) == list(range(23))


@pytest.mark.parametrize("check", [True, False])
def test_an_odd_or_changed_file_found_while_reading_fails_the_pack_naming_it(tmp_path, tree, check):
    """Without the check (or a file changed after it), the read names the odd file, and the
    pack is left incomplete: no index, no shard."""
    src = tmp_path / "x"
    src.mkdir()
    for i in range(30):
        np.save(src / f"{i:02d}.npy", np.load(tree / "x" / f"{i:03d}.npy"))
    np.save(src / "25.npy", np.zeros((3, 5), "f4"))
    out = tmp_path / "p"
    with pytest.raises(npyio.NpyFormatError, match="shape mismatch") as caught:
        npyio.pack(str(src), out=str(out), check=check, shard_size=5 * 48)
    assert caught.value.path == str(src / "25.npy")
    if check:  # refused before anything is written
        assert not out.exists()
    else:
        assert sorted(os.listdir(out)) == [INCOMPLETE]


@pytest.mark.parametrize("check", [True, False])
def test_max_file_size_holds_for_the_read(tmp_path, tree, check):
    out = tmp_path / "p"
    with pytest.raises(npyio.NpyFormatError, match="file is too large") as caught:
        npyio.pack(str(tree / "x"), out=str(out), check=check, max_file_size=100)
    assert caught.value.path == str(tree / "x" / "000.npy")


def test_an_existing_pack_needs_overwrite(tmp_path, tree):
    out = str(tmp_path / "p")
    npyio.pack(str(tree / "x"), out=out)
    with pytest.raises(FileExistsError, match=r"already holds a pack.*overwrite"):
        npyio.pack(str(tree / "y"), out=out)
    npyio.pack(str(tree / "y"), out=out, overwrite=True)
    assert labels_of(npyio.dataset(out, batch_size=None).map(lambda y: (y, y))) == list(range(N))
    assert sorted(os.listdir(out)) == sorted(
        [INDEX, "inputs-00000-of-00001.npy", "order-00000-of-00001.npy"]
    )


# --- refusals, before anything is written --------------------------------------------------------
@pytest.mark.parametrize(
    ("odd", "message"),
    [
        (np.zeros((3, 5), "f4"), "shape mismatch"),
        (np.zeros((3, 4), "f8"), "dtype mismatch"),
    ],
    ids=["shape", "dtype"],
)
def test_a_part_that_mixes_shapes_or_dtypes_is_refused_naming_the_first_odd_file(
    tmp_path, tree, odd, message
):
    src = tmp_path / "x"
    src.mkdir()
    for i in range(8):
        np.save(src / f"{i}.npy", np.load(tree / "x" / f"{i:03d}.npy"))
    # (5 and 6: not among the files sampled when the sources are planned, 0, 4 and 7, whose
    # odd one would be named first, `npyio._sources.sampling`)
    np.save(src / "5.npy", odd)
    np.save(src / "6.npy", odd)
    out = tmp_path / "p"
    with pytest.raises(npyio.NpyFormatError, match=message) as caught:
        npyio.pack(str(src), out=str(out))
    assert caught.value.path == str(src / "5.npy")
    assert not out.exists()
    np.save(src / "7.npy", odd)  # a sampled one: refused as odd, naming the spec's source
    with pytest.raises(npyio.NpyFormatError, match=f"{message}.*the spec came from") as caught:
        npyio.pack(str(src), out=str(out))
    assert caught.value.path == str(src / "7.npy")
    assert not out.exists()


def test_the_first_odd_file_is_named_when_headers_are_checked_a_slice_at_a_time(
    tmp_path, tree, monkeypatch
):
    """The element first, then the part: an odd label at 5 comes before an odd input at 7,
    with each part's files checked 3 at a time."""
    monkeypatch.setattr(importlib.import_module("npyio._sources.pack_write"), "_CHECK_SLICE", 3)
    for side in ("x", "y"):
        (tmp_path / side).mkdir()
        for i in range(10):
            np.save(tmp_path / side / f"{i}.npy", np.load(tree / side / f"{i:03d}.npy"))
    np.save(tmp_path / "x" / "7.npy", np.zeros((3, 5), "f4"))
    np.save(tmp_path / "y" / "5.npy", np.zeros((2,), "i8"))
    with pytest.raises(npyio.NpyFormatError, match="shape mismatch") as caught:
        npyio.pack(str(tmp_path / "x"), str(tmp_path / "y"), out=str(tmp_path / "p"))
    assert caught.value.path == str(tmp_path / "y" / "5.npy")
    np.save(tmp_path / "y" / "5.npy", np.int64(5))
    with pytest.raises(npyio.NpyFormatError, match="shape mismatch") as caught:
        npyio.pack(str(tmp_path / "x"), str(tmp_path / "y"), out=str(tmp_path / "p"))
    assert caught.value.path == str(tmp_path / "x" / "7.npy")
    assert not (tmp_path / "p").exists()


def test_an_out_among_the_sources_or_inside_the_class_folders_is_refused(tmp_path):
    tree = make_tree(tmp_path / "tree", 4)  # its own: a pack that went through would spoil it
    with pytest.raises(ValueError, match=r"holds source files .*x/000\.npy"):
        npyio.pack(str(tree / "x"), str(tree / "y"), out=str(tree / "x"))
    with pytest.raises(ValueError, match="holds source files"):  # the same, by another name
        npyio.pack(str(tree / "x" / "*.npy"), str(tree / "y"), out=str(tree / "y") + "/")
    classes = tmp_path / "classes"
    for name in ("a", "b"):
        (classes / name).mkdir(parents=True)
        np.save(classes / name / "0.npy", np.zeros(2))
    out = classes / "packed"
    with pytest.raises(ValueError, match="take it for a class folder"):
        npyio.pack(str(classes), from_directory=True, out=str(out))
    assert not out.exists()  # refused before anything was written
    for side in ("x", "y"):
        assert sorted(os.listdir(tree / side)) == [f"{i:03d}.npy" for i in range(4)]


def test_a_shuffled_pack_without_a_seed_records_the_seed_it_drew(tmp_path, tree):
    one = str(tmp_path / "one")
    npyio.pack(str(tree / "x"), str(tree / "y"), out=one, shuffle=True)
    seed = json.loads(Path(one, INDEX).read_text())["seed"]
    assert isinstance(seed, int)
    two = str(tmp_path / "two")
    npyio.pack(str(tree / "x"), str(tree / "y"), out=two, shuffle=True, seed=seed)
    assert labels_of(npyio.dataset(one, batch_size=None)) == labels_of(
        npyio.dataset(two, batch_size=None)
    )


def test_none_dims_are_refused(tmp_path, tree):
    with pytest.raises(ValueError, match=r"inputs: a pack stores rows of one shape.*pad"):
        npyio.pack(str(tree / "x"), shape=(3, None), out=str(tmp_path / "p"))
    assert not (tmp_path / "p").exists()


# --- interrupted packs ---------------------------------------------------------------------------
def test_an_interrupted_pack_is_refused_and_a_rerun_completes_it(tmp_path, tree):
    out = tmp_path / "p"
    npyio.pack(str(tree / "x"), str(tree / "y"), out=str(out), shard_size=500)
    # what a pack killed before its index leaves: the marker, some shards, a temporary file
    (out / INDEX).unlink()
    (out / INCOMPLETE).write_text("")
    (out / ".inputs-00002-of-00004.npy.tmp").write_bytes(b"\x93NUMPY")
    for source in (str(out), str(out / "inputs-*.npy")):
        with pytest.raises(IncompletePackError, match="incomplete pack"):
            npyio.dataset(source)
        with pytest.raises(IncompletePackError, match="incomplete pack"):
            npyio.rows(source)
    npyio.pack(str(tree / "x"), str(tree / "y"), out=str(out), shard_size=500)
    assert_same(drain(npyio.dataset(str(out), batch_size=4)), drain(loose(tree, batch_size=4)))
    assert not (out / INCOMPLETE).exists()
    assert not list(out.glob("*.tmp")) and not list(out.glob(".*.tmp"))


def test_a_truncated_shard_is_named_when_the_dataset_is_built(tmp_path, tree):
    out = tmp_path / "p"
    npyio.pack(str(tree / "x"), out=str(out), shard_size=500)
    shard = out / "inputs-00001-of-00004.npy"
    shard.write_bytes(shard.read_bytes()[:-10])
    with pytest.raises(npyio.NpyFormatError) as caught:  # a PackIndexError, naming both
        npyio.dataset(str(out))
    assert caught.value.path == str(out / INDEX)
    assert caught.value.reason.startswith(f"{shard}: damaged shard -- expected ")


def _python(code: str, **kw) -> subprocess.CompletedProcess:
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=str(REPO))
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=300,
        **kw,
    )


def test_a_full_disk_is_a_clear_error_and_writes_no_index(tmp_path, tree):
    """RLIMIT_FSIZE makes a write past the limit fail with EFBIG, as a full disk fails one."""
    out = tmp_path / "p"
    run = _python(
        f"""
        import resource, signal, npyio
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of a killed process
        resource.setrlimit(resource.RLIMIT_FSIZE, (600, 600))
        try:
            npyio.pack({str(tree / "x")!r}, out={str(out)!r}, shard_size=400)
        except OSError as e:
            print("OSError:", e)
        """
    )
    assert "OSError:" in run.stdout, run.stdout + run.stderr[-2000:]
    assert "failed while writing" in run.stdout and "no index was written" in run.stdout
    assert "File too large" in run.stdout
    assert not (out / INDEX).exists()
    assert not list(out.glob("*-of-*"))
    with pytest.raises(IncompletePackError):
        npyio.dataset(str(out))


@pytest.fixture(scope="module")
def big_tree(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("big")
    for side in ("x", "y"):
        (root / side).mkdir()
    for i in range(1500):
        np.save(root / "x" / f"{i:05d}.npy", np.full((16, 16), i, "f4"))
        np.save(root / "y" / f"{i:05d}.npy", np.int64(i))
    return root


def test_a_pack_killed_at_any_moment_is_refused_and_a_rerun_completes(tmp_path, big_tree):
    """A real SIGKILL of ``npyio pack`` at several moments: whatever it left is never read as
    a smaller dataset, and the same command then completes the pack."""
    out = tmp_path / "p"
    argv = [sys.executable, "-m", "npyio", "pack", str(big_tree / "x"), str(big_tree / "y")]
    argv += ["-o", str(out), "--shard-size", "10KB", "-q"]
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=str(REPO))
    # moments: as soon as the marker exists, then after 3 and 60 shard files are renamed
    for moment in (0, 3, 60):
        proc = subprocess.Popen(argv, env=env, cwd=REPO, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            done = [n for n in (os.listdir(out) if out.exists() else []) if n.endswith(".npy")]
            if (out / INCOMPLETE).exists() and len(done) >= moment:
                break
            time.sleep(0.002)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert proc.returncode == -signal.SIGKILL, "the pack ended before it was killed"
        assert not (out / INDEX).exists()
        with pytest.raises(IncompletePackError, match="incomplete pack"):
            npyio.dataset(str(out))
        # the temporary names match no *.npy glob; the renamed shards are refused, not read
        left = os.listdir(out)
        assert not [n for n in left if n.endswith(".tmp") and not n.startswith(".")]
        assert not [n for n in left if n.startswith(".") and n.endswith(".npy")]
        shards = str(out / "inputs-*.npy")
        for source in [str(out)] + [shards] * any(fnmatch.fnmatch(n, "inputs-*.npy") for n in left):
            with pytest.raises(IncompletePackError, match="incomplete pack"):
                npyio.rows(source)
    done = subprocess.run(argv, env=env, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    a = npyio.dataset(str(big_tree / "x"), str(big_tree / "y"), batch_size=256)
    assert_same(drain(npyio.dataset(str(out), batch_size=256)), drain(a))


def test_hidden_files_are_not_packed(tmp_path, tree):
    """macOS's ``._000.npy`` beside the files (not a .npy file) is left out, as by glob."""
    x = tmp_path / "x"
    x.mkdir()
    for name in os.listdir(tree / "x"):
        (x / name).write_bytes((tree / "x" / name).read_bytes())
    (x / "._000.npy").write_bytes(b"\x00\x05\x16\x07 AppleDouble")
    summary = npyio.pack(str(x), str(tree / "y"), out=str(tmp_path / "p"))
    assert summary.rows == N
