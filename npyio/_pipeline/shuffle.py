"""Shuffling by index: a new permutation of ``range(n)`` every epoch, computed in the graph.

`shuffled_indices` gives the indices of one epoch's order: position ``p`` of the epoch holds
index ``permute(p)``, where ``permute`` is ``RandomIndexShuffle`` (a keyed block cipher over
``[0, n)``: a bijection, so every index comes exactly once) under a key drawn once per
iteration. No buffer holds anything: an iterator checkpoint is a few scalars (the position, the
iteration's key and the key generator's state), whatever ``n`` is.

The structure::

    zip(range(gathers),                                   # the splittable source
        Dataset.random(seed, rerandomize_each_iteration)  # one value per iteration,
          .flat_map(r -> from_tensors(key(r)).repeat()))  #   repeated as that iteration's key
    .map((g, key) -> permute(positions of gather g, key)) # a vector of indices per gather
    .unbatch()

Every gather has the same static size, a divisor of the epoch's count (`gather_size`), so that
``unbatch`` keeps the cardinality (``n`` indices, an epoch's length known to Keras), and every
key of an iteration is drawn when its iterator starts.

or, for a pipeline with other random ops (`IndexShuffle.epochs`: the cycles of rows of
`npyio._sources.rows`), one epoch built from that epoch's value ``r`` (its gathers, and the other
ops seeded from ``r``)::

    Dataset.random(seed, rerandomize_each_iteration).take(1).flat_map(r -> epoch(r))

and either one zipped with, and stripped of, a second iterator of the key generator's
``Dataset.random`` (`anchor`, which `IndexShuffle` says why).

- **Epochs.** ``Dataset.random(rerandomize_each_iteration=True)`` draws new values for every new
  iterator and every ``.repeat()`` epoch, so each epoch has a new key; with ``False`` every
  epoch has the first one's order. The same ``seed`` gives the same sequence of keys, in any
  process, on every TensorFlow version npyio supports.
- **Seeds.** ``seed=None`` is resolved to a concrete seed when the dataset is built (from the
  global seed when ``tf.random.set_seed`` set one, as tf.data derives op seeds; else at random):
  every tf.data service worker that deserializes the graph must derive the same keys, which a
  seed drawn inside the graph would not. (A new process that restores a checkpoint of such a
  dataset draws another seed: the epoch under way continues exactly, its key being in the
  checkpoint; the epochs after it have other orders.)
- **Gathers.** The permutation is computed for a *gather* of positions at a time (the
  positions one op permutes and one ``gather`` call takes), so that the per-element cost is an
  ``unbatch``: a gather of one position per element
  made unbatched shuffled epochs slower than a ``Dataset.shuffle`` buffer; with 64
  positions both are as fast as the buffer, once nothing injects a prefetch above the anchor
  (bench/README.md, "Shuffling by index"). The order does not depend on the gather size.
  Its size divides the epoch's count (`gather_size`): an epoch that ended on a shorter gather
  needed a second dataset for it, made when the tail started and keyed by a second generator
  drawn then; an epoch left before its tail (a peek with ``next(iter(ds))``, a ``take``) left
  that generator a draw behind, and every later epoch's tail took another key than its full
  gathers (samples duplicated and lost, with no error), as did a checkpoint written while a
  read-ahead started the tail.
  Under tf.data service dynamic sharding a split is one gather, taken on demand, so a gather
  is also at most 1/64 of the epoch where the count allows (`gather_size`): a dataset has at
  least 64 splits to share out among workers, and a killed worker loses at most one split
  besides its prefetched batches. An awkward count (a prime) is one large gather instead: one
  split, which one worker reads whole (bench/README.md, "Gathers that divide the epoch").
- **Shards.** Under ``shard=(n, i)`` with ``n > 1``, the seed is folded with
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
import math
import secrets
from collections.abc import Callable
from typing import Any

import tensorflow as tf

from npyio._pipeline.map import flat_map, parallel_map, scan
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
#: The smallest gather worth its speed, as a share of the most (`gather_size`): the index
#: stream's rate falls with the gather (bench/README.md, "Gathers that divide the epoch").
FEWEST_SHARE = 4
#: The largest gather above `MAX_GATHER` that `gather_size` takes for an awkward count (one of
#: a prime count's two divisors, say): one op permutes it, and a gather makes a tensor of it.
MAX_DIVISOR_GATHER = 1 << 20
_MASK32 = 0xFFFFFFFF


def resolve_seed(seed: int | None) -> int:
    """``seed``, or for None a concrete one: derived from the global seed when
    ``tf.random.set_seed`` set one (as tf.data derives an op's seed), else drawn at random.
    One call: `npyio._tf.get_seed` counts its calls."""
    if seed is not None:
        return int(seed)
    global_seed, op_seed = get_seed()
    if global_seed is None:
        return secrets.randbits(62)
    return (int(global_seed) * 1_000_003 + int(op_seed)) % 2**62


def shard_seed(seed: int, shard: tuple[int, int] | None) -> int:
    """The seed of shard ``(n, i)``'s shuffle: ``seed`` folded with ``(n, i)`` by a hash, the
    same in every process; ``seed`` itself without a shard or with one shard (module
    docstring)."""
    if shard is None or shard[0] <= 1:
        return seed
    text = f"npyio shard {shard[0]} {shard[1]} seed {seed}".encode()
    return int.from_bytes(hashlib.blake2b(text, digest_size=8).digest(), "little") >> 2


def gather_size(n: int, most: int | None = None) -> int:
    """Positions permuted at a time (a gather), for an epoch of ``n``: a divisor of ``n``, so
    that every gather has one static size (module docstring, "Gathers").

    The largest divisor up to ``most`` (by default `MAX_GATHER`, or fewer so that the epoch has
    `MIN_GATHERS` gathers: tf.data service splits); where that is under a `FEWEST_SHARE`th of
    it, and slow, the smallest divisor above it, up to `MAX_DIVISOR_GATHER` (fewer, larger
    splits); else that small divisor."""
    if most is None:
        most = min(max(n // MIN_GATHERS, 1), MAX_GATHER)
    most = max(1, min(most, n)) if n else 1
    below = next(d for d in range(most, 0, -1) if n % d == 0)
    if FEWEST_SHARE * below >= most:
        return below
    small = (d for d in range(1, math.isqrt(n) + 1) if n % d == 0)
    divisors = sorted({e for d in small for e in (d, n // d)})
    above = [d for d in divisors if most < d <= MAX_DIVISOR_GATHER]
    return above[0] if above else below


_gather_size = gather_size  # (for `IndexShuffle`, whose argument of that name hides it)


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
        # the positions delivered each epoch: the first ``count`` of the permutation
        self.n, self.count = n, n if count is None else count
        # at most ``gather_size`` positions a gather, and a divisor of the count
        self.gather_size = _gather_size(self.count, max(gather_size, 1))
        # ``permuted=False``: the indices in order, with the keys all the same (for other
        # random ops, `keyed`: ``gather(indices, key, positions)`` gets the iteration's key,
        # int64 [3], and the positions)
        self.permuted, self.keyed = permuted, keyed
        seed = shard_seed(resolve_seed(seed), shard)  # each shard its own keys (module docstring)
        self.values = tf.data.Dataset.random(
            seed=seed, rerandomize_each_iteration=reshuffle_each_iteration
        )

    def indices(
        self, gather: Callable[..., Any] | None = None, parallelism: int | None = None
    ) -> tf.data.Dataset:
        """The int64 indices ``0 .. n-1`` of one epoch, in this iteration's order (the first
        ``count`` of them: all by default); or, with ``gather``, what it makes of each gather of
        indices (a structure of tensors with the gather as their first dimension, such as rows
        gathered from columns), unbatched.

        Its cardinality is ``count``: gathers of one static size (a divisor of ``count``), so
        that ``unbatch`` knows how many elements each gives (Keras then knows an epoch's length).
        Asserting the count instead would fail on tf.data service workers under dynamic
        sharding, each of which reads only some gathers. Every key is drawn when the iterator
        starts, by the one key stream (module docstring, "Gathers", says why there is no tail
        gather). With ``keyed``, ``gather`` is called with the gather's indices, this
        iteration's key (int64 [3]) and the indices' positions in the epoch (int64: where each
        falls in its batch, for patch sampling's foreground share). ``parallelism``: gathers
        made at once (None: one at a time), for a ``gather`` that reads.
        """
        if self.n <= 1 and not self.keyed:  # nothing to permute, and no key to draw
            return self.indices_of(None, gather, parallelism)
        # flat_map keeps the random iterator alive for the whole of the gathers, so that its
        # state (this iteration's key) is in every checkpoint; the inner dataset repeats it.
        # (Its cardinality is unknown; infinite lets the zip report the gathers' count.)
        keys = flat_map(
            self.values, lambda r: tf.data.Dataset.from_tensors(_iteration_key(r)).repeat()
        )
        keys = keys.apply(tf.data.experimental.assert_cardinality(tf.data.INFINITE_CARDINALITY))
        gathers = tf.data.Dataset.range(self.count // self.gather_size)
        return parallel_map(
            tf.data.Dataset.zip((gathers, keys)), self._gather_of(gather), parallelism, True
        ).unbatch()

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
        key, gather_of = _iteration_key(r), self._gather_of(gather)
        gathers = tf.data.Dataset.range(self.count // self.gather_size)
        return parallel_map(gathers, lambda index: gather_of(index, key), None).unbatch()

    def epochs(self, build: Callable[[tf.Tensor], tf.data.Dataset]) -> tf.data.Dataset:
        """``build(r)`` for this iteration's value ``r`` of the key generator: one epoch.

        For a pipeline with other random ops, which must draw from ``r`` (a cycle's permutation)
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

    def _gather_of(self, gather: Callable[..., Any] | None) -> Callable[..., Any]:
        """The function of one gather's number (and the key) to ``gather`` of its indices."""
        n, size = self.n, self.gather_size
        take: Callable[..., Any] = gather or (lambda indices, *key: indices)

        def gather_of(index: tf.Tensor, key: tf.Tensor) -> Any:
            positions = index * size + tf.range(size, dtype=tf.int64)  # of a static size
            indices = permute(positions, key, n) if self.permuted and n >= 2 else positions
            return take(indices, key, positions) if self.keyed else take(indices)

        return gather_of

    def anchor(self, ds: tf.data.Dataset) -> tf.data.Dataset:
        """``ds``, its elements zipped with (and then stripped of) a second iterator of the key
        generator's dataset, which lives as long as ``ds``'s iteration does."""
        # The anchor comes first: the zip starts its iterators in order, so the generator is
        # drawn by the anchor, then by ``ds``, when the iteration starts.
        zipped = tf.data.Dataset.zip((self.values, ds))
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
