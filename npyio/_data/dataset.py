"""``npyio.dataset``: paired ``.npy`` files as a ``tf.data`` pipeline.

`npyio._data.plan` decides everything first (files, pairs, shards, specs, strategy); this module
turns the plan into a graph with one of two builders:

- `build_batch_then_decode` (small files of static shape): the parallel map only reads files,
  like the read-only floor; whole batches of raw bytes are then decoded by one set of ops.
- `build_decode_then_batch` (large files, variable shapes, ``ignore_errors``, other backends):
  each file is read and decoded in the parallel map, then elements are batched.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import tensorflow as tf

from npyio._data.map import parallel_map
from npyio._data.paths import PathSpec
from npyio._data.plan import (
    AUTOTUNE,
    BATCH_THEN_DECODE,
    DatasetPlan,
    Spec,
    pack,
    plan_dataset,
)
from npyio._format import npy
from npyio._format.files import NO_SUCH_FILE
from npyio._format.header import Limits, make_hint
from npyio._graph.decode import Part, decode_group, report_then_assert
from npyio._graph.ops import require_tf2
from npyio._graph.zip import checked_member, npz_member
from npyio._read.backends import reader
from npyio._read.npz import read_npz_member

__all__ = ["build", "build_batch_then_decode", "build_decode_then_batch", "dataset"]


def _shape(spec: Spec) -> tf.TensorShape:
    return tf.TensorShape(spec.shape)


def _strings(paths: tuple[str, ...]) -> tf.Tensor:
    """Paths as one string tensor: one conversion, not a type spec per element."""
    try:
        return tf.constant(paths, tf.string)
    except UnicodeEncodeError:  # a file name that is not valid UTF-8: its bytes, as the OS has
        return tf.constant([os.fsencode(p) for p in paths], tf.string)


def _paths(plan: DatasetPlan) -> tf.data.Dataset:
    """The (input, label) path pairs as one dataset, shuffled when asked: a full uniform
    shuffle of the path strings only. One string tensor per part, not a Python list (which
    builds a type spec per element)."""
    columns = [_strings(column) for column in plan.columns]
    if plan.label_values is not None:
        columns.append(tf.constant(plan.label_values))
    ds = tf.data.Dataset.from_tensor_slices(tuple(columns))
    if plan.shuffle:
        ds = ds.shuffle(
            plan.count, seed=plan.seed, reshuffle_each_iteration=plan.reshuffle_each_iteration
        )
    return ds


def _element(
    plan: DatasetPlan, parts: list[tf.Tensor], rest: tuple[tf.Tensor, ...], path: tf.Tensor
) -> object:
    """One element from the decoded file parts: ``x``, ``(x, y)``, then the input's path with
    ``with_paths``; ``x`` and ``y`` take the structure of the sources (a tensor, a dict, a
    tuple); ``rest`` holds the label values, when labels are values."""
    x = pack(plan.inputs, parts[: plan.n_inputs])
    out = [x]
    if plan.labels is not None:
        out.append(pack(plan.labels, parts[plan.n_inputs :]))
    out.extend(rest)
    if plan.with_paths:
        out.append(path)
    return out[0] if len(out) == 1 else tuple(out)


def build_batch_then_decode(plan: DatasetPlan) -> tf.data.Dataset:
    """Reads files in the parallel map, batches the raw bytes, decodes whole batches."""
    specs = plan.specs

    def read_raw(path: tf.Tensor, spec: Spec) -> tuple[tf.Tensor, tf.Tensor]:
        if spec.member is None:
            return path, tf.io.read_file(path)
        name = tf.strings.join([path, "[", spec.member, "]"])
        return name, npz_member(tf.io.read_file(path), spec.member, name)

    k = len(specs)

    def read(*args: tf.Tensor) -> tuple[tf.Tensor, ...]:
        raw = tuple(t for p, spec in zip(args[:k], specs) for t in read_raw(p, spec))
        return (*raw, *args[k:], args[0])  # then the label values and the input's path

    def decode(*raw: tf.Tensor) -> object:
        parts = [
            Part(contents, names, spec.dtype, _shape(spec), spec.hint, plan.limits)
            for spec, names, contents in zip(specs, raw[: 2 * k : 2], raw[1 : 2 * k : 2])
        ]
        return _element(plan, decode_group(parts, batched=True), raw[2 * k : -1], raw[-1])

    ds = parallel_map(_paths(plan), read, plan.num_parallel_calls, plan.deterministic)
    ds = ds.batch(plan.batch_size, drop_remainder=plan.drop_remainder)
    # Whole batches keep their order, whatever ``deterministic`` says: an unordered map here
    # could deliver the short final batch before a full one, which ``map(...).batch(...)``
    # never does. Decoding a batch takes about the same time for every batch, so ordering
    # costs next to nothing.
    return parallel_map(ds, decode, plan.num_parallel_calls, deterministic=True)


def _exists(path: tf.Tensor) -> tf.Tensor:
    """Whether the file ``path`` exists, checked in the graph: ``MatchingFiles`` of a path
    without glob characters checks that one path (no directory listing: measured locally at
    about one stat, under a tenth of a millisecond). A path with any of
    ``*?[\\`` is taken to exist: as a pattern it would list its whole directory for every
    element, so a missing one is left to ``tf.io.read_file``'s error."""
    globbed = tf.strings.regex_full_match(path, r".*[*?\[\\].*")
    return tf.cond(
        globbed, lambda: tf.constant(True), lambda: tf.size(tf.io.matching_files(path)) > 0
    )


def _reporting_loader(plan: DatasetPlan) -> Callable[..., object]:
    """The map function of ``ignore_errors``: it names each file it refuses on stderr.

    TensorFlow's ``ignore_errors`` logs what it skips only through its C++ logger, which
    ``TF_CPP_MIN_LOG_LEVEL`` >= 2 silences. Here each file's verdict (exists, the archive, the
    parser) is checked in the graph and every refusal is printed to stderr by a PrintV2 op
    (`npyio._graph.decode.report_then_assert`) before the assertion fails and
    ``ignore_errors`` skips the pair. Files are read only if they exist, so a missing file is
    refused by npyio, not by ``tf.io.read_file``'s error.
    """
    specs = plan.specs
    read_file = reader(plan.backend, plan.limits, report=True)

    def graph_part(path: tf.Tensor, found: tf.Tensor, spec: Spec) -> Part:
        contents = tf.cond(found, lambda: tf.io.read_file(path), lambda: tf.constant(""))
        missing = tf.strings.join([path, ": ", NO_SUCH_FILE])
        shape = _shape(spec)
        if spec.member is None:
            precheck = (found[None], missing[None])
            return Part(
                contents[None], path[None], spec.dtype, shape, spec.hint, plan.limits, precheck
            )
        # As read_npz_member: the member's name is path[key]; its limits are the defaults.
        name = tf.strings.join([path, "[", spec.member, "]"])
        data, ok, message = checked_member(contents, spec.member, name)
        precheck = (
            tf.logical_and(found, ok)[None],
            tf.where(found, message, missing)[None],
        )
        hint = spec.hint if spec.hint is not None else make_hint(spec.dtype, shape)
        return Part(data[None], name[None], spec.dtype, shape, hint, Limits(), precheck)

    # Dataset.map would run AutoGraph over this code and over decode_group's, which take their
    # decisions in Python and build their tf.conds themselves.
    k = len(specs)

    @tf.autograph.experimental.do_not_convert
    def load(*args: tf.Tensor) -> object:
        return _element(plan, decode_files(args[:k]), args[k:], args[0])

    def decode_files(paths: tuple[tf.Tensor, ...]) -> list[tf.Tensor]:
        found = [_exists(p) for p in paths]
        if plan.backend == "graph":
            parts = [graph_part(p, f, spec) for p, f, spec in zip(paths, found, specs)]
            return decode_group(parts, batched=False, report=True)
        # tfio and py_function: npyio reports the missing files here, the backend the rest.
        missing = [tf.strings.join([p, ": ", NO_SUCH_FILE]) for p in paths]
        with tf.control_dependencies(report_then_assert(list(zip(found, missing)))):
            return [
                read_file(p, spec.dtype, _shape(spec), spec.hint) for p, spec in zip(paths, specs)
            ]

    return load


def build_decode_then_batch(plan: DatasetPlan) -> tf.data.Dataset:
    """Reads and decodes each file in the parallel map, then batches (padded if needed)."""
    specs = plan.specs
    read_file = reader(plan.backend, plan.limits)

    def read_one(path: tf.Tensor, spec: Spec) -> tf.Tensor:
        if spec.member is not None:
            return read_npz_member(path, spec.member, spec.dtype, _shape(spec), spec.hint)
        return read_file(path, spec.dtype, _shape(spec), spec.hint)

    k = len(specs)

    def load(*args: tf.Tensor) -> object:
        return _element(plan, decode_files(args[:k]), args[k:], args[0])

    def decode_files(paths: tuple[tf.Tensor, ...]) -> list[tf.Tensor]:
        if plan.backend == "graph" and all(spec.member is None for spec in specs):
            # .npy files: inputs and labels share one header fast-path cond
            parts = [
                Part(
                    tf.expand_dims(tf.io.read_file(p), 0),
                    tf.expand_dims(p, 0),
                    spec.dtype,
                    _shape(spec),
                    spec.hint,
                    plan.limits,
                )
                for p, spec in zip(paths, specs)
            ]
            return decode_group(parts, batched=False)
        return [read_one(p, spec) for p, spec in zip(paths, specs)]

    ds = _paths(plan)
    if plan.ignore_errors:
        # Dataset.map, not parallel_map: TensorFlow keeps about 1 KiB for every error a
        # single-device function raises (tests/npy/test_limits.py measures it), and here each
        # refused file is still an error, so that ignore_errors skips its pair.
        ds = ds.map(
            _reporting_loader(plan),
            num_parallel_calls=plan.num_parallel_calls,
            deterministic=plan.deterministic,
        )
        ds = ds.ignore_errors(log_warning=True)
    elif plan.backend == "py_function":
        # the classic pipeline, exactly as users write it
        ds = ds.map(
            load, num_parallel_calls=plan.num_parallel_calls, deterministic=plan.deterministic
        )
    else:
        ds = parallel_map(ds, load, plan.num_parallel_calls, plan.deterministic)
    if plan.batch_size is not None:
        if all(spec.static for spec in specs):
            ds = ds.batch(plan.batch_size, drop_remainder=plan.drop_remainder)
        else:
            ds = ds.padded_batch(plan.batch_size, drop_remainder=plan.drop_remainder)
    return ds


def build(plan: DatasetPlan) -> tf.data.Dataset:
    """The pipeline a plan describes."""
    require_tf2()
    if plan.strategy == BATCH_THEN_DECODE:
        ds = build_batch_then_decode(plan)
    else:
        ds = build_decode_then_batch(plan)
    if plan.prefetch:
        ds = ds.prefetch(plan.prefetch)
    return ds


def dataset(
    inputs: PathSpec,
    labels: PathSpec | None = None,
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
    max_header_size: int = npy.MAX_HEADER_SIZE,
    validation_split: float | None = None,
    subset: str | None = None,
    with_paths: bool = False,
) -> tf.data.Dataset | tuple[tf.data.Dataset, tf.data.Dataset]:
    """A ``tf.data.Dataset`` of ``.npy`` files (and their labels), decoded in graph mode.

    The drop-in replacement for ``map(tf.py_function(np.load))``: files are read with
    ``tf.io.read_file`` and decoded by graph ops in a parallel map, so no Python runs per
    element, the pipeline serializes, and shapes are static.

    The pipeline is: the list of (input, label) paths -> shard -> shuffle (of paths only) ->
    parallel read-and-decode -> batch (or ``padded_batch``) -> prefetch.

    Args:
        inputs: A directory (its ``*.npy`` files, sorted by name), a glob pattern, a file, or
            a sequence of paths (a list, a 1-D array or string tensor; ``str``, ``bytes`` or
            ``os.PathLike`` each). Any TensorFlow filesystem path works (``gs://``, ``ram://``,
            ...). Or a dict (or tuple) of such sources, for models with several inputs: every
            element is then a dict (tuple) of tensors, one per source, e.g.
            ``{"image": "data/img", "mask": "data/mask"}``.
        labels: Like ``inputs`` (files), or a numeric array or list with one value (or row)
            per input file, in the inputs' order, or ``None`` to yield inputs alone. All the
            file sources pair by file name when any of them is a directory or a glob, by
            position otherwise.
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
        ignore_errors: Skip a pair whose input or label file is bad instead of failing.
            Each file skipped is named on stderr, ``npyio: skipping PATH: reason``, at every
            ``TF_CPP_MIN_LOG_LEVEL`` (at levels 0 and 1 TensorFlow's own warning names it as
            well). To count the skips, compare the pairs delivered with the pairs given (see
            the example). Skipped but named only in TensorFlow's log (silent from level 2):
            a file that exists but cannot be read (a directory, no permission), a missing
            file whose path holds one of ``*?[\\``, and corrupt deflated data in an ``.npz``
            (zlib's refusal). Every backend names what it refuses.
        shard: ``(num_shards, index)`` or a ``tf.distribute.InputContext``: keep only this
            shard's files, split before anything is read. Each file goes to exactly one shard.
        key: Read member ``key`` of ``.npz`` archives instead of ``.npy`` files (directories
            then list ``*.npz``). Needs ``backend="graph"``.
        label_key: The labels' member. Without ``labels``, labels are read from the same
            archives as the inputs; with separate label archives it defaults to ``key``.
        max_file_size: Refuse (or, with ``ignore_errors``, skip) files larger than this many
            bytes; ``None`` for no limit. Every backend applies it; not supported with ``key``.
        max_header_size: Refuse headers longer than this many bytes (10,000 by default, as
            numpy), also when the first header is read to build the element spec.
        validation_split: A fraction in (0, 1) of the files to hold out, with ``subset``:
            as in Keras's ``*_dataset_from_directory``, the files are shuffled with ``seed``
            (when ``shuffle``), and the last ``int(validation_split * n)`` are the validation
            subset. The same ``seed`` gives the same split on every call; a split while
            shuffling needs a ``seed``.
        subset: ``"training"``, ``"validation"``, or ``"both"`` (a tuple of the two
            datasets), with ``validation_split``.
        with_paths: Add the input file's path as the last component of each element
            (batched like the rest): for deduplication, debugging, joining metadata. With
            nested inputs, the first input source's file.

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
            shape differs from the element spec. TensorFlow wraps npyio's ``PATH: reason``,
            which ends the message's first line: ``... ParallelMapV2: assertion failed:
            [PATH: reason]`` (its quotes and backslashes escaped by TensorFlow).
            (``tf.errors.NotFoundError`` for a file that has disappeared: ``PATH; No such file
            or directory``, in TensorFlow's words.)

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

        With ``ignore_errors=True`` a bad pair is skipped, and named on stderr; counting what
        arrives tells how many were skipped:

        >>> with tf.io.gfile.GFile("ram://doc/ds/x/1.npy", "wb") as f:
        ...     _ = f.write(b"not a .npy file")
        >>> ds = npyio.dataset("ram://doc/ds/x", "ram://doc/ds/y", ignore_errors=True)
        >>> pairs = len(tf.io.gfile.glob("ram://doc/ds/x/*.npy"))
        >>> delivered = int(ds.reduce(np.int64(0), lambda n, _: n + 1))
        >>> pairs - delivered  # stderr: npyio: skipping ram://doc/ds/x/1.npy: not a .npy file...
        1
    """
    plans = plan_dataset(
        inputs,
        labels,
        batch_size=batch_size,
        shuffle=shuffle,
        seed=seed,
        reshuffle_each_iteration=reshuffle_each_iteration,
        drop_remainder=drop_remainder,
        dtype=dtype,
        shape=shape,
        label_dtype=label_dtype,
        label_shape=label_shape,
        num_parallel_calls=num_parallel_calls,
        deterministic=deterministic,
        prefetch=prefetch,
        backend=backend,
        ignore_errors=ignore_errors,
        shard=shard,
        key=key,
        label_key=label_key,
        max_file_size=max_file_size,
        max_header_size=max_header_size,
        validation_split=validation_split,
        subset=subset,
        with_paths=with_paths,
    )
    if isinstance(plans, tuple):
        return build(plans[0]), build(plans[1])
    return build(plans)
