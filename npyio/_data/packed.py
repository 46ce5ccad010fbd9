"""Reading a packed directory (``npyio pack``'s output) as `npyio.dataset` reads its sources.

`npyio.dataset(OUT)` comes here when ``OUT`` holds a pack index (`npyio._format.packed`). The
shards are read by `npyio.rows`'s machinery (`npyio._data.rows.build_rows`): each part is a
*side* of a `RowsPlan`, a run of rows of one shard is a *piece*, read with
``FixedLengthRecordDataset`` in chunks of about 1 MiB and decoded with ``decode_raw``; the
parts of a piece are zipped. What `npyio.dataset`'s options mean here:

- **Order.** Unshuffled, rows come in the packed order, which is the sources' order (unless the
  pack was written with ``shuffle``): the same elements, in the same order, with the same
  ``element_spec`` as `npyio.dataset` of the sources.
- **Shuffle** (by index over blocks of rows, then by index within windows): the rows are cut
  into pieces of about `PIECE_BYTES` (per part), the pieces are put in a new order each epoch
  by `npyio._data.shuffle.IndexShuffle` (a permutation computed in the graph: a checkpoint
  holds a position, not a list), and `CYCLE` at a time form a window, whose rows are read
  together and come out in a uniformly random order (`npyio._data.rows`; no buffer of rows).
  Every row comes once per epoch; the same seed gives the same sequence of orders. Not the
  full uniform shuffle of `npyio.dataset` on loose files: a row's neighbours come from the
  ``CYCLE`` pieces of its window, about ``CYCLE * PIECE_BYTES`` of packed rows. Rows stay
  sequential reads of 1 MiB, which is what makes packed data fast (``pack --shuffle`` mixes
  the rows once more, when written).
- **Split.** ``validation_split``/``subset`` hold out exactly the rows `npyio.dataset` holds
  out of the sources (the last ``int(split * n)``, after the seeded shuffle when
  ``shuffle``); unshuffled that is one run of rows, shuffled many short runs (slower to read:
  pack with ``--shuffle`` and split unshuffled for speed).
- **Shard** (``shard=``/``InputContext``): by row, as `npyio.rows` does: host ``i`` of ``n``
  reads the contiguous rows ``[total * i // n, total * (i + 1) // n)`` of its subset, so hosts
  differ by at most one row (sharding by shard file would leave hosts idle when the shards
  do not divide evenly, and a pack often has a single shard).
- **with_paths**: the original input file of each row, from the index's names and the
  ``order`` part.
"""

from __future__ import annotations

import os

import numpy as np
import tensorflow as tf

from npyio._data.options import DatasetOptions, RowsOptions
from npyio._data.plan import split
from npyio._data.rows import build_rows
from npyio._data.rows_plan import CHUNK_BYTES, CYCLE, RowsPlan, RowsSide, pieces, rows_side
from npyio._data.structure import LEAF, flatten, pack, per_part
from npyio._format import npy
from npyio._format.files import UnknownSchemeError, is_local, join, path_text
from npyio._format.packed import INCOMPLETE, INDEX, PackIndex, structure_from_json
from npyio._io.files import exists
from npyio._io.packed import read_index

__all__ = ["PIECE_BYTES", "is_packed", "packed_dataset"]

#: When shuffling, pieces are runs of about this many bytes of the widest part.
PIECE_BYTES = 1 << 20


def is_packed(inputs: object) -> str | None:
    """The directory, when ``inputs`` is one path to a packed (or partly packed) directory:
    one holding the index or the marker a pack writes first (two look-ups, no listing)."""
    text = path_text(inputs)
    if text is None or any(c in text for c in "*?[") or text.endswith(".npy"):
        return None
    if is_local(text) and not os.path.isdir(text):
        return None
    try:
        found = exists(join(text, INDEX)) or exists(join(text, INCOMPLETE))
    except UnknownSchemeError:  # the resolver names the scheme, as for any other source
        return None
    return text if found else None


#: Options of npyio.dataset that describe loose files, which a pack has already fixed.
_FIXED = ("key", "label_key", "max_file_size")


def _check_options(index: PackIndex, labels: object, options: DatasetOptions) -> None:
    """Refuses what does not apply to a pack, and a dtype/shape the pack contradicts."""
    where = index.directory
    if labels is not None:
        raise ValueError(
            f"{where}: a packed directory holds its labels; call npyio.dataset({where!r}) "
            f"without labels"
        )
    read = options.read
    for name in _FIXED:
        if getattr(read, name) is not None:
            raise ValueError(f"{where}: {name}= does not apply to a packed directory")
    if read.backend != "graph" or read.ignore_errors:
        raise ValueError(
            f"{where}: a packed directory is read by npyio's row reader; backend= and "
            f"ignore_errors= do not apply (npyio verify checks its shards)"
        )
    if options.loader.padding_value is not None:  # a shard holds rows of one shape
        raise ValueError(f"{where}: padding_value= does not apply to a packed directory")
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


def _runs(indices: np.ndarray) -> list[tuple[int, int]]:
    """Sorted indices as runs [a, e) of consecutive rows."""
    if len(indices) == 0:
        return []
    rows = np.sort(indices)
    breaks = np.flatnonzero(np.diff(rows) != 1) + 1
    starts = np.concatenate([[0], breaks])
    ends = np.concatenate([breaks, [len(rows)]])
    return [(int(rows[a]), int(rows[e - 1]) + 1) for a, e in zip(starts, ends)]


def _plan(
    index: PackIndex,
    sides: tuple[RowsSide, ...],
    rows: np.ndarray,
    options: DatasetOptions,
) -> RowsPlan:
    loader = options.loader
    counts = [s.rows for s in index.shards]
    runs = _runs(rows)
    if loader.shard is not None:  # by row: contiguous ranges of this subset's rows
        n, i = loader.shard
        total = sum(e - a for a, e in runs)
        lo, hi = total * i // n, total * (i + 1) // n
        if hi == lo:
            raise ValueError(f"shard {i} of {n} has no rows ({total} in all)")
        kept, seen = [], 0
        for a, e in runs:
            s, t = max(a, a + lo - seen), min(e, a + hi - seen)
            if s < t:
                kept.append((s, t))
            seen += e - a
        runs = kept
    widest = max(max(s.row_bytes for s in sides), 1)
    chunk = max(1, CHUNK_BYTES // widest)
    block, buffer = None, None
    if loader.shuffle:
        block = max(1, PIECE_BYTES // widest)
        buffer = CYCLE * block
        chunk = max(1, min(chunk, buffer // (2 * CYCLE)))
    cut = [p for a, e in runs for p in pieces(counts, a, e, block)]
    rows_options = RowsOptions(
        shuffle_buffer=buffer,
        seed=loader.seed,
        batch_size=loader.batch_size,
        drop_remainder=loader.drop_remainder,
        num_parallel_reads=loader.num_parallel_calls,
    )
    return RowsPlan(sides, tuple(cut), chunk, CYCLE, rows_options)


def _build(index: PackIndex, plan: RowsPlan, options: DatasetOptions) -> tf.data.Dataset:
    """The rows of ``plan`` as `npyio.dataset` elements: the sources' structure, then the
    path with ``with_paths``."""
    loader = options.loader
    inputs_tmpl = structure_from_json(index.inputs, LEAF)
    labels_tmpl = None if index.labels is None else structure_from_json(index.labels, LEAF)
    n_inputs = len(flatten(inputs_tmpl, inputs_tmpl))
    n_parts = len(index.parts) - 1  # the last part is ``order``
    # (only with paths: a constant of every name would be rewritten with the graph each epoch)
    names = tf.constant([os.fsencode(n) for n in index.names]) if loader.with_paths else None

    def finish(*parts: tf.Tensor) -> object:
        leaves = list(parts)
        out = [pack(inputs_tmpl, leaves[:n_inputs])]
        if labels_tmpl is not None:
            out.append(pack(labels_tmpl, leaves[n_inputs:n_parts]))
        if names is not None:
            out.append(tf.gather(names, leaves[n_parts]))
        return out[0] if len(out) == 1 else tuple(out)

    return build_rows(
        plan,
        reshuffle_each_iteration=loader.reshuffle_each_iteration,
        finish=finish,
        prefetch=loader.prefetch,
    )


def packed_dataset(
    directory: str, labels: object, options: DatasetOptions
) -> tf.data.Dataset | tuple[tf.data.Dataset, tf.data.Dataset]:
    """`npyio.dataset` of a packed directory (see the module docstring).

    Raises:
        IncompletePackError: for a directory an interrupted pack left.
        PackIndexError: (an NpyFormatError) naming the index, for an index that is not valid
            or that a shard file contradicts (missing, damaged, other dtype, shape or rows).
        ValueError: for an option that does not apply, or a dtype/shape the pack contradicts.
    """
    index = read_index(directory)
    _check_options(index, labels, options)
    parts = list(range(len(index.parts)))
    if not options.loader.with_paths:
        parts = parts[:-1]  # ``order`` is read only for the paths
    sides = tuple(rows_side(index.paths(p)) for p in parts)
    for side, p in zip(sides, parts):
        if side.row_shape != index.parts[p].shape:
            raise ValueError(f"{side.files[0].path}: its rows do not match the index")
    subsets = split(index.count, options.split, options.loader)
    built = []
    for rows in subsets:
        built.append(_build(index, _plan(index, sides, rows, options), options))
    return built[0] if len(built) == 1 else (built[0], built[1])
