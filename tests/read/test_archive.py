"""`npyio._read.archive`: `decode_npz` takes a member from an archive's bytes by the same
`GraphReader` steps as `read_npz` takes it from a path, and checks its arguments when built.
(The archives it reads and refuses: ``tests/graph/test_zip.py``.)"""

from __future__ import annotations

import functools

import numpy as np
import pytest
import tensorflow as tf

import npyio
from tests._npy_testing import assert_same
from tests._npz_testing import npz_bytes, write


def test_decode_npz_and_read_npz_share_the_graph_readers_member_step(tmp_path, monkeypatch):
    """One read path: `decode_npz` (bytes) and `read_npz` (a path) both take the member with
    `GraphReader.take_member`, and decode it with `GraphReader.decode`."""
    from npyio._read.part import GraphReader

    calls = []
    for step in ("take_member", "decode"):
        real = getattr(GraphReader, step)
        monkeypatch.setattr(
            GraphReader, step, functools.partialmethod(_recording, real, calls, step)
        )
    data = npz_bytes({"x": np.arange(3)}, True)
    assert_same(npyio.decode_npz(data, "x", tf.int64), np.arange(3))
    assert calls == ["take_member", "decode"]
    assert_same(npyio.read_npz(write(tmp_path / "a.npz", data), "x", tf.int64), np.arange(3))
    assert calls == ["take_member", "decode"] * 2


def _recording(self, real, calls, step, *args, **kwargs):
    calls.append(step)
    return real(self, *args, **kwargs)


def test_bad_arguments():
    with pytest.raises(TypeError, match="unsupported dtype"):
        npyio.decode_npz(b"", "x", "U4")
    with pytest.raises(ValueError, match="key"):
        npyio.decode_npz(b"", "", tf.int64)
    with pytest.raises(ValueError, match="scalar"):
        npyio.decode_npz([b"", b""], "x", tf.int64)
