"""Planning a dataset: which files, what every element loads as, and which graph to build.

Plain Python: this module imports no TensorFlow, and its plans are plain values that tests
check without it. `npyio.dataset` is ``build(plan_dataset(...))``: the sources are resolved and
paired (`npyio._pipeline.paths`), each part's spec is derived from the arguments or the first
file's header (`npyio._format.spec`; ``npyio verify`` applies the very same rule to every file),
the files are split and sharded, and `choose_strategy` picks where the batch goes.

Two source kinds are planned here, loose ``.npy`` files and ``.npz`` members (``key=``), and
their columns of the capability table (`FILES_COLUMN`, `NPZ_COLUMN`) say what each option means
for them.
"""

from __future__ import annotations

import dataclasses
import warnings
from dataclasses import dataclass, field
from typing import cast

import numpy as np

from npyio._format import npy
from npyio._format.header import Checked, Limits
from npyio._format.spec import Spec
from npyio._format.window import CENTER, PAD, RANDOM, SAME, TRIM, Crop, fill_for
from npyio._format.window import resolve as resolve_window
from npyio._io.header import read_checked
from npyio._io.spec import derive_spec
from npyio._pipeline.capabilities import LOADER, NEEDS_KEY, REFUSED, Column, Use, absent, honoured
from npyio._pipeline.options import DatasetOptions, LoaderOptions, ReadOptions, split
from npyio._pipeline.paths import (
    PathSpec,
    Source,
    order_remedy,
    pair_parts,
    refuse_text_order,
    resolve,
    shard_list,
    stray_note,
)
from npyio._pipeline.structure import (
    LEAF,
    flatten,
    label_values,
    leaf_names,
    per_part,
    structure_of,
)
from npyio._read import BACKENDS, Capabilities, choose_backend, reads
from npyio._read import capabilities as reader_capabilities
from npyio._sources.foreground import ForegroundIndex, build_index
from npyio._sources.pack_plan import PACK_COLUMN, PackPlan, is_packed, plan_packed
from npyio._sources.sampling import check_samples
from npyio.errors import NpyFormatError

__all__ = [
    "BATCH_THEN_DECODE",
    "DECODE_THEN_BATCH",
    "FILES",
    "FILES_COLUMN",
    "NPZ",
    "NPZ_COLUMN",
    "DatasetPlan",
    "Parts",
    "SpecRule",
    "choose_strategy",
    "crop_of",
    "paired",
    "plan",
    "plan_dataset",
    "resolve_parts",
    "shares_window",
    "spec_rules",
    "split",
]

FILES, NPZ = "files", "npz"

#: What each option means for loose ``.npy`` files: the capability table's column
#: (`npyio._pipeline.capabilities`).
FILES_COLUMN = Column(
    FILES,
    "`.npy` files",
    {
        **LOADER,
        "shuffle": honoured("files in a full uniform shuffle, anew each epoch"),
        "shard": honoured("by file (every n-th file)"),
        "num_parallel_calls": honoured("files read and decoded at once"),
        "deterministic": honoured("as `Dataset.map`'s"),
        **{name: honoured() for name in ("prefetch", "with_paths", "padding_value")},
        **{name: honoured() for name in ("dtype", "shape", "label_dtype", "label_shape")},
        "crop": honoured(
            "a window of each array (`npyio.Crop`); the native reader reads only its bytes "
            "(C-order files), the graph path cuts it from the whole array"
        ),
        "label_crop": honoured(
            "the inputs' window by default, `None` for whole labels, or a window of its own"
        ),
        "crops_per_file": honoured(
            "k random windows of each file per epoch, each a unit of the epoch's stream "
            "(shuffled with the rest)"
        ),
        "foreground": honoured(
            "a share of the random windows centred on a labelled voxel of the mask "
            "(`npyio.Foreground`), from an index cached per mask"
        ),
        "label_key": NEEDS_KEY,
        "backend": honoured(),
        "ignore_errors": honoured("skips a bad file, naming it"),
        "max_file_size": honoured(),
        "max_header_size": honoured(),
        "shuffle_buffer": absent("`npyio.dataset`"),
        "num_parallel_reads": absent("`npyio.dataset`"),
    },
)
_MEMBER_BACKENDS = " or ".join(repr(name) for name in BACKENDS if reads(name, "members"))
#: ``.npz`` members: the files' column, but for the member's own options and their reader.
NPZ_COLUMN = Column(
    NPZ,
    "`.npz` members (`key=`)",
    {
        **FILES_COLUMN.uses,
        "label_key": honoured("the labels' member"),
        "backend": Use(
            REFUSED,
            f"only {_MEMBER_BACKENDS}",
            f"key (.npz archives) needs backend={_MEMBER_BACKENDS}, got {{value!r}}",
            refuses=lambda value: not reads(value, "members"),  # type: ignore[arg-type]
        ),
        "max_file_size": Use(
            REFUSED, "refused", "max_file_size is not supported with key (.npz archives)"
        ),
    },
)

#: Batch the fetched parts, then decode (read) a whole batch with one set of ops.
BATCH_THEN_DECODE = "batch-then-decode"
#: Decode file by file in the parallel map, then batch (large files for a reader with a
#: ``batch_limit``, variable shapes, errors skipped one by one, readers that decode one file).
DECODE_THEN_BATCH = "decode-then-batch"


def choose_strategy(
    specs: tuple[Spec, ...], batch_size: int | None, ignore_errors: bool, backend: str
) -> str:
    """Batch-then-decode when it is both possible and worth it: batches of static parts read by
    a backend that decodes batches (``decodes_batches`` in `npyio._read.Capabilities`), of files
    no larger than its ``batch_limit``, where no error is expected (an error would fail a
    whole batch, and ``ignore_errors`` skips files one by one), or with ``ignore_errors`` by a
    reader that says which files it doubts (``doubts``: only those are then skipped one by one,
    `npyio._sources.dataset.build_skipping`, even without ``batch_size``). Decode-then-batch
    otherwise."""
    can = reader_capabilities(backend)
    doubting = ignore_errors and can.doubts
    possible = (
        (batch_size is not None or doubting)
        and can.decodes_batches
        and (doubting or not ignore_errors)
        and all(spec.file.static or _case_windows(can, spec) for spec in specs)
    )
    limit = can.batch_limit
    fits = limit is None or all(spec.hint is not None and spec.hint.size < limit for spec in specs)
    return BATCH_THEN_DECODE if possible and fits else DECODE_THEN_BATCH


def _case_windows(can: Capabilities, spec: Spec) -> bool:
    """Whether a reader that ``can`` reads ``spec``'s windows of files of per-case shapes in
    batches: windows of one static size, each placed by its file's own header."""
    return can.headers and spec.crop is not None and spec.output.static


@dataclass(frozen=True)
class DatasetPlan:
    """Everything `npyio.dataset` decides before it builds a graph.

    ``columns`` and ``specs`` have one entry per *file part*: the leaves of the inputs'
    structure, then those of the labels' (when labels are files). Elements are
    ``unflatten(inputs, parts)``, then the labels (files, or ``label_values``), then the input path
    (``loader.with_paths``).
    """

    columns: tuple[tuple[str, ...], ...]  # the paths of each part, paired, split and sharded
    specs: tuple[Spec, ...]
    strategy: str
    #: The backend that reads the parts (`choose_backend`): the one asked for, or its fallback.
    backend: str = "graph"
    inputs: object = LEAF  # the inputs' structure
    labels: object = None  # the labels' structure, or None (no labels, or values)
    label_values: np.ndarray | None = None  # one row per element, when labels are values
    #: What pads each file part in a padded batch (None: zeros), from ``padding_value``.
    padding: tuple[object, ...] | None = None
    loader: LoaderOptions = field(default_factory=LoaderOptions)
    read: ReadOptions = field(default_factory=ReadOptions)
    #: Under ``shard=`` with ``drop_remainder``: the files every shard reads each epoch,
    #: ``files // num_shards`` (`_subsets`); None: all of this shard's.
    shard_count: int | None = None
    #: Where the labels' classes lie in each case, with ``foreground=`` (`_sampling`).
    foreground: ForegroundIndex | None = None

    @property
    def column(self) -> Column:
        """The source kind's column: loose files, or ``.npz`` members with ``key``."""
        return FILES_COLUMN if self.read.key is None else NPZ_COLUMN

    @property
    def kind(self) -> str:
        return self.column.kind

    @property
    def epoch_count(self) -> int:
        """Elements read in one epoch: `count`, or those of `shard_count` files (a different
        choice each shuffled epoch), so that every shard yields the same batches."""
        if self.shard_count is None:
            return self.count
        return self.shard_count * self.read.crops_per_file

    @property
    def count(self) -> int:
        """Elements in one epoch (before ``ignore_errors`` skips any): the units, each file
        ``crops_per_file`` times (unit ``u`` reads file ``u % files``)."""
        return self.files * self.read.crops_per_file

    @property
    def files(self) -> int:
        """The files of each part (after the split and shard)."""
        return len(self.columns[0])

    @property
    def n_inputs(self) -> int:
        """How many of the file parts are inputs (the rest are labels)."""
        return len(flatten(self.inputs, self.inputs))

    @property
    def file_paths(self) -> tuple[str, ...]:
        """The input file of each element (the first input part's)."""
        return self.columns[0]

    def read_by(self, backend: str) -> DatasetPlan:
        """This plan read by ``backend`` instead (its fallback, where the backend chosen cannot
        be built), with the strategy that backend's capabilities choose."""
        loader, read = self.loader, self.read
        strategy = choose_strategy(self.specs, loader.batch_size, read.ignore_errors, backend)
        return dataclasses.replace(self, backend=backend, strategy=strategy)


@dataclass(frozen=True)
class Parts:
    """The file parts of the sources: one column of paths per part, in the order of the inputs'
    leaves then the labels' (`DatasetPlan`), each part's source, and how it is named and read.
    `resolve_parts` resolves them (a column is then its source's files), `paired` pairs them."""

    columns: list[list[str]]
    inputs: object  # structure
    labels: object  # structure, or None
    sides: list[str]  # "inputs" or "labels", per part
    names: list[str]  # how errors name each part: inputs['image'], labels, ...
    members: list[str | None]  # the .npz member of each part
    sources: list[Source]  # each file part's source, resolved


def resolve_parts(
    inputs: PathSpec, labels: PathSpec | None, read: ReadOptions, *, strict: bool = True
) -> Parts:
    """Sources -> paths: every file part's source, resolved by the one resolver, not yet paired.

    With ``strict`` (the API), a source that stands for no file raises (`resolve`); without
    (``npyio verify``, which reports every problem), it comes back with its ``problem`` set.
    """
    x_tmpl = structure_of(inputs)
    has_files = labels is not None and label_values(labels) is None
    y_tmpl = structure_of(labels) if has_files else None
    x_names = leaf_names(x_tmpl, "inputs")
    y_names = [] if y_tmpl is None else leaf_names(y_tmpl, "labels")
    leaves = flatten(x_tmpl, inputs) + ([] if y_tmpl is None else flatten(y_tmpl, labels))
    names = x_names + y_names
    sources = [resolve(leaf, name, read.suffix, strict=strict) for leaf, name in zip(leaves, names)]
    label_member = read.key if read.label_key is None else read.label_key
    members = [read.key] * len(x_names) + [label_member] * len(y_names)
    sides = ["inputs"] * len(x_names) + ["labels"] * len(y_names)
    columns = [list(source.paths) for source in sources]
    if labels is None and read.label_key is not None:  # labels: members of the same archives
        columns.append(list(columns[0]))
        members.append(read.label_key)
        sides.append("labels")
        names.append("labels")
        y_tmpl = LEAF
    return Parts(columns, x_tmpl, y_tmpl, sides, names, members, sources)


def paired(parts: Parts) -> Parts:
    """``parts`` paired under the one rule (`npyio._pipeline.paths.pair_parts`: by file name when
    any part is a directory or a glob, else by position); a part without a source of its own
    (``label_key``: members of the inputs' archives) takes the inputs' column.

    Raises:
        ValueError: for parts that do not pair (`pair_parts`' words).
    """
    sources = parts.sources
    names = parts.names[: len(sources)]
    columns = pair_parts(sources, names) if len(sources) > 1 else [list(sources[0].paths)]
    columns += [list(columns[0]) for _ in parts.columns[len(sources) :]]
    return dataclasses.replace(parts, columns=columns)


def _checked_values(labels: PathSpec | None, parts: Parts, read: ReadOptions) -> np.ndarray | None:
    """Labels given as values (one per input file), cast and checked; None for label files.

    Raises:
        ValueError: for values paired with a listing whose text order is not its numeric order
            (`npyio._pipeline.paths.refuse_text_order`), a count other than one per input file (more
            files than values: naming the files whose names stand out, `stray_note`), or
            a ``label_shape`` that contradicts the values' rows.
    """
    count = len(parts.columns[0])
    values = None if labels is None else label_values(labels)
    if values is None:
        return None
    listed = [s for s in parts.sources if s.by_name]
    if listed:  # the values pair with files in their listed (text) order
        where = listed[0].arg
        column = parts.columns[0]
        refuse_text_order(column, repr(where), "labels", order_remedy(column, where))
    if len(values) != count:
        # More files than values: name the files that likely have none (strays by their names).
        strays = stray_note(parts.columns[0]) if count > len(values) else ""
        raise ValueError(
            f"labels: expected one value (or row) per input file, got {len(values)} "
            f"values for {count} input files{strays}"
        )
    if read.label_dtype is not None:
        values = values.astype(npy.parse_dtype(read.label_dtype))
    row = npy.parse_shape(read.label_shape)
    if row is not None and (
        len(row) != values.ndim - 1
        or any(d is not None and d != v for d, v in zip(row, values.shape[1:]))
    ):
        raise ValueError(
            f"labels: label_shape={read.label_shape!r} does not match the values' row shape "
            f"{npy.show_shape(values.shape[1:])}"
        )
    return values


@dataclass(frozen=True)
class SpecRule:
    """How one part's spec is derived (`derive`): `npyio.dataset`'s arguments for that part,
    its side (``"inputs"`` or ``"labels"``), its ``.npz`` member, its limits, and whether
    elements are ``(x, y)`` pairs (for the cast an error suggests)."""

    dtype: object
    shape: object
    what: str = "inputs"
    member: str | None = None
    limits: Limits = Limits()
    paired: bool = False

    @property
    def given(self) -> bool:
        """Whether dtype and shape are both given: the spec is theirs and no file is read."""
        return self.dtype is not None and self.shape is not None

    def derive(self, first: str, checked: Checked | None = None) -> Spec:
        """The part's spec: the arguments, else ``first``'s header (`derive_spec`; ``checked``:
        ``first``'s verdict, when its header was read already).

        Raises:
            NpyFormatError: naming ``first``, as `derive_spec`.
        """
        return derive_spec(
            first,
            self.dtype,
            self.shape,
            self.what,
            member=self.member,
            limits=self.limits,
            paired=self.paired,
            checked=checked,
        )


def spec_rules(parts: Parts, read: ReadOptions, paired: bool) -> tuple[SpecRule, ...]:
    """Each part's `SpecRule`: its share of the ``dtype``/``shape`` arguments (one value for
    every part of a side, or a structure like the side's), its side and its member."""
    dtypes = per_part(parts.inputs, read.dtype, "dtype")
    shapes = per_part(parts.inputs, read.shape, "shape")
    if parts.labels is not None:
        dtypes += per_part(parts.labels, read.label_dtype, "dtype")
        shapes += per_part(parts.labels, read.label_shape, "shape")
    return tuple(
        SpecRule(dt, sh, side, member, read.limits, paired)
        for dt, sh, side, member in zip(dtypes, shapes, parts.sides, parts.members)
    )


def _derive_specs(parts: Parts, read: ReadOptions, paired: bool) -> tuple[Spec, ...]:
    """Each part's spec: from the arguments, else from the first file of its column (before
    any split or shard, so that every subset and every shard loads alike), checked against
    files sampled across the column (`npyio._sources.sampling`), with its crop."""
    rules = spec_rules(parts, read, paired)
    # the first file's header, read once: for its spec, then as the first of its samples
    firsts = [
        read_checked(column[0], rule.limits, payload=True)
        if not rule.given and rule.member is None
        else None
        for rule, column in zip(rules, parts.columns)
    ]
    specs = tuple(
        rule.derive(column[0], first) for rule, column, first in zip(rules, parts.columns, firsts)
    )
    cropped = [crop_of(side, read)[0] is not None for side in parts.sides]
    sampled = [not rule.given for rule in rules]
    headers = [None if first is None else first.header for first in firsts]
    windowed = _cropped(parts, specs, read)  # placed by the first files' shapes
    specs = tuple(
        _sized_by_each_file(spec, rule, crop_of(side, read)[0])
        for spec, rule, side in zip(windowed, rules, parts.sides)
    )
    uniform = check_samples(
        specs,
        parts.columns,
        parts.names,
        parts.sides,
        sampled,
        cropped,
        read.ignore_errors,
        firsts=headers,
    )
    # a window whose axes are sized by each file keeps its first file's hint (the native
    # reader places windows by it first) where the sampled files agree, not where they vary
    return tuple(
        spec if same or spec.file.static else dataclasses.replace(spec, hint=None)
        for spec, same in zip(specs, uniform)
    )


def _sized_by_each_file(spec: Spec, rule: SpecRule, crop: Crop | None) -> Spec:
    """A cropped part whose shape came from its first file, with the window's axes sized by
    each file (``None``): a window of a static size is cut from cases of any size there, as
    the plain ``crop=`` promises (issue 52). Not for ``"trim"`` (the window's size would then
    vary: ``shape=`` says so), nor for sizes or starts given as fractions (of each file's
    axis, they would vary too). The hint stays, for the files like the first (`_derive_specs`
    drops it where the sampled files vary)."""
    window = spec.crop
    if window is None or crop is None or rule.shape is not None or spec.file.shape is None:
        return spec
    extents = [*(crop.shape or ()), *(crop.end or ())]
    extents += list(crop.start) if isinstance(crop.start, tuple) else []
    if window.policy == TRIM or any(isinstance(e, float) for e in extents):
        return spec
    shape = tuple(None if i in window.axes else d for i, d in enumerate(spec.file.shape))
    return dataclasses.replace(spec, file=dataclasses.replace(spec.file, shape=shape))


def cropped_spec(spec: Spec, rule: SpecRule, side: str, read: ReadOptions, path: str) -> Spec:
    """``spec`` (its rule's, from ``path``, its part's first file) with the part's window, as
    `npyio.dataset` plans it: placed by ``path``'s shape, and with its axes sized by each
    file where a window of a static size is cut from cases of any size (for ``npyio verify``).

    Raises:
        NpyFormatError: naming ``path``, for a window its arrays cannot hold.
    """
    crop, group = crop_of(side, read)
    if crop is None or spec.file.shape is None:
        return spec
    window = resolve_window(crop, spec.file.shape, path, group)
    return _sized_by_each_file(spec.cropped(window), rule, crop)


def shares_window(side: str, read: ReadOptions) -> Crop | None:
    """The crop of a part on ``side`` when it shares the inputs' random or centred window
    (one draw for every such part: their cropped axes must agree in size); else None."""
    crop, group = crop_of(side, read)
    return crop if crop is not None and group == 0 and isinstance(crop.start, str) else None


def crop_of(side: str, read: ReadOptions) -> tuple[Crop | None, int]:
    """The crop of a part on ``side``, and its group: the inputs take ``crop``; label files
    take the inputs' window (``label_crop="same"``, the same draw: group 0), none, or their
    own (group 1)."""
    if side == "inputs" or read.label_crop == SAME:
        return read.crop, 0
    return cast("Crop | None", read.label_crop), 1


def _fill(value: object, dt: np.dtype, name: str) -> object:
    """A crop's ``fill_value`` as a value of the part's dtype ``dt``: the same number (``0.0``
    pads an int mask with 0), never one that casting would change (``-1.0`` in uint8).

    Raises:
        ValueError: naming the part, for a value its dtype cannot hold.
    """
    given = np.asarray(value)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a complex value cast to a real dtype warns
        cast = given.astype(dt)
        same = bool(cast.astype(given.dtype) == given) or bool(np.isnan(given) and np.isnan(cast))
    if not same:
        raise ValueError(
            f"{name}: crop fill_value={value!r} is not a value of its dtype {dt.name} -- pass "
            "a fill_value that every part sharing the window holds (0 for a float image and a "
            "uint8 mask), or one per part: fill_value={'inputs': -1.0, 'labels': 255}"
        )
    return cast.item()


#: A window group's first part: its name, first file, cropped dims, shape and cropped axes.
_First = tuple[str, str, tuple[int | None, ...], tuple[int | None, ...], tuple[int, ...]]


def _cropped(parts: Parts, specs: tuple[Spec, ...], read: ReadOptions) -> tuple[Spec, ...]:
    """``specs`` with each part's window (`npyio._format.window.resolve`, against the first
    file's shape).

    Raises:
        ValueError: for ``label_crop`` without label files.
        NpyFormatError: naming the first file: a part of any shape (``shape=None``), a window
            its arrays cannot hold (`resolve`), or parts that share a window (one group)
            whose cropped axes differ in size.
    """
    if read.label_crop not in (SAME, None) and "labels" not in parts.sides:
        raise ValueError("label_crop: the labels are not files, so there is nothing to crop")
    out = []
    firsts: dict[int, _First] = {}
    for spec, side, name, column in zip(specs, parts.sides, parts.names, parts.columns):
        crop, group = crop_of(side, read)
        if crop is None:
            out.append(spec)
            continue
        path, shape = column[0], spec.file.shape
        remedy = " -- pass label_crop=None to read the labels whole" if side == "labels" else ""
        if shape is None:
            raise NpyFormatError(path, f"crop needs the rank of {name}: pass its shape={remedy}")
        try:
            window = resolve_window(crop, shape, path, group)
        except NpyFormatError as e:
            raise NpyFormatError(path, f"{name}: {e.reason}{remedy}") from None
        if window.policy == PAD:
            value = fill_for(crop, name, side)
            window = dataclasses.replace(window, fill=_fill(value, spec.file.dtype, name))
        dims = tuple(shape[axis] for axis in window.axes)
        first = firsts.setdefault(group, (name, path, dims, shape, window.axes))
        if window.start in (RANDOM, CENTER) and dims != first[2]:
            raise NpyFormatError(
                path,
                f"{name}: the cropped axes have sizes {dims}, but those of {first[0]} "
                f"({first[1]}) are {first[2]}: one window cannot be cut from both -- each pair "
                f"{_REMEDY}",
            )
        _check_aligned(first, name, path, shape, window.axes)
        out.append(spec.cropped(window))
    return tuple(out)


_REMEDY = (
    "must agree on the cropped axes (npyio verify INPUTS LABELS --crop SIZES lists every pair "
    "that does not); labels that are not aligned with the inputs take a window of their own "
    "with label_crop=, or none with label_crop=None"
)


def _check_aligned(
    first: _First,
    name: str,
    path: str,
    shape: tuple[int | None, ...],
    axes: tuple[int, ...],
) -> None:
    """Parts of other ranks sharing a window: the crop's axes, made absolute in each, line the
    two up one way (named from the first axis, their leading dims; from the last, counted
    with a minus, their trailing dims), and the first files' shapes must agree that way. An
    image (D, H, W, 1) and its mask (D, H, W) cropped on axes=(-2,) would otherwise take W of
    the one and H of the other, unnoticed where H and W are alike.

    Raises:
        NpyFormatError: naming both files, for axes that line the parts up no one way, or
            shapes that do not agree the way they do.
    """
    other, other_path, _, other_shape, other_axes = first
    if len(other_shape) == len(shape):
        return
    shape, other_shape = _first_shape(path, shape), _first_shape(other_path, other_shape)
    offsets = {a - b for a, b in zip(other_axes, axes)}
    offset = next(iter(offsets)) if len(offsets) == 1 else None
    lined = offset is not None and all(
        x is None or y is None or x == y
        for k, x in enumerate(shape)
        if 0 <= k + offset < len(other_shape)
        for y in (other_shape[k + offset],)
    )
    if not lined:
        raise NpyFormatError(
            path,
            f"{name}: the crop names axes {list(axes)} of its shape {tuple(shape)} but axes "
            f"{list(other_axes)} of {other} (shape {tuple(other_shape)}, {other_path}), "
            "which do not line up -- name the axes from the first (axes=(0, 1, ...), the leading "
            "dims of both) or from the last (axes=(-3, -2, -1), the trailing dims), as the "
            "two arrays agree; each pair " + _REMEDY,
        )


def _first_shape(path: str, shape: tuple[int | None, ...]) -> tuple[int | None, ...]:
    """``shape`` (a part's, from its arguments), or where a dim is None its first file's own
    (``path``'s header), which `_check_aligned` compares. A file that cannot be read so (an
    ``.npz`` member, a bad file) keeps ``shape``: its read says what is wrong with it."""
    if None not in shape:
        return shape
    try:
        header = read_checked(path).header
    except (NpyFormatError, OSError, ValueError):
        return shape
    return header.shape if header is not None and len(header.shape) == len(shape) else shape


def _fits(value: object, dt: np.dtype) -> bool:
    """Whether the number ``value`` is a value of ``dt``: a bool for bool, an int in range for
    ints, a real number for floats, any number for complex."""
    if isinstance(value, (bool, np.bool_)):
        return dt.kind == "b"
    if dt.kind in "iu":
        integral = isinstance(value, (int, np.integer))
        return integral and np.iinfo(dt).min <= value <= np.iinfo(dt).max  # type: ignore[operator]
    if dt.kind == "f":
        return isinstance(value, (int, float, np.integer, np.floating))
    return dt.kind == "c"


def _padding(
    parts: Parts, specs: tuple[Spec, ...], values: np.ndarray | None, padding_value: object
) -> tuple[object, ...] | None:
    """What pads each file part: ``padding_value`` (one number for every part with a ``None``
    dim, or a structure like the elements': ``x``, or ``(x, y)`` with labels, a value or None
    per part), checked against each part's dtype.

    Raises:
        ValueError: for a structure unlike the elements', a value that is not one of its
            part's dtype, or no part with a ``None`` dim (nothing to pad).
    """
    if padding_value is None:
        return None
    if all(spec.output.static for spec in specs):
        raise ValueError(
            f"padding_value={padding_value!r:.100} pads nothing: no part has a None dim -- "
            "pass shape= with None where the arrays' sizes vary"
        )
    labelled = parts.labels is not None or values is not None
    element = (parts.inputs, LEAF if parts.labels is None else parts.labels) if labelled else None
    names = list(parts.names)
    dtypes = [spec.output.dtype for spec in specs]
    if values is not None:
        names.append("labels")
        dtypes.append(values.dtype)
    if isinstance(padding_value, (dict, tuple, list)):
        try:
            leaves = flatten(parts.inputs if element is None else element, padding_value)
        except ValueError as e:
            raise ValueError(f"padding_value: not the structure of the elements -- {e}") from e
    else:  # one number pads every part that has a None dim (the others are never padded)
        leaves = [None if spec.output.static else padding_value for spec in specs]
        leaves += [None] * (len(names) - len(leaves))
    for leaf, name, dt in zip(leaves, names, dtypes):
        if leaf is not None and not _fits(leaf, dt):
            raise ValueError(
                f"padding_value for {name} is not a value of its dtype -- expected "
                f"{dt.name}, got {leaf!r}"
            )
    return tuple(leaves[: len(specs)])


def _refuse_trimmed_labels_padded_unasked(
    parts: Parts, specs: tuple[Spec, ...], padding: tuple[object, ...] | None
) -> None:
    """Refuses batches that would pad trimmed windows of label files (a mask) with the
    default 0, which reads as a class: the caller says what pads them (issue 52).

    Raises:
        ValueError: naming the part.
    """
    for i, (spec, side, name) in enumerate(zip(specs, parts.sides, parts.names)):
        trimmed = spec.crop is not None and spec.crop.policy == TRIM and not spec.output.static
        if side == "labels" and trimmed and (padding is None or padding[i] is None):
            raise ValueError(
                f"{name}: trimmed windows of cases of varying size are padded to the batch's "
                "largest, and the default padding, 0, reads as a class of a mask -- pass "
                "padding_value= with the labels' ignore value (padding_value=(0.0, 255)), or "
                "npyio.Crop(..., out_of_bounds='pad', fill_value={'inputs': 0.0, 'labels': 255})"
            )


def _subsets(
    columns: list[list[str]],
    values: np.ndarray | None,
    options: DatasetOptions,
    strata: np.ndarray | None,
) -> list[tuple[list[list[str]], np.ndarray | None, int | None]]:
    """Split, then shard: every shard of a subset is a part of that subset. With
    ``drop_remainder``, each shard also gets the count every shard reads per epoch
    (`DatasetPlan.shard_count`: the subset's files // num_shards, the smallest shard's), so that
    all yield the same number of batches and a collective never waits on a host that ran out."""
    out = []
    loader = options.loader
    for indices in split(len(columns[0]), options.split, loader.seed, strata=strata):
        if options.split.validation_split is None:  # all files, in order: nothing to gather
            cols, vals = columns, values
        else:
            picked = indices.tolist()
            cols = [[col[i] for i in picked] for col in columns]
            vals = None if values is None else values[indices]
        shard, shard_count = options.loader.shard, None
        if shard is not None:
            total = len(cols[0])
            cols = [shard_list(col, *shard) for col in cols]
            vals = None if vals is None else vals[shard[1] :: shard[0]]
            if not cols[0]:
                raise ValueError(f"shard {shard[1]} of {shard[0]} has no files ({total} in all)")
            if loader.drop_remainder:
                shard_count = total // shard[0]
        out.append((cols, vals, shard_count))
    return out


def _plan_files(
    inputs: PathSpec, labels: PathSpec | None, options: DatasetOptions, strata: np.ndarray | None
) -> DatasetPlan | tuple[DatasetPlan, DatasetPlan]:
    """Resolves, pairs, splits and shards the sources and derives the specs."""
    read, loader = options.read, options.loader
    parts = paired(resolve_parts(inputs, labels, read))
    values = _checked_values(labels, parts, read)
    _refuse_sampling_unfit(parts, read, values is not None)
    specs = _derive_specs(parts, read, paired=parts.labels is not None or values is not None)
    firsts = tuple(column[0] for column in parts.columns)
    backend = choose_backend(read.backend, specs, firsts, read.ignore_errors)
    strategy = choose_strategy(specs, loader.batch_size, read.ignore_errors, backend)
    padding = _padding(parts, specs, values, loader.padding_value)
    if loader.batch_size is not None:
        _refuse_trimmed_labels_padded_unasked(parts, specs, padding)
    _refuse_masks_unfit(parts, specs, read)
    plans = [
        DatasetPlan(
            columns=tuple(tuple(col) for col in cols),
            specs=specs,
            strategy=strategy,
            backend=backend,
            inputs=parts.inputs,
            labels=parts.labels,
            label_values=vals,
            padding=padding,
            loader=loader,
            read=read,
            shard_count=shard_count,
            foreground=_foreground_index(cols, parts, specs, read),
        )
        for cols, vals, shard_count in _subsets(parts.columns, values, options, strata)
    ]
    return plans[0] if options.split.subset != "both" else (plans[0], plans[1])


def _refuse_sampling_unfit(parts: Parts, read: ReadOptions, label_values: bool) -> None:
    """Refuses patch sampling (``crops_per_file``, ``foreground``) where it cannot mean what
    it says: without a random window (every crop of a file would be the same), and, for the
    foreground, without one mask per case that takes the inputs' window.

    Raises:
        ValueError: naming the option and what it needs.
    """
    many, foreground = read.crops_per_file > 1, read.foreground is not None
    if not (many or foreground):
        return
    what = f"crops_per_file={read.crops_per_file}" if many else "foreground"
    if read.crop is None or not read.crop.random:
        raise ValueError(
            f"{what} samples random windows: pass crop= with sizes (crop=(64, 64, 64): a random "
            "window of each file, drawn anew for each unit); a centred or fixed window would be "
            "the same every time"
        )
    if not foreground:
        return
    labels = [i for i, side in enumerate(parts.sides) if side == "labels"]
    if len(labels) != 1:
        got = "label values" if label_values else f"{len(labels)} label parts"
        raise ValueError(
            f"foreground centres windows on the labels' classes: pass the masks as labels= "
            f"(one label file per case), got {got}"
        )
    if read.label_crop != SAME:
        raise ValueError(
            "foreground centres the inputs' window on a voxel of the mask, so the mask takes "
            f"that window: leave label_crop='same' (got {read.label_crop!r})"
        )


def _refuse_masks_unfit(parts: Parts, specs: tuple[Spec, ...], read: ReadOptions) -> None:
    """Refuses masks of floats for ``foreground``, naming the first: its classes are labels.

    Raises:
        NpyFormatError: naming the mask.
    """
    if read.foreground is None:
        return
    i = parts.sides.index("labels")
    if specs[i].file.dtype.kind not in "biu":
        raise NpyFormatError(
            parts.columns[i][0],
            f"foreground: a mask holds integer class labels, not {specs[i].file.dtype.name}",
        )


def _foreground_index(
    columns: list[list[str]], parts: Parts, specs: tuple[Spec, ...], read: ReadOptions
) -> ForegroundIndex | None:
    """The foreground index of the masks of one subset's (and shard's) cases, with
    ``foreground`` (`npyio._sources.foreground`: built once, cached)."""
    if read.foreground is None:
        return None
    i = parts.sides.index("labels")
    window = specs[i].crop
    assert window is not None  # the labels take the inputs' window (`_refuse_sampling_unfit`)
    return build_index(
        columns[i],
        parts.members[i],
        read.foreground,
        window.rank,
        read.limits,
        skip_bad=read.ignore_errors,
    )


def _refuse(
    column: Column, labels: PathSpec | None, options: DatasetOptions, where: str | None
) -> None:
    """What the source kind refuses (its ``column``; for a pack, labels given and ``key``
    too), before anything is read.

    Raises:
        ValueError: naming the option, with the column's message (after ``"{where}: "``).
    """
    if column is PACK_COLUMN:
        if labels is not None:
            raise ValueError(
                f"{where}: a packed directory holds its labels; call npyio.dataset({where!r}) "
                f"without labels"
            )
        if options.read.key is not None:  # not a row of the table: key makes .npz members
            raise ValueError(f"{where}: key= does not apply to a packed directory")
    column.refuse(options.given(), where)


def plan(
    inputs: PathSpec,
    labels: PathSpec | None = None,
    options: DatasetOptions = DatasetOptions(),
    strata: np.ndarray | None = None,
    *,
    packs: bool = True,
) -> DatasetPlan | PackPlan | tuple[DatasetPlan, DatasetPlan] | tuple[PackPlan, PackPlan]:
    """What `npyio.dataset` reads and how. The source kind is decided here, and what it
    refuses is refused here, once, before anything is read: a directory that is a pack by
    `npyio._io.packed.state`'s rule is a pack (with ``packs``), ``key`` makes ``.npz``
    members, else loose files; the options are checked against the kind's column of the
    capability table (`FILES_COLUMN`, `NPZ_COLUMN`, `npyio._sources.pack_plan.PACK_COLUMN`).
    Two plans for ``subset="both"``: training, validation. ``strata`` (a class per file: class
    folders) makes the split stratified (`npyio._pipeline.options.split`)."""
    directory = is_packed(inputs) if packs else None
    if directory is not None:
        column = PACK_COLUMN
    else:
        column = FILES_COLUMN if options.read.key is None else NPZ_COLUMN
    _refuse(column, labels, options, directory)
    if directory is not None:  # written by npyio pack: its index says what it holds
        return plan_packed(directory, options)
    return _plan_files(inputs, labels, options, strata)


def plan_dataset(
    inputs: PathSpec,
    labels: PathSpec | None = None,
    options: DatasetOptions = DatasetOptions(),
    strata: np.ndarray | None = None,
) -> DatasetPlan | tuple[DatasetPlan, DatasetPlan]:
    """`plan` of loose files or ``.npz`` members (see `npyio.dataset`): a pack's directory is
    read as the files it holds. For the sources of `npyio.pack`, class folders' files and
    ``npyio verify``."""
    return cast(
        "DatasetPlan | tuple[DatasetPlan, DatasetPlan]",
        plan(inputs, labels, options, strata, packs=False),
    )
