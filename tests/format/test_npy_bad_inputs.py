"""The bad-input corpus through every entry point: each refusal names the file and says why.

Graph-side refusals are ``tf.errors.InvalidArgumentError`` (exactly that type: never a
``UnicodeDecodeError`` or any other Python exception), Python-side ones ``NpyFormatError``.
"""

from __future__ import annotations

import resource

import numpy as np
import pytest
import tensorflow as tf

import npyio
from npyio._format import npy
from tests._corpus import CORPUS, CORPUS_IDS, GOOD_ARRAY, HEADER_LEVEL, Bad
from tests._npy_testing import (
    assert_same,
    decoder,
    header_text,
    npy_bytes,
    reader,
    sample,
    tf_message,
    with_header,
    write_file,
)


def bad_path(tmp_path, case: Bad) -> str:
    return write_file(tmp_path, f"corpus-{case.id}-XYZZY.npy", case.data)


def good_file(tmp_path, case: Bad, i: int) -> tuple[str, np.ndarray]:
    arr = sample(case.dtype, case.good_shape, seed=i)
    return write_file(tmp_path, f"good-{i}.npy", npy_bytes(arr)), arr


def raised(fn, *args, **kwargs) -> tf.errors.OpError:
    """Runs ``fn`` and returns the TF error it raises, asserting the exact type."""
    with pytest.raises(tf.errors.OpError) as info:
        fn(*args, **kwargs)
    assert type(info.value) is tf.errors.InvalidArgumentError, repr(info.value)
    return info.value


@pytest.mark.parametrize("case", CORPUS, ids=CORPUS_IDS)
def test_read_npy_refuses(tmp_path, case):
    path = bad_path(tmp_path, case)
    err = raised(npyio.read_npy, path, case.dtype, case.shape)
    assert tf_message(err) == f"{path}: {case.reason}"
    assert path in err.message


@pytest.mark.parametrize("case", CORPUS, ids=CORPUS_IDS)
def test_read_npy_refuses_in_tf_function(tmp_path, case):
    path = bad_path(tmp_path, case)
    err = raised(reader(case.dtype, case.shape), tf.constant(path))
    assert tf_message(err) == f"{path}: {case.reason}"


@pytest.mark.parametrize("case", HEADER_LEVEL, ids=[c.id for c in HEADER_LEVEL])
def test_inspect_refuses_bad_headers(tmp_path, case):
    path = bad_path(tmp_path, case)
    with pytest.raises(npyio.NpyFormatError) as info:
        npyio.inspect(path)
    assert isinstance(info.value, ValueError)
    assert isinstance(info.value, npyio.NpyioError)
    assert str(info.value) == f"{path}: {case.reason}"
    assert info.value.path == path
    assert info.value.reason == case.reason


@pytest.mark.parametrize(
    "case",
    [c for c in CORPUS if not c.header_level],
    ids=[c.id for c in CORPUS if not c.header_level],
)
def test_inspect_accepts_good_headers_of_bad_files(tmp_path, case):
    header = npyio.inspect(bad_path(tmp_path, case))
    assert header.dtype.kind in "biufc"


def _groups() -> dict[str, list[Bad]]:
    """The corpus grouped by what it is read as, so one pipeline serves a whole group."""
    groups: dict[str, list[Bad]] = {}
    for case in CORPUS:
        shape = "any" if case.shape is None else npy.show_shape(case.shape).replace(" ", "")
        groups.setdefault(f"{case.dtype}-{shape}", []).append(case)
    return groups


GROUPS = _groups()


@pytest.mark.parametrize("group", list(GROUPS))
def test_dataset_names_each_bad_file(tmp_path, group):
    """One parallel pipeline over good and bad files: each bad file's error names that file
    (and no other), and the pipeline goes on to the next element."""
    cases = GROUPS[group]
    expected: list[tuple[str, object]] = []  # (path, array or reason)
    for i, case in enumerate(cases):
        path, arr = good_file(tmp_path, case, i)
        expected += [(path, arr), (bad_path(tmp_path, case), case.reason)]
    path, arr = good_file(tmp_path, cases[0], len(cases))
    expected.append((path, arr))
    fn = reader(cases[0].dtype, cases[0].shape)
    ds = tf.data.Dataset.from_tensor_slices([p for p, _ in expected]).map(
        lambda p: fn(p), num_parallel_calls=4, deterministic=True
    )
    it = iter(ds)
    for path, want in expected:
        if isinstance(want, str):
            err = raised(next, it)
            assert tf_message(err) == f"{path}: {want}"
            assert sum(p in err.message for p, _ in expected) == 1
        else:
            assert_same(next(it), want)
    with pytest.raises(StopIteration):
        next(it)


def test_dataset_groups_cover_the_corpus():
    assert sum(len(cases) for cases in GROUPS.values()) == len(CORPUS)


@pytest.mark.parametrize("case", CORPUS, ids=CORPUS_IDS)
def test_batch_names_the_element(tmp_path, case):
    goods = [npy_bytes(sample(case.dtype, case.good_shape, seed=i)) for i in range(2)]
    # first in the batch: every check is made against the first element's shape text
    err = raised(npyio.decode_npy, [case.data, *goods], case.dtype, case.shape)
    assert tf_message(err) == f"<bytes>[0]: {case.reason}"


BATCH_LATER = [
    "bad-magic",
    "magic-only",
    "version-4.0",
    "header-past-end-v1",
    "empty-header",
    "object-dtype",
    "payload-short",
    "trailing-bytes",
    "float32-read-as-int32",
]


@pytest.mark.parametrize("index", [1, 2])
@pytest.mark.parametrize("case_id", BATCH_LATER)
def test_batch_names_a_later_element(case_id, index):
    case = CORPUS[CORPUS_IDS.index(case_id)]
    batch = [npy_bytes(GOOD_ARRAY.astype(case.dtype))] * 3
    batch[index] = case.data
    err = raised(npyio.decode_npy, batch, case.dtype)
    assert tf_message(err) == f"<bytes>[{index}]: {case.reason}"


def test_batch_elements_must_share_a_shape():
    batch = [npy_bytes(GOOD_ARRAY), npy_bytes(GOOD_ARRAY.T.copy())]
    err = raised(npyio.decode_npy, batch, "float32")
    assert tf_message(err) == (
        "<bytes>[1]: " + npy.shape_mismatch("(2, 3)", "(3, 2)") + npy.vary_hint("(None, None)")
    )


# --- things that are not a simple corpus entry ---------------------------------------------------
def test_missing_file(tmp_path):
    path = str(tmp_path / "no-such-dir" / "missing-XYZZY.npy")
    with pytest.raises(tf.errors.NotFoundError) as info:
        npyio.read_npy(path, "float32")
    assert path in info.value.message
    with pytest.raises(tf.errors.NotFoundError) as info:
        reader("float32")(tf.constant(path))
    assert path in info.value.message
    with pytest.raises(npyio.NpyFormatError) as info:
        npyio.inspect(path)
    assert str(info.value).startswith(f"{path}: ")
    assert info.value.path == path


def test_missing_file_in_dataset(tmp_path):
    good, _ = good_file(tmp_path, CORPUS[0], 0)
    missing = str(tmp_path / "missing-XYZZY.npy")
    ds = tf.data.Dataset.from_tensor_slices([good, missing]).map(
        lambda p: npyio.read_npy(p, "float32")
    )
    it = iter(ds)
    next(it)
    with pytest.raises(tf.errors.NotFoundError) as info:
        next(it)
    assert missing in info.value.message


def test_max_header_size_is_configurable_both_ways(tmp_path):
    big = CORPUS[CORPUS_IDS.index("header-over-10000-bytes")]
    path = bad_path(tmp_path, big)
    assert_same(npyio.read_npy(path, "float32", max_header_size=10_001), GOOD_ARRAY)
    assert_same(reader("float32", None, 20_000)(tf.constant(path)), GOOD_ARRAY)
    assert npyio.inspect(path, max_header_size=10_001).shape == (2, 3)
    assert_same(npyio.decode_npy(big.data, "float32", max_header_size=20_000), GOOD_ARRAY)

    small = write_file(tmp_path, "small.npy", npy_bytes(GOOD_ARRAY))
    hlen = len(npy_bytes(GOOD_ARRAY)) - 24 - 10
    reason = npy.header_too_large("100", str(hlen))
    err = raised(npyio.read_npy, small, "float32", max_header_size=100)
    assert tf_message(err) == f"{small}: {reason}"
    with pytest.raises(npyio.NpyFormatError) as info:
        npyio.inspect(small, max_header_size=100)
    assert str(info.value) == f"{small}: {reason}"
    assert_same(npyio.read_npy(small, "float32", max_header_size=hlen), GOOD_ARRAY)


def test_huge_claim_allocates_nothing(tmp_path):
    """A tiny file claiming 8 TB (or more) is refused without trying to allocate it."""
    # Memory safety is the point here: the bound on peak RSS is what fails if the claimed size
    # were allocated (or zeroed) before the payload's length is checked.
    rss_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for count, dtype in [(10**12, "float64"), (2**57, "complex128"), (2**59 - 1, "int64")]:
        text = header_text(np.dtype(dtype).str, False, (count,))
        path = write_file(tmp_path, f"huge-{dtype}.npy", with_header(text, bytes(64)))
        for fn in (npyio.read_npy, lambda p, d: reader(d)(tf.constant(p))):
            err = raised(fn, path, dtype)
            assert "payload is shorter" in tf_message(err)
            assert path in tf_message(err)
        batch = [with_header(text, bytes(64))] * 3
        assert "payload is shorter" in tf_message(raised(npyio.decode_npy, batch, dtype))
    grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_kib) / 1024
    assert grown_mib < 1024, f"peak memory grew by {grown_mib:.0f} MiB"


def test_non_ascii_header_bytes_give_tf_errors_only(tmp_path):
    """Every byte value in the header, in every position class: only TF errors, no crash."""
    base = header_text("<f4", False, (2, 3))
    fn = decoder("float32")
    for i, byte in enumerate([0x00, 0x7F, 0x80, 0x9F, 0xC3, 0xE9, 0xFF]):
        for where in (1, base.index("<"), base.index("(") + 1, len(base) - 1):
            raw = base.encode()
            data = with_header(raw[:where] + bytes([byte]) + raw[where:], GOOD_ARRAY.tobytes())
            for run in (lambda d: npyio.decode_npy(d, "float32"), lambda d: fn(tf.constant(d))):
                err = raised(run, data)
                assert tf_message(err) == "<bytes>: " + npy.not_a_dict(), (i, where)
