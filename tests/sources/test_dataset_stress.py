"""Nothing lost: 5,000 pairs through ``npyio.dataset`` with a parallel, unordered map, a full
shuffle, ``ignore_errors=True`` and a handful of corrupt files of every kind, over three epochs.

Every good pair arrives exactly once per epoch, matched with its own label; every corrupt file
is named in TensorFlow's ignore_errors warning once per epoch (logged by its C++ logger to
stderr, which ``TF_CPP_MIN_LOG_LEVEL=1`` from conftest.py keeps); nothing else is skipped.
"""

from __future__ import annotations

import math
import os
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

import npyio
from tests._npy_testing import header_text, npy_bytes, with_header

N = 5_000
EPOCHS = 3
BATCH = 32
SHAPE = (4,)
OFFSETS = np.array([0.0, 0.25, 0.5, 0.75], np.float32)  # input i holds i + OFFSETS


def _x(i: int) -> np.ndarray:
    return (np.float32(i) + OFFSETS).astype("<f4")


X_HEADER = npy_bytes(_x(0))[: -_x(0).nbytes]
Y_HEADER = npy_bytes(np.int64(0))[:-8]
X_PAYLOAD = 16

#: kind of corruption -> (side it spoils, function of (i, good bytes) -> bad bytes, or None for
#: a file that is missing). Three of each are sprinkled among the 5,000.
CORRUPTIONS = {
    "truncated": ("x", lambda i, good: good[: len(good) - 5]),
    "truncated-in-header": ("x", lambda i, good: good[:40]),
    "empty": ("x", lambda i, good: b""),
    "bad-magic": ("x", lambda i, good: b"\x93NUMPX" + good[6:]),
    "lying-header-short": (
        "x",
        lambda i, good: with_header(header_text("<f4", False, (400,)), _x(i).tobytes()),
    ),
    "lying-header-trailing": (
        "x",
        lambda i, good: with_header(header_text("<f4", False, (2,)), _x(i).tobytes()),
    ),
    "wrong-dtype": ("x", lambda i, good: npy_bytes(_x(i).astype("<f8"))),
    "wrong-shape": ("x", lambda i, good: npy_bytes(np.resize(_x(i), (2, 2)))),
    "bad-header-text": ("x", lambda i, good: good.replace(b"'descr'", b"'dtype'")),
    "missing-label": ("y", None),
    "bad-label": ("y", lambda i, good: good[:-3]),
    "label-wrong-dtype": ("y", lambda i, good: npy_bytes(np.int32(i))),
}
PER_KIND = 3


@pytest.fixture(scope="module")
def stress_files(tmp_path_factory) -> tuple[list[str], list[str], dict[int, str], list[int]]:
    """(input paths, label paths, {corrupt id: its bad path}, good ids)."""
    root = tmp_path_factory.mktemp("stress")
    (root / "x").mkdir()
    (root / "y").mkdir()
    rng = np.random.default_rng(20261130)
    # pair 0 stays good: its header gives the element spec when none is declared
    chosen = 1 + rng.choice(N - 1, size=len(CORRUPTIONS) * PER_KIND, replace=False)
    spoil = {int(i): kind for i, kind in zip(chosen, np.repeat(list(CORRUPTIONS), PER_KIND))}
    xs, ys, bad = [], [], {}
    for i in range(N):
        x_path, y_path = root / "x" / f"{i:05d}.npy", root / "y" / f"{i:05d}.npy"
        x_bytes = X_HEADER + _x(i).tobytes()
        y_bytes = Y_HEADER + np.int64(i).astype("<i8").tobytes()
        kind = spoil.get(i)
        if kind is not None:
            side, damage = CORRUPTIONS[kind]
            target = x_path if side == "x" else y_path
            bad[i] = str(target)
            if side == "x":
                x_bytes = damage(i, x_bytes)  # type: ignore[misc]
            elif damage is None:
                y_bytes = None  # missing: never written
            else:
                y_bytes = damage(i, y_bytes)
        x_path.write_bytes(x_bytes)
        if y_bytes is not None:
            y_path.write_bytes(y_bytes)
        xs.append(str(x_path))
        ys.append(str(y_path))
    good = [i for i in range(N) if i not in bad]
    return xs, ys, bad, good


def _warnings(err: str) -> list[str]:
    """The skip lines (one per skipped element): npyio's, for the files its native reader
    doubted and the parser refused (``npyio: skipping PATH: reason``), and the warnings
    TensorFlow's ignore_errors logged for the rest."""
    ours = re.findall(r"^npyio: skipping (.*)$", err, re.M)
    return ours + re.findall(r"Error raised with error message (.*)", err)


SPEC = {"dtype": "float32", "shape": SHAPE, "label_dtype": "int64", "label_shape": ()}


@pytest.mark.parametrize(
    "options",
    [
        {**SPEC, "num_parallel_calls": 4, "deterministic": False},
        {"num_parallel_calls": tf.data.AUTOTUNE},  # spec from pair 0's headers
    ],
    ids=["declared-spec-unordered", "inferred-spec-autotune"],
)
def test_every_good_pair_once_per_epoch_every_bad_file_named(stress_files, capfd, options):
    if os.environ.get("TF_CPP_MIN_LOG_LEVEL", "0") not in ("0", "1"):
        pytest.skip("TensorFlow's warnings are hidden (TF_CPP_MIN_LOG_LEVEL >= 2)")
    xs, ys, bad, good = stress_files
    ds = npyio.dataset(
        xs, ys, batch_size=BATCH, shuffle=True, seed=7, ignore_errors=True, **options
    )
    assert ds.element_spec == (
        tf.TensorSpec((None, *SHAPE), tf.float32),
        tf.TensorSpec((None,), tf.int64),
    )
    # the batch count is known only once the bad pairs are skipped: assert it as it is produced
    ds = ds.apply(tf.data.experimental.assert_cardinality(math.ceil(len(good) / BATCH)))
    capfd.readouterr()

    orders = []
    for _ in range(EPOCHS):
        delivered: list[int] = []
        for x, y in ds:
            x, y = x.numpy(), y.numpy()
            assert x.dtype == np.float32 and x.shape[1:] == SHAPE
            expected = y[:, None].astype(np.float32) + OFFSETS  # each input with its own label
            np.testing.assert_array_equal(x, expected)
            delivered.extend(int(v) for v in y)
        counts = Counter(delivered)
        assert len(delivered) == len(good), f"{len(good) - len(delivered)} good pairs lost"
        assert set(counts) == set(good), sorted(set(good) ^ set(counts))[:20]
        assert max(counts.values()) == 1, [i for i, c in counts.items() if c > 1][:20]
        orders.append(delivered)
    assert orders[0] != orders[1] != orders[2], "each epoch should have its own order"

    logged = _warnings(capfd.readouterr().err)
    # one warning per corrupt pair per epoch, each naming that pair's bad file, and no other
    assert len(logged) == EPOCHS * len(bad), (len(logged), EPOCHS * len(bad), logged[:5])
    named = Counter()
    for line in logged:
        hits = [i for i, path in bad.items() if path in line]
        assert len(hits) == 1, line
        named[hits[0]] += 1
    assert named == Counter({i: EPOCHS for i in bad})
    good_names = {Path(xs[i]).name for i in good[:50]}  # spot check: no good file is named
    assert not any(name in line for line in logged for name in good_names)


def test_the_corruptions_are_each_refused(stress_files):
    """Each kind of damage is an error of its own, so the stress test skips them for the right
    reason: without ignore_errors, each corrupt pair is an error naming its bad file, and
    iteration goes on to the next pair."""
    xs, ys, bad, _ = stress_files
    ids = sorted(bad)
    ds = npyio.dataset(
        [xs[i] for i in ids], [ys[i] for i in ids], num_parallel_calls=4, batch_size=None, **SPEC
    )
    it = iter(ds)
    for i in ids:
        with pytest.raises((tf.errors.InvalidArgumentError, tf.errors.NotFoundError)) as info:
            next(it)
        assert bad[i] in info.value.message, (i, info.value.message[:300])
    with pytest.raises(StopIteration):
        next(it)
