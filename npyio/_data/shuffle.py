"""Shuffling by index: a new permutation of ``range(n)`` every epoch, computed in the graph.

`shuffled_indices` gives the indices of one epoch's order: position ``p`` of the epoch holds
index ``permute(p)``, where ``permute`` is ``RandomIndexShuffle`` (a keyed block cipher over
``[0, n)``: a bijection, so every index comes exactly once) under a key drawn once per
iteration. No buffer holds anything: an iterator checkpoint is a few scalars (the position, the
iteration's key and the key generator's state), whatever ``n`` is.

The structure::

    zip(range(full gathers),                              # the splittable source
        Dataset.random(seed, rerandomize_each_iteration)  # one value per iteration,
          .flat_map(r -> from_tensors(key(r)).repeat()))  #   repeated as that iteration's key
    .map((g, key) -> permute(positions of gather g, key)) # a vector of indices per gather
    .unbatch()
    .concatenate(the same for the tail gather, if any,    # the last n % gather_size positions,
                 with a second Dataset.random(seed))      #   drawing the same key

Every gather has a static size (the tail its own), so that ``unbatch`` keeps the cardinality:
``n`` indices, an epoch's length known to Keras.

or, for a pipeline with other random ops (`IndexShuffle.epochs`: the windows of rows of
`npyio._data.rows`), one epoch built from that epoch's value ``r`` (its gathers, and the other
ops seeded from ``r``)::

    Dataset.random(seed, rerandomize_each_iteration).take(1).flat_map(r -> epoch(r))

and either one zipped with, and stripped of, a second iterator of each ``Dataset.random`` the
epoch draws from: the key generator's, and the tail's only when there is a tail (`anchor`,
which `IndexShuffle` says why).

- **Epochs.** ``Dataset.random(rerandomize_each_iteration=True)`` draws new values for every new
  iterator and every ``.repeat()`` epoch, so each epoch has a new key; with ``False`` every
  epoch has the first one's order. The same ``seed`` gives the same sequence of keys, in any
  process, on every TensorFlow version npyio supports.
- **Seeds.** ``seed=None`` is resolved to a concrete seed when the dataset is built (from the
  global seed when ``tf.random.set_seed`` set one, as tf.data derives op seeds; else at random):
  every tf.data service worker that deserializes the graph must derive the same keys, which a
  seed drawn inside the graph would not. A seed drawn at random is not drawn again by a new
  process that restores a checkpoint, so what the tail gather (made after the checkpoint) keys
  on must not depend on it: such an epoch's order is two permutations (`IndexShuffle.indices`).
- **Gathers.** The permutation is computed for a *gather* of positions at a time (the
  positions one op permutes and one ``gather`` call takes), so that the per-element cost is an
  ``unbatch``: a gather of one position per element
  made unbatched shuffled epochs slower than a ``Dataset.shuffle`` buffer; with 64
  positions both are as fast as the buffer, once nothing injects a prefetch above the anchor
  (bench/README.md, "Shuffling by index"). The order does not depend on the gather size.
  Under tf.data service dynamic sharding a split is one gather, taken on demand, so a gather
  is also at most 1/64 of the epoch (`gather_size`): a dataset has at least 64 splits to share out
  among workers, and a killed worker loses at most one split besides its prefetched batches.
- **Shards.** Under ``shard=(n, i)`` with ``n > 1``, the seed (and `TAIL_SEED`) is folded with
  ``(n, i)`` (`shard_seed`), so that each shard draws its own sequence of keys: with one seed,
  shards of the same size would otherwise get the same permutation, and the hosts' samples
  would move in lockstep (host 1's always host 0's plus one). Unsharded (and ``(1, 0)``), the
  seed is used as given. ``count`` below ``n`` delivers the first ``count`` positions of each
  epoch's permutation of ``range(n)``: a different ``count`` of the ``n`` indices every epoch
  (what the shards of a ``drop_remainder`` dataset read, so that they yield the same batches).
- **The kernel.** ``RandomIndexShuffle`` with 8 rounds (`npyio._tf.random_index_shuffle` says
  why not the public ``tf.random.experimental.index_shuffle``). It sizes its cipher block from
  ``log2(max_index)``: for ``max_index = 2**k`` with ``k`` even and at least 16 it is not a
  permutation (``max_index`` never comes and ``2**k`` collides with 0), so those sizes permute
  ``[0, n]`` and walk the one position that lands on ``n``.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable
from typing import Any

import tensorflow as tf

from npyio._data.map import flat_map, parallel_map, scan
from npyio._tf import get_seed, no_injected_prefetch, random_index_shuffle

__all__ = [
    "MAX_GATHER",
    "IndexShuffle",
    "epoch_shuffle",
    "gather_size",
    "permute",
    "resolve_seed",
    "shard_seed",
    "shuffled_indices",
]

#: The most positions in a gather, permuted by one op (a tf.data service split, under dynamic
#: sharding).
MAX_GATHER = 64
#: The fewest gathers (splits) an epoch is cut into, where it has that many positions.
MIN_GATHERS = 64
#: RandomIndexShuffle's rounds (see the module docstring).
ROUNDS = 8
#: The kernel sizes its cipher block with a double-precision log2: keep n well inside it.
MAX_COUNT = 2**52
#: The seed of the tail's key generator when the dataset's seed was drawn at random
#: (`IndexShuffle`): the same in every process, so that a restore can derive the tail's key.
TAIL_SEED = 0x6E70_7969_6F5F_7461
_MASK32 = 0xFFFFFFFF


def resolve_seed(seed: int | None) -> int:
    """``seed``, or for None a concrete one: derived from the global seed when
    ``tf.random.set_seed`` set one (as tf.data derives an op's seed), else drawn at random."""
    return _resolve(seed)[0]


def _resolve(seed: int | None) -> tuple[int, bool]:
    """(`resolve_seed`, whether another process would resolve it alike: False only for a
    seed drawn at random). One call: `npyio._tf.get_seed` counts its calls."""
    if seed is not None:
        return int(seed), True
    global_seed, op_seed = get_seed()
    if global_seed is None:
        return secrets.randbits(62), False
    return (int(global_seed) * 1_000_003 + int(op_seed)) % 2**62, True


def shard_seed(seed: int, shard: tuple[int, int] | None) -> int:
    """The seed of shard ``(n, i)``'s shuffle: ``seed`` folded with ``(n, i)`` by a hash, the
    same in every process; ``seed`` itself without a shard or with one shard (module
    docstring)."""
    if shard is None or shard[0] <= 1:
        return seed
    text = f"npyio shard {shard[0]} {shard[1]} seed {seed}".encode()
    return int.from_bytes(hashlib.blake2b(text, digest_size=8).digest(), "little") >> 2


def gather_size(n: int) -> int:
    """Positions permuted at a time (a gather), for an epoch of ``n``: `MAX_GATHER`, or fewer
    so that the epoch has `MIN_GATHERS` gathers (module docstring)."""
    return min(max(n // MIN_GATHERS, 1), MAX_GATHER)


def _iteration_key(r: tf.Tensor) -> tf.Tensor:
    """The cipher's key, three 32-bit words, from one value of ``Dataset.random``: the cipher
    uses the low bits of every word, so all three are drawn."""
    words = tf.random.stateless_uniform(
        [3],
        seed=tf.stack([r, tf.constant(0x5EED, tf.int64)]),
        minval=None,
        maxval=None,
        dtype=tf.int64,
    )
    return tf.bitwise.bitwise_and(words, tf.constant(_MASK32, tf.int64))


def _misses_max_index(max_index: int) -> bool:
    """Whether the kernel's cipher block for ``max_index`` leaves it out (module docstring)."""
    return (
        max_index >= 2**16
        and max_index & (max_index - 1) == 0
        and (max_index.bit_length() - 1) % 2 == 0
    )


def permute(positions: tf.Tensor, key: tf.Tensor, n: int) -> tf.Tensor:
    """The indices at ``positions`` (int64, any shape) of the permutation of ``range(n)`` that
    ``key`` (int64 [3]) gives; ``n >= 2``."""

    def cipher(x: tf.Tensor, max_index: int) -> tf.Tensor:
        return random_index_shuffle(x, key, max_index, ROUNDS)

    if _misses_max_index(n - 1):  # a permutation of [0, n]; the one position on n walks on
        out = cipher(positions, n)
        return tf.where(out == n, cipher(tf.constant(n, tf.int64), n), out)
    return cipher(positions, n - 1)


def _unbatched(runs: list[tf.data.Dataset]) -> tf.data.Dataset:
    """The runs of gathers, unbatched, one after the other."""
    ds = runs[0].unbatch()
    for run in runs[1:]:
        ds = ds.concatenate(run.unbatch())
    return ds


class IndexShuffle:
    """The shuffle of one dataset: its indices (`indices`) and the anchor of its key
    generator (`anchor`).

    tf.data draws each iteration's random values from a generator that the ``Dataset.random``
    dataset owns; an iterator checkpoint records the generator's position only while an
    iterator of that dataset is alive. The one that draws the keys ends with the epoch's last
    gather, which the pipeline's read-ahead reaches a few batches before the epoch ends: a
    checkpoint written in those batches would lose the position, and a restored ``.repeat()``
    would give the next epoch another order. So the pipeline's last step zips its elements
    with a second iterator of the same dataset (`anchor`), alive until the epoch's end is
    delivered: every checkpoint then holds the generator's position.

    The anchor must stay the last step: a prefetch above it would read the epoch's end, and
    end the anchor, before the last elements are delivered. tf.data injects one there
    (``inject_prefetch``, on by default) when a pipeline ends in a synchronous step, as the
    anchor's scan is, so `anchor` turns that option off. With it on, a checkpoint written in
    an epoch's last batches lost the next epochs' orders when each epoch has a new iterator
    (as Keras's ``fit`` makes), and the extra prefetch cost an unbatched pipeline a thread
    hand-off per element, more CPU per pair than a ``Dataset.shuffle`` buffer
    (bench/README.md, "Shuffling by index", has the figures). What still cannot be covered:
    an asynchronous step the caller adds after the dataset without a ``.repeat()`` between (a
    ``prefetch``, a parallel map) reads ahead the same way (docs/keras.md, "Resuming, saving,
    caching").
    """

    def __init__(
        self,
        n: int,
        seed: int | None,
        reshuffle_each_iteration: bool = True,
        gather_size: int = 1,
        *,
        permuted: bool = True,
        keyed: bool = False,
        shard: tuple[int, int] | None = None,
        count: int | None = None,
    ) -> None:
        if not 0 <= n < MAX_COUNT:
            raise ValueError(f"can only shuffle 0 to 2**52 - 1 elements, got {n}")
        if count is not None and not 0 <= count <= n:
            raise ValueError(f"can only deliver 0 to {n} of {n} positions, got {count}")
        self.n, self.gather_size = n, gather_size
        # the positions delivered each epoch: the first ``count`` of the permutation
        self.count = n if count is None else count
        # ``permuted=False``: the indices in order, with the keys all the same (for other
        # random ops, `keyed`: ``gather(indices, key)`` gets the iteration's key, int64 [3])
        self.permuted, self.keyed = permuted, keyed
        seed, stable = _resolve(seed)
        seed = shard_seed(seed, shard)  # each shard its own keys (module docstring)
        self.values = tf.data.Dataset.random(
            seed=seed, rerandomize_each_iteration=reshuffle_each_iteration
        )
        # The tail's key generator (`indices`): drawn as often and in the same order as the
        # one the full gathers draw from, so that both give an iteration the same key.
        # It is made anew when the tail starts, after a checkpoint taken in the full gathers;
        # restored then in a new process, it draws from its own seed and its checkpointed
        # position alone. A seed drawn at random differs there, so with one the tail draws
        # from `TAIL_SEED`, and the full gathers draw that key too (`_outer`).
        tail_seed = seed if stable else shard_seed(TAIL_SEED, shard)
        self.tail_values = tf.data.Dataset.random(
            seed=tail_seed, rerandomize_each_iteration=reshuffle_each_iteration
        )
        self._outer = (
            None
            if stable or not self._has_tail()
            else tf.data.Dataset.random(
                seed=tail_seed, rerandomize_each_iteration=reshuffle_each_iteration
            )
        )

    def indices(
        self, gather: Callable[..., Any] | None = None, parallelism: int | None = None
    ) -> tf.data.Dataset:
        """The int64 indices ``0 .. n-1`` of one epoch, in this iteration's order (the first
        ``count`` of them: all by default); or, with ``gather``, what it makes of each gather of
        indices (a structure of tensors with the gather as their first dimension, such as rows
        gathered from columns), unbatched.

        Its cardinality is ``count``: the full gathers, each of a static size, then the tail (the
        last ``count % gather_size`` positions) as one gather of its own static size, so that
        ``unbatch`` knows how many elements each gives (Keras then knows an epoch's length).
        Asserting the count instead would fail on tf.data service workers under dynamic
        sharding, each of which reads only some gathers. The tail is a second dataset, whose key
        stream is a second iterator: it draws from `tail_values`, which `anchor` keeps in step
        with the full gathers' generator, so that both give this iteration's key. With
        ``keyed``, ``gather`` is called with the gather's indices and this iteration's key
        (int64 [3], the same in the tail). ``parallelism``: gathers made at once (None: one at
        a time), for a ``gather`` that reads.

        With a seed drawn at random (``seed=None``), the order is two permutations: the
        iteration's key (from that seed) permutes the full gathers' positions among themselves,
        then a key from `TAIL_SEED` permutes all positions. The tail needs only the second,
        which a new process derives alike, so a restore continues the epoch exactly. (The
        tail's indices, under 64, then come in each epoch in the same order in every process:
        the one trace of the fixed seed.)
        """
        if self.n <= 1 and not self.keyed:  # nothing to permute, and no key to draw
            return self.indices_of(None, gather, parallelism)
        full_values = (
            self.values if self._outer is None else tf.data.Dataset.zip((self.values, self._outer))
        )
        runs = []
        for (first, count, size), values in zip(self._runs(), (full_values, self.tail_values)):
            # flat_map keeps the random iterator alive for the whole of the gathers, so that
            # its state (this iteration's keys) is in every checkpoint; the inner dataset
            # repeats them. (Its cardinality is unknown; infinite lets the zip report the
            # gathers' count.)
            keys = flat_map(
                values,
                lambda *r: tf.data.Dataset.from_tensors(tuple(map(_iteration_key, r))).repeat(),
            )
            keys = keys.apply(tf.data.experimental.assert_cardinality(tf.data.INFINITE_CARDINALITY))
            gathers = tf.data.Dataset.range(first, first + count)
            runs.append(
                parallel_map(
                    tf.data.Dataset.zip((gathers, keys)),
                    self._gather_of(size, gather),
                    parallelism,
                    deterministic=True,
                )
            )
        return _unbatched(runs)

    def indices_of(
        self,
        r: tf.Tensor | None,
        gather: Callable[[tf.Tensor], Any] | None = None,
        parallelism: int | None = None,
    ) -> tf.data.Dataset:
        """As `indices`, for the iteration whose value of the key generator is ``r`` (inside
        `epochs`)."""
        take = gather or (lambda indices: indices)
        if self.n <= 1:
            ds = tf.data.Dataset.range(self.count)
            return parallel_map(ds, lambda i: take(i[None]), parallelism, True).unbatch()
        keys = (_iteration_key(r),)
        runs = []
        for first, count, size in self._runs():
            gather_of = self._gather_of(size, gather)
            gathers = tf.data.Dataset.range(first, first + count)
            runs.append(parallel_map(gathers, lambda index, f=gather_of: f(index, keys), None))
        return _unbatched(runs)

    def epochs(self, build: Callable[[tf.Tensor], tf.data.Dataset]) -> tf.data.Dataset:
        """``build(r)`` for this iteration's value ``r`` of the key generator: one epoch.

        For a pipeline with other random ops, which must draw from ``r`` (a window's permutation)
        rather than from a seed generator of their own: the state of such a generator is in a
        checkpoint only while its iterator lives, and the read-ahead ends that iterator before
        the epoch's end is delivered, so a restored ``.repeat()`` could give the next epoch
        another order. Here the one generator is the key generator, which `anchor` keeps in
        every checkpoint. (`indices` keeps the zip form, with the gathers at the top level:
        tf.data service dynamic sharding splits that range, which it cannot find inside a
        ``flat_map``.)
        """
        one = tf.data.Dataset.zip((tf.data.Dataset.range(1), self.values.take(1)))
        return flat_map(one, lambda _, r: build(r))

    def _runs(self) -> list[tuple[int, int, int]]:
        """(first gather, gathers, positions per gather): the full gathers, then the tail (the
        last ``count % gather_size`` positions) as one gather, when there is one."""
        full, tail = divmod(self.count, self.gather_size)
        return [(0, full, self.gather_size)] + ([(full, 1, tail)] if tail else [])

    def _has_tail(self) -> bool:
        """Whether `indices` reads a tail gather, whose keys `tail_values` draws."""
        return self.n > 1 and len(self._runs()) > 1

    def _gather_of(self, size: int, gather: Callable[..., Any] | None) -> Callable[..., Any]:
        """The function of one gather's number (and the keys) to ``gather`` of its ``size``
        indices."""
        n, gather_size = self.n, self.gather_size
        head = self.count - self.count % gather_size  # the full gathers' positions: [0, head)
        take: Callable[..., Any] = gather or (lambda indices, *key: indices)

        def gather_of(index: tf.Tensor, keys: tuple[tf.Tensor, ...]) -> Any:
            positions = index * gather_size + tf.range(size, dtype=tf.int64)  # of a static size
            if len(keys) == 2:  # a seed drawn at random, in the full gathers (`indices`)
                inner, keys = keys[0], keys[1:]
                if self.permuted and head >= 2:
                    positions = permute(positions, inner, head)
            indices = permute(positions, keys[0], n) if self.permuted and n >= 2 else positions
            return take(indices, keys[0]) if self.keyed else take(indices)

        return gather_of

    def anchor(self, ds: tf.data.Dataset) -> tf.data.Dataset:
        """``ds``, its elements zipped with (and then stripped of) a second iterator of the key
        generator's dataset (and of the tail's, when there is a tail), which lives as long as
        ``ds``'s iteration does."""
        # The anchors come first: the zip starts its iterators in order, so each generator
        # is drawn by its anchor, then by ``ds`` (the tail's, later in the epoch): the two
        # generators, of one seed, give ``ds`` their second value of the iteration alike.
        # The tail's generator only when `indices` draws from it: an epoch without a tail
        # (``n % gather_size == 0``; every `epochs` pipeline, whose gather is 1) would pay a wider
        # zip per element for nothing.
        anchors = (self.values, self.tail_values) if self._has_tail() else (self.values,)
        if self._outer is not None:  # its generator too, drawn by the anchor first
            anchors += (self._outer,)
        zipped = tf.data.Dataset.zip((*anchors, ds))
        # A scan, not a map: tf.data's map_parallelization rewrites a map of a stateless
        # function into a parallel one, whose buffer would still hold the epoch's last
        # elements after the zip has ended (and released the anchor); a checkpoint written
        # then held no generator position. A scan delivers each element as the zip yields it,
        # so the zip ends only when the epoch's end is asked for, inside the caller's
        # ``.repeat()``, which starts the next epoch's iterators in the same step.
        anchored = scan(zipped, tf.constant(0, tf.int8), lambda state, e: (state, e[-1]))
        # No prefetch injected above the scan (class docstring). The pipeline below has its
        # own prefetch; the option goes with the dataset, and a caller's later with_options
        # can turn it back on.
        return anchored.with_options(no_injected_prefetch(tf.data.Options()))


def epoch_shuffle(
    count: int,
    epoch_count: int,
    seed: int | None,
    reshuffle_each_iteration: bool,
    shard: tuple[int, int] | None,
    *,
    permuted: bool = True,
    keyed: bool = False,
) -> IndexShuffle:
    """The `IndexShuffle` of a loader's epoch: ``count`` units, of which ``epoch_count`` are
    delivered (every shard the same, with ``drop_remainder``), in gathers of `gather_size`, with
    the shard's own keys. One home for what every source kind's stream asks of the shuffle."""
    return IndexShuffle(
        count,
        seed,
        reshuffle_each_iteration,
        gather_size(epoch_count),
        permuted=permuted,
        keyed=keyed,
        shard=shard,
        count=epoch_count,
    )


def shuffled_indices(
    n: int, seed: int | None = None, reshuffle_each_iteration: bool = True, gather_size: int = 1
) -> tf.data.Dataset:
    """The int64 indices ``0 .. n-1`` in a pseudorandom order: a full shuffle, anew every
    epoch with ``reshuffle_each_iteration``; the same ``seed`` gives the same sequence of
    orders, whatever ``gather_size`` (the positions permuted at a time) is. (A pipeline that reads
    by these indices and is checkpointed should use `IndexShuffle` and its ``anchor``.)

    Raises:
        ValueError: for ``n`` below 0 or of 2**52 and more.
    """
    shuffle = IndexShuffle(n, seed, reshuffle_each_iteration, gather_size)
    return shuffle.anchor(shuffle.indices())
