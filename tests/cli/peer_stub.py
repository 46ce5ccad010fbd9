"""A stand-in peer for tests/cli/test_bench.py: numpy only, so that the peer plumbing of
``npyio bench --peers`` (a worker per peer, its rows and ratios) is tested without DALI or
Grain installed."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import numpy as np


def drain(
    inputs: Sequence[str], labels: Sequence[str], batch_size: int
) -> Callable[[], tuple[int, float]]:
    """np.load of each pair, stacked in batches, in this (the worker's) process."""

    def run() -> tuple[int, float]:
        start = time.perf_counter()
        n = 0
        for i in range(0, len(inputs), batch_size):
            x = np.stack([np.load(p) for p in inputs[i : i + batch_size]])
            np.stack([np.load(p) for p in labels[i : i + batch_size]])
            n += len(x)
        return n, time.perf_counter() - start

    return run


def crop_drain(
    inputs: Sequence[str],
    labels: Sequence[str],
    batch_size: int,
    crop: Sequence[int] | None = None,
    crops_per_file: int = 1,
) -> Callable[[], tuple[int, float]]:
    """A cropping peer: each pair ``crops_per_file`` times, cut to a random ``crop`` window
    placed by `npyio.cli.peers`' own draw from each file's shape (refusing any other size)."""
    from npyio.cli.peers import _windows

    assert crop is not None, "the bench gives a cropping peer its crop"
    starts = _windows(inputs, crop)

    def run() -> tuple[int, float]:
        start = time.perf_counter()
        n = 0
        for _ in range(crops_per_file):
            for i, (x, y) in enumerate(zip(inputs, labels)):
                where = tuple(slice(s, s + c) for s, c in zip(starts(i), crop))
                window = np.load(x, mmap_mode="r")[where]
                assert window.shape[: len(crop)] == tuple(crop), window.shape
                assert np.load(y, mmap_mode="r")[where].shape[: len(crop)] == tuple(crop)
                n += 1
        return n, time.perf_counter() - start

    return run
