"""The loader: which units, in what order, for every source kind.

A source kind (`npyio._sources`: loose files and ``.npz`` members, class folders, a pack, the
rows of big arrays) is a `Source`: it answers how many units an epoch has, how to make a
gather of them from their positions, and how to read the stream of units into elements. The
loader does the rest, once, for every kind (`load`):

1. the index stream of one epoch (`stream`): positions in order, or shuffled by index
   (`npyio._pipeline.shuffle.IndexShuffle`: a permutation per epoch, with the shard's own keys
   and, with ``drop_remainder``, every shard's equal count), each gather of positions made into
   units by the source. tf.data service's ``distributed_epoch`` splits that stream, so each unit
   comes once per epoch whichever worker reads it;
2. the source's read of that stream (`Source.read`): for most kinds the loader's ``batch``, then
   a parallel map of the source's batch read (`Source.read_batch`); loose files of one shape on
   the local disk go to the native batch source instead (``NpyioBatchDataset``: units in,
   batches out, `npyio._read.part.Reader.batches`);
3. the caller's ``finish``, the prefetch, the anchor that keeps the key generator in every
   checkpoint (`npyio._pipeline.shuffle.IndexShuffle.anchor`), the reader's autotune setting,
   and what object storage needs (`npyio._pipeline.remote.for_storage`).

This module never imports a source kind's module (``tests/pipeline/test_loader.py`` holds that
line): a new kind is a new `Source` and a column of the capability table, with no edit here.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Sequence
from typing import Any

import tensorflow as tf

from npyio._pipeline.capabilities import Column
from npyio._pipeline.map import parallel_map
from npyio._pipeline.options import LoaderOptions
from npyio._pipeline.remote import for_storage
from npyio._pipeline.shuffle import epoch_shuffle

__all__ = ["Anchor", "Finish", "Source", "load", "stream"]

#: A function applied to the read elements before they are prefetched.
Finish = Callable[[tf.data.Dataset], tf.data.Dataset]
#: What keeps a shuffle's key generator in every checkpoint, applied to the finished pipeline
#: (`npyio._pipeline.shuffle.IndexShuffle.anchor`); None for an epoch without one.
Anchor = Callable[[tf.data.Dataset], tf.data.Dataset]


class Source(abc.ABC):
    """What a source kind tells the loader about one epoch of its units.

    Attributes:
        column: Its column of the capability table (`npyio._pipeline.capabilities.Column`):
            its name (`kind`) and what each option means for it, which its plan's options
            were checked against.
        loader: The loader's options (`npyio._pipeline.options.LoaderOptions`).
        count: The units of this shard, of which the index stream permutes positions.
        epoch_count: The units delivered each epoch: `count`, or under ``shard=`` with
            ``drop_remainder`` the count every shard delivers.
        keyed: Whether each gather of units gets the iteration's key and the positions
            (random windows are drawn from them: `gather`).
        autotune: Whether tf.data's autotuning stays on (the reader's capability).
        paths: A path of each part (a part's files share a file system), for `for_storage`.
        blocks: Whether some reads on ``gs://`` fill TensorFlow's read block
            (`npyio._pipeline.remote.remote_threads`).
    """

    column: Column
    loader: LoaderOptions
    count: int
    epoch_count: int
    keyed: bool = False
    autotune: bool = True
    paths: Sequence[str] = ()
    blocks: bool = True

    @property
    def kind(self) -> str:
        """Its name: its column's."""
        return self.column.kind

    @abc.abstractmethod
    def gather(self, indices: tf.Tensor, *key: tf.Tensor) -> Any:
        """The units at ``indices`` (int64 [G], a gather of the stream), with ``key`` (this
        iteration's key, int64 [3], and the positions, int64 [G]) when `keyed`: a structure of
        tensors with G rows."""

    def in_order(self) -> tf.data.Dataset | None:
        """The units of an unshuffled, unkeyed epoch, where the kind has a cheaper stream than
        gathers of a range (slices of its columns); None: gathers."""
        return None

    def gather_parallelism(self) -> int | None:
        """Gathers made at once (None: one at a time), for a `gather` that reads."""
        return None

    def own_epoch(self) -> tuple[tf.data.Dataset, Anchor | None] | None:
        """An epoch read without the index stream, and its anchor; None for every kind but the
        rows read by pieces (`npyio.rows`' shuffle by cycles, and pieces in order on object
        storage), which docs/shuffling.md sets apart."""
        return None

    def options(self) -> tf.data.Options | None:
        """Options the kind's pipeline needs (None: none)."""
        return None

    @abc.abstractmethod
    def read_batch(self, units: Any) -> object:
        """The elements of a batch of units (each of the structure `gather` makes, with a
        leading batch dimension), read at once."""

    def read(self, units: tf.data.Dataset) -> tf.data.Dataset:
        """The elements of one epoch's ``units`` (`stream`), batched as the options say: by
        default the units in batches, each read by `read_batch` in a parallel map, in order
        (an unordered map could deliver the short final batch before a full one, which
        ``batch`` never does). A kind that reads otherwise (an element at a time, then
        ``padded_batch``) says so here."""
        loader = self.loader
        ds = units.batch(loader.batch_size, drop_remainder=loader.drop_remainder)
        return parallel_map(ds, self.read_batch, loader.num_parallel_calls, deterministic=True)


def stream(source: Source) -> tuple[tf.data.Dataset, Anchor | None]:
    """The units of one epoch, and the anchor to apply to the finished pipeline.

    Unshuffled and unkeyed, the source's own slices where it has them (`Source.in_order`),
    cut to the source's ``epoch_count``. Else gathers of the index stream (`epoch_shuffle`):
    positions permuted anew each epoch when shuffling, in order otherwise, each gather made into
    units by the source; nothing but a position and a key is iterator state."""
    loader = source.loader
    if not loader.shuffle and not source.keyed:
        in_order = source.in_order()
        if in_order is not None:
            if source.epoch_count < source.count:
                in_order = in_order.take(source.epoch_count)
            return in_order, None
    shuffle = epoch_shuffle(
        source.count,
        source.epoch_count,
        loader.seed,
        loader.reshuffle_each_iteration,
        loader.shard,
        permuted=loader.shuffle,
        keyed=source.keyed,
    )
    return shuffle.indices(source.gather, source.gather_parallelism()), shuffle.anchor


def load(source: Source, finish: Finish | None = None) -> tf.data.Dataset:
    """The pipeline of ``source``: its units' stream, read by the source, then ``finish``
    (``dataset_from_directory`` encodes its labels there), the prefetch, the anchor, the
    reader's autotune setting and the storage options."""
    own = source.own_epoch()
    if own is None:
        ds, anchor = stream(source)
        ds = source.read(ds)
    else:
        ds, anchor = own
    if finish is not None:
        ds = finish(ds)
    if source.loader.prefetch:
        ds = ds.prefetch(source.loader.prefetch)
    if anchor is not None:
        ds = anchor(ds)
    options = source.options()
    if not source.autotune:  # a caller's own with_options can turn it back on
        options = options or tf.data.Options()
        options.autotune.enabled = False
    if options is not None:
        ds = ds.with_options(options)
    return for_storage(ds, source.paths, source.blocks)
