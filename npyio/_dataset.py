"""``npyio.dataset``: paired ``.npy`` files as a ``tf.data`` pipeline."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from npyio import _backends, _paths
from npyio import _format as F
from npyio._inspect import inspect

AUTOTUNE = tf.data.AUTOTUNE


def _spec(
    first: str, dtype: object, shape: object, what: str
) -> tuple[np.dtype, tf.TensorShape]:
    """The element dtype and static shape: from the arguments, else from ``first``'s header."""
    header = None
    if dtype is None or shape is None:
        header = inspect(first)
    dt = F.parse_dtype(header.dtype if dtype is None else dtype)  # type: ignore[union-attr]
    try:
        static = tf.TensorShape(header.shape if shape is None else shape)  # type: ignore
    except (TypeError, ValueError) as e:
        raise TypeError(f"{what}: shape must be a sequence of ints and None, got {shape!r}") from e
    return dt, static


def dataset(
    inputs: _paths.PathSpec,
    labels: _paths.PathSpec | None = None,
    *,
    batch_size: int | None = None,
    shuffle: bool = False,
    seed: int | None = None,
    reshuffle_each_iteration: bool = True,
    drop_remainder: bool = False,
    dtype: object = None,
    shape: object = None,
    label_dtype: object = None,
    label_shape: object = None,
    num_parallel_calls: int | None = AUTOTUNE,
    deterministic: bool | None = None,
    prefetch: int | None = AUTOTUNE,
    backend: str = "graph",
    ignore_errors: bool = False,
    shard: object = None,
) -> tf.data.Dataset:
    """A ``tf.data.Dataset`` of ``.npy`` files (and their labels), decoded in graph mode.

    The drop-in replacement for ``map(tf.py_function(np.load))``: files are read with
    ``tf.io.read_file`` and decoded by graph ops in a parallel map, so no Python runs per
    element, the pipeline serializes, and shapes are static.

    The pipeline is: the list of (input, label) paths -> shard -> shuffle (of paths only) ->
    parallel read-and-decode -> batch (or ``padded_batch``) -> prefetch.

    Args:
        inputs: A directory (its ``*.npy`` files, sorted by name), a glob pattern, or a sequence
            of paths. Any TensorFlow filesystem path works (``gs://``, ``ram://``, ...).
        labels: Like ``inputs``, or ``None`` to yield inputs alone. Directories and globs pair
            with the inputs by file name; sequences pair by position.
        batch_size: Yield batches of this size; ``None`` yields single elements.
        shuffle: Shuffle the file list each epoch with a buffer that holds the whole list: a
            full uniform shuffle in which only the path strings sit in memory.
        seed: Shuffle seed. The same seed gives the same sequence of epoch orders.
        reshuffle_each_iteration: Give each epoch a new order (when shuffling).
        drop_remainder: Drop the last, smaller batch, which makes the batch dim static.
        dtype: The inputs' dtype (a ``tf.DType``, numpy dtype or string). With ``shape``
            also given, no file is read when the dataset is built.
        shape: The inputs' shape; ``None`` dims allow variable sizes, and batches are then
            padded with zeros to the largest element (``padded_batch``).
        label_dtype: The labels' dtype, as ``dtype``.
        label_shape: The labels' shape, as ``shape``.
        num_parallel_calls: Files read and decoded in parallel (AUTOTUNE by default).
        deterministic: Passed to ``Dataset.map``; ``False`` trades order for speed.
        prefetch: Batches to prefetch (AUTOTUNE by default); ``None`` or 0 for none.
        backend: ``"graph"`` (npyio's parser) or ``"py_function"`` (``np.load`` in a
            ``tf.py_function``; not serializable, so it cannot run on tf.data service workers
            or be saved).
        ignore_errors: Skip a pair whose input or label file is bad, logging a warning that
            names the file, instead of failing.
        shard: ``(num_shards, index)`` or a ``tf.distribute.InputContext``: keep only this
            shard's files, split before anything is read. Each file goes to exactly one shard.

    Returns:
        A dataset of ``x`` or ``(x, y)``, batched when ``batch_size`` is set.

    Raises:
        ValueError: When the dataset is built: no files found, inputs and labels that do not
            pair (names on one side only, the first ten named; sequences of unequal length),
            a bad ``shard``, ``batch_size`` or ``backend``.
        NpyFormatError: When the dataset is built, if ``dtype`` or ``shape`` (or their label
            counterparts) are not given and the first file's header is bad. This reads one
            header per side, in Python.
        TypeError: When the dataset is built, for an unsupported dtype or a bad shape.
        tf.errors.InvalidArgumentError: When iterated, for a bad file or one whose dtype or
            shape differs from the element spec; the message starts with the file's path.
            (``tf.errors.NotFoundError`` for a file that has disappeared.)

    Example:
        >>> import numpy as np, npyio, tensorflow as tf
        >>> for i in range(3):
        ...     for side, value in (("x", np.full((2, 2), i, "float32")), ("y", np.int64(i))):
        ...         with tf.io.gfile.GFile(f"ram://doc/ds/{side}/{i}.npy", "wb") as f:
        ...             np.save(f, value)
        >>> ds = npyio.dataset("ram://doc/ds/x", "ram://doc/ds/y", batch_size=2)
        >>> ds.element_spec
        (TensorSpec(shape=(None, 2, 2), dtype=tf.float32, name=None), TensorSpec(shape=(None,), dtype=tf.int64, name=None))
        >>> [y.numpy().tolist() for _, y in ds]
        [[0, 1], [2]]
    """
    read = _backends.reader(backend)
    if batch_size is not None and (not isinstance(batch_size, int) or batch_size < 1):
        raise ValueError(f"batch_size must be a positive int or None, got {batch_size!r}")
    xs = _paths.resolve(inputs, "inputs")
    ys = None if labels is None else _paths.resolve(labels, "labels")
    if ys is not None:
        xs, ys = _paths.pair(xs, ys, _paths.is_pattern(inputs) or _paths.is_pattern(labels))
    where = _paths.parse_shard(shard)
    if where is not None:
        xs = _paths.shard_list(xs, *where)
        ys = None if ys is None else _paths.shard_list(ys, *where)
        if not xs:
            raise ValueError(f"shard {where[1]} of {where[0]} has no files ({len(xs)} in all)")

    x_dt, x_shape = _spec(xs[0], dtype, shape, "inputs")
    if ys is None:
        ds = tf.data.Dataset.from_tensor_slices(xs)

        def load(x: tf.Tensor) -> tf.Tensor:
            return read(x, x_dt, x_shape)
    else:
        y_dt, y_shape = _spec(ys[0], label_dtype, label_shape, "labels")
        ds = tf.data.Dataset.from_tensor_slices((xs, ys))

        def load(x: tf.Tensor, y: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:  # type: ignore[misc]
            return read(x, x_dt, x_shape), read(y, y_dt, y_shape)

    if shuffle:
        ds = ds.shuffle(
            len(xs), seed=seed, reshuffle_each_iteration=reshuffle_each_iteration
        )
    ds = ds.map(load, num_parallel_calls=num_parallel_calls, deterministic=deterministic)
    if ignore_errors:
        ds = ds.ignore_errors(log_warning=True)
    if batch_size is not None:
        if ds.element_spec and _fully_defined(ds.element_spec):
            ds = ds.batch(batch_size, drop_remainder=drop_remainder)
        else:
            ds = ds.padded_batch(batch_size, drop_remainder=drop_remainder)
    if prefetch:
        ds = ds.prefetch(prefetch)
    return ds


def _fully_defined(spec: object) -> bool:
    return all(s.shape.is_fully_defined() for s in tf.nest.flatten(spec))
