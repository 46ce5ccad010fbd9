"""bench/scale.py on a few pairs: the files it writes, and the two datasets it times."""

from __future__ import annotations

import os

import numpy as np

from tests.bench import load


def test_scale_writes_the_pairs_once_and_both_datasets_hold_them(tmp_path):
    scale = load("scale")
    xs, ys = scale.ensure(str(tmp_path), 10)
    names = sorted(os.listdir(xs))
    assert names == [f"{i:07d}.npy" for i in range(10)] == sorted(os.listdir(ys))
    assert np.load(os.path.join(xs, names[0])).shape == (4,)
    assert np.load(os.path.join(ys, names[0])).shape == ()
    assert scale.ensure(str(tmp_path), 10) == (xs, ys)  # done: nothing written again

    pairs = [(x.decode(), y.decode()) for x, y in scale.bare(xs, ys).as_numpy_iterator()]
    assert sorted(pairs) == [(os.path.join(xs, n), os.path.join(ys, n)) for n in names]
    batches = list(scale.build(xs, ys))
    assert sum(len(x) for x, _ in batches) == 10
    assert batches[0][0].shape[1:] == (4,) and batches[0][1].shape[1:] == ()
