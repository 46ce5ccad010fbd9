"""`npyio.cli.peers`: the peer pipelines ``npyio bench --peers`` compares with: a peer not
installed or not known is named (with the extra to install, or the known ones), and `mallopt`
keeps freed large blocks for reuse in a worker. A peer's drain in its worker:
``test_bench.py``."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

import pytest

from npyio.cli import bench, peers


@pytest.mark.parametrize(
    ("name", "extra"), [("dali", "peers"), ("grain", "peers"), ("tfio", "tfio")]
)
def test_a_peer_that_is_not_installed_is_named_with_its_extra(name, extra, monkeypatch):
    monkeypatch.setattr(importlib.util, "find_spec", lambda module: None)
    package = peers.PEERS[name].package
    with pytest.raises(SystemExit, match=rf"--peers {name} needs {package}, which is not "
                       rf"installed: pip install 'npyio\[{extra}\]'"):  # fmt: skip
        bench.run(["small"], peer_names=[name], log=lambda m: None)


def test_an_unknown_peer_is_named_with_the_known_ones():
    with pytest.raises(SystemExit, match=r"--peers: no peer 'torch' -- expected one of \['dali', "):
        bench.run(["small"], peer_names=["torch"], log=lambda m: None)


# malloc and memset through ctypes, not numpy: numpy asks for huge pages on large arrays.
CHURN = r"""
import ctypes, json, resource
from npyio.cli import peers

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
peers.mallopt()
faults_of_churn()  # the heap grows once
print(json.dumps({"default": default, "mallopt": faults_of_churn()}))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_mallopt_keeps_freed_large_blocks_for_reuse():
    # 48 MiB blocks: past the largest mmap threshold glibc adapts to by itself (32 MiB), so
    # by default each is a fresh mmap, zero-filled page by page on first touch.
    out = subprocess.run(
        [sys.executable, "-c", CHURN], check=True, capture_output=True, text=True,
        env=bench.child_env(),
    ).stdout  # fmt: skip
    faults = json.loads(out)
    pages = 4 * (48 << 20) // 4096
    assert faults["default"] > pages // 2, faults  # a fresh mapping for each block
    assert faults["mallopt"] < pages // 20, faults  # the same heap memory, reused
