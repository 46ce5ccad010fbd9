"""Planning a dataset: which files, what every element loads as, and how to build the graph.

Plain Python: this module imports no TensorFlow, and its plans are plain values that tests
check without it. `npyio.dataset` is ``build(plan_dataset(...))``; ``npyio verify`` applies the
very same `derive_spec` and `Spec.reason` to every file, so that it passes exactly the files
``dataset`` delivers.

- **Spec.** Each part of an element (the inputs, the labels) has a `Spec`: a dtype and a
  (possibly partial) shape, from the arguments, else from the first file's header. Arguments
  that contradict that header are refused when the dataset is built, naming the file.
- **Check.** Every file must have the spec's dtype and a shape the spec's shape matches
  (``None`` dims match any size): `Spec.reason`, the same rule the graph parser applies.
- **Strategy.** `choose_strategy` picks one of the two graph builders of `npyio._data.dataset`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from npyio._data.paths import (
    GLOB_CHARS,
    PathSpec,
    isdir,
    pair,
    pair_parts,
    parse_shard,
    resolve,
    shard_list,
)
from npyio._format import npy
from npyio._format.header import Checked, Hint, Limits, make_hint, read_header
from npyio._format.npz import inspect_npz_prefix, label
from npyio.errors import NpyFormatError

__all__ = [
    "AUTOTUNE",
    "BACKENDS",
    "BATCH_THEN_DECODE",
    "DECODE_THEN_BATCH",
    "DatasetPlan",
    "Spec",
    "check_split",
    "choose_strategy",
    "derive_spec",
    "plan_dataset",
]

#: ``tf.data.AUTOTUNE``, without importing TensorFlow.
AUTOTUNE = -1
BACKENDS = ("graph", "tfio", "py_function")
#: Batch the raw bytes, then decode a whole batch with one set of ops (small files).
BATCH_THEN_DECODE = "batch-then-decode"
#: Decode file by file in the parallel map, then batch (large files, variable shapes, errors).
DECODE_THEN_BATCH = "decode-then-batch"
#: Files at least this large are decoded one by one (decode_raw of the whole file, then an
#: aligned slice that shares its buffer) rather than as a batch of raw bytes: for them copies,
#: not per-op overhead, are the cost (bench/README.md has the measurements).
LARGE_FILE = 512 * 1024


@dataclass(frozen=True)
class Spec:
    """What one part of every element loads as: a dtype (native order) and a shape whose
    ``None`` dims match any size (``shape=None``: any shape). ``hint`` is the header that
    files are expected to share, for the graph's fast path; ``member`` the ``.npz`` member."""

    dtype: np.dtype
    shape: tuple[int | None, ...] | None
    hint: Hint | None = None
    member: str | None = None

    @property
    def static(self) -> bool:
        """Whether every element has the same shape (batches need no padding)."""
        return self.shape is not None and all(d is not None for d in self.shape)

    def reason(self, header: npy.NpyHeader, path: str) -> str | None:
        """Why a file with ``header`` does not load as this spec (None: it does)."""
        try:
            npy.check_declared(header, self.dtype, self.shape, path)
        except NpyFormatError as e:
            return e.reason
        return None


def _cast_hint(what: str, arg: str, want: np.dtype, paired: bool) -> str:
    """How to get ``want`` from files of another dtype: read them as they are, then cast the
    part that ``what`` names (and only it) in a map over the dataset's elements."""
    cast = f"tf.cast({'x' if what == 'inputs' else 'y'}, tf.{want.name})"
    if not paired:
        fn = f"lambda x: {cast}"
    elif what == "inputs":
        fn = f"lambda x, y: ({cast}, y)"
    else:
        fn = f"lambda x, y: (x, {cast})"
    return (
        f"; to load the {what} as {want.name}, leave {arg} out (it is read from the files) "
        f"and cast: ds = ds.map({fn})"
    )


def _castable(want: np.dtype, got: np.dtype) -> bool:
    """Whether a user who asks for ``want`` from files of ``got`` plausibly wants a cast:
    numbers (and bools) to numbers, except complex to real, which drops the imaginary part."""
    numeric = want.kind in "biufc" and got.kind in "biufc"
    return numeric and not (got.kind == "c" and want.kind != "c")


def _contradiction(
    header: npy.NpyHeader,
    dtype: np.dtype | None,
    shape: tuple[int | None, ...] | None,
    what: str,
    path: str,
    paired: bool,
) -> NpyFormatError | None:
    """The build-time error for a ``dtype``/``shape`` argument the first header contradicts:
    ``"{path}: dtype mismatch -- expected label_dtype=int64, got float32; ..."``."""
    prefix = "" if what == "inputs" else "label_"
    got = header.dtype.newbyteorder("=")
    if dtype is not None and got != dtype:
        reason = npy.dtype_mismatch(f"{prefix}dtype={dtype.name}", got.name)
        if _castable(dtype, got):
            reason += _cast_hint(what, f"{prefix}dtype", dtype, paired)
        return NpyFormatError(path, reason)
    if shape is not None:
        mismatch = Spec(got, shape).reason(header, path)
        if mismatch is not None:
            return NpyFormatError(
                path, mismatch.replace(" -- expected ", f" -- expected {prefix}shape=", 1)
            )
    return None


def derive_spec(
    first: str,
    dtype: object = None,
    shape: object = None,
    what: str = "inputs",
    *,
    member: str | None = None,
    limits: Limits = Limits(),
    paired: bool | None = None,
) -> Spec:
    """The spec of one part: ``dtype`` and ``shape`` from the arguments, else from ``first``'s
    header, read once, in Python. When both are given no file is read (every file is checked
    against them as it is decoded); otherwise the given one is checked against the header now,
    and the header's bytes serve as the fast path's hint. ``paired`` says whether elements
    are ``(x, y)`` pairs, for the cast an error suggests (default: only for labels).

    Raises:
        NpyFormatError: naming ``first``: its header is bad, or it contradicts the ``dtype`` or
            ``shape`` given (with a hint on how to cast, for a dtype).
        TypeError: for an unsupported dtype or a bad shape.
    """
    dt = None if dtype is None else npy.parse_dtype(dtype)
    dims = npy.parse_shape(shape)
    if dt is not None and shape is not None:
        return Spec(dt, dims, make_hint(dt, dims), member)
    if member is None:
        checked: Checked = read_header(first, limits)
        header, prefix = checked.raise_if_bad(), checked.prefix
    else:
        header, prefix = inspect_npz_prefix(first, member)
    where = first if member is None else label(first, member)
    paired = what == "labels" if paired is None else paired
    error = _contradiction(header, dt, dims, what, where, paired)
    if error is not None:
        raise error
    dt = header.dtype.newbyteorder("=") if dt is None else dt
    dims = header.shape if shape is None else dims
    return Spec(dt, dims, make_hint(dt, dims, prefix) or make_hint(dt, dims), member)


def choose_strategy(
    specs: tuple[Spec, ...], batch_size: int | None, ignore_errors: bool, backend: str
) -> str:
    """Batch-then-decode when it is both possible and worth it: batches of static, small
    files of the graph backend, where no error is expected (an error would fail a whole
    batch, and ``ignore_errors`` skips files one by one). Decode-then-batch otherwise."""
    possible = (
        batch_size is not None
        and backend == "graph"
        and not ignore_errors
        and all(spec.static for spec in specs)
    )
    small = all(spec.hint is not None and spec.hint.size < LARGE_FILE for spec in specs)
    return BATCH_THEN_DECODE if possible and small else DECODE_THEN_BATCH


def _positive(value: object, what: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{what} must be a positive int or None, got {value!r}")
    return value


# --- structures: nested sources, and what each part of an element is ------------------------
#: A leaf of a structure template: one part of every element (one column of files).
LEAF = "<part>"


def _is_source_structure(spec: object) -> bool:
    """Whether ``spec`` is a structure of several sources (a dict, or a tuple whose items are
    sources), not one source. A list, an array or a tuple of *file* paths is one source: a
    tuple is a structure when an item is itself a structure or a sequence, or when its first
    item is a directory or a glob (a source that stands for many files)."""
    if isinstance(spec, dict):
        return True
    if not isinstance(spec, tuple) or not spec:
        return False
    if any(isinstance(item, (dict, tuple, list, np.ndarray)) for item in spec):
        return True
    first = spec[0]
    if isinstance(first, (str, bytes, os.PathLike)):
        text = os.fsdecode(first)
        return bool(GLOB_CHARS & set(text)) or isdir(text)
    return False


def template(spec: object) -> object:
    """The structure of ``spec`` with `LEAF` for each source (dict keys sorted, as tf.nest)."""
    if isinstance(spec, dict):
        return {k: template(spec[k]) for k in sorted(spec)}
    if _is_source_structure(spec):
        return tuple(template(item) for item in spec)  # type: ignore[attr-defined]
    return LEAF


def flatten(tmpl: object, value: object) -> list[object]:
    """The leaves of ``value`` in the order of ``tmpl``'s leaves."""
    if isinstance(tmpl, dict):
        if not isinstance(value, dict) or set(value) != set(tmpl):
            raise ValueError(f"expected a dict with keys {sorted(tmpl)}, got {value!r:.200}")
        return [leaf for k in tmpl for leaf in flatten(tmpl[k], value[k])]
    if isinstance(tmpl, tuple):
        if not isinstance(value, (tuple, list)) or len(value) != len(tmpl):
            raise ValueError(f"expected {len(tmpl)} items, got {value!r:.200}")
        return [leaf for t, v in zip(tmpl, value) for leaf in flatten(t, v)]
    return [value]


def pack(tmpl: object, leaves: list[object]) -> object:
    """``leaves`` (in `flatten`'s order) put back into ``tmpl``'s structure."""
    it = iter(leaves)

    def build(t: object) -> object:
        if isinstance(t, dict):
            return {k: build(v) for k, v in t.items()}
        if isinstance(t, tuple):
            return tuple(build(v) for v in t)
        return next(it)

    return build(tmpl)


def leaf_names(tmpl: object, root: str) -> list[str]:
    """How errors name each part: ``inputs``, ``inputs['image']``, ``inputs[1]``."""
    if isinstance(tmpl, dict):
        return [n for k, v in tmpl.items() for n in leaf_names(v, f"{root}[{k!r}]")]
    if isinstance(tmpl, tuple):
        return [n for i, v in enumerate(tmpl) for n in leaf_names(v, f"{root}[{i}]")]
    return [root]


def _per_part(tmpl: object, value: object, kind: str) -> list[object]:
    """A ``dtype``/``shape`` argument for each leaf: one value for all, or the structure."""
    if tmpl == LEAF:
        return [value]
    structured = isinstance(value, dict) or (
        isinstance(value, tuple)
        and len(value) == len(tmpl)  # type: ignore[arg-type]
        and (kind == "dtype" or all(v is None or isinstance(v, (tuple, list)) for v in value))
    )
    return flatten(tmpl, value) if structured else [value] * len(flatten(tmpl, tmpl))


def _label_values(labels: object) -> np.ndarray | None:
    """``labels`` as an array of values (one per input file), or None for label files."""
    if isinstance(labels, np.ndarray):
        return labels if labels.dtype.kind in "biuf" else None
    if isinstance(labels, (list, tuple)) and labels:
        first = labels[0]
        numeric = isinstance(first, (int, float, np.number, np.bool_)) or (
            isinstance(first, (list, tuple, np.ndarray))
            and len(first) > 0
            and isinstance(np.asarray(first).flat[0], (np.number, np.bool_))
        )
        if numeric and not isinstance(first, (str, bytes)):
            values = np.asarray(labels)
            if values.dtype.kind not in "biuf":
                raise TypeError(f"labels: expected numbers, got {values.dtype} values")
            return values
    return None


# --- validation splits ------------------------------------------------------------------------
SUBSETS = ("training", "validation", "both")


def check_split(
    validation_split: float | None, subset: str | None, shuffle: bool, seed: int | None
) -> None:
    """The split arguments, checked on their own (before any file is listed).

    Raises:
        ValueError: for a ``validation_split`` outside (0, 1), a ``subset`` without one (or
            the reverse), an unknown ``subset``, or a split while shuffling without a ``seed``
            (the subsets would overlap from one call to the next).
    """
    if validation_split is None:
        if subset is not None:
            raise ValueError(f"subset={subset!r} needs validation_split (got None)")
        return
    if isinstance(validation_split, bool) or not (
        isinstance(validation_split, (int, float)) and 0 < validation_split < 1
    ):
        raise ValueError(
            f"validation_split must be a float between 0 and 1 (exclusive), "
            f"got {validation_split!r}"
        )
    if subset not in SUBSETS:
        raise ValueError(
            f"subset must be 'training', 'validation' or 'both' with validation_split, "
            f"got {subset!r}"
        )
    if shuffle and seed is None:
        raise ValueError(
            "validation_split with shuffle=True needs a seed: without one, the training and "
            "validation subsets of two calls would overlap"
        )


def split(
    n: int, validation_split: float | None, subset: str | None, shuffle: bool, seed: int | None
) -> list[np.ndarray]:
    """Indices of the subsets of ``n`` samples, as Keras's ``*_dataset_from_directory`` cuts
    them: the samples are shuffled with ``seed`` (when ``shuffle``), then the last
    ``int(validation_split * n)`` are the validation subset and the rest the training subset.
    The same seed gives the same split on every call. Returns one array (``"training"``,
    ``"validation"``, or all samples without a split) or two (``"both"``).

    Raises:
        ValueError: for bad arguments (`check_split`), or an empty subset.
    """
    check_split(validation_split, subset, shuffle, seed)
    if validation_split is None:
        return [np.arange(n)]
    order = np.random.RandomState(seed).permutation(n) if shuffle else np.arange(n)
    n_val = int(validation_split * n)
    training, validation = order[: n - n_val], order[n - n_val :]
    for name, part in (("training", training), ("validation", validation)):
        if subset in (name, "both") and len(part) == 0:
            raise ValueError(
                f"validation_split={validation_split} of {n} files leaves the {name} subset empty"
            )
    if subset == "training":
        return [training]
    return [validation] if subset == "validation" else [training, validation]


@dataclass(frozen=True)
class DatasetPlan:
    """Everything `npyio.dataset` decides before it builds a graph.

    ``columns`` and ``specs`` have one entry per *file part*: the leaves of the inputs'
    structure, then those of the labels' (when labels are files). Elements are
    ``pack(inputs, parts)``, then the labels (files, or ``label_values``), then the input path
    (``with_paths``).
    """

    columns: tuple[tuple[str, ...], ...]  # the paths of each part, paired, split and sharded
    specs: tuple[Spec, ...]
    strategy: str
    inputs: object = LEAF  # the inputs' structure template
    labels: object = None  # the labels' structure template, or None (no labels, or values)
    label_values: np.ndarray | None = None  # one row per element, when labels are values
    with_paths: bool = False
    batch_size: int | None = None
    shuffle: bool = False
    seed: int | None = None
    reshuffle_each_iteration: bool = True
    drop_remainder: bool = False
    num_parallel_calls: int | None = AUTOTUNE
    deterministic: bool | None = None
    prefetch: int | None = AUTOTUNE
    backend: str = "graph"
    ignore_errors: bool = False
    limits: Limits = field(default_factory=Limits)

    @property
    def count(self) -> int:
        """Elements in one epoch (before ``ignore_errors`` skips any)."""
        return len(self.columns[0])

    @property
    def n_inputs(self) -> int:
        """How many of the file parts are inputs (the rest are labels)."""
        return len(flatten(self.inputs, self.inputs))

    @property
    def file_paths(self) -> tuple[str, ...]:
        """The input file of each element (the first input part's)."""
        return self.columns[0]


def plan_dataset(
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
) -> DatasetPlan | tuple[DatasetPlan, DatasetPlan]:
    """Resolves, pairs, splits and shards the sources and derives the specs (see
    `npyio.dataset`). Two plans for ``subset="both"``: training, validation."""
    limits = Limits(max_header_size, max_file_size)
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r} -- expected one of {', '.join(BACKENDS)}")
    if key is not None and max_file_size is not None:
        raise ValueError("max_file_size is not supported with key (.npz archives)")
    if key is None and label_key is not None:
        raise ValueError("label_key needs key: it names a member of .npz archives")
    if key is not None and backend != "graph":
        raise ValueError(f"key (.npz archives) needs backend='graph', got {backend!r}")
    batch_size = _positive(batch_size, "batch_size")
    suffix = ".npy" if key is None else ".npz"

    # sources -> paths: every file part, resolved and paired under one rule
    x_tmpl = template(inputs)
    values = None if labels is None else _label_values(labels)
    y_tmpl = None if labels is None or values is not None else template(labels)
    x_names = leaf_names(x_tmpl, "inputs")
    y_names = [] if y_tmpl is None else leaf_names(y_tmpl, "labels")
    sources = [resolve(s, w, suffix) for s, w in zip(flatten(x_tmpl, inputs), x_names)]
    if y_tmpl is not None:
        sources += [resolve(s, w, suffix) for s, w in zip(flatten(y_tmpl, labels), y_names)]
    columns = pair_parts(sources, x_names + y_names) if len(sources) > 1 else [sources[0].paths]
    members: list[str | None] = [key] * len(x_names) + [
        key if label_key is None else label_key
    ] * len(y_names)
    if labels is None and label_key is not None:  # labels: members of the same archives
        columns.append(list(columns[0]))
        members.append(label_key)
        y_tmpl, y_names = LEAF, ["labels"]
    if values is not None:
        if len(values) != len(columns[0]):
            raise ValueError(
                f"labels: expected one value (or row) per input file, got {len(values)} "
                f"values for {len(columns[0])} input files"
            )
        if label_dtype is not None:
            values = values.astype(npy.parse_dtype(label_dtype))
        row = npy.parse_shape(label_shape)
        if row is not None and (
            len(row) != values.ndim - 1
            or any(d is not None and d != v for d, v in zip(row, values.shape[1:]))
        ):
            raise ValueError(
                f"labels: label_shape={label_shape!r} does not match the values' row shape "
                f"{npy.show_shape(values.shape[1:])}"
            )

    # spec: from the arguments, else from the first file of each part (before any split or
    # shard, so that every subset and every shard loads alike)
    dtypes = _per_part(x_tmpl, dtype, "dtype") + (
        [] if y_tmpl is None else _per_part(y_tmpl, label_dtype, "dtype")
    )
    shapes = _per_part(x_tmpl, shape, "shape") + (
        [] if y_tmpl is None else _per_part(y_tmpl, label_shape, "shape")
    )
    paired = y_tmpl is not None or values is not None
    specs = tuple(
        derive_spec(col[0], dt, sh, name.split("[")[0], member=m, limits=limits, paired=paired)
        for col, dt, sh, name, m in zip(columns, dtypes, shapes, x_names + y_names, members)
    )

    # split, then shard: every shard of a subset is a part of that subset
    where = parse_shard(shard)
    plans = []
    subsets = split(len(columns[0]), validation_split, subset, shuffle, seed)
    for indices in subsets:
        if validation_split is None:  # all files, in order: nothing to gather (a million)
            cols, vals = columns, values
        else:
            picked = indices.tolist()
            cols = [[col[i] for i in picked] for col in columns]
            vals = None if values is None else values[indices]
        if where is not None:
            total = len(cols[0])
            cols = [shard_list(col, *where) for col in cols]
            vals = None if vals is None else vals[where[1] :: where[0]]
            if not cols[0]:
                raise ValueError(f"shard {where[1]} of {where[0]} has no files ({total} in all)")
        plans.append(
            DatasetPlan(
                columns=tuple(tuple(col) for col in cols),
                specs=specs,
                strategy=choose_strategy(specs, batch_size, ignore_errors, backend),
                inputs=x_tmpl,
                labels=y_tmpl,
                label_values=vals,
                with_paths=with_paths,
                batch_size=batch_size,
                shuffle=shuffle,
                seed=seed,
                reshuffle_each_iteration=reshuffle_each_iteration,
                drop_remainder=drop_remainder,
                num_parallel_calls=num_parallel_calls,
                deterministic=deterministic,
                prefetch=prefetch,
                backend=backend,
                ignore_errors=ignore_errors,
                limits=limits,
            )
        )
    return plans[0] if subset != "both" else (plans[0], plans[1])


# --- npyio.rows -------------------------------------------------------------------------------
#: Bytes per decoded chunk (per side): the unit of reading and decoding.
CHUNK_BYTES = 1 << 20
#: When shuffling, files are cut into pieces of about this many bytes (per side).
BLOCK_BYTES = 8 << 20
#: Pieces read at once when shuffling, if num_parallel_reads is AUTOTUNE.
CYCLE = 8


@dataclass(frozen=True)
class RowsFile:
    path: str
    header: npy.NpyHeader

    @property
    def nrows(self) -> int:
        return self.header.shape[0]

    @property
    def little_endian(self) -> bool:
        dt = self.header.dtype
        return dt.byteorder == "<" or (dt.byteorder in "|=" and npy.NATIVE_ORDER == "<")


@dataclass(frozen=True)
class RowsSide:
    """One side (inputs or labels): its files, and what every one of their rows looks like."""

    files: tuple[RowsFile, ...]
    dtype: np.dtype  # native order
    row_shape: tuple[int, ...]
    #: The byte order of every file when they all agree, else None (decided per piece).
    little_endian: bool | None

    @property
    def row_bytes(self) -> int:
        return int(np.prod(self.row_shape, dtype=np.int64)) * self.dtype.itemsize


def _rows_file(path: str) -> RowsFile:
    """Reads ``path``'s header and size and checks that its rows can be streamed."""
    header = read_header(path, payload=True).raise_if_bad()
    if not header.shape:
        raise NpyFormatError(
            path, "a 0-d array has no rows -- expected an array with ndim >= 1, got shape ()"
        )
    if header.fortran_order and len(header.shape) >= 2:
        raise NpyFormatError(
            path,
            "Fortran-order arrays cannot be streamed by rows -- expected fortran_order False "
            f"for shape {npy.show_shape(header.shape)}, got True; rewrite the file in C order, "
            f"e.g. np.save(path, np.ascontiguousarray(np.load(path)))",
        )
    return RowsFile(path, header)


def _rows_side(paths: list[str]) -> RowsSide:
    """Checks every file of one side and that they all have the first one's dtype and row shape."""
    files = tuple(_rows_file(p) for p in paths)
    first = files[0]
    dtype = first.header.dtype.newbyteorder("=")
    row_shape = first.header.shape[1:]
    for f in files[1:]:
        if f.header.dtype.newbyteorder("=") != dtype:
            raise NpyFormatError(
                f.path,
                npy.dtype_mismatch(dtype.name, f.header.dtype.name)
                + f" (the dtype of the first file, {first.path})",
            )
        if f.header.shape[1:] != row_shape:
            raise NpyFormatError(
                f.path,
                "row shape mismatch -- expected "
                f"{npy.show_shape(row_shape)}, got {npy.show_shape(f.header.shape[1:])} "
                f"(the shape of a row of the first file, {first.path})",
            )
    orders = {f.little_endian for f in files}
    return RowsSide(files, dtype, row_shape, orders.pop() if len(orders) == 1 else None)


def pieces(counts: list[int], lo: int, hi: int, block: int | None) -> list[tuple[int, int, int]]:
    """(file index, first row, end row) runs covering global rows [lo, hi), cut every ``block``
    rows when ``block`` is set."""
    out: list[tuple[int, int, int]] = []
    start_of_file = 0
    for j, n in enumerate(counts):
        s, e = max(lo, start_of_file) - start_of_file, min(hi, start_of_file + n) - start_of_file
        start_of_file += n
        step = block or max(e - s, 1)
        out.extend((j, a, min(a + step, e)) for a in range(s, e, step))
    return out


@dataclass(frozen=True)
class RowsPlan:
    """Everything `npyio.rows` decides before it builds a graph: the checked sides, and the
    pieces (file index, first row, end row) this shard reads, in chunks of ``chunk`` rows."""

    sides: tuple[RowsSide, ...]
    pieces: tuple[tuple[int, int, int], ...]
    chunk: int
    cycle: int
    auto: bool  # num_parallel_reads was AUTOTUNE (or None)
    shuffle_buffer: int | None
    seed: int | None
    batch_size: int | None
    drop_remainder: bool
    num_parallel_reads: int | None

    @property
    def count(self) -> int:
        """Rows in one epoch of this shard."""
        return sum(e - a for _, a, e in self.pieces)


def plan_rows(
    inputs: PathSpec,
    labels: PathSpec | None = None,
    *,
    shuffle_buffer: int | None = None,
    seed: int | None = None,
    batch_size: int | None = None,
    drop_remainder: bool = False,
    num_parallel_reads: int | None = AUTOTUNE,
    shard: object = None,
) -> RowsPlan:
    """Resolves, pairs and checks the files, and cuts this shard's rows into pieces (see
    `npyio.rows`)."""
    shuffle_buffer = _positive(shuffle_buffer, "shuffle_buffer")
    batch_size = _positive(batch_size, "batch_size")
    if num_parallel_reads is not None and num_parallel_reads != AUTOTUNE:
        _positive(num_parallel_reads, "num_parallel_reads")
    xs_source = resolve(inputs, "inputs")
    xs = xs_source.paths
    ys = None
    if labels is not None:
        xs, ys = pair(xs_source, resolve(labels, "labels"))
    n, i = parse_shard(shard) or (1, 0)

    sides = (_rows_side(xs),) if ys is None else (_rows_side(xs), _rows_side(ys))
    if len(sides) == 2:
        for fx, fy in zip(sides[0].files, sides[1].files, strict=True):
            if fx.nrows != fy.nrows:
                raise ValueError(
                    f"inputs and labels must have the same number of rows: {fx.path} has "
                    f"{fx.nrows} rows, its labels {fy.path} have {fy.nrows}"
                )
    counts = [f.nrows for f in sides[0].files]
    total = sum(counts)
    lo, hi = total * i // n, total * (i + 1) // n

    widest = max(max(s.row_bytes for s in sides), 1)
    chunk = max(1, CHUNK_BYTES // widest)
    block = None
    auto = num_parallel_reads in (None, AUTOTUNE)
    cycle = CYCLE if auto else int(num_parallel_reads)  # type: ignore[arg-type]
    if shuffle_buffer is not None:
        # The pieces read at once should fill the buffer together, each with several chunks.
        chunk = max(1, min(chunk, shuffle_buffer // (2 * cycle)))
        block = max(chunk, BLOCK_BYTES // widest)
    return RowsPlan(
        sides=sides,
        pieces=tuple(pieces(counts, lo, hi, block)),
        chunk=chunk,
        cycle=cycle,
        auto=auto,
        shuffle_buffer=shuffle_buffer,
        seed=seed,
        batch_size=batch_size,
        drop_remainder=drop_remainder,
        num_parallel_reads=num_parallel_reads,
    )
