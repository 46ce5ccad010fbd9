"""A pack against the same loose files, shuffled or not, with a validation split or without.

The profile is scikit-learn's digits (no sklearn needed): 1,797 pairs of 8x8 float64 inputs
and int64 scalar labels, written as ``inputs/NNNN.npy`` and ``labels/NNNN.npy`` and packed
with `npyio.pack`. Each cell times an epoch as Keras's ``fit`` reads it (a new iterator,
drained in a compiled loop: ``bench/pack.py``'s `epoch_times`), pack and loose files
alternating in every round; medians of ``--rounds`` epochs after a warm-up, to the
iterator's end and to the last batch, and the ratio pack/loose of the times (below 1: the
pack is faster). The cells:

- ``shuffle`` True or False, ``validation_split`` 0.2 (``subset="training"``, ``seed=1``) or
  none, through the public API;
- ``random subset``: unshuffled, the training rows of a seeded random split of 0.2 in
  ascending order, which is what an unshuffled split reads once the subset depends only on
  the seed (the loose files: the list of those files; the pack: `plan_subset` of those rows).

    .venv/bin/python bench/pack_split.py --rounds 7 --batch 32 8

bench/README.md ("A split of a pack") records the results.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)  # this checkout's npyio, not an installed one
sys.path.insert(0, os.path.join(ROOT, "bench"))  # also when loaded by its path (tests/bench)
from pack import drain_iterator, epoch_times  # noqa: E402  (bench/, the script's own directory)

#: The digits profile: 1,797 pairs of 8x8 float64, int64 labels.
DIGITS, SHAPE = 1797, (8, 8)
SPLIT, SEED = 0.2, 1


def ensure(root: str, count: int = DIGITS) -> tuple[str, str, str]:
    """The inputs, labels and pack directories under ``root``, written once (a half-written
    tree is written again)."""
    import npyio

    xs, ys, out = (os.path.join(root, d) for d in ("inputs", "labels", "packed"))
    done = os.path.join(root, f".done-{count}")
    if not os.path.exists(done):
        rng = np.random.default_rng(0)
        for d in (xs, ys):
            os.makedirs(d, exist_ok=True)
        for i in range(count):
            np.save(os.path.join(xs, f"{i:04d}.npy"), rng.integers(0, 17, SHAPE).astype("f8"))
            np.save(os.path.join(ys, f"{i:04d}.npy"), np.int64(i))  # the pair's id
        npyio.pack(xs, ys, out=out, overwrite=True)
        open(done, "w").close()
    return xs, ys, out


def random_subset(count: int) -> np.ndarray:
    """The training rows of a seeded random split, ascending."""
    order = np.random.RandomState(SEED).permutation(count)
    return np.sort(order[: count - int(SPLIT * count)])


def pipelines(xs: str, ys: str, out: str, batch: int) -> dict[str, tuple[object, object]]:
    """(loose, pack) per cell."""
    import npyio
    from npyio._pipeline.loader import load
    from npyio._pipeline.options import DatasetOptions
    from npyio._sources.dataset import packed_source
    from npyio._sources.pack_plan import plan_packed, plan_subset

    cells: dict[str, tuple[object, object]] = {}
    for shuffle in (False, True):
        for split in (None, SPLIT):
            kw: dict[str, object] = dict(batch_size=batch, shuffle=shuffle, seed=SEED)
            if split is not None:
                kw.update(validation_split=split, subset="training")
            order = "shuffled" if shuffle else "unshuffled"
            cells[f"{order}, {f'split {split}' if split else 'no split'}"] = (
                npyio.dataset(xs, ys, **kw),
                npyio.dataset(out, **kw),
            )
    names = sorted(os.listdir(xs))
    rows = random_subset(len(names))
    loose = npyio.dataset(
        [os.path.join(xs, names[i]) for i in rows],
        [os.path.join(ys, names[i]) for i in rows],
        batch_size=batch,
    )
    options = DatasetOptions.from_arguments({"batch_size": batch})
    whole = plan_packed(out, options)
    assert not isinstance(whole, tuple)
    subset = plan_subset(whole.index, whole.rows.sides, rows, options)
    cells["unshuffled, random subset 0.8"] = (
        loose,
        load(packed_source(dataclasses.replace(whole, rows=subset))),
    )
    return cells


def measure(root: str, count: int, rounds: int, batches: list[int]) -> dict[str, object]:
    """Median seconds per epoch of each cell's loose files and pack, and their ratio."""
    xs, ys, out = ensure(root, count)
    result: dict[str, object] = {"pairs": count, "rounds": rounds}
    for batch in batches:
        cells = pipelines(xs, ys, out, batch)
        # per cell and side: (to the last batch, to the iterator's end) of every epoch
        seconds: dict[str, dict[str, list[tuple[float, float]]]] = {
            c: {"loose": [], "pack": []} for c in cells
        }
        for cell, (loose, pack) in cells.items():  # warm-up: page cache, tracing, first run
            assert drain_iterator(loose)[0] == drain_iterator(pack)[0], cell
        for r in range(rounds):  # pack and loose alternate, in turns
            for cell, (loose, pack) in cells.items():
                pair = [("loose", loose), ("pack", pack)]
                for side, ds in pair if r % 2 == 0 else pair[::-1]:
                    seconds[cell][side].append(epoch_times(ds)[1:])
        table = {}
        for cell, times in seconds.items():
            row = {}
            for i, until in enumerate((" to last batch", " to iterator end")):
                loose_s, pack_s = (
                    statistics.median(t[i] for t in times[k]) for k in ("loose", "pack")
                )
                row[f"loose ms{until}"] = round(loose_s * 1e3, 1)
                row[f"pack ms{until}"] = round(pack_s * 1e3, 1)
                row[f"pack/loose{until}"] = round(pack_s / loose_s, 2)
            table[cell] = row
        result[f"batch {batch}"] = table
    return result


def rows_read(root: str, count: int, batch: int) -> dict[str, tuple[int, int]]:
    """(loose, pack) rows of one epoch per cell: what the smoke test checks."""
    xs, ys, out = ensure(root, count)
    return {
        cell: (drain_iterator(loose)[0], drain_iterator(pack)[0])
        for cell, (loose, pack) in pipelines(xs, ys, out, batch).items()
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--batch", type=int, nargs="+", default=[32, 8])
    parser.add_argument("--count", type=int, default=DIGITS)
    parser.add_argument(
        "--cache", default=os.path.join(tempfile.gettempdir(), "npyio-bench-pack-split")
    )
    args = parser.parse_args(argv)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    print(json.dumps(measure(args.cache, args.count, args.rounds, args.batch), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
