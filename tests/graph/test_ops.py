"""npyio._graph.ops: the shared graph helpers."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

import npyio
from tests._npy_testing import npy_bytes, write_file


def test_tf1_style_graphs_are_refused_clearly(tmp_path):
    # In a TF1-style graph `tensor == value` compares identities, so npyio's checks would be
    # wrong there: every entry point says so when it is built instead.
    path = write_file(tmp_path, "a.npy", npy_bytes(np.zeros((2, 2), np.float32)))
    calls = {
        "decode_npy": lambda: npyio.decode_npy(tf.constant(b"x"), "float32", (2, 2)),
        "read_npy": lambda: npyio.read_npy(path, "float32", (2, 2)),
        "dataset": lambda: npyio.dataset([path], batch_size=2),
        "rows": lambda: npyio.rows(path),
        "read_npz": lambda: npyio.read_npz(path, "x", "float32"),
    }
    for name, call in calls.items():
        with tf.Graph().as_default(), pytest.raises(RuntimeError, match="TF1-style graphs"):
            call()
            pytest.fail(name)
    assert npyio.read_npy(path, "float32", (2, 2)).shape == (2, 2)  # eager again: fine
