"""``npyio demo``: a sample dataset through `npyio.dataset`, against the py_function pipeline."""

from __future__ import annotations

import argparse
import os

__all__ = ["run"]


def run(args: argparse.Namespace) -> int:
    """``npyio demo``: generate the sample dataset (once) and stream it through npyio."""
    import tensorflow as tf

    import npyio
    from npyio.cli import pipelines as _pipelines
    from npyio.cli import sample as _sample

    profile = _sample.Profile("demo", (64, 64, 3), (10,), args.count)
    root = _sample.ensure(profile, args.cache)
    inputs, labels = os.path.join(root, "inputs"), os.path.join(root, "labels")
    ds = npyio.dataset(inputs, labels, batch_size=args.batch_size)
    assert isinstance(ds, tf.data.Dataset)  # one dataset: no subset='both'
    x, y = next(iter(ds))
    print(f"dataset: {profile.count:,} pairs in {root}")
    print(f"element_spec: {ds.element_spec}")
    print(
        f"first batch: inputs {tuple(x.shape)} {x.dtype.name}, labels {tuple(y.shape)} "
        f"{y.dtype.name}"
    )

    xs = sorted(tf.io.gfile.glob(os.path.join(inputs, "*.npy")))
    ys = sorted(tf.io.gfile.glob(os.path.join(labels, "*.npy")))
    baseline = _pipelines.py_function_pipeline(
        xs, ys, profile.input_shape, profile.label_shape, args.batch_size
    )
    # One read-only pass first, so that both pipelines find the files in the page cache
    # (otherwise whichever runs first pays for the disk).
    _pipelines.drain(_pipelines.floor_pipeline(xs, ys, args.batch_size))
    print(f"\none epoch, batches of {args.batch_size} (files already in the page cache):")
    results = {}
    for name, pipeline in (("npyio", ds), ("py_function(np.load)", baseline)):
        n, seconds = _pipelines.drain(pipeline)
        results[name] = n / seconds
        mb = n * profile.pair_bytes / seconds / 1e6
        print(
            f"  {name:<22} {n:>7,} samples  {seconds:6.2f} s  {n / seconds:>9,.0f} samples/s"
            f"  {mb:>7,.0f} MB/s"
        )
    ratio = results["npyio"] / results["py_function(np.load)"]
    print(f"  npyio / py_function: {ratio:.2f}x")
    return 0
