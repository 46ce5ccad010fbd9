"""Planning a packed directory (``npyio pack``'s output) as `npyio.dataset` reads its sources.

`npyio._sources.plan.plan` comes here when ``OUT`` holds a pack index (`npyio._format.packed`), and
`npyio._sources.dataset.packed_source` makes the `PackPlan`'s source. What each option means for a
pack, or why it is refused, is its column of the capability table, `PACK_COLUMN`. The shards
are read by `npyio.rows`'s machinery (`npyio._sources.rows.rows_source`): each part is a *side* of a
`RowsPlan`, and each row (a sample) is a unit of the one index stream, read a batch at a time by the
reader of row ranges (`npyio._read.rows.RowReader.read_rows`: a ``pread`` per run of neighbouring
rows on local shards). What `npyio.dataset`'s options mean here:

- **Order.** Unshuffled, rows come in the packed order, which is the sources' order (unless the
  pack was written with ``shuffle``): the same elements, in the same order, with the same
  ``element_spec`` as `npyio.dataset` of the sources.
- **Shuffle**: by index over the rows, as loose files are shuffled (a full uniform shuffle,
  anew each epoch, a checkpoint of a few scalars). On object storage, where a request per row
  would cost far more than the row, by cycles instead
  (`npyio._sources.rows_plan.RowsPlan.by_cycles`):
  the rows are cut into pieces by `npyio.rows`'s rule (`npyio._sources.rows_plan.plan_runs`: 4 to
  8 MiB of the widest part), the pieces put in a new order each epoch, and 8 at a time (or
  ``num_parallel_calls``) form a cycle whose rows come out in a uniformly random order
  (docs/shuffling.md, "Which shuffle each kind gets").
- **Split.** ``validation_split``/``subset`` hold out exactly the rows `npyio.dataset` holds
  out of the sources: ``int(split * n)`` rows drawn with ``seed``, whatever ``shuffle`` is
  (`npyio._pipeline.options.split`), a random subset: its rows are the units (runs of a few rows
  each, a read per run in order); shuffled by cycles, read as spans of rows
  (`npyio._sources.rows_plan.subset_pieces`) whose rows of the other subset are dropped in the
  graph, one mask per chunk, so a split costs no piece per run.
- **Shard** (``shard=``/``InputContext``): by row, as `npyio.rows` does: host ``i`` of ``n``
  reads the contiguous rows ``[total * i // n, total * (i + 1) // n)`` of its subset, so hosts
  differ by at most one row (sharding by shard file would leave hosts idle when the shards
  do not divide evenly, and a pack often has a single shard). Each host shuffles its rows
  with keys of its own (`npyio._pipeline.shuffle.shard_seed`); with ``drop_remainder`` every host
  reads ``total // n`` rows per epoch, so all yield the same batches.
- **with_paths**: the original input file of each row, from the index's names and the
  ``order`` part.
- **Refused** (the table's messages): ``labels``, ``key``/``label_key``, ``backend``,
  ``ignore_errors``, ``max_file_size``, ``max_header_size``, ``padding_value`` (a pack has
  fixed what they choose when it was written), and ``deterministic=False`` (rows are decoded
  in order).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from npyio._format import npy
from npyio._format.files import UnknownSchemeError, is_local, path_text
from npyio._format.packed import PackIndex, structure_from_json
from npyio._io.packed import read_index, state
from npyio._pipeline.capabilities import (
    LOADER,
    NEEDS_KEY,
    REFUSED,
    Column,
    Use,
    absent,
    honoured,
)
from npyio._pipeline.options import DatasetOptions, LoaderOptions, ReadOptions, split
from npyio._pipeline.structure import LEAF, per_part
from npyio._sources.rows_plan import RowsPlan, RowsSide, plan_runs, row_runs, rows_side, shard_runs

__all__ = ["PACK", "PACK_COLUMN", "PackPlan", "is_packed", "plan_packed", "plan_subset"]

PACK = "pack"


def _not_for_pack(name: str, why: str = "") -> Use:
    message = f"{name}= does not apply to a packed directory"
    return Use(REFUSED, why or "refused", f"{message}: {why}" if why else message)


_ROW_READER = (
    "a packed directory is read by npyio's row reader; backend= and ignore_errors= do not "
    "apply (npyio verify checks its shards)"
)
_WHOLE = "a pack's rows are read whole; crop the loose files"
#: What each option means for a pack: the capability table's column
#: (`npyio._pipeline.capabilities`). A pack refuses what it fixed when it was written.
PACK_COLUMN = Column(
    PACK,
    "a pack (`npyio.pack`)",
    {
        **LOADER,
        "shuffle": honoured(
            "rows in a full uniform shuffle, anew each epoch (on object storage: pieces of rows "
            "in a new order, rows permuted within cycles of 8)"
        ),
        "shard": honoured("by row (contiguous ranges of rows)"),
        "num_parallel_calls": honoured("chunks decoded at once"),
        "deterministic": Use(
            REFUSED,
            "`False` refused: rows come in order",
            "deterministic=False does not apply to a packed directory: its rows are decoded "
            "in order",
            refuses=lambda value: value is False,
        ),
        "prefetch": honoured(),
        "with_paths": honoured("the source file each row was packed from"),
        "padding_value": _not_for_pack("padding_value", "a shard holds rows of one shape"),
        **{
            name: honoured("checked against the pack's")
            for name in ("dtype", "shape", "label_dtype", "label_shape")
        },
        **{
            name: _not_for_pack(name, _WHOLE)
            for name in ("crop", "label_crop", "crops_per_file", "foreground")
        },
        "label_key": NEEDS_KEY,  # and key= does not apply to a packed directory
        "backend": Use(REFUSED, "the row reader reads a pack", _ROW_READER),
        "ignore_errors": Use(REFUSED, "the row reader reads a pack", _ROW_READER),
        "max_file_size": _not_for_pack("max_file_size"),
        "max_header_size": Use(
            REFUSED,
            "its index holds the headers",
            "max_header_size= does not apply to a packed directory: its index holds the headers",
        ),
        "shuffle_buffer": absent("`npyio.dataset`"),
        "num_parallel_reads": absent("`npyio.dataset`"),
    },
)


def is_packed(inputs: object) -> str | None:
    """The directory, when ``inputs`` is one path to a packed (or partly packed) directory by
    `npyio._io.packed.state`'s rule, asked without a listing (two look-ups)."""
    text = path_text(inputs)
    if text is None or any(c in text for c in "*?[") or text.endswith(".npy"):
        return None
    if is_local(text) and not os.path.isdir(text):
        return None
    try:
        found = state(text, listing=False)
    except UnknownSchemeError:  # the resolver names the scheme, as for any other source
        return None
    return None if found is None else text


@dataclass(frozen=True)
class PackPlan:
    """Everything `npyio.dataset` decides about a pack before it builds a graph: the index,
    the rows of one subset (a `RowsPlan` whose sides are the parts, ``order`` last with
    ``with_paths``), and the loader options `npyio.rows` has not (reshuffle, prefetch,
    paths)."""

    index: PackIndex
    rows: RowsPlan
    loader: LoaderOptions

    @property
    def column(self) -> Column:
        """Its kind's column of the capability table."""
        return PACK_COLUMN

    @property
    def kind(self) -> str:
        return PACK


def _check_specs(index: PackIndex, read: ReadOptions) -> None:
    """Refuses a dtype or shape the pack contradicts (what the table refuses for a pack,
    `npyio._sources.plan.plan` has refused)."""
    where = index.directory
    inputs_tmpl = structure_from_json(index.inputs, LEAF)
    labels_tmpl = None if index.labels is None else structure_from_json(index.labels, LEAF)
    sides = [("inputs", inputs_tmpl, read.dtype, read.shape)]
    if labels_tmpl is not None:
        sides.append(("labels", labels_tmpl, read.label_dtype, read.label_shape))
    parts = iter(index.parts)
    for side, tmpl, dtype, shape in sides:
        for dt, sh in zip(per_part(tmpl, dtype, "dtype"), per_part(tmpl, shape, "shape")):
            part = next(parts)
            if dt is not None and npy.parse_dtype(dt) != part.dtype:
                raise ValueError(
                    f"{where}: {part.name} is packed as {part.dtype.name}, not "
                    f"{npy.parse_dtype(dt).name}; cast it in a map instead"
                )
            dims = npy.parse_shape(sh)
            if dims is not None and (
                len(dims) != len(part.shape)
                or any(d is not None and d != p for d, p in zip(dims, part.shape))
            ):
                raise ValueError(
                    f"{where}: {part.name} is packed with shape {npy.show_shape(part.shape)}, "
                    f"which {side} shape={sh!r} contradicts"
                )


def plan_subset(
    index: PackIndex, sides: tuple[RowsSide, ...], rows: np.ndarray, options: DatasetOptions
) -> RowsPlan:
    """The `RowsPlan` of a pack's ``rows`` (ascending or not: they are read ascending, or
    shuffled as ``options`` says): this shard's, cut by the rule of `npyio.rows`
    (`npyio._sources.rows_plan.plan_runs`)."""
    loader = options.loader
    runs = row_runs(rows)
    if loader.shard is not None and not shard_runs(runs, loader.shard):
        n, i = loader.shard
        raise ValueError(f"shard {i} of {n} has no rows ({len(rows)} in all)")
    return plan_runs(sides, [s.rows for s in index.shards], runs, loader)


def plan_packed(directory: str, options: DatasetOptions) -> PackPlan | tuple[PackPlan, PackPlan]:
    """The plan of `npyio.dataset` of a packed directory (see the module docstring): one, or
    two for ``subset="both"`` (training, validation). The options a pack refuses (labels
    given, ``key``, the table's) are `npyio._sources.plan.plan`'s to refuse, before this.

    Raises:
        IncompletePackError: for a directory an interrupted pack left.
        PackIndexError: (an NpyFormatError) naming the index, for an index that is not valid
            or that a shard file contradicts (missing, damaged, other dtype, shape or rows).
        ValueError: for a dtype/shape the pack contradicts.
    """
    index = read_index(directory)
    _check_specs(index, options.read)
    parts = list(range(len(index.parts)))
    if not options.loader.with_paths:
        parts = parts[:-1]  # ``order`` is read only for the paths
    sides = tuple(rows_side(index.paths(p)) for p in parts)
    for side, p in zip(sides, parts):
        if side.row_shape != index.parts[p].shape:
            raise ValueError(f"{side.files[0].path}: its rows do not match the index")
    loader = options.loader
    plans = [
        PackPlan(index, plan_subset(index, sides, rows, options), loader)
        for rows in split(index.count, options.split, loader.seed, "rows")
    ]
    return plans[0] if len(plans) == 1 else (plans[0], plans[1])
