"""npyio.decode_npz / read_npz: bit-exact members of np.savez and np.savez_compressed archives
(seekable, streamed with data descriptors, zip64), refused archives, corrupt deflate data, no
Python ops; and, at the end, npyio.dataset(..., key=...)."""

from __future__ import annotations

import contextlib
import functools
import io
import struct
import zipfile
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given, settings
from hypothesis import strategies as st

import npyio
from npyio._format import npz
from tests._graph_util import PYTHON_OPS as CALLBACK_OPS
from tests._graph_util import op_types
from tests._npy_testing import assert_same, npy_bytes, tf_message
from tests._npz_testing import (
    BASE,
    MEMBERS,
    central,
    eocd_at,
    npz_bytes,
    patched,
    write,
    zip64_everywhere,
)


# --- bit-exact ----------------------------------------------------------------------------------
@pytest.mark.parametrize("writer", ["file", "stream", "zip64"])
@pytest.mark.parametrize("compressed", [False, True], ids=["savez", "savez_compressed"])
def test_members_bit_exact(compressed, writer):
    data = npz_bytes(MEMBERS, compressed, writer)
    with zip64_everywhere() if writer == "zip64" else contextlib.nullcontext():
        loaded = np.load(io.BytesIO(data))
        want = {k: loaded[k] for k in MEMBERS}
    for key, arr in MEMBERS.items():
        assert want[key].dtype == arr.dtype and want[key].tobytes() == arr.tobytes(), key
        for name in (key, key + ".npy"):
            assert_same(npyio.decode_npz(data, name, arr.dtype, arr.shape), want[key], name)


def test_writers_do_what_the_tests_assume():
    """np.savez: force_zip64 local headers; streamed: data descriptors; zip64: extra fields."""
    infos = {
        w: zipfile.ZipFile(io.BytesIO(npz_bytes({"a": np.arange(3)}, False, w))).infolist()
        for w in ("file", "stream")
    }
    assert infos["file"][0].flag_bits & 8 == 0 and infos["stream"][0].flag_bits & 8
    with zip64_everywhere():
        data = npz_bytes(MEMBERS, False, "zip64")
        assert any(len(i.extra) >= 28 for i in zipfile.ZipFile(io.BytesIO(data)).infolist())
    assert data[eocd_at(data) + 8 : eocd_at(data) + 20] == b"\xff" * 12


@pytest.mark.parametrize("method", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
def test_zipfile_force_zip64_members(method):
    """Members written with zf.open(name, "w", force_zip64=True): local headers with sizes
    0xFFFFFFFF and a zip64 extra field (what numpy does for every member)."""
    arrays = {"a": np.arange(7, dtype=">i8"), "b": np.eye(3, dtype=np.float16)}
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=method) as zf:
        for name, arr in arrays.items():
            with zf.open(name + ".npy", "w", force_zip64=True) as f:
                f.write(npy_bytes(arr))
    data = buf.getvalue()
    local = data.index(npz.LOCAL_SIG)
    assert struct.unpack("<II", data[local + 18 : local + 26]) == (0xFFFFFFFF, 0xFFFFFFFF)
    decode = tf.function(lambda b, k: npyio.decode_npz(b, k, tf.float16, (3, 3)), autograph=False)
    assert_same(decode(tf.constant(data), tf.constant("b")), arrays["b"])
    assert_same(npyio.decode_npz(data, "a", tf.int64), arrays["a"])


def test_archive_comment_and_prefix_bytes_in_members():
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.comment = b"PK\x05\x06 a comment that looks like an end record" * 100
        zf.writestr("x.npy", npy_bytes(np.arange(4.0)))
    assert_same(npyio.decode_npz(buf.getvalue(), "x", tf.float64), np.arange(4.0))


def test_decode_in_a_dataset_and_no_python_ops(tmp_path):
    paths = [
        write(tmp_path / f"{i}.npz", npz_bytes({"x": np.full(3, i)}, i % 2 == 1)) for i in range(4)
    ]
    ds = tf.data.Dataset.from_tensor_slices(paths).map(lambda p: npyio.read_npz(p, "x", tf.int64))
    assert [int(v[0]) for v in ds] == [0, 1, 2, 3]
    types = op_types(ds)
    assert {"DecodeCompressed", "While"} <= types or {"DecodeCompressed", "StatelessWhile"} <= types
    assert not types & CALLBACK_OPS


# --- refused archives ---------------------------------------------------------------------------
def refused(path: str, key: str = "x", dtype: object = tf.int64) -> str:
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        npyio.read_npz(path, key, dtype)
    message = tf_message(e.value)
    assert message.startswith(f"{path}[{key}]: "), message
    return message


def test_missing_member(tmp_path):
    path = write(tmp_path / "a.npz", npz_bytes(BASE, True))
    message = refused(path, "z")
    assert "no such member" in message and "'x.npy', 'y.npy'" in message and "'z'" in message
    many = npz_bytes({f"m{i:02d}": np.zeros(1) for i in range(12)}, False)
    many = write(tmp_path / "b.npz", many)
    assert "'m09.npy', ..., got 'x'" in refused(many)


def test_encrypted_member(tmp_path):
    data = npz_bytes(BASE, False)
    at = central(data)["x.npy"]
    local = struct.unpack("<I", data[at + 42 : at + 46])[0]
    data = patched(patched(data, at + 8, "<H", 1), local + 6, "<H", 1)
    assert "member is encrypted" in refused(write(tmp_path / "a.npz", data))


@pytest.mark.parametrize(
    "method, text", [(zipfile.ZIP_BZIP2, "12 (bzip2)"), (zipfile.ZIP_LZMA, "14 (lzma)")]
)
def test_unsupported_method(tmp_path, method, text):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=method) as zf:
        zf.writestr("x.npy", npy_bytes(BASE["x"]))
    message = refused(write(tmp_path / "a.npz", buf.getvalue()))
    assert "unsupported compression method -- expected 0 (stored) or 8" in message
    assert message.endswith(f"got {text}")


def _truncations(data: bytes) -> dict[str, bytes]:
    return {
        "empty": b"",
        "half": data[: len(data) // 2],
        "minus-one": data[:-1],
        "no-end-record": data[: eocd_at(data)],
        "cut-before-directory": data[: central(data)["x.npy"]] + data[eocd_at(data) :],
        "head-cut": data[40:],
    }


@pytest.mark.parametrize("compressed", [False, True], ids=["savez", "savez_compressed"])
def test_truncated(tmp_path, compressed):
    data = npz_bytes(BASE, compressed)
    for name, cut in _truncations(data).items():
        message = refused(write(tmp_path / f"{name}.npz", cut))
        assert "zip" in message or "header" in message or "past" in message, (name, message)


def test_corrupt_structures(tmp_path):
    data = npz_bytes(BASE, False)
    e, at = eocd_at(data), central(data)["x.npy"]
    local = struct.unpack("<I", data[at + 42 : at + 46])[0]
    cases = {
        "central-signature": (patched(data, at, "<I", 0), "corrupt central directory"),
        "local-signature": (patched(data, local, "<I", 0), "corrupt local header"),
        "directory-offset": (patched(data, e + 16, "<I", 0xFFFFFFF0), "central directory runs"),
        "directory-size": (patched(data, e + 12, "<I", 10**6), "central directory runs"),
        "entry-count": (patched(data, e + 10, "<H", 9), "corrupt central directory"),
        "local-offset": (patched(data, at + 42, "<I", len(data) + 5), "corrupt local header"),
        "compressed-size": (patched(data, at + 20, "<I", 10**6), "member data runs past the end"),
        "stored-sizes": (patched(data, at + 24, "<I", 7), "stored member's sizes differ"),
        "local-name": (patched(data, local + 30, "<B", ord("q")), "local header names another"),
        "name-length": (patched(data, at + 28, "<H", 60000), "corrupt central directory"),
        "zip64-extra-missing": (patched(data, at + 24, "<I", 0xFFFFFFFF), "zip64 extra field"),
        "not-a-zip": (npy_bytes(BASE["x"]), "not a zip archive"),
    }
    for name, (bad, words) in cases.items():
        message = refused(write(tmp_path / f"{name}.npz", bad))
        assert words in message, (name, message)


def test_corrupt_zip64_structures(tmp_path):
    """Bad zip64 end records, and 8-byte values past any end (no int64 overflow)."""
    data = npz_bytes(BASE, True, "zip64")
    e = eocd_at(data)
    record = struct.unpack("<Q", data[e - 12 : e - 4])[0]
    entries = central(data)
    x_extra = entries["x.npy"] + 46 + len("x.npy") + 4  # uncompressed, compressed size
    y_extra = entries["y.npy"] + 46 + len("y.npy") + 4  # the same, then the local offset
    assert struct.unpack("<HH", data[x_extra - 4 : x_extra]) == (1, 16)
    assert struct.unpack("<HH", data[y_extra - 4 : y_extra]) == (1, 24)
    cases = {
        "record-signature": (patched(data, record, "<I", 0), "corrupt zip64 end of central"),
        "locator-offset": (patched(data, e - 12, "<Q", len(data)), "corrupt zip64 end of central"),
        "directory-offset-64": (patched(data, record + 48, "<Q", 2**63 + 5), "central directory"),
        "compressed-size-64": (patched(data, x_extra + 8, "<Q", 2**64 - 1), "runs past the end"),
        "local-offset-64": (patched(data, y_extra + 16, "<Q", 2**40), "corrupt local header"),
        "extra-short": (patched(data, x_extra - 2, "<H", 8), "zip64 extra field"),
    }
    for name, (bad, words) in cases.items():
        message = refused(write(tmp_path / f"{name}.npz", bad), "y" if "local" in name else "x")
        assert words in message, (name, message)


def test_member_that_is_not_the_declared_npy(tmp_path):
    path = write(tmp_path / "a.npz", npz_bytes(BASE, True))
    assert "dtype mismatch -- expected int32, got int64" in refused(path, "x", tf.int32)
    message = refused(path, "x.npy", tf.int32)  # the key as given is named
    assert message.startswith(f"{path}[x.npy]: ")


# --- corrupt deflate data -----------------------------------------------------------------------
def test_deflate_checks(tmp_path):
    """zlib checks the CRC-32 and size that npyio copies into the gzip trailer (DataLossError);
    data that ends early is caught by npyio's inflated-size check."""
    arr = np.arange(5000, dtype=np.int64)
    data = npz_bytes({"x": arr}, True)
    at = central(data)["x.npy"]
    crc, csize, usize = struct.unpack("<III", data[at + 16 : at + 28])
    with pytest.raises(tf.errors.DataLossError, match="incorrect data check"):
        npyio.decode_npz(patched(data, at + 16, "<I", crc ^ 1), "x", tf.int64)
    with pytest.raises(tf.errors.DataLossError, match="incorrect length check"):
        npyio.decode_npz(patched(data, at + 24, "<I", usize + 1), "x", tf.int64)
    path = write(tmp_path / "short.npz", patched(data, at + 20, "<I", csize // 2))
    with pytest.raises((tf.errors.InvalidArgumentError, tf.errors.DataLossError)) as e:
        npyio.read_npz(path, "x", tf.int64)
    if isinstance(e.value, tf.errors.InvalidArgumentError):
        assert "inflated member has the wrong size" in tf_message(e.value)
        assert tf_message(e.value).startswith(f"{path}[x]: ")


def test_random_corruption_of_deflate_data_is_caught():
    """Flipped bytes in the deflate stream: a TF error, or (rarely: unused padding bits) the
    right data -- never wrong data, never a crash."""
    arr = np.random.default_rng(1).integers(0, 100, 3000).astype(np.int32)
    data = npz_bytes({"x": arr}, True)
    at = central(data)["x.npy"]
    local = struct.unpack("<I", data[at + 42 : at + 46])[0]
    nlen, xlen = struct.unpack("<HH", data[local + 26 : local + 30])
    start, csize = local + 30 + nlen + xlen, struct.unpack("<I", data[at + 20 : at + 24])[0]
    decode = tf.function(lambda b: npyio.decode_npz(b, "x", tf.int32), autograph=False)
    rng = np.random.default_rng(2)
    errors = 0
    for _ in range(25):
        bad = bytearray(data)
        bad[start + int(rng.integers(0, csize))] ^= int(rng.integers(1, 256))
        try:
            got = decode(tf.constant(bytes(bad))).numpy()
        except (tf.errors.DataLossError, tf.errors.InvalidArgumentError):
            errors += 1
        else:
            assert np.array_equal(got, arr)
    assert errors >= 20


# --- npyio.dataset(..., key=..., label_key=...) --------------------------------------------------
# These need the lead's integration of npyio._npz into npyio.dataset (key= and label_key=).
def make_archives(root: Path, n: int = 7, compressed: bool = True) -> str:
    root.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        arrays = {"x": np.full((2, 3), i, np.float32), "y": np.int64(i)}
        write(root / f"{i:03d}.npz", npz_bytes(arrays, compressed and i % 2 == 0))
    (root / "ignored.npy").write_bytes(npy_bytes(np.zeros(1)))
    return str(root)


def test_dataset_key_and_label_key(tmp_path):
    root = make_archives(tmp_path / "d")
    ds = npyio.dataset(root, key="x", label_key="y", batch_size=3)
    assert ds.element_spec == (
        tf.TensorSpec((None, 2, 3), tf.float32),
        tf.TensorSpec((None,), tf.int64),
    )
    got = [(x.numpy(), y.numpy()) for x, y in ds]
    assert [y.tolist() for _, y in got] == [[0, 1, 2], [3, 4, 5], [6]]
    for x, y in got:
        assert (x == y[:, None, None]).all()
    assert not op_types(ds) & CALLBACK_OPS


def test_dataset_key_alone_unbatched_shuffled_with_npy_suffix(tmp_path):
    root = make_archives(tmp_path / "d")
    ds = npyio.dataset(root, key="x.npy", shuffle=True, seed=1, batch_size=None)
    assert ds.element_spec == tf.TensorSpec((2, 3), tf.float32)
    assert sorted(int(x[0, 0]) for x in ds) == list(range(7))


def test_dataset_key_with_separate_label_archives(tmp_path):
    xs, ys = make_archives(tmp_path / "x"), make_archives(tmp_path / "y", compressed=False)
    ds = npyio.dataset(xs, ys, key="x", label_key="y", batch_size=4, drop_remainder=True)
    assert [y.numpy().tolist() for _, y in ds] == [[0, 1, 2, 3]]


def test_dataset_key_missing_member_names_path_and_key(tmp_path):
    root = make_archives(tmp_path / "d", n=2)
    with pytest.raises(npyio.NpyFormatError, match="no such member"):
        npyio.dataset(root, key="nope")  # the first archive is inspected when built
    bad = root + "/001.npz"
    write(Path(bad), npz_bytes({"other": np.zeros((2, 3), np.float32)}, True))
    ds = npyio.dataset(root, key="x", dtype=tf.float32, shape=(2, 3), batch_size=None)
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        list(ds)
    assert tf_message(e.value).startswith(f"{bad}[x]: no such member")


def test_messages_put_each_number_where_its_words_say(tmp_path):
    """directory_past_end and data_past_end word their arguments in the other order than they
    take them: the graph's message must still say which number is which."""
    data = npz_bytes(BASE, False)
    e, at = eocd_at(data), central(data)["x.npy"]
    _, _, cd_offset = struct.unpack("<HII", data[e + 10 : e + 20])
    bad = patched(data, e + 12, "<I", 10**6)
    message = refused(write(tmp_path / "dir.npz", bad))
    assert message.endswith(npz.directory_past_end(str(cd_offset + 10**6), str(e))), message
    local = struct.unpack("<I", data[at + 42 : at + 46])[0]
    start = local + 30 + sum(struct.unpack("<HH", data[local + 26 : local + 30]))
    bad = patched(data, at + 20, "<I", 10**6)
    message = refused(write(tmp_path / "data.npz", bad))
    assert message.endswith(npz.data_past_end(str(start + 10**6), str(len(data)))), message


# --- the central directory's chain of entries -------------------------------------------------
# The lookup reads the chain of entries from the directory's start (each entry's lengths give
# the next one's position), for at most the end record's entry count. Signature bytes can also
# stand inside a name, an extra field or a comment: they are not entries.
def fake_entry(name: bytes, clen: int = 0) -> bytes:
    """The bytes of a central directory entry (fields zero but the lengths) named ``name``."""
    lengths = struct.pack("<HHH", len(name), 0, clen)
    return npz.CENTRAL_SIG + bytes(24) + lengths + bytes(12) + name


def archive(
    members: list[tuple[str, np.ndarray]],
    comments: dict[str, bytes] | None = None,
    extras: dict[str, bytes] | None = None,
) -> bytes:
    """A stored archive of ``members``, with a comment and an extra field for those named."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, arr in members:
            info = zipfile.ZipInfo(name)
            info.comment = (comments or {}).get(name, b"")
            info.extra = (extras or {}).get(name, b"")
            zf.writestr(info, npy_bytes(arr))
    return buf.getvalue()


A, X, B = np.arange(3, dtype=np.int64), np.arange(5, dtype=np.int64), np.zeros(2, np.int64)


def test_a_signature_in_a_name_is_not_an_entry():
    weird = "aPK\x01\x02" + "\x10" * 30 + ".npy"
    data = archive([(weird, A), ("x.npy", X), ("b.npy", B)])
    assert_same(npyio.decode_npz(data, "x", tf.int64), X)
    assert_same(npyio.decode_npz(data, weird, tf.int64), A)
    assert_same(npyio.decode_npz(data, "b", tf.int64), B)


def test_a_fake_entry_in_a_comment_that_joins_the_chain_is_not_read():
    """A comment holding a fake entry named "x" whose lengths end it exactly where the real
    entry ends: its chain joins the real one, but it is not on it."""
    size = 100
    comment = b"zz" + fake_entry(b"x", clen=size - 2 - 47)
    comment += b"\0" * (size - len(comment))
    data = archive([("a.npy", A), ("x.npy", X), ("b.npy", B)], comments={"a.npy": comment})
    assert zipfile.ZipFile(io.BytesIO(data)).getinfo("a.npy").comment == comment
    assert_same(npyio.decode_npz(data, "x", tf.int64), X)  # x.npy, not the fake "x"
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        npyio.decode_npz(data, "q", tf.int64)
    assert tf_message(e.value).endswith("expected one of 'a.npy', 'x.npy', 'b.npy', got 'q'")


def test_fake_entries_in_an_extra_field_and_the_last_comment():
    extra = struct.pack("<HH", 0xCAFE, 60) + (fake_entry(b"b.npy") + bytes(60))[:60]
    last = fake_entry(b"b", clen=5000)  # runs past the directory: not an entry either
    data = archive(
        [("a.npy", A), ("x.npy", X), ("b.npy", B)],
        comments={"b.npy": last},
        extras={"x.npy": extra},
    )
    for key, arr in (("a", A), ("x", X), ("b", B), ("b.npy", B)):
        assert_same(npyio.decode_npz(data, key, tf.int64), arr)


def test_an_exact_name_is_found_before_a_corrupt_later_entry():
    data = archive([("x", X), ("y.npy", A), ("z.npy", B)])
    z = central(data)["z.npy"]
    bad = patched(data, z, "<I", 0)
    assert_same(npyio.decode_npz(bad, "x", tf.int64), X)  # the walk stops at "x"
    for key in ("y", "z", "q"):  # "y" could still be named "y" later: the walk goes on
        with pytest.raises(tf.errors.InvalidArgumentError) as e:
            npyio.decode_npz(bad, key, tf.int64)
        assert tf_message(e.value) == f"<bytes>[{key}]: {npz.bad_entry(str(z))}"
    assert_same(npyio.decode_npz(bad, "y.npy", tf.int64), A)


@pytest.mark.parametrize("count", [0, 1, 10, 11, 12])
def test_the_missing_member_message_lists_ten_names(count):
    data = archive([(f"m{i:02d}.npy", A) for i in range(count)])
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        npyio.decode_npz(data, "x", tf.int64)
    names = ", ".join(f"'m{i:02d}.npy'" for i in range(min(count, 10))) or "nothing"
    names += ", ..." if count > 10 else ""
    assert tf_message(e.value) == f"<bytes>[x]: {npz.no_member(names, repr('x'))}"


def test_the_entry_count_bounds_the_walk():
    data = archive([("a.npy", A), ("b.npy", B), ("x.npy", X), ("c.npy", A)])
    e = eocd_at(data)
    fewer = patched(patched(data, e + 8, "<H", 2), e + 10, "<H", 2)
    assert_same(npyio.decode_npz(fewer, "b", tf.int64), B)
    with pytest.raises(tf.errors.InvalidArgumentError) as err:
        npyio.decode_npz(fewer, "x", tf.int64)
    assert tf_message(err.value).endswith("expected one of 'a.npy', 'b.npy', got 'x'")
    more = patched(data, e + 10, "<H", 5)  # a fifth entry would start at the end record
    for key in ("q", "x"):  # ("x" only matches "x.npy": a later entry could be "x")
        with pytest.raises(tf.errors.InvalidArgumentError) as err:
            npyio.decode_npz(more, key, tf.int64)
        assert tf_message(err.value) == f"<bytes>[{key}]: {npz.bad_entry(str(e))}"
    assert_same(npyio.decode_npz(more, "x.npy", tf.int64), X)  # found before the fifth


def test_a_huge_zip64_entry_count_allocates_nothing():
    data = npz_bytes(BASE, False, "zip64")
    e = eocd_at(data)
    record = struct.unpack("<Q", data[e - 12 : e - 4])[0]
    for count in (2**40, 2**63 - 1, 2**64 - 1):
        bad = patched(data, record + 32, "<Q", count)
        assert_same(npyio.decode_npz(bad, "y.npy", tf.float64), BASE["y"])
        with pytest.raises(tf.errors.InvalidArgumentError) as err:
            npyio.decode_npz(bad, "q", tf.int64)
        assert "corrupt central directory" in tf_message(err.value)


def test_the_first_bad_entry_is_named_by_its_position():
    data = archive([("a.npy", A), ("b.npy", B), ("x.npy", X)])
    at = central(data)
    for name, patch in (
        ("b.npy", (at["b.npy"], "<I", 0)),
        ("x.npy", (at["x.npy"] + 28, "<H", 9000)),
    ):
        bad = patched(data, *patch)
        with pytest.raises(tf.errors.InvalidArgumentError) as err:
            npyio.decode_npz(bad, "q", tf.int64)
        assert tf_message(err.value) == f"<bytes>[q]: {npz.bad_entry(str(at[name]))}"


# --- the lookup's cost does not grow by a step per entry ----------------------------------------
@contextlib.contextmanager
def counted_loops():
    """Counts the iterations of every ``tf.while_loop`` the extractor runs: it is traced
    afresh with a counter in each loop body (and traced afresh again afterwards)."""
    from npyio._graph import zip as zip_module

    counter = tf.Variable(0, dtype=tf.int64, trainable=False)
    real = tf.while_loop

    def while_loop(cond, body, loop_vars, **kwargs):
        def counted(*args):
            with tf.control_dependencies([counter.assign_add(1)]):
                return [tf.identity(t) for t in body(*args)]

        return real(cond, counted, loop_vars, **kwargs)

    zip_module._extractor.cache_clear()
    try:
        with mock.patch.object(tf, "while_loop", while_loop):
            yield counter
    finally:
        zip_module._extractor.cache_clear()


def _iterations(counter: tf.Variable, data: bytes, key: str) -> int:
    counter.assign(0)
    with contextlib.suppress(tf.errors.InvalidArgumentError):  # (the missing member)
        npyio.decode_npz(data, key, tf.float64)
    return int(counter.numpy())


def test_finding_a_member_takes_no_loop_step_per_entry():
    """One member of a 7,488-member archive takes about as many loop iterations as one of a
    4-member archive (pointer doubling: log2 of the entry count more), where a walk of the
    directory takes one per entry before it."""
    small = npz_bytes({f"a{i}": np.zeros(1) for i in range(4)}, False)
    large = npz_bytes({f"a{i}": np.zeros(1) for i in range(7488)}, False)
    bound = 2 * (7488 + 1).bit_length()
    with counted_loops() as counter:
        for key in ("a2", "a3", "missing"):
            few, many = _iterations(counter, small, key), _iterations(counter, large, key)
            assert few > 0, "the counter counts nothing"
            assert many <= few + bound, (key, few, many)
        assert _iterations(counter, large, "a7487") <= few + bound


# --- the lookup against a walk of the entries, on damaged directories ---------------------------
def _clamped(data: bytes, pos: int, n: int) -> bytes:
    start = min(max(pos, 0), len(data))
    return data[start : start + max(n, 0)]


def walk(data: bytes, start: int, end: int, entries: int, key: bytes) -> tuple:
    """The central directory walk, entry by entry, in Python: ``(entry or -1, ok, where the
    walk stopped, listing)``, as `npyio._graph.zip._find_entry` must find it."""
    i, p, exact, npy_at, ok, names = 0, start, -1, -1, True, b""
    while i < entries and ok and exact < 0:
        nlen, xlen, clen = struct.unpack("<HHH", _clamped(data, p, 46).ljust(46, b"\0")[28:34])
        nxt = p + 46 + nlen + xlen + clen
        ok = _clamped(data, p, 4) == npz.CENTRAL_SIG and nxt <= end
        name = _clamped(data, p + 46, nlen)
        if ok:
            exact = p if name == key else exact
            npy_at = p if npy_at < 0 and name == key + b".npy" else npy_at
            if i < npz.MAX_LISTED:
                names += (b", " if i else b"") + b"'" + name + b"'"
            elif i == npz.MAX_LISTED:
                names += b", ..."
            p = nxt
        i += 1
    return exact if exact >= 0 else npy_at, ok, p, names


@functools.cache
def find_entry() -> tf.types.experimental.ConcreteFunction:
    from npyio._graph import zip as zip_module

    def find(contents, start, end, entries, key):
        size = tf.cast(tf.strings.length(contents), tf.int64)
        return tuple(zip_module._find_entry(contents, size, start, end, entries, key))

    specs = [tf.TensorSpec([], tf.string)] + [tf.TensorSpec([], tf.int64)] * 3
    return tf.function(find, autograph=False).get_concrete_function(
        *specs, tf.TensorSpec([], tf.string)
    )


NAMES = ["a.npy", "x", "x.npy", "PK\x01\x02", "aPK\x01\x02" + "\x07" * 8, "b", "b.npy", ""]


@st.composite
def damaged_directories(draw):
    names = draw(st.lists(st.sampled_from(NAMES), unique=True, max_size=6))
    comments = {
        name: draw(st.sampled_from([b"", fake_entry(b"x", 3) + b"...", b"PK\x01\x02" * 3]))
        for name in names
    }
    data = bytearray(archive([(name, A) for name in names], comments=comments))
    e = eocd_at(bytes(data))
    count, _, offset = struct.unpack("<HII", data[e + 10 : e + 20])
    for _ in range(draw(st.integers(0, 4))):  # damage: signatures, lengths, any bytes
        at = draw(st.integers(offset, e + 21))
        data[at : at + 4] = draw(st.sampled_from([npz.CENTRAL_SIG, b"\xff\x00", b"\x00", b"\x30"]))
    data = bytes(data[: e + 22 + 40])
    start = offset + draw(st.sampled_from([0, 0, 0, -46, 1, 46, 10**6]))
    end = e + draw(st.sampled_from([0, 0, -1, -30, 5, 10**6]))
    entries = draw(st.sampled_from([count, count, 0, 1, max(count - 1, 0), count + 1, 2**40]))
    key = draw(st.sampled_from([n.removesuffix(".npy") for n in NAMES] + ["q"])).encode()
    return data, start, end, entries, key


@settings(max_examples=150)
@given(case=damaged_directories())
def test_the_lookup_agrees_with_a_walk_of_the_entries(case):
    data, start, end, entries, key = case
    want_at, want_ok, want_stop, want_names = walk(data, start, end, entries, key)
    got = find_entry()(tf.constant(data), start, end, entries, tf.constant(key))
    at, ok, bad_at, names = (t.numpy() for t in got)
    assert (int(at), bool(ok)) == (want_at, want_ok), case
    if not want_ok:  # where the first bad entry is, for its message
        assert int(bad_at) == want_stop, case
    elif want_at < 0:  # the listing, for the missing-member message
        assert names == want_names, case
