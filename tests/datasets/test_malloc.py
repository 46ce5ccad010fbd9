"""``npyio.tune_malloc``: glibc keeps freed large blocks for reuse, so a buffer allocated
again is not faulted in page by page again. Each check runs in a process of its own: the setting
holds for a whole process."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import npyio

# 48 MiB blocks: past the largest mmap threshold glibc adapts to by itself (32 MiB), so by
# default each one is a fresh mmap, zero-filled page by page on first touch.
# malloc and memset through ctypes, not numpy: numpy asks for huge pages on large arrays.
CHURN = r"""
import ctypes, json, resource
import npyio

libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]

def faults_of_churn():
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(4):
        block = libc.malloc(48 << 20)
        ctypes.memset(block, 1, 48 << 20)
        libc.free(block)
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before

default = faults_of_churn()
npyio.tune_malloc()
faults_of_churn()  # the heap grows once
print(json.dumps({"default": default, "tuned": faults_of_churn()}))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_tune_malloc_reuses_freed_large_blocks():
    out = subprocess.run(
        [sys.executable, "-c", CHURN], check=True, capture_output=True, text=True
    ).stdout
    faults = json.loads(out)
    pages = 4 * (48 << 20) // 4096
    assert faults["default"] > pages // 2, faults  # a fresh mapping for each block
    assert faults["tuned"] < pages // 20, faults  # the same heap memory, reused


@pytest.mark.parametrize(
    ("name", "value"),
    [("mmap_threshold", -1), ("trim_threshold", 2**31), ("top_pad", 1.5)],
    ids=["negative", "past-c-int", "float"],
)
def test_tune_malloc_refuses_values_that_are_no_c_int(name, value):
    with pytest.raises(ValueError, match=rf"tune_malloc: {name} -- expected an int in \[0, "):
        npyio.tune_malloc(**{name: value})
