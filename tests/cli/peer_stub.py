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
