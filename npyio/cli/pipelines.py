"""Reference pipelines that npyio is measured against, and a way to drain a pipeline.

``py_function_pipeline`` is the classic approach exactly as users write it;
``generator_pipeline`` is the other one users build when they want tf.data over ``np.load``
(``Dataset.from_generator``, optionally several generators interleaved); ``floor_pipeline`` reads
every byte of both files and decodes nothing, the floor no decoder can beat. ``numpy_loop`` is
no pipeline at all: numpy's own reader in one Python thread, for scale only. ``native_loop`` is
none either: the native reader's own C++ read loop (`npyio._native.library.build_driver`) over
the same files, outside TensorFlow, on every core: what tf.data still costs above it.

``py_function_pipeline``, ``floor_pipeline`` and ``numpy_loop`` also take ``labels=None`` (inputs
alone) and paths on any TensorFlow file system (``gs://``: opened with ``tf.io.gfile``, as a user's
py_function would), so that ``npyio bench INPUTS [LABELS]`` measures a user's own files with them.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence

import numpy as np
import tensorflow as tf

from npyio._format.files import is_local
from npyio._io.files import open_read
from npyio._read.py_function import np_load

AUTOTUNE = tf.data.AUTOTUNE


def _parts(inputs: Sequence[str], labels: Sequence[str] | None) -> tuple[list[str], ...]:
    """The path lists a pipeline slices: inputs, and labels unless there are none."""
    return (list(inputs),) if labels is None else (list(inputs), list(labels))


def load_path(path: str, mmap: bool = False) -> np.ndarray:
    """``np.load`` of a path: by name locally (mapped, with ``mmap``: only the pages a crop
    touches are read), through ``tf.io.gfile`` elsewhere (numpy opens no ``gs://``)."""
    if is_local(path):
        return np_load(path, mmap_mode="r") if mmap else np_load(path)
    with open_read(path) as f:
        return np_load(f)


def py_function_pipeline(
    inputs: Sequence[str],
    labels: Sequence[str] | None,
    input_shape: Sequence[int | None],
    label_shape: Sequence[int | None] | None,
    batch_size: int = 8,
    dtypes: Sequence[tf.DType] = (tf.float32, tf.float32),
    crop: Sequence[int] | None = None,
    label_crop: Sequence[int] | str | None = "same",
    mmap: bool = False,
) -> tf.data.Dataset:
    """``tf.py_function(np.load)`` in a parallel map, then batch and prefetch.

    Elements are ``(input, label)``, or the input alone when ``labels`` is None; ``dtypes``
    are theirs (the input's first). With ``crop`` (sizes along the leading axes), each input
    is cut to a random window in numpy after its load, as a user's py_function would crop,
    and each label to the same window (``label_crop="same"``), a window of its own (sizes)
    or not at all (None); with ``mmap`` too, local files are mapped (``np.load(mmap_mode="r")``)
    and only the window is copied out, the best a py_function does for crops. Shapes with
    None dims are batched with ``padded_batch``.
    """
    parts = _parts(inputs, labels)
    shapes = [input_shape, label_shape][: len(parts)]
    tout = list(dtypes[: len(parts)])

    def load(*paths: tf.Tensor) -> list[np.ndarray]:
        arrays = [load_path(p.numpy().decode(), mmap) for p in paths]
        return arrays if crop is None else _cropped(arrays, crop, label_crop)

    def set_shapes(*tensors: tf.Tensor) -> tuple[tf.Tensor, ...] | tf.Tensor:
        for t, shape in zip(tensors, shapes):
            t.set_shape(shape)
        return tensors if len(tensors) > 1 else tensors[0]

    ds = tf.data.Dataset.from_tensor_slices(parts)
    ds = ds.map(lambda *p: tuple(tf.py_function(load, p, tout)), num_parallel_calls=AUTOTUNE)
    ds = ds.map(set_shapes)
    varies = any(d is None for shape in shapes if shape is not None for d in shape)
    return (ds.padded_batch if varies else ds.batch)(batch_size).prefetch(AUTOTUNE)


def _cropped(
    arrays: list[np.ndarray], crop: Sequence[int], label_crop: Sequence[int] | str | None
) -> list[np.ndarray]:
    """The input cut to a random ``crop`` window; the label (if any) to the same window, one
    of its own, or whole (see `py_function_pipeline`)."""
    rng = np.random.default_rng()  # one per call: the parallel map's threads share no state
    x, origin = random_window(arrays[0], crop, rng)
    if len(arrays) == 1 or label_crop is None:
        return [x, *arrays[1:]]
    if isinstance(label_crop, str):  # "same": the input's window
        return [x, random_window(arrays[1], crop, rng, origin)[0]]
    return [x, random_window(arrays[1], label_crop, rng)[0]]


def random_window(
    array: np.ndarray,
    sizes: Sequence[int],
    rng: np.random.Generator,
    origin: Sequence[int] | None = None,
) -> tuple[np.ndarray, list[int]]:
    """A window of ``sizes`` along ``array``'s leading axes, at ``origin`` or a random one
    that fits, as a contiguous copy; and its origin.

    Raises:
        ValueError: a window larger than the array, naming both shapes.

    Example:
        >>> a = np.arange(12).reshape(3, 4)
        >>> random_window(a, (2, 2), np.random.default_rng(), origin=(1, 2))[0].tolist()
        [[6, 7], [10, 11]]
    """
    if any(s > d for s, d in zip(sizes, array.shape)) or len(sizes) > array.ndim:
        raise ValueError(f"a crop of {tuple(sizes)} does not fit an array of shape {array.shape}")
    if origin is None:
        origin = [int(rng.integers(0, d - s + 1)) for d, s in zip(array.shape, sizes)]
    index = tuple(slice(o, o + s) for o, s in zip(origin, sizes))
    return np.ascontiguousarray(array[index]), list(origin)


def generator_pipeline(
    inputs: Sequence[str],
    labels: Sequence[str],
    input_shape: Sequence[int],
    label_shape: Sequence[int],
    batch_size: int = 8,
    generators: int = 1,
) -> tf.data.Dataset:
    """``Dataset.from_generator`` over ``np.load`` of each pair, then batch and prefetch.

    With ``generators=1`` it is the plain form. With ``generators=k > 1`` it is the parallel
    form users reach for: ``Dataset.range(k).interleave(...)`` over k generators, generator
    ``i`` loading pairs ``i, i + k, i + 2k, ...``, run in parallel (``num_parallel_calls=k``).
    The interleave stays deterministic and takes one element from each generator in turn, so
    the pairs come out in the order given, as from every other pipeline here.

    Beware: after a from_generator pipeline has run, tf.data pipelines that run later in the
    same process can be slower, and ``gc.collect()`` does not reliably undo it; ``npyio bench``
    runs these in a worker process (bench/README.md, "Isolating from_generator", has the
    measurements).
    """
    pairs = list(zip(inputs, labels))
    signature = (
        tf.TensorSpec(tuple(input_shape), tf.float32),
        tf.TensorSpec(tuple(label_shape), tf.float32),
    )

    def load(shard: Sequence[tuple[str, str]]) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        for x, y in shard:
            yield np_load(x), np_load(y)

    if generators == 1:
        ds = tf.data.Dataset.from_generator(lambda: load(pairs), output_signature=signature)
    else:

        def shard(i: tf.Tensor) -> tf.data.Dataset:
            # from_generator hands ``args`` to the generator as numpy values.
            return tf.data.Dataset.from_generator(
                lambda j: load(pairs[int(j) :: generators]),
                args=(i,),
                output_signature=signature,
            )

        ds = tf.data.Dataset.range(generators).interleave(
            shard, cycle_length=generators, num_parallel_calls=generators
        )
    return ds.batch(batch_size).prefetch(AUTOTUNE)


def floor_pipeline(
    inputs: Sequence[str], labels: Sequence[str] | None, batch_size: int = 8
) -> tf.data.Dataset:
    """``read_file`` of both files (the input alone when ``labels`` is None) reduced to
    ``tf.strings.length``: all I/O, no decoding. Each element is the bytes read for a sample."""

    def read(*paths: tf.Tensor) -> tf.Tensor:
        return tf.add_n([tf.strings.length(tf.io.read_file(p)) for p in paths])

    ds = tf.data.Dataset.from_tensor_slices(_parts(inputs, labels))
    ds = ds.map(read, num_parallel_calls=AUTOTUNE)
    return ds.batch(batch_size).prefetch(AUTOTUNE)


def numpy_loop(inputs: Sequence[str], labels: Sequence[str] | None) -> int:
    """``np.load`` of every pair (every input when ``labels`` is None) in a plain Python loop;
    returns the number of samples.

    Not a tf.data alternative: no pipeline, no batching, no parallelism, no tensors; numpy
    reads each file straight into its own array. It shows what numpy's reader alone costs.
    """
    n = 0
    for paths in zip(*_parts(inputs, labels)):
        for path in paths:
            load_path(path)
        n += 1
    return n


def native_loop(
    driver: str, inputs: Sequence[str], labels: Sequence[str] | None, threads: int
) -> tuple[int, float, int]:
    """The native kernel's own read loop (``driver bench THREADS LIST``, the bench driver of
    `npyio._native.library.build_driver`) over the inputs, then over the labels, each with
    ``threads`` threads: no tf.data, no tensors, one output buffer per thread reused for every
    file. Returns the number of samples, the seconds the driver timed its two loops (its start
    and the list's reading not counted) and its peak RSS in bytes (the larger of its two
    runs).

    Raises:
        RuntimeError: the driver failed, or read a file it doubted (the sample files are all
            valid: a doubt means the figure would not be a read of every file), naming the
            list.
    """
    total, peak = 0.0, 0
    with tempfile.TemporaryDirectory(prefix="npyio-bare-") as tmp:
        for side, paths in zip(("inputs", "labels"), _parts(inputs, labels)):
            listing = os.path.join(tmp, side)
            with open(listing, "w") as f:
                f.write("".join(f"{p}\n" for p in paths))
            seconds, rss = _run_driver(driver, threads, listing, len(paths))
            total += seconds
            peak = max(peak, rss)
    return len(inputs), total, peak


def _run_driver(driver: str, threads: int, listing: str, count: int) -> tuple[float, int]:
    """One ``driver bench``: the seconds it timed, and its peak RSS in bytes as last seen in
    ``/proc/PID/status`` (``VmHWM``, polled while it runs; 0 where there is no ``/proc`` or it
    ended before the first look). Not ``wait4``'s ``ru_maxrss``: Linux counts in it the
    parent's memory at the fork, a whole TensorFlow process."""
    with tempfile.TemporaryFile(mode="w+") as out:
        proc = subprocess.Popen(
            [driver, "bench", str(threads), listing], stdout=out, stderr=subprocess.STDOUT
        )
        peak = 0
        while proc.poll() is None:
            peak = max(peak, _high_water(proc.pid))
            time.sleep(0.001)
        out.seek(0)
        text = out.read()
    words = text.split()
    fields = dict(zip(words[::2], words[1::2]))
    if proc.returncode != 0 or fields.get("ok") != str(count):
        raise RuntimeError(
            f"{listing}: the native bench driver exited {proc.returncode} and read "
            f"{fields.get('ok', 'no')} of {count} files: {text.strip()[-500:]}"
        )
    return float(fields["seconds"]), peak


def _high_water(pid: int) -> int:
    """``VmHWM`` of process ``pid`` in bytes; 0 where it cannot be read (gone, no /proc)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return 0


def drain(ds: tf.data.Dataset) -> tuple[int, float]:
    """Iterates ``ds`` once with ``Dataset.reduce`` (no Python per batch).

    Returns (number of samples, seconds). Samples are counted along the first element's
    leading (batch) dimension.
    """

    def count(total: tf.Tensor, element: object) -> tf.Tensor:
        first = tf.nest.flatten(element)[0]
        return total + tf.cast(tf.shape(first)[0], tf.int64)

    start = time.perf_counter()
    n = int(ds.reduce(tf.constant(0, tf.int64), count).numpy())
    return n, time.perf_counter() - start


def iterate(ds: tf.data.Dataset) -> tuple[int, float]:
    """Iterates ``ds`` once with a new Python iterator, as ``model.fit`` reads each epoch and
    as DALI's and Grain's own loops run: unlike `drain`, it does not redo tf.data's graph
    rewrites each time (tens of ms, which a short epoch of a user's files would be mostly), at
    a Python step per batch.

    Returns (number of samples, seconds), samples counted along the first element's leading
    (batch) dimension.
    """
    start = time.perf_counter()
    n = sum(int(tf.nest.flatten(batch)[0].shape[0]) for batch in ds)
    return n, time.perf_counter() - start


#: How a bench drains a tf.data pipeline (``npyio bench --drain``): `drain` (``Dataset.reduce``)
#: or `iterate` (a new Python iterator per epoch).
DRAINS: dict[str, Callable[[tf.data.Dataset], tuple[int, float]]] = {
    "reduce": drain,
    "iterator": iterate,
}


def evict(paths: Sequence[str]) -> None:
    """Drops the local files ``paths`` from the page cache (``posix_fadvise(DONTNEED)``, after
    writing back what is dirty, which it cannot drop), so that the next epoch reads the disk:
    ``npyio bench --cold``. The kernel may keep a page that another process maps."""
    for path in dict.fromkeys(paths):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fdatasync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
