"""``npyio.dataset``: paired ``.npy`` files as a ``tf.data`` pipeline."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import tensorflow as tf

from npyio import _backends, _npz, _ops, _paths
from npyio import _format as F
from npyio._map import parallel_map
from npyio.errors import NpyFormatError

AUTOTUNE = tf.data.AUTOTUNE
# Files at least this large are decoded one by one (decode_raw of the whole file, then an
# aligned slice that shares its buffer) rather than as a batch of raw bytes: for them copies,
# not per-op overhead, are the cost (bench/README.md has the measurements).
_LARGE_FILE = 512 * 1024


@dataclass(frozen=True)
class _Side:
    """How to read one side (inputs or labels): dtype, static shape, and the hint header."""

    dtype: np.dtype
    shape: tf.TensorShape
    hint: _ops.Hint | None
    member: str | None = None  # the .npz member to read, or None for .npy files


def _side(
    first: str,
    dtype: object,
    shape: object,
    what: str,
    member: str | None = None,
    max_header_size: int = F.MAX_HEADER_SIZE,
) -> _Side:
    """The element dtype and static shape: from the arguments, else from ``first``'s header.

    Reads ``first``'s header (once, in Python) only if ``dtype`` or ``shape`` is missing; its
    bytes then serve as the hint for the header fast path. Otherwise the hint is the header
    numpy's writer produces for that dtype and shape.
    """
    header, raw = None, None
    if member is not None and (dtype is None or shape is None):
        header, raw = _npz.inspect_npz_prefix(first, member)
    elif dtype is None or shape is None:
        try:
            with tf.io.gfile.GFile(first, "rb") as f:
                header = F.read_header(f, first, max_header_size=max_header_size)
                f.seek(0)
                raw = f.read(header.data_offset)
        except tf.errors.NotFoundError as e:
            raise NpyFormatError(first, "no such file") from e
    dt = F.parse_dtype(header.dtype if dtype is None else dtype)  # type: ignore[union-attr]
    try:
        static = tf.TensorShape(header.shape if shape is None else shape)  # type: ignore
    except (TypeError, ValueError) as e:
        raise TypeError(f"{what}: shape must be a sequence of ints and None, got {shape!r}") from e
    hint = _ops.make_hint(dt, static, raw) or _ops.make_hint(dt, static)
    return _Side(dt, static, hint, member)


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
    key: str | None = None,
    label_key: str | None = None,
    max_file_size: int | None = None,
    max_header_size: int = F.MAX_HEADER_SIZE,
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
        deterministic: As for ``Dataset.map``: ``False`` trades the order of samples for
            speed. Batches stay full except the last one, as with ``map(...).batch(...)``.
        prefetch: Batches to prefetch (AUTOTUNE by default); ``None`` or 0 for none.
        backend: ``"graph"`` (npyio's parser) or ``"py_function"`` (``np.load`` in a
            ``tf.py_function``; not serializable, so it cannot run on tf.data service workers
            or be saved).
        ignore_errors: Skip a pair whose input or label file is bad, logging a warning that
            names the file, instead of failing.
        shard: ``(num_shards, index)`` or a ``tf.distribute.InputContext``: keep only this
            shard's files, split before anything is read. Each file goes to exactly one shard.
        key: Read member ``key`` of ``.npz`` archives instead of ``.npy`` files (directories
            then list ``*.npz``). Needs ``backend="graph"``.
        label_key: The labels' member. Without ``labels``, labels are read from the same
            archives as the inputs; with separate label archives it defaults to ``key``.
        max_file_size: Refuse (or, with ``ignore_errors``, skip) files larger than this many
            bytes; ``None`` for no limit. Not supported with ``backend="tfio"`` or ``key``.
        max_header_size: Refuse headers longer than this many bytes (10,000 by default, as
            numpy), also when the first header is read to build the element spec.

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
        >>> x_spec, y_spec = ds.element_spec
        >>> x_spec
        TensorSpec(shape=(None, 2, 2), dtype=tf.float32, name=None)
        >>> y_spec
        TensorSpec(shape=(None,), dtype=tf.int64, name=None)
        >>> [y.numpy().tolist() for _, y in ds]
        [[0, 1], [2]]
    """
    max_file_size = F.parse_limit(max_file_size, "max_file_size")
    max_header_size = F.parse_limit(max_header_size, "max_header_size", allow_none=False)
    read_file = _backends.reader(backend, max_file_size, max_header_size)
    if key is not None and max_file_size is not None:
        raise ValueError("max_file_size is not supported with key (.npz archives)")
    if key is None and label_key is not None:
        raise ValueError("label_key needs key: it names a member of .npz archives")
    if key is not None and backend != "graph":
        raise ValueError(f"key (.npz archives) needs backend='graph', got {backend!r}")
    suffix = ".npy" if key is None else ".npz"
    if batch_size is not None and (not isinstance(batch_size, int) or batch_size < 1):
        raise ValueError(f"batch_size must be a positive int or None, got {batch_size!r}")
    xs = _paths.resolve(inputs, "inputs", suffix)
    ys = None if labels is None else _paths.resolve(labels, "labels", suffix)
    if ys is None and label_key is not None:
        ys = list(xs)  # inputs and labels are members of the same archives
    elif ys is not None:
        xs, ys = _paths.pair(xs, ys, _paths.is_pattern(inputs) or _paths.is_pattern(labels))
    where = _paths.parse_shard(shard)
    if where is not None:
        xs = _paths.shard_list(xs, *where)
        ys = None if ys is None else _paths.shard_list(ys, *where)
        if not xs:
            raise ValueError(f"shard {where[1]} of {where[0]} has no files ({len(xs)} in all)")

    sides = [_side(xs[0], dtype, shape, "inputs", key, max_header_size)]
    if ys is not None:
        member = key if label_key is None else label_key
        sides.append(
            _side(ys[0], label_dtype, label_shape, "labels", member, max_header_size)
        )
    columns = [xs] if ys is None else [xs, ys]
    ds = tf.data.Dataset.from_tensor_slices(tuple(columns))
    if shuffle:
        ds = ds.shuffle(len(xs), seed=seed, reshuffle_each_iteration=reshuffle_each_iteration)
    static = all(side.shape.is_fully_defined() for side in sides)
    large = any(side.hint is None or side.hint.size >= _LARGE_FILE for side in sides)
    if batch_size is not None and static and not large and not ignore_errors and backend == "graph":
        # Batch raw bytes, then decode a whole batch with one set of ops: the per-element map is
        # just read_file, like the read-only floor.
        def read(*paths: tf.Tensor) -> tuple[tf.Tensor, ...]:
            return tuple(t for p, side in zip(paths, sides) for t in read_raw(p, side))

        def read_raw(path: tf.Tensor, side: _Side) -> tuple[tf.Tensor, tf.Tensor]:
            if side.member is None:
                return path, tf.io.read_file(path)
            name = tf.strings.join([path, "[", side.member, "]"])
            return name, _npz.npz_member(tf.io.read_file(path), side.member, name)

        def decode(*raw: tf.Tensor) -> tf.Tensor | tuple[tf.Tensor, ...]:
            parts = [
                _ops.Part(contents, names, side.dtype, side.shape, side.hint, max_header_size,
                          max_file_size)
                for side, names, contents in zip(sides, raw[::2], raw[1::2])
            ]
            out = _ops._decode_group(parts, batched=True)
            return out[0] if len(out) == 1 else tuple(out)

        ds = parallel_map(ds, read, num_parallel_calls, deterministic)
        ds = ds.batch(batch_size, drop_remainder=drop_remainder)
        # Whole batches keep their order, whatever ``deterministic`` says: an unordered map here
        # could deliver the short final batch before a full one, which ``map(...).batch(...)``
        # never does. Decoding a batch takes about the same time for every batch, so ordering
        # costs next to nothing.
        ds = parallel_map(ds, decode, num_parallel_calls, deterministic=True)
    else:
        def load(*paths: tf.Tensor) -> tf.Tensor | tuple[tf.Tensor, ...]:
            if backend == "graph" and all(side.member is None for side in sides):
                # .npy files: inputs and labels share one header fast-path cond
                parts = [
                    _ops.Part(tf.expand_dims(tf.io.read_file(p), 0), tf.expand_dims(p, 0),
                              side.dtype, side.shape, side.hint, max_header_size, max_file_size)
                    for p, side in zip(paths, sides)
                ]
                out = tuple(_ops._decode_group(parts, batched=False))
            else:
                out = tuple(read_one(p, side) for p, side in zip(paths, sides))
            return out[0] if len(out) == 1 else out

        def read_one(path: tf.Tensor, side: _Side) -> tf.Tensor:
            if side.member is not None:
                return _npz.read_npz_member(path, side.member, side.dtype, side.shape, side.hint)
            return read_file(path, side.dtype, side.shape, side.hint)

        if backend == "py_function" or ignore_errors:
            # py_function: the classic pipeline, exactly as users write it. ignore_errors:
            # TensorFlow keeps about 1 KiB for every error a single-device function raises
            # (tests/test_limits.py measures it), so where errors are expected the map stays
            # a plain Dataset.map.
            ds = ds.map(load, num_parallel_calls=num_parallel_calls, deterministic=deterministic)
        else:
            ds = parallel_map(ds, load, num_parallel_calls, deterministic)
        if ignore_errors:
            ds = ds.ignore_errors(log_warning=True)
        if batch_size is not None:
            if static:
                ds = ds.batch(batch_size, drop_remainder=drop_remainder)
            else:
                ds = ds.padded_batch(batch_size, drop_remainder=drop_remainder)
    if prefetch:
        ds = ds.prefetch(prefetch)
    return ds

