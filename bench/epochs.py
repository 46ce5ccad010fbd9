"""Short epochs: each epoch's time to its last batch and to its iterator's end, over many epochs,
for npyio's default parallelism (AUTOTUNE) and for parallelisms set without autotune (issue 41).

Deleting a tf.data iterator usually takes 0-1 ms, but sometimes waits tens of milliseconds,
apparently for autotune's next optimization tick. On a short epoch that wait is a large share
of the epoch. This script measures it in npyio's own pipelines, two ways:

- ``loop``: ``it = iter(ds)``, every batch read by ``next``, then ``del it``: "last" is the
  time to the last batch, "end" adds the ``StopIteration`` and the iterator's deletion.
  ``gc.collect()`` runs before each epoch, outside the timed part.
- ``fit``: Keras ``model.fit`` of a tiny model (flatten, one dense layer), as users train.
  Callbacks time each epoch from ``on_epoch_begin`` to the last ``on_train_batch_end``
  ("last") and to ``on_epoch_end`` ("end"). Keras 3 makes the next epoch's iterator when an
  epoch has seen all its batches, but ``fit``'s loop variable still holds the old one until
  the next epoch's first step: the old iterator is deleted between the next
  ``on_epoch_begin`` and its first ``on_train_batch_begin``. That gap is the "wait" of
  ``fit``; the "wait" of ``loop`` is from the last batch to the end.

Configurations (``npyio.dataset(inputs, labels, batch_size=32)`` with the native reader,
which is the default on local files of one static shape):

- ``default``: ``num_parallel_calls`` and ``prefetch`` AUTOTUNE, with tf.data's autotune on
  (set in the options: npyio's default before its native pipelines turned it off);
- ``cores``: ``num_parallel_calls`` = the cores, ``prefetch=2``: a parallelism the plan could
  set (autotune on, with nothing left for it to tune);
- ``cores+off``: the same with ``tf.data.Options().autotune.enabled = False``;
- ``default+off``: AUTOTUNE arguments with autotune off (tf.data then picks fixed values).

Each (configuration, mode) runs in a fresh process, interleaved (their order rotated each
round: ``bench/fresh.py``) over ``--rounds`` rounds. The first epoch of each process (graph tracing,
first iterator) is reported apart and left out of the medians.

    PYTHONPATH=. .venv/bin/python bench/epochs.py --rounds 3
    PYTHONPATH=. .venv/bin/python bench/epochs.py --child default fit --root DIR --epochs 20
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import tempfile
import time
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # also when loaded by its path
from fresh import interleaved

PAIRS, SHAPE, BATCH, CLASSES = 2000, (16, 16), 32, 10
CONFIGS = ("default", "cores", "cores+off", "default+off")
MODES = ("loop", "fit")
#: An iterator's end more than this long after its last batch counts as a wait.
WAIT_MS = 5.0


def ensure(root: str) -> tuple[str, str]:
    """``PAIRS`` pairs under ``root``: 16x16 float32 inputs, int64 labels in ``[0, CLASSES)``,
    written once."""
    xs, ys = os.path.join(root, "inputs"), os.path.join(root, "labels")
    done = os.path.join(root, f".done-{PAIRS}")
    if not os.path.exists(done):
        os.makedirs(xs, exist_ok=True)
        os.makedirs(ys, exist_ok=True)
        rng = np.random.default_rng(0)
        for i in range(PAIRS):
            np.save(os.path.join(xs, f"{i:06d}.npy"), rng.random(SHAPE, np.float32))
            np.save(os.path.join(ys, f"{i:06d}.npy"), np.int64(i % CLASSES))
        open(done, "w").close()
    return xs, ys


def build(config: str, xs: str, ys: str) -> Any:
    """The configuration's dataset."""
    import tensorflow as tf

    import npyio

    cores = os.cpu_count() or 1
    kwargs: dict[str, Any] = {"batch_size": BATCH}
    if config.startswith("cores"):
        kwargs.update(num_parallel_calls=cores, prefetch=2)
    ds = npyio.dataset(xs, ys, **kwargs)
    options = tf.data.Options()  # set either way: npyio's native pipelines turn it off
    options.autotune.enabled = not config.endswith("+off")
    return ds.with_options(options)


def child(config: str, mode: str, root: str, epochs: int) -> dict[str, Any]:
    """One process's epochs: lists of milliseconds to the last batch and to the end."""
    xs, ys = ensure(root)
    ds = build(config, xs, ys)
    last: list[float] = []
    end: list[float] = []
    wait: list[float] = []
    if mode == "loop":
        for _ in range(epochs):
            gc.collect()
            start = time.perf_counter()
            it = iter(ds)
            for _batch in it:
                t_last = time.perf_counter()
            del it
            t_end = time.perf_counter()
            last.append((t_last - start) * 1e3)
            end.append((t_end - start) * 1e3)
            wait.append((t_end - t_last) * 1e3)
    else:
        import keras

        marks: dict[str, float] = {}

        class Times(keras.callbacks.Callback):
            def on_epoch_begin(self, epoch: int, logs: Any = None) -> None:
                marks["begin"] = time.perf_counter()

            def on_train_batch_begin(self, batch: int, logs: Any = None) -> None:
                if batch == 0:
                    wait.append((time.perf_counter() - marks["begin"]) * 1e3)

            def on_train_batch_end(self, batch: int, logs: Any = None) -> None:
                marks["last"] = time.perf_counter()

            def on_epoch_end(self, epoch: int, logs: Any = None) -> None:
                now = time.perf_counter()
                last.append((marks["last"] - marks["begin"]) * 1e3)
                end.append((now - marks["begin"]) * 1e3)

        model = keras.Sequential(
            [keras.Input(SHAPE), keras.layers.Flatten(), keras.layers.Dense(CLASSES)]
        )
        model.compile(
            "adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True), jit_compile=False
        )
        model.fit(ds, epochs=epochs, verbose=0, callbacks=[Times()], shuffle=False)
    return {"config": config, "mode": mode, "last": last, "end": end, "wait": wait}


def summary(runs: list[dict[str, Any]]) -> dict[str, float]:
    """Medians over the runs' epochs after the first, and the waits over `WAIT_MS`."""
    last = [x for r in runs for x in r["last"][1:]]
    tail = [x for r in runs for x in r["wait"][1:]]
    return {
        "last_ms": statistics.median(last),
        "end_ms": statistics.median([r["end"][i] for r in runs for i in range(1, len(r["end"]))]),
        "tail_median_ms": statistics.median(tail),
        "tail_max_ms": max(tail),
        "waits": sum(t > WAIT_MS for t in tail),
        "epochs": len(tail),
        "first_ms": statistics.median([r["end"][0] for r in runs]),
        "samples_per_s": PAIRS / (statistics.median(last) / 1e3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--child", nargs=2, metavar=("CONFIG", "MODE"))
    parser.add_argument("--root", default=os.path.join(tempfile.gettempdir(), "npyio-epochs"))
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--configs", nargs="+", default=list(CONFIGS), choices=CONFIGS)
    parser.add_argument("--modes", nargs="+", default=list(MODES), choices=MODES)
    parser.add_argument("--json", help="also write the raw epochs here")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(*args.child, args.root, args.epochs)))
        return
    ensure(args.root)
    variants = [(config, mode) for config in args.configs for mode in args.modes]
    runs = interleaved(
        __file__, variants, args.rounds, ["--root", args.root, "--epochs", str(args.epochs)]
    )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(runs, f)
    print(f"{PAIRS} pairs {SHAPE} float32, batch {BATCH}, {args.epochs} epochs x {args.rounds}")
    print("| mode | config | to last batch (ms) | to end (ms) | wait, median / max (ms) "
          f"| waits > {WAIT_MS:g} ms | first epoch (ms) | samples/s to last batch |")  # fmt: skip
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for mode in args.modes:
        for config in args.configs:
            s = summary([x for x in runs if x["config"] == config and x["mode"] == mode])
            print(
                f"| {mode} | {config} | {s['last_ms']:.1f} | {s['end_ms']:.1f} | "
                f"{s['tail_median_ms']:.1f} / {s['tail_max_ms']:.1f} | "
                f"{s['waits']} of {s['epochs']} | {s['first_ms']:.0f} | {s['samples_per_s']:,.0f} |"
            )


if __name__ == "__main__":
    main()
