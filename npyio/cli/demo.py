"""``npyio demo``: a sample dataset through `npyio.dataset`, against the py_function pipeline,
saying which reader read it (the native one, or the graph path and why) and, where the native
reader read, the graph path's speed beside it."""

from __future__ import annotations

import argparse
import dataclasses
import os

import tensorflow as tf

import npyio
from npyio.cli import pipelines, sample

__all__ = ["command"]

_GRAPH, _PY_FUNCTION = "npyio graph", "py_function(np.load)"


def command(args: argparse.Namespace) -> int:
    """``npyio demo``: generate the sample dataset (once) and stream it through npyio.

    Writes ``args.count`` pairs (`npyio.cli.sample.DEMO`) under ``args.cache``, prints the
    dataset's element spec, first batch and the reader that read it (`reader_line`), then
    drains one epoch of npyio, one of npyio's graph path where the native reader read, and one
    of the py_function pipeline, files already in the page cache, and prints their rates and
    ratios, with the machine's cores and load average (`load`).
    """
    profile = dataclasses.replace(sample.DEMO, count=args.count)
    root = sample.ensure(profile, args.cache)
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
    backend = reader(inputs, labels, args.batch_size)
    print(reader_line(backend))
    name = f"npyio {backend}"
    runs = {name: ds}
    if name != _GRAPH:  # the graph path's speed beside the native reader's
        graph = npyio.dataset(inputs, labels, batch_size=args.batch_size, backend="graph")
        next(iter(graph))  # as ``ds`` above: its functions traced before the timed epoch
        runs[_GRAPH] = graph
    before = _load_average()
    rates = _one_epoch_each(profile, root, runs, args.batch_size)
    if name != _GRAPH:
        print(f"  {name} / graph path: {rates[name] / rates[_GRAPH]:.2f}x")
    ratio = rates[name] / rates[_PY_FUNCTION]
    print(f"  npyio / py_function: {ratio:.2f}x ({load(before, _load_average())})")
    return 0


def reader(inputs: str, labels: str, batch_size: int) -> str:
    """The backend that `npyio.dataset`'s plan reads ``inputs`` and ``labels`` with, by
    default: the native reader where it serves them and can be had here, else its fallback."""
    from npyio._pipeline.options import DatasetOptions, LoaderOptions
    from npyio._read.backends import usable
    from npyio._sources.plan import DatasetPlan, plan

    planned = plan(inputs, labels, DatasetOptions(loader=LoaderOptions(batch_size=batch_size)))
    assert isinstance(planned, DatasetPlan)  # loose files, one subset
    return usable(planned.backend)


def reader_line(backend: str) -> str:
    """What the demo says of the reader that read.

    Example:
        >>> print(reader_line("native"))
        reader: native (npyio's C++ reader: each batch of files straight into one tensor)
    """
    if backend == "native":
        return "reader: native (npyio's C++ reader: each batch of files straight into one tensor)"
    from npyio._native import status

    why = status().reason
    return f"reader: {backend}" + (f" (the native reader is off: {why})" if why else "")


def _load_average() -> float | None:
    """The 1-minute load average, or None where the system has none (Windows)."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return None


def load(before: float | None, after: float | None) -> str:
    """The cores and the 1-minute load average before and after the timed epochs, without which
    the ratio of two timings cannot be read: npyio's pipeline uses every core, the py_function
    one mostly one (the GIL), so other work on the cores moves the ratio. The figure after
    includes the demo's own threads; the one before is mostly other work's."""
    cores = os.cpu_count() or "?"
    if before is None or after is None:
        return f"{cores} cores, load average unknown"
    return f"{cores} cores, 1-min load average {before:.2f} before the epochs, {after:.2f} after"


def _one_epoch_each(
    profile: sample.Profile, root: str, runs: dict[str, tf.data.Dataset], batch_size: int
) -> dict[str, float]:
    """Drains one epoch of each of ``runs`` and one of the py_function pipeline over the same
    files, printing a line for each; returns samples/s by name."""
    xs, ys = sample.paths(profile, root)
    baseline = pipelines.py_function_pipeline(
        xs, ys, profile.input_shape, profile.label_shape, batch_size
    )
    # One read-only pass first, so that both pipelines find the files in the page cache
    # (otherwise whichever runs first pays for the disk).
    pipelines.drain(pipelines.floor_pipeline(xs, ys, batch_size))
    print(f"\none epoch, batches of {batch_size} (files already in the page cache):")
    rates = {}
    for name, pipeline in {**runs, _PY_FUNCTION: baseline}.items():
        n, seconds = pipelines.drain(pipeline)
        rates[name] = n / seconds
        mb = n * profile.pair_bytes / seconds / 1e6
        print(
            f"  {name:<22} {n:>7,} samples  {seconds:6.2f} s  {n / seconds:>9,.0f} samples/s"
            f"  {mb:>7,.0f} MB/s"
        )
    return rates
