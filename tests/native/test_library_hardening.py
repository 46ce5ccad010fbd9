"""The native ops where sizes and memory run out (``npyio/_native/src/op.cc``, ``remote.cc``):
a shape whose file passes int64 is refused where the op is built; a range is checked against
its file before anything is allocated for it; an allocation that fails is an error of the op
(or a doubt), never the end of the process; remote reads' 64 MiB buffers stay within the
process's budget, and a buffer that cannot be had is counted and worked around, not silent.

Memory is made to run out in a child process, under an address-space limit (``RLIMIT_AS``)
set just above what it uses once warm."""

from __future__ import annotations

import io
import json
import textwrap

import numpy as np
import pytest
import tensorflow as tf

from npyio._native import library
from tests._npy_testing import run_python
from tests.native.conftest import CACHE

MiB = 1 << 20
BYPASS = 64 * MiB + 1  # remote.h's kBlockBypass


def _bytes(array: np.ndarray) -> bytes:
    out = io.BytesIO()
    np.save(out, array)
    return out.getvalue()


def _header(data: bytes) -> bytes:
    return data[: 10 + int.from_bytes(data[8:10], "little")]


@pytest.mark.parametrize(
    ("shape", "dtype"),
    [((1 << 61,), tf.float64), ((1 << 31, 1 << 31), tf.complex128), ((1 << 62,), tf.int16)],
    ids=["2**61-float64", "2**62-complex128", "2**62-int16"],
)
def test_a_shape_whose_file_passes_int64_is_refused_where_the_op_is_built(
    native_ops, tmp_path, shape, dtype
):
    """Elements times itemsize used to wrap (2**61 float64: a payload of 0 bytes)."""
    data = _bytes(np.zeros(0, "f8"))
    (tmp_path / "a.npy").write_bytes(data)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"is too large: its file would pass"):
        library.read_files(tf.constant([str(tmp_path / "a.npy")]), dtype, shape, _header(data))


def test_a_range_is_checked_against_its_file_before_it_is_allocated(native_ops, tmp_path):
    """A range of 2**62 bytes that the plan says a file of 2**62 bytes holds: the file (100
    bytes) is doubted before its string is sized, where the op used to allocate first (and a
    string's failed malloc wrote through a null pointer)."""
    path = tmp_path / "small.bin"
    path.write_bytes(bytes(100))
    values, ok = library.read_ranges(
        tf.constant([str(path), str(path)]),
        tf.constant([0, 0], tf.int64),
        tf.constant([1 << 62, 10], tf.int64),
        tf.constant([1 << 62, 100], tf.int64),
    )
    assert ok.numpy().tolist() == [False, True] and values.numpy().tolist() == [b"", bytes(10)]


def _limited(*parts: str, env: dict[str, str] | None = None):
    """``code`` in a child with the op loaded, after ``warm()`` (which it defines), under an
    address-space limit 48 MiB above what the warm process maps."""
    prelude = """
        import resource, tensorflow as tf
        from npyio._native import library
        def limit(extra):
            for line in open("/proc/self/status"):
                if line.startswith("VmSize:"):
                    size = int(line.split()[1]) * 1024
            resource.setrlimit(resource.RLIMIT_AS, (size + extra, resource.RLIM_INFINITY))
    """
    env = {"NPYIO_CACHE": str(CACHE), "NPYIO_NATIVE": "1", **(env or {})}
    code = "".join(textwrap.dedent(part.lstrip("\n")) for part in (prelude, *parts))
    done = run_python(code, env)
    assert done.returncode == 0, (done.returncode, done.stdout, done.stderr[-3000:])
    return done


def test_a_range_that_finds_no_memory_is_an_error_naming_the_file(native_ops, tmp_path):
    """A sparse file of 1 TiB holds the range, so the check passes; its 1 TiB cannot be had."""
    path = tmp_path / "sparse.bin"
    with open(path, "wb") as f:
        f.truncate(1 << 40)
    done = _limited(f"""
        path = {str(path)!r}
        def ranges(length):
            return library.read_ranges(tf.constant([path]), tf.constant([0], tf.int64),
                tf.constant([length], tf.int64), tf.constant([1 << 40], tf.int64))
        ranges(4)
        limit(48 << 20)
        try:
            ranges(1 << 40)
            print("no error")
        except tf.errors.ResourceExhaustedError as e:
            print(e.message)
        print(ranges(4)[1].numpy().tolist())  # the process goes on
    """)
    error, after = done.stdout.splitlines()
    assert f"{path}: out of memory for 1099511627776 bytes at byte 0 (NpyioReadRanges)" in error
    assert after == "[True]"


def test_a_path_that_cannot_be_copied_is_doubted_not_the_end_of_the_process(native_ops, tmp_path):
    """A 256 MiB path: its copy throws std::bad_alloc under the limit, which used to end the
    process (an exception out of a kernel); now that file is doubted."""
    data = _bytes(np.arange(4, dtype="f4"))
    (tmp_path / "a.npy").write_bytes(data)
    done = _limited(f"""
        good = {str(tmp_path / "a.npy")!r}
        paths = tf.constant([good, "/" + "a" * (256 << 20), good])
        header = {_header(data)!r}
        library.read_files(paths[:1], tf.float32, [4], header)
        limit(48 << 20)
        values, ok = library.read_files(paths, tf.float32, [4], header)
        print(ok.numpy().tolist(), values.numpy()[2].tolist())
    """)
    assert done.stdout.splitlines() == ["[True, False, True] [0.0, 1.0, 2.0, 3.0]"]


_REMOTE = """
    import numpy as np, io, uuid
    root = f"ram://hardening-{uuid.uuid4().hex[:8]}"
    tf.io.gfile.makedirs(root)
    out = io.BytesIO()
    np.save(out, np.arange(16, dtype="f4"))
    data = out.getvalue()
    paths = []
    for i in range(32):
        with tf.io.gfile.GFile(f"{root}/{i}.npy", "wb") as f:
            f.write(data)
        paths.append(f"{root}/{i}.npy")
    def read():
        values, ok = library.read_files(tf.constant(paths), tf.float32, [16],
                                        data[: 10 + int.from_bytes(data[8:10], "little")])
        assert values.numpy().tolist() == [list(range(16))] * 32
        return ok.numpy().all()
"""


def test_remote_buffers_stay_within_the_budget(native_ops):
    """With a budget of 64 MiB (below one 64 MiB + 1 buffer), 32 objects read at once on the
    op's pool go one at a time: the most held at once is one buffer."""
    done = _limited(
        _REMOTE,
        """
        import json
        ok = read()
        print(json.dumps([bool(ok), library.remote_stats()]))
    """,
        env={"NPYIO_REMOTE_BUFFER_MIB": "64"},
    )
    ok, stats = json.loads(done.stdout)
    assert ok and stats["reads"] == 32 and stats["budget_bytes"] == 64 * MiB
    assert stats["peak_bytes"] == BYPASS and stats["bypass_failed"] == stats["unallocated"] == 0


def test_a_remote_buffer_that_cannot_be_had_is_counted_and_read_with_a_smaller_one(native_ops):
    """Under the limit, 64 MiB + 1 cannot be allocated: each object is read with a buffer of
    its own size, every one good, and counted; the process's log says it once."""
    done = _limited(
        _REMOTE,
        """
        read()
        before = library.remote_stats()
        limit(48 << 20)
        ok = read()
        after = library.remote_stats()
        print(ok, after["bypass_failed"] - before["bypass_failed"], after["unallocated"])
    """,
        env={"NPYIO_REMOTE_BUFFER_MIB": "", "TF_CPP_MIN_LOG_LEVEL": "0"},  # the default budget
    )
    assert done.stdout.split() == ["True", "32", "0"]
    told = [line for line in done.stderr.splitlines() if "could not allocate" in line]
    assert len(told) == 1 and "a remote read could not allocate 67108865 bytes" in told[0]
