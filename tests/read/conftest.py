"""The conformance files every reader of ``tests/read/`` is held to (`CASES`): numpy-written."""

from __future__ import annotations

import numpy as np
import pytest

from tests._npy_testing import CASES, npy_bytes, sample, write_file


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("conformance")
    out = {}
    for i, case in enumerate(CASES):
        dtype, shape, fortran, version = case
        arr = sample(dtype, shape, seed=i)
        if fortran:
            arr = np.asfortranarray(arr)
        out[case] = (write_file(root, f"{i}.npy", npy_bytes(arr, version)), arr)
    return out
