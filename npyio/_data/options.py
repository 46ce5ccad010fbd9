"""The options of `npyio.dataset`, `npyio.dataset_from_directory` and `npyio.rows`, as data.

The public functions keep flat, explicit keyword arguments (the API Keras users know) and turn
them into these frozen dataclasses once, at the boundary (`DatasetOptions.from_arguments`,
`RowsOptions.from_arguments`), grouped by concern: what each part loads as (`ReadOptions`), how
the loader batches, shuffles, shards and prefetches (`LoaderOptions`), and the split
(`SplitOptions`). Each class checks its own values when it is made, so a bad argument is refused
before any file is listed; everything below passes the objects along, with
``dataclasses.replace`` where one differs.

Adding an option: a parameter in the public signature, a field (and its check) in one class
here, and the code that uses it. `from_arguments` picks each class's fields out of the public
function's arguments by name, and ``tests/datasets/test_options.py`` checks that every public
parameter lands in exactly one class.

TF-free.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np

from npyio._data.paths import parse_shard
from npyio._format import npy
from npyio._format.header import Limits
from npyio._read import BACKENDS

__all__ = [
    "AUTOTUNE",
    "BACKENDS",
    "SUBSETS",
    "DatasetOptions",
    "LoaderOptions",
    "PackOptions",
    "ReadOptions",
    "RowsOptions",
    "SplitOptions",
    "positive",
]

#: ``tf.data.AUTOTUNE``, without importing TensorFlow.
AUTOTUNE = -1
SUBSETS = ("training", "validation", "both")

T = TypeVar("T")


def positive(value: object, what: str) -> int | None:
    """``value`` if it is a positive int or None.

    Raises:
        ValueError: for anything else, naming ``what``.
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{what} must be a positive int or None, got {value!r}")
    return value


def _parallelism(value: object, what: str) -> None:
    if value is not None and value != AUTOTUNE:
        positive(value, what)


def _padding(value: object) -> None:
    """Checks ``padding_value``: None, a number, or a dict, tuple or list of them (nested).

    Raises:
        TypeError: for anything else, naming the argument.
    """
    if value is None or isinstance(value, (int, float, complex, np.number, np.bool_)):
        return
    if isinstance(value, dict):
        items: Any = value.values()
    elif isinstance(value, (tuple, list)):
        items = value
    else:
        raise TypeError(
            f"padding_value must be a number, None, or a dict or tuple of them, got {value!r:.200}"
        )
    for item in items:
        _padding(item)


def _pick(cls: type[T], arguments: Mapping[str, Any]) -> T:
    """An instance of the dataclass ``cls`` from the ``arguments`` named like its fields."""
    names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    return cls(**{k: v for k, v in arguments.items() if k in names})


@dataclass(frozen=True)
class ReadOptions:
    """What each part of an element loads as, and how its files are read.

    ``dtype``/``shape`` (``label_dtype``/``label_shape``) are the arguments as given: a value
    for all the input (label) parts, or a structure like the sources'; planning derives each
    part's `npyio._format.spec.Spec` from them. ``key``/``label_key`` name ``.npz`` members.
    """

    dtype: object = None
    shape: object = None
    label_dtype: object = None
    label_shape: object = None
    key: str | None = None
    label_key: str | None = None
    backend: str = "graph"
    ignore_errors: bool = False
    max_file_size: int | None = None
    max_header_size: int = npy.MAX_HEADER_SIZE
    limits: Limits = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "limits", Limits(self.max_header_size, self.max_file_size))
        if self.backend not in BACKENDS:
            raise ValueError(
                f"unknown backend {self.backend!r} -- expected one of {', '.join(BACKENDS)}"
            )
        if self.key is not None and self.max_file_size is not None:
            raise ValueError("max_file_size is not supported with key (.npz archives)")
        if self.key is None and self.label_key is not None:
            raise ValueError("label_key needs key: it names a member of .npz archives")
        if self.key is not None and self.backend != "graph":
            raise ValueError(f"key (.npz archives) needs backend='graph', got {self.backend!r}")

    @property
    def suffix(self) -> str:
        """The file suffix a directory source stands for."""
        return ".npy" if self.key is None else ".npz"


@dataclass(frozen=True)
class LoaderOptions:
    """How the loader batches, shuffles, shards and prefetches.

    ``shard`` is given as ``(num_shards, index)`` or a ``tf.distribute.InputContext`` and kept
    as ``(num_shards, index)``. ``padding_value`` is what pads parts with ``None`` dims: one
    number for all, or a structure like the elements' (``x`` or ``(x, y)``), checked against
    each part's dtype when the plan knows it (`npyio._data.plan`).
    """

    batch_size: int | None = None
    drop_remainder: bool = False
    shuffle: bool = False
    seed: int | None = None
    reshuffle_each_iteration: bool = True
    shard: Any = None
    num_parallel_calls: int | None = AUTOTUNE
    deterministic: bool | None = None
    prefetch: int | None = AUTOTUNE
    with_paths: bool = False
    padding_value: object = None

    def __post_init__(self) -> None:
        positive(self.batch_size, "batch_size")
        _padding(self.padding_value)
        object.__setattr__(self, "shard", parse_shard(self.shard))


@dataclass(frozen=True)
class SplitOptions:
    """A validation split, as Keras's ``*_dataset_from_directory`` cuts it (`check`)."""

    validation_split: float | None = None
    subset: str | None = None

    def check(self, loader: LoaderOptions) -> None:
        """The split arguments, checked (before any file is listed).

        Raises:
            ValueError: for a ``validation_split`` outside (0, 1), a ``subset`` without one
                (or the reverse), an unknown ``subset``, or a split while shuffling without a
                ``seed`` (the subsets would overlap from one call to the next).
        """
        fraction, subset = self.validation_split, self.subset
        if fraction is None:
            if subset is not None:
                raise ValueError(f"subset={subset!r} needs validation_split (got None)")
            return
        if isinstance(fraction, bool) or not (
            isinstance(fraction, (int, float)) and 0 < fraction < 1
        ):
            raise ValueError(
                f"validation_split must be a float between 0 and 1 (exclusive), got {fraction!r}"
            )
        if subset not in SUBSETS:
            raise ValueError(
                f"subset must be 'training', 'validation' or 'both' with validation_split, "
                f"got {subset!r}"
            )
        if loader.shuffle and loader.seed is None:
            raise ValueError(
                "validation_split with shuffle=True needs a seed: without one, the training "
                "and validation subsets of two calls would overlap"
            )


@dataclass(frozen=True)
class DatasetOptions:
    """Every option of `npyio.dataset`, by concern; checked together when made."""

    read: ReadOptions = ReadOptions()
    loader: LoaderOptions = LoaderOptions()
    split: SplitOptions = SplitOptions()

    def __post_init__(self) -> None:
        self.split.check(self.loader)

    @classmethod
    def from_arguments(cls, arguments: Mapping[str, Any]) -> DatasetOptions:
        """The options among a public function's ``arguments`` (its ``locals()``), each taken
        by the class that has a field of its name; other names are left alone."""
        return cls(
            _pick(ReadOptions, arguments),
            _pick(LoaderOptions, arguments),
            _pick(SplitOptions, arguments),
        )


@dataclass(frozen=True)
class RowsOptions:
    """The options of `npyio.rows`: the row shuffle, batching, parallel reads and the shard."""

    shuffle_buffer: int | None = None
    seed: int | None = None
    batch_size: int | None = None
    drop_remainder: bool = False
    num_parallel_reads: int | None = AUTOTUNE
    shard: Any = None

    def __post_init__(self) -> None:
        positive(self.shuffle_buffer, "shuffle_buffer")
        positive(self.batch_size, "batch_size")
        _parallelism(self.num_parallel_reads, "num_parallel_reads")
        object.__setattr__(self, "shard", parse_shard(self.shard))

    @classmethod
    def from_arguments(cls, arguments: Mapping[str, Any]) -> RowsOptions:
        """The options among `npyio.rows`'s ``arguments`` (see `DatasetOptions`)."""
        return _pick(cls, arguments)

    @property
    def auto(self) -> bool:
        """Whether ``num_parallel_reads`` is left to tf.data (AUTOTUNE or None)."""
        return self.num_parallel_reads in (None, AUTOTUNE)


#: ``npyio pack``'s default shard size: 256 MB (``--shard-size``).
SHARD_SIZE = 256 * 10**6


@dataclass(frozen=True)
class PackOptions:
    """The options of `npyio.pack` that are its own (the sources are read with `ReadOptions`):
    the shard size in bytes, the order the rows are written in, and what may be replaced."""

    shard_size: int = SHARD_SIZE
    shuffle: bool = False
    seed: int | None = None
    overwrite: bool = False
    check: bool = True
    from_directory: bool = False

    def __post_init__(self) -> None:
        positive(self.shard_size, "shard_size")
        if self.shard_size is None:
            raise ValueError("shard_size must be a positive int, got None")

    @classmethod
    def from_arguments(cls, arguments: Mapping[str, Any]) -> PackOptions:
        """The options among `npyio.pack`'s ``arguments`` (see `DatasetOptions`)."""
        return _pick(cls, arguments)
