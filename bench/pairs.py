"""The small-file profile the bench scripts read: ``root/inputs/NNNNNN.npy`` (float32 arrays,
every element the pair's number) and ``root/labels/NNNNNN.npy`` (int64 scalars)."""

from __future__ import annotations

import os
import shutil

import numpy as np

#: The small-file profile of ``npyio bench``: 16x16 float32 inputs, scalar int64 labels.
PAIRS, SHAPE = 8000, (16, 16)


def write_pairs(root: str | os.PathLike[str], pairs: int, shape: tuple[int, ...] = SHAPE) -> None:
    """``pairs`` pairs of files under ``root``."""
    xs, ys = os.path.join(root, "inputs"), os.path.join(root, "labels")
    os.makedirs(xs, exist_ok=True)
    os.makedirs(ys, exist_ok=True)
    for i in range(pairs):
        np.save(os.path.join(xs, f"{i:06d}.npy"), np.full(shape, i, np.float32))
        np.save(os.path.join(ys, f"{i:06d}.npy"), np.int64(i))


def ensure_pairs(root: str, pairs: int = PAIRS) -> tuple[str, str]:
    """The inputs and labels directories of `write_pairs` under ``root``, written once (a
    cache kept between runs; a half-written one is written again)."""
    xs, ys = os.path.join(root, "inputs"), os.path.join(root, "labels")
    done = os.path.join(root, f".done-{pairs}-{'x'.join(map(str, SHAPE))}")
    if not os.path.exists(done):
        shutil.rmtree(xs, ignore_errors=True)
        shutil.rmtree(ys, ignore_errors=True)
        write_pairs(root, pairs)
        open(done, "w").close()
    return xs, ys
