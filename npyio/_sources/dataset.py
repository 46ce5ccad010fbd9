"""``npyio.dataset``: paired ``.npy`` files as a ``tf.data`` pipeline.

`npyio._sources.plan` decides everything first (files, pairs, shards, specs, strategy); this module
makes the plan's `Source` for the loader (`FilesSource`: its units, and their read). Every element's
parts go through one reader (`npyio._read.part`): *fetch* (a path -> the part's ``.npy`` bytes),
then *decode*. The strategy decides only where the batch goes:

- batch-then-decode by the native reader: the loader's stream of units read into batches by
  the reader's own dataset op where it serves the parts (`npyio._read.part.Reader.batches`:
  whole files of one shape on the local disk), else the loader's batches of units, each read
  at once by the kernel (`FilesSource.read_batch`), straight into the batch's tensors.
- `build_batch_then_decode` (small files of static shape, graph backend): the parallel map only
  fetches, like the read-only floor; whole batches of bytes are then decoded by one set of ops.
- `build_decode_then_batch` (everything else): each element is fetched and decoded in the
  parallel map, then elements are batched (padded for variable shapes).
- `build_skipping` (``ignore_errors`` with the native reader): blocks read by the kernel, and
  only the elements of the files it doubts read again one by one, skipped when refused.
"""

from __future__ import annotations

import os
from typing import Any, NamedTuple

import tensorflow as tf

from npyio._format import npy
from npyio._format.packed import structure_from_json
from npyio._format.spec import Spec
from npyio._graph.decode import Fetched
from npyio._graph.ops import require_tf2
from npyio._graph.window import draws, foreground_centres
from npyio._pipeline.loader import Finish, Source, load
from npyio._pipeline.map import interleave, parallel_map
from npyio._pipeline.options import (
    AUTOTUNE,
    DatasetOptions,
    LoaderOptions,
    ReadOptions,
    SplitOptions,
    entry_point,
)
from npyio._pipeline.paths import PathSpec
from npyio._pipeline.remote import on_gcs
from npyio._pipeline.structure import LEAF, flatten, unflatten
from npyio._read import DEFAULT_BACKEND, capabilities
from npyio._read.backends import Reader, reader, usable
from npyio._read.part import Batching
from npyio._sources.pack_plan import PackPlan
from npyio._sources.plan import BATCH_THEN_DECODE, DatasetPlan, plan
from npyio._sources.rows import RowsSource, rows_source
from npyio._tf import print_to_stderr, rebatch_dataset, unbatch_dataset

__all__ = [
    "Fetch",
    "FilesSource",
    "Unit",
    "build",
    "build_all",
    "build_batch_then_decode",
    "build_decode_then_batch",
    "build_skipping",
    "dataset",
    "packed_source",
    "source",
]


class Unit(NamedTuple):
    """One element before its files are read: a path per file part, the label values
    (``(values,)`` when labels are values, else ``()``), and the key its random windows are
    drawn from (``(key,)``: int64 [3], this epoch's value, the unit's index and its position in
    the epoch; ``()`` without a random crop)."""

    paths: tuple[tf.Tensor, ...]
    values: tuple[tf.Tensor, ...]
    key: tuple[tf.Tensor, ...] = ()


class Fetch(NamedTuple):
    """One element with its parts fetched, as the reader fetched them: what batch-then-decode
    batches (each `Fetched` field gains the batch dim) and then decodes."""

    parts: tuple[Fetched, ...]
    values: tuple[tf.Tensor, ...]
    path: tf.Tensor  # the first input part's path, for with_paths
    key: tuple[tf.Tensor, ...] = ()  # as `Unit`'s


def _strings(paths: tuple[str, ...]) -> tf.Tensor:
    """Paths as one string tensor: one conversion, not a type spec per element."""
    try:
        return tf.constant(paths, tf.string)
    # A file name that is not valid UTF-8 (a str with surrogate escapes, as os.fsdecode gives
    # it): its bytes, as the OS has them. Eager conversion says so with a ValueError, graph
    # conversion with a UnicodeEncodeError.
    except (UnicodeEncodeError, ValueError):
        return tf.constant([os.fsencode(p) for p in paths], tf.string)


class FilesSource(Source):
    """The units of a `DatasetPlan` (files, pairs, ``.npz`` members, windows of them) for the
    loader (`npyio._pipeline.loader`), and their read by the plan's strategy.

    In order, the units are sliced from one string tensor per part (not a Python list, which
    builds a type spec per element). Shuffled, they are gathered from those tensors, a gather
    at a time, in a new permutation each epoch: nothing but a position and a key is iterator
    state. With random windows the units are keyed (`gather`): each window is drawn from the
    iteration's key and the unit's index, so a checkpoint holds the windows to come as it holds
    the order, the same seed draws the same windows, each epoch draws new ones unless
    ``reshuffle_each_iteration=False``, and tf.data service's dynamic sharding still splits the
    epoch by gathers (each unit once, whichever worker reads it).
    """

    def __init__(self, plan: DatasetPlan, read: Reader, report: Reader | None) -> None:
        self.plan, self.reader, self.report, self.column = plan, read, report, plan.column
        self.loader, self.count, self.epoch_count = plan.loader, plan.count, plan.epoch_count
        self.keyed = any(spec.crop is not None and spec.crop.random for spec in plan.specs)
        self.autotune = read.capabilities.autotune
        self.paths = [column[0] for column in plan.columns if column]
        self.units = Unit(
            tuple(_strings(column) for column in plan.columns),
            () if plan.label_values is None else (tf.constant(plan.label_values),),
        )

    def in_order(self) -> tf.data.Dataset:
        return tf.data.Dataset.from_tensor_slices(self.units)

    def gather(self, indices: tf.Tensor, *key: tf.Tensor) -> Unit:
        """A gather of units: one op per part. Keyed, the key's first two 32-bit words as one
        int64, the window's seed, with the unit's index (unit u reads file u % files: its
        window is its own among the file's crops_per_file) and its position in the epoch (which
        places it in its batch)."""
        units, plan = self.units, self.plan
        cases = indices % plan.files if plan.read.crops_per_file > 1 else indices
        gathered = Unit(
            tuple(tf.gather(column, cases) for column in units.paths),
            tuple(tf.gather(values, cases) for values in units.values),
        )
        if not key:
            return gathered
        seed, positions = key
        epoch = tf.fill(tf.shape(indices), seed[0] * (1 << 32) + seed[1])
        return gathered._replace(key=(tf.stack([epoch, indices, positions], axis=1),))

    def read_batch(self, units: Unit) -> object:
        """A batch of units read at once by a reader that reads in decode (the native reader:
        the batch of paths, with no step per element)."""
        plan, read = self.plan, self.reader
        fetched = _fetch(read, plan, units)  # (only names the paths)
        parts = read.decode(fetched, plan.specs, batched=True, draws=_draws(plan, units.key))
        return _element(plan, parts, units.values, units.paths[0])

    def read(self, units: tf.data.Dataset) -> tf.data.Dataset:
        """The plan's strategy: only where the batch goes (module docstring). Batch-then-decode
        by a reader that reads in decode is the loader's batches, each read by `read_batch`."""
        plan, read = self.plan, self.reader
        if self.report is not None:
            return build_skipping(plan, read, self.report, units)
        if plan.strategy != BATCH_THEN_DECODE:
            return build_decode_then_batch(plan, read, units)
        if read.capabilities.fetches:
            return build_batch_then_decode(plan, read, units)
        loader = plan.loader
        assert loader.batch_size is not None  # batch-then-decode without ignore_errors batches
        batching = Batching(
            loader.batch_size,
            loader.drop_remainder,
            loader.num_parallel_calls,
            loader.prefetch,
            loader.deterministic,
        )
        # (a Unit's paths are its first components, as `Reader.batches` expects)
        own = read.batches(
            units,
            plan.specs,
            self.paths,
            batching,
            lambda batch, parts: _element(plan, parts, batch.values, batch.paths[0]),
        )
        return super().read(units) if own is None else own


def _draws(plan: DatasetPlan, key: tuple[tf.Tensor, ...]) -> list[tf.Tensor | None]:
    """Each part's numbers for its window, from the element's (or batch's) key (`Unit`'s:
    the seed's two words, then the position); None for a part without a random window. With
    ``foreground``, the windows that share the inputs' draw carry the centres too."""
    out: list[tf.Tensor | None] = []
    centres = None
    if plan.foreground is not None and key:
        index = plan.foreground
        mask = plan.specs[plan.n_inputs].crop  # the labels' window: their cropped axes
        assert mask is not None and plan.read.foreground is not None
        centres = foreground_centres(
            key[0],
            (index.first, index.classes, index.starts, index.counts, index.coords),
            plan.files,
            mask.axes,
            plan.read.foreground.fraction,
            plan.loader.batch_size,
        )
    for spec in plan.specs:
        window = spec.crop
        if window is None or not window.random:
            out.append(None)
            continue
        seeds = key[0][..., :2]
        out.append(draws(seeds, window, centres if window.group == 0 else None))
    return out


def _element(
    plan: DatasetPlan, parts: list[tf.Tensor], values: tuple[tf.Tensor, ...], path: tf.Tensor
) -> object:
    """One element from its decoded file parts: ``x``, ``(x, y)``, then the input's path with
    ``with_paths``; ``x`` and ``y`` take the structure of the sources (a tensor, a dict, a
    tuple); ``values`` holds the label values, when labels are values. A squeezed window
    (`npyio.Crop`'s ``squeeze``) drops its axes here, after every reader has read it whole."""
    parts = [_squeezed(part, spec) for part, spec in zip(parts, plan.specs)]
    out = [unflatten(plan.inputs, parts[: plan.n_inputs])]
    if plan.labels is not None:
        out.append(unflatten(plan.labels, parts[plan.n_inputs :]))
    out.extend(values)
    if plan.loader.with_paths:
        out.append(path)
    return out[0] if len(out) == 1 else tuple(out)


def _squeezed(part: tf.Tensor, spec: Spec) -> tf.Tensor:
    """``part`` (an element's, or a batch's with a leading axis; a scalar for padding values)
    without its window's squeezed axes."""
    window, rank = spec.crop, len(spec.output.shape or ())
    if window is None or not window.squeeze or part.shape.rank not in (rank, rank + 1):
        return part
    lead = part.shape.rank - rank
    return tf.squeeze(part, axis=[lead + a for a in window.squeeze])


def _fetch(read: Reader, plan: DatasetPlan, unit: Unit) -> list[Fetched]:
    return [read.fetch(path, spec) for path, spec in zip(unit.paths, plan.specs)]


def build_batch_then_decode(
    plan: DatasetPlan, read: Reader, units: tf.data.Dataset
) -> tf.data.Dataset:
    """Fetches each element's bytes in a parallel map, like the read-only floor, then batches
    and decodes whole batches: by a reader that fetches (the graph parser: ``fetches`` in
    `npyio._read.Capabilities`). One that reads in decode (the native reader) reads the
    loader's batches of units (`FilesSource.read_batch`)."""

    def fetch(unit: Unit) -> Fetch:
        return Fetch(tuple(_fetch(read, plan, unit)), unit.values, unit.paths[0], unit.key)

    def decode(batch: Fetch) -> object:
        parts = read.decode(batch.parts, plan.specs, batched=True, draws=_draws(plan, batch.key))
        return _element(plan, parts, batch.values, batch.path)

    # Whole batches keep their order, whatever ``deterministic`` says: an unordered map here
    # could deliver the short final batch before a full one, which ``map(...).batch(...)``
    # never does. Decoding a batch takes about the same time for every batch, so ordering
    # costs next to nothing. (Each decode below is such a map.)
    loader = plan.loader
    ds = parallel_map(units, fetch, loader.num_parallel_calls, loader.deterministic)
    ds = ds.batch(loader.batch_size, drop_remainder=loader.drop_remainder)
    return parallel_map(ds, decode, loader.num_parallel_calls, deterministic=True)


#: The bytes `build_skipping` reads at a time: blocks of whole batches (of units without
#: ``batch_size``) up to this size, at least one batch and at most `SKIP_BLOCK` units. Each block
#: costs a few steps of its own, which a larger block spreads.
SKIP_BLOCK_BYTES = 1 << 20
#: The most units in a block of `build_skipping`.
SKIP_BLOCK = 256


def _block_units(plan: DatasetPlan) -> int:
    """The units `build_skipping` reads at a time (`SKIP_BLOCK_BYTES`)."""
    batch = plan.loader.batch_size or 1
    unit_bytes = sum(spec.hint.size if spec.hint is not None else 0 for spec in plan.specs)
    batches = SKIP_BLOCK_BYTES // max(unit_bytes * batch, 1)
    return batch * max(1, min(batches, SKIP_BLOCK // batch))


def build_skipping(
    plan: DatasetPlan, read: Reader, report: Reader, units: tf.data.Dataset
) -> tf.data.Dataset:
    """Batch-then-decode with ``ignore_errors``, by a reader that says which files it doubts
    (``doubts`` in `npyio._read.Capabilities`: the native reader).

    A block of units (`_block_units`: whole batches, or units without ``batch_size``) is read at
    once (`npyio._read.part.Reader.read_doubting`). A block without a doubted file goes on whole.
    In one with doubts, the files of the doubted elements are fetched again by ``report`` (the
    graph reader, `_fetch_doubted`) and decided by it (`_survivors`): accepted, or refused and
    named on stderr with the words of the skip-and-report that `build_decode_then_batch` reads
    every element with. The survivors are then rebatched (or unbatched): the same elements, in
    the same order and the same batches, as reading every element so. How many survive is
    known only once the files are read, so the length is unknown.

    No refusal raises an error: the maps are single-device (no function that tf.data optimizes
    again at every iterator start, as it would the graph parser's in a ``Dataset.map``), and
    TensorFlow keeps about 1 KiB for each error such a function raises (`npyio._pipeline.map`).
    """
    loader = plan.loader

    def read_block(units: Unit) -> tuple[tuple[tf.Tensor, ...], Unit, tf.Tensor]:
        parts, ok = read.read_doubting(
            _fetch(read, plan, units), plan.specs, _draws(plan, units.key)
        )
        return tuple(parts), units, ok  # (a list would become one tensor in from_tensors)

    def fetch_block(parts: tuple[tf.Tensor, ...], units: Unit, ok: tf.Tensor) -> tf.data.Dataset:
        block = tf.data.Dataset.from_tensors((parts, units, ok))
        return tf.data.Dataset.zip((block, _fetch_doubted(plan, report, units, ok)))

    def settle(block: tuple[tuple[tf.Tensor, ...], Unit, tf.Tensor], fetched: Any) -> object:
        parts, units, ok = block
        kept, units = tf.cond(
            tf.reduce_all(ok),
            lambda: ([tf.identity(p) for p in parts], tf.nest.map_structure(tf.identity, units)),
            lambda: _survivors(plan, report, block, fetched),
        )
        return _element(plan, kept, units.values, units.paths[0])

    ds = units.batch(_block_units(plan))
    ds = parallel_map(ds, read_block, loader.num_parallel_calls, deterministic=True)
    ds = interleave(ds, fetch_block, 1, None)  # a flat_map (`interleave` says why not one)
    ds = parallel_map(ds, settle, loader.num_parallel_calls, deterministic=True)
    if loader.batch_size is None:
        return unbatch_dataset(ds)
    return rebatch_dataset(ds, loader.batch_size, loader.drop_remainder)


def _fetch_doubted(
    plan: DatasetPlan, report: Reader, units: Unit, read: tf.Tensor
) -> tf.data.Dataset:
    """A dataset of one element: the block's elements that ``read`` ([B]) says the kernel
    doubted, each fetched and checked by the reporting ``report``
    (`npyio._read.part.Reader.check`): their [R] indices among the doubted, a `Fetched` of [R]
    per part, and [R] verdicts and skip lines. An element with a file that cannot be read at
    all (a directory named ``*.npy``, no permission, an object the store failed to serve)
    fails alone, skipped by ``ignore_errors`` as in the graph reader's map (its error in
    TensorFlow's log): rare, so the 1 KiB such an error leaves does not matter."""
    doubted = tf.where(tf.logical_not(read))[:, 0]
    paths = [tf.gather(p, doubted) for p in units.paths]
    count = tf.size(doubted, out_type=tf.int64)

    def fetch(i: tf.Tensor) -> tuple[tf.Tensor, tuple[Fetched, ...], tf.Tensor, tf.Tensor]:
        fetched = tuple(report.fetch(p[i], spec) for p, spec in zip(paths, plan.specs))
        return (i, fetched, *report.check(fetched, plan.specs))

    each = parallel_map(tf.data.Dataset.range(count), fetch, None).ignore_errors(log_warning=True)
    each = each.take(tf.where(count > 0, tf.constant(-1, tf.int64), 0))  # 0: makes no iterator
    blank = tf.constant("")
    none = Fetched(blank, blank, (tf.constant(True), blank))
    first = (tf.constant(-1, tf.int64), tuple(none for _ in plan.specs), tf.constant(False), blank)
    # a blank first element, so that the batch exists when no file could be read
    return tf.data.Dataset.from_tensors(first).concatenate(each).batch(count + 1)


def _survivors(
    plan: DatasetPlan,
    report: Reader,
    block: tuple[tuple[tf.Tensor, ...], Unit, tf.Tensor],
    fetched: Any,
) -> tuple[list[tf.Tensor], Unit]:
    """A block's survivors, in order: the elements the kernel read (``read``: [B]; ``parts``
    holds their values), and the doubted ones the reporting ``report`` accepted
    (`_fetch_doubted`), which it now decodes (as a batch: each was checked, so none raises).
    The skip lines of the others are printed, in one write, before the block goes on."""
    parts, units, read = block
    doubted = tf.where(tf.logical_not(read))[:, 0]
    index, each, accepted, lines = tf.nest.map_structure(lambda t: t[1:], fetched)
    index = tf.boolean_mask(index, accepted)  # among the doubted
    each = [tf.nest.map_structure(lambda t: tf.boolean_mask(t, accepted), f) for f in each]
    keys = tuple(tf.gather(k, tf.gather(doubted, index)) for k in units.key)
    decoded = tf.cond(
        tf.size(index) > 0,
        lambda: report.decode(each, plan.specs, batched=True, draws=_draws(plan, keys)),
        lambda: [_no_rows(spec) for spec in plan.specs],
    )
    where = tf.concat([tf.where(read)[:, 0], tf.gather(doubted, index)], 0)
    order = tf.argsort(where)
    text = tf.strings.reduce_join(lines)
    printed = tf.cond(tf.equal(text, ""), lambda: tf.constant(True), lambda: _printed(text))
    with tf.control_dependencies([printed]):
        kept = [tf.gather(tf.concat([p, q], 0), order) for p, q in zip(parts, decoded)]
    return kept, tf.nest.map_structure(lambda t: tf.gather(t, tf.gather(where, order)), units)


def _no_rows(spec: Spec) -> tf.Tensor:
    """No rows of the part ([0, *shape]): nothing allocated, whatever size its shape claims."""
    dims = [0, *(int(d) for d in spec.output.shape or () if d is not None)]
    return tf.zeros(tf.constant(dims, tf.int64), spec.output.dtype)


def _printed(lines: tf.Tensor) -> tf.Tensor:
    with tf.control_dependencies([print_to_stderr(lines)]):
        return tf.constant(True)


def build_decode_then_batch(
    plan: DatasetPlan, read: Reader, units: tf.data.Dataset
) -> tf.data.Dataset:
    """Fetches and decodes each element in the parallel map, then batches (padded if needed).

    With ``ignore_errors`` the reader reports: each refused file is named on stderr before
    its pair is skipped (TensorFlow's own ``ignore_errors`` logs through its C++ logger only,
    which ``TF_CPP_MIN_LOG_LEVEL`` >= 2 silences).
    """

    # Dataset.map would run AutoGraph over this code and the reader's, which take their
    # decisions in Python and build their tf.conds themselves.
    @tf.autograph.experimental.do_not_convert
    def load(unit: Unit) -> object:
        parts = read.decode(_fetch(read, plan, unit), plan.specs, draws=_draws(plan, unit.key))
        return _element(plan, parts, unit.values, unit.paths[0])

    loader = plan.loader
    ds = units
    if plan.read.ignore_errors or not read.capabilities.python_free:
        # Dataset.map, not parallel_map: with ignore_errors, because TensorFlow keeps about
        # 1 KiB for every error a single-device function raises and each refused file is an
        # error; for a reader that runs Python (py_function), because that is the classic
        # pipeline as users write it.
        ds = ds.map(
            load, num_parallel_calls=loader.num_parallel_calls, deterministic=loader.deterministic
        )
        if plan.read.ignore_errors:
            ds = ds.ignore_errors(log_warning=True)
    else:
        ds = parallel_map(ds, load, loader.num_parallel_calls, loader.deterministic)
    if loader.batch_size is not None:
        if all(spec.output.static for spec in plan.specs):
            ds = ds.batch(loader.batch_size, drop_remainder=loader.drop_remainder)
        else:
            ds = ds.padded_batch(
                loader.batch_size,
                padding_values=_padding_values(plan),
                drop_remainder=loader.drop_remainder,
            )
    return ds


def _padding_values(plan: DatasetPlan) -> object:
    """``padded_batch``'s ``padding_values`` for the plan's elements: ``plan.padding`` for the
    file parts (None: zeros), zeros for label values, "" for a path; None when all are zeros."""
    if plan.padding is None:
        return None
    parts = [
        tf.constant(0 if value is None else value, spec.output.dtype)
        for value, spec in zip(plan.padding, plan.specs)
    ]
    values = () if plan.label_values is None else (tf.zeros([], plan.label_values.dtype),)
    return _element(plan, parts, values, tf.constant("", tf.string))


def packed_source(plan: PackPlan) -> RowsSource:
    """The rows of a pack's plan as a source of `npyio.dataset` elements
    (`npyio._sources.pack_plan`): the sources' structure, then the path with ``with_paths``."""
    index, loader = plan.index, plan.loader
    inputs_tmpl = structure_from_json(index.inputs, LEAF)
    labels_tmpl = None if index.labels is None else structure_from_json(index.labels, LEAF)
    n_inputs = len(flatten(inputs_tmpl, inputs_tmpl))
    n_parts = len(index.parts) - 1  # the last part is ``order``
    # (only with paths: a constant of every name would be rewritten with the graph each epoch)
    names = tf.constant([os.fsencode(n) for n in index.names]) if loader.with_paths else None

    def finish(*parts: tf.Tensor) -> object:
        leaves = list(parts)
        out = [unflatten(inputs_tmpl, leaves[:n_inputs])]
        if labels_tmpl is not None:
            out.append(unflatten(labels_tmpl, leaves[n_inputs:n_parts]))
        if names is not None:
            out.append(tf.gather(names, leaves[n_parts]))
        return out[0] if len(out) == 1 else tuple(out)

    return rows_source(plan.rows, finish=finish, column=plan.column)


def source(plan: DatasetPlan | PackPlan) -> Source:
    """The `Source` of a plan, by its source kind, with the reader that reads it."""
    if isinstance(plan, PackPlan):
        return packed_source(plan)
    backend = usable(plan.backend)  # the fallback, where the native reader cannot be built
    if backend != plan.backend:
        plan = plan.read_by(backend)
    firsts = [column[0] for column in plan.columns if column]
    one_get = capabilities(plan.backend).one_get and on_gcs(firsts)
    ignore_errors = plan.read.ignore_errors
    # (batch-then-decode with ignore_errors: only by a reader that doubts, `choose_strategy`)
    skipping = ignore_errors and plan.strategy == BATCH_THEN_DECODE
    read = reader(plan.backend, report=ignore_errors and not skipping, one_get=one_get)
    report = None
    if skipping:
        fallback = read.capabilities.fallback or plan.backend
        report = reader(fallback, report=True, one_get=one_get)
    files = FilesSource(plan, read, report)
    one_request = one_get and not ignore_errors
    files.blocks = not one_request or any(
        s.hint is None or s.member is not None for s in plan.specs
    )
    return files


def build(plan: DatasetPlan | PackPlan, finish: Finish | None = None) -> tf.data.Dataset:
    """The pipeline a plan describes: the loader's `load` of its `source`; ``finish`` is
    applied to the batches before the prefetch (``dataset_from_directory`` encodes its labels
    there; a pack's elements are made as its rows are read)."""
    require_tf2()
    if isinstance(plan, PackPlan):
        return load(packed_source(plan))
    return load(source(plan), finish)


def build_all(
    plans: DatasetPlan | PackPlan | tuple[DatasetPlan | PackPlan, DatasetPlan | PackPlan],
    finish: Finish | None = None,
) -> tf.data.Dataset | tuple[tf.data.Dataset, tf.data.Dataset]:
    """`build` of one plan, or of each of a training and validation pair."""
    if isinstance(plans, tuple):
        return build(plans[0], finish), build(plans[1], finish)
    return build(plans, finish)


@entry_point
def dataset(
    inputs: PathSpec,
    labels: PathSpec | None = None,
    *,
    batch_size: int | None = 32,
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
    backend: str = DEFAULT_BACKEND,
    ignore_errors: bool = False,
    shard: object = None,
    key: str | None = None,
    label_key: str | None = None,
    crop: object = None,
    label_crop: object = "same",
    crops_per_file: int = 1,
    foreground: object = None,
    max_file_size: int | None = None,
    max_header_size: int = npy.MAX_HEADER_SIZE,
    validation_split: float | None = None,
    subset: str | None = None,
    with_paths: bool = False,
    padding_value: object = None,
) -> tf.data.Dataset | tuple[tf.data.Dataset, tf.data.Dataset]:
    """A ``tf.data.Dataset`` of ``.npy`` files (and their labels), decoded in graph mode.

    The drop-in replacement for ``map(tf.py_function(np.load))``: files are read with
    ``tf.io.read_file`` and decoded by graph ops in a parallel map, so no Python runs per
    element, the pipeline serializes, and shapes are static. The pipeline is: the list of paths
    -> split -> shard -> shuffle (of paths only) -> parallel read and decode -> batch (or
    ``padded_batch``) -> prefetch. An iterator checkpoint holds TensorFlow's default (the
    prefetched batches too); npyio's deterministic pipelines restore exactly under
    ``experimental_symbolic_checkpoint`` as well, which keeps it to kilobytes, and which you
    turn on (docs/keras.md says why npyio does not, and what it breaks).

    Args:
        inputs: A directory (its ``*.npy`` files, sorted by name), a glob pattern, a file, a
            sequence of paths (list, 1-D array or string tensor), or a dict or tuple of such
            sources (every element is then a dict or tuple). Any TensorFlow filesystem path.
            A directory written by `npyio.pack` (``npyio pack``) is read from its shards: the
            same elements as the packed sources (``labels`` then stays ``None``).
        labels: Like ``inputs``, or an array or list of values, one (or one row) per input
            file, or ``None``. Sources pair by file name when any is a directory or a glob,
            by position otherwise.
        batch_size: Yield batches of this size: 32 by default, as Keras's
            ``*_dataset_from_directory`` (and `npyio.dataset_from_directory`), so the dataset
            goes straight to ``fit``. ``None`` yields single elements, for a map of your own
            before a ``batch``, a ``padded_batch`` or a ``Dataset.window``; ``fit`` refuses
            those as "Expected shape (None, 8, 8), but input has incompatible shape (8, 8)"
            (docs/options.md, "The default batch_size").
        shuffle: Shuffle the files, a full uniform shuffle, anew each epoch.
        seed: The shuffle and split seed: the same seed gives the same sequence of orders.
        reshuffle_each_iteration: Give each epoch a new order (when shuffling).
        drop_remainder: Drop the last, smaller batch (the batch dim is then static).
        dtype, shape: What the inputs load as; ``None`` dims allow variable sizes (batches
            are then zero-padded). By default both come from the first file's header; with
            both given no file is read when the dataset is built.
        label_dtype, label_shape: The same for the labels.
        num_parallel_calls: Files read and decoded in parallel (AUTOTUNE by default).
        deterministic: As for ``Dataset.map``: ``False`` trades the order of samples for
            speed (batches stay full but the last). A packed directory refuses ``False``: its
            rows are decoded in order.
        prefetch: Batches to prefetch (AUTOTUNE by default); ``None`` or 0 for none.
        backend: ``"native"`` (the default), ``"graph"`` or ``"py_function"`` (not
            serializable).
        ignore_errors: Skip a pair whose input or label file is bad, naming each skipped file
            on stderr as ``npyio: skipping PATH: reason``. The native reader still reads the
            batches; only the files it doubts go through the graph parser, which decodes
            them or skips the bad ones (docs/errors.md says what that costs). The dataset's
            length is then unknown: how many pairs survive is known only once they are read.
        shard: ``(num_shards, index)`` or a ``tf.distribute.InputContext``: keep only this
            shard's files (every ``num_shards``-th, from ``index``: each file goes to exactly
            one shard). ``batch_size`` is then per shard (per host). Shuffled, each shard draws
            an order of its own (the shuffle's seed is folded with ``(num_shards, index)``;
            the split still uses ``seed`` as given), so hosts with one ``seed`` do not step
            in lockstep. With ``drop_remainder``, every shard reads ``files // num_shards`` of
            its files per epoch (a new choice each shuffled epoch) and so yields the same
            number of batches.
        key, label_key: Read these members of ``.npz`` archives instead of ``.npy`` files
            (without ``labels``, both from the same archives). Needs ``backend="graph"``.
        crop: Read a window of each input array instead of the whole: a tuple of sizes
            (``crop=(96, 96, 96)``: a random 96x96x96 window of the leading axes, drawn anew
            for every element and epoch from ``seed``), or an `npyio.Crop` (a centre or fixed
            window, sizes as fractions, other axes, trimming or padding past the edge). The
            native reader reads only the window's bytes (docs/layouts.md, "Crops").
        label_crop: The labels' window, when labels are files: ``"same"`` (the default: the
            inputs' window, the same one for an image and its mask), ``None`` (labels whole),
            or a crop of their own, drawn separately.
        crops_per_file: With a random ``crop``, read this many windows of each file per
            epoch (MONAI's ``num_samples``): each is a unit of the epoch, shuffled with the
            rest, so a batch mixes cases; the epoch has ``files * crops_per_file`` elements.
        foreground: Patch sampling for segmentation, with a random ``crop`` and the masks as
            ``labels``: the share of windows centred on a labelled voxel (nnU-Net's
            ``oversample_foreground_percent``: 1/3), or an `npyio.Foreground` (which classes,
            how many locations to keep). The locations come from an index built from the masks
            once and cached (docs/layouts.md, "3-D segmentation").
        max_file_size: Refuse files larger than this many bytes (not with ``key``).
        max_header_size: Refuse headers longer than this many bytes (10,000, as numpy).
        validation_split, subset: Hold out ``int(validation_split * n)`` files (Keras's
            count), drawn with ``seed``, which a split needs; ``subset`` is ``"training"``,
            ``"validation"`` or ``"both"`` (a tuple of the two datasets). Which files are held
            out depends only on the files, ``validation_split`` and ``seed``: a training call
            and a validation call with the same seed get disjoint subsets covering every file,
            whatever their other options (``shuffle`` only orders each subset).
        with_paths: Add the (first) input file's path as the last component of each element.
            Keras's ``fit`` would take it for sample weights ("Cast string to float is not
            supported"): drop it first, ``ds.map(lambda x, y, path: (x, y))``.
        padding_value: What pads parts with ``None`` dims in a batch (zeros by default), as
            ``Dataset.padded_batch``'s ``padding_values``: one number for every part with a
            ``None`` dim, or a structure like the elements' (``x``, or ``(x, y)``; ``None``
            leaves a part's zeros). Each must be a value of its part's dtype (``-1.0`` for
            float32, ``-1`` for int64). Refused when no part has a ``None`` dim.

    Returns:
        A dataset of batches of ``x`` or ``(x, y)`` (then the path), or of single elements
        with ``batch_size=None``.

    Raises:
        ValueError: When the dataset is built: a bad argument, an option the source refuses
            (docs/options.md's table of options per source: `npyio._sources.kinds`), no
            files found, sources that do not pair (the first ten unpaired names listed), a
            ``padding_value`` not of its part's dtype.
        NpyFormatError: When the dataset is built: a bad first header (read when ``dtype`` or
            ``shape`` is not given), a first file whose size is not the one its header
            declares, or a header that contradicts them, naming the file.
        TypeError: When the dataset is built: an argument of the wrong type (``shuffle`` not
            a bool, ``seed`` not an int), an unsupported dtype or a bad shape; a keyword
            ``dataset`` has not (the message names the nearest one, or which entry point has
            it and what ``dataset`` calls it).
        tf.errors.InvalidArgumentError: When iterated: a bad file, or one that differs from
            the element spec; the message's first line ends with ``[PATH: reason]``.

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
    # each argument passed to its field by name, and checked there
    read = ReadOptions(
        dtype=dtype,
        shape=shape,
        label_dtype=label_dtype,
        label_shape=label_shape,
        key=key,
        label_key=label_key,
        crop=crop,  # type: ignore[arg-type]  # its check makes a Crop of it
        label_crop=label_crop,  # type: ignore[arg-type]
        crops_per_file=crops_per_file,
        foreground=foreground,  # type: ignore[arg-type]  # its check makes a Foreground of it
        backend=backend,
        ignore_errors=ignore_errors,
        max_file_size=max_file_size,
        max_header_size=max_header_size,
    )
    loader = LoaderOptions(
        batch_size=batch_size,
        drop_remainder=drop_remainder,
        shuffle=shuffle,
        seed=seed,
        reshuffle_each_iteration=reshuffle_each_iteration,
        shard=shard,
        num_parallel_calls=num_parallel_calls,
        deterministic=deterministic,
        prefetch=prefetch,
        with_paths=with_paths,
        padding_value=padding_value,
    )
    split = SplitOptions(validation_split=validation_split, subset=subset)
    return build_all(plan(inputs, labels, DatasetOptions(read, loader, split)))
