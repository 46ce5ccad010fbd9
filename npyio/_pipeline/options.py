"""The options of `npyio.dataset`, `npyio.dataset_from_directory` and `npyio.rows`, as data.

The public functions keep flat, explicit keyword arguments (the API Keras users know) and turn
them into these frozen dataclasses once, at the boundary, each argument passed by name to its
field (``ReadOptions(dtype=dtype, ...)``: a reader, or mypy, follows a parameter from the
signature to where it acts), grouped by concern: what each part loads as (`ReadOptions`), how
the loader batches, shuffles, shards and prefetches (`LoaderOptions`), and the split
(`SplitOptions`). Each class checks its own values when it is made, so a bad argument is refused
before any file is listed; everything below passes the objects along, with
``dataclasses.replace`` where one differs.

Each field carries its own check (`checked_by`): the checks run when an object is made, in field
order, and each names its argument. Numbers out of range raise ValueError, values of the wrong
type TypeError. `DatasetOptions.from_arguments` (and each class's) takes the fields out of a
mapping of arguments by name, for the CLI and the tests; a name no class has (and that is not a
source, `SOURCES`) is a TypeError.

Adding an option touches four places: a parameter in the public signature, a field with its
check here, its keyword where the entry point makes the options, and the code that uses it
(plus its row in the capability table, `npyio._pipeline.capabilities.OPTIONS`, and its cell in
each source kind's column, which says what it means there). ``tests/pipeline/test_options.py``
checks that every public parameter lands in exactly one class, passed by its own name, and
``tests/pipeline/test_capabilities.py`` that the table has a row for it.

TF-free.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import inspect
from collections.abc import Callable, Mapping
from dataclasses import InitVar, dataclass, field
from typing import Any, ParamSpec, TypeVar

import numpy as np

from npyio._format import npy
from npyio._format.header import Limits
from npyio._format.window import SAME, Crop, Foreground, as_crop, as_foreground
from npyio._pipeline.paths import parse_shard
from npyio._read import BACKENDS, DEFAULT_BACKEND
from npyio._read import capabilities as reader_capabilities

__all__ = [
    "AUTOTUNE",
    "BACKENDS",
    "SOURCES",
    "SUBSETS",
    "DatasetOptions",
    "LoaderOptions",
    "PackOptions",
    "ReadOptions",
    "SplitOptions",
    "checked_by",
    "entry_point",
    "entry_points",
    "positive",
    "split",
    "unknown_option",
]

#: ``tf.data.AUTOTUNE``, without importing TensorFlow.
AUTOTUNE = -1

#: The default ``batch_size`` of `npyio.dataset`, `npyio.rows` and
#: `npyio.dataset_from_directory`: 32, as Keras's ``*_dataset_from_directory``, so that a call
#: without one gives what ``model.fit`` takes (docs/options.md, "The default batch_size").
#: The public signatures spell it out (``tests/pipeline/test_options.py`` keeps them equal).
BATCH_SIZE = 32
SUBSETS = ("training", "validation", "both")
#: The public functions' arguments that are not options: the sources, and
#: ``dataset_from_directory``'s own listing. `from_arguments` leaves them alone.
SOURCES = frozenset(
    {"inputs", "labels", "directory", "label_mode", "class_names", "follow_links", "verbose"}
)

T = TypeVar("T")
P = ParamSpec("P")
#: A field's check: (value, the argument's name) -> the value to keep; raises naming it.
Check = Callable[[Any, str], Any]


def checked_by(check: Check) -> dict[str, Check]:
    """A field's metadata: its ``check``, run when the options are made
    (``field(default=..., metadata=checked_by(check))``)."""
    return {"check": check}


def _check_fields(obj: object, function: str = "dataset") -> None:
    """Runs every field's check on ``obj`` (a frozen dataclass), keeping what each returns; a
    check names its argument as the entry point ``function`` calls it (`SAME_IDEA`)."""
    for f in dataclasses.fields(obj):  # type: ignore[arg-type]
        check = f.metadata.get("check")
        if check is not None:
            what = called(function, f.name)
            object.__setattr__(obj, f.name, check(getattr(obj, f.name), what))


def positive(value: object, what: str) -> int | None:
    """``value`` if it is a positive int or None.

    Raises:
        ValueError: for anything else, naming ``what``.
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{what} must be a positive int or None, got {value!r}")
    return int(value)


def _parallelism(value: object, what: str) -> int | None:
    """A positive int, AUTOTUNE (``tf.data.AUTOTUNE``) or None."""
    if value is None or (not isinstance(value, bool) and value == AUTOTUNE):
        return value
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(
            f"{what} must be a positive int, tf.data.AUTOTUNE or None, got {value!r:.100}"
        )
    return int(value)


def _prefetch(value: object, what: str) -> int | None:
    """As `_parallelism`, and 0 (no prefetch)."""
    if not isinstance(value, bool) and isinstance(value, (int, np.integer)) and value == 0:
        return 0
    try:
        return _parallelism(value, what)
    except ValueError:
        raise ValueError(
            f"{what} must be a positive int, tf.data.AUTOTUNE, 0 or None, got {value!r:.100}"
        ) from None


def _typed(types: tuple[type, ...], expected: str, optional: bool = False) -> Check:
    """A check that a value is one of ``types`` (a bool is no int: ``seed=True`` is refused),
    or None when ``optional``; numpy scalars are kept as Python's."""

    def check(value: object, what: str) -> Any:
        if value is None and optional:
            return None
        is_bool = isinstance(value, (bool, np.bool_))
        if not isinstance(value, types) or (is_bool and bool not in types):
            also = " or None" if optional else ""
            raise TypeError(f"{what} must be {expected}{also}, got {value!r:.100}")
        if is_bool:
            return bool(value)
        return int(value) if isinstance(value, np.integer) else value

    return check


#: ``shuffle="no"`` is truthy: refused, not taken for True.
_flag = _typed((bool, np.bool_), "a bool")
_optional_flag = _typed((bool, np.bool_), "a bool", optional=True)
_seed = _typed((int, np.integer), "an int", optional=True)
_name = _typed((str,), "a str", optional=True)  # an .npz member's name


def _backend(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str (one of {', '.join(BACKENDS)}), got {value!r:.100}")
    reader_capabilities(value)  # ValueError naming the backends, for an unknown one
    return value


def _crop(value: object, what: str) -> Crop | None:
    return as_crop(value, what)


def _crops_per_file(value: object, what: str) -> int:
    count = positive(value, what)
    if count is None:
        raise ValueError(f"{what} must be a positive int, got None")
    return count


def _label_crop(value: object, what: str) -> Crop | str | None:
    """``label_crop``: ``"same"`` (the inputs' window), None (labels whole) or a crop of the
    labels' own."""
    return SAME if isinstance(value, str) and value == SAME else as_crop(value, what)


def _limit(value: object, what: str) -> int | None:
    npy.parse_limit(value, what, allow_none=what != "max_header_size")
    return value  # type: ignore[return-value]


def _dtypes(value: object, what: str) -> object:
    """None, a dtype, or a dict, tuple or list of them (checked leaf by leaf)."""
    leaves: Any = value.values() if isinstance(value, dict) else value
    if not isinstance(value, (dict, tuple, list)):
        leaves = [value]
    for leaf in leaves:
        if leaf is not None:
            try:
                npy.parse_dtype(leaf)
            except TypeError as e:
                raise TypeError(f"{what}: {e}") from None
    return value


def _shape(value: object, what: str) -> object:
    """None, a shape (tuple, list or TensorShape), or a dict or tuple of them: their dims are
    checked when each part is planned (`npyio._pipeline.structure.per_part`)."""
    if isinstance(value, (str, bytes, float, bool)):
        raise TypeError(f"{what} must be a shape (a tuple of ints and None), got {value!r:.100}")
    return value


def _fraction(value: object, what: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not (isinstance(value, (int, float)) and 0 < value < 1):
        raise ValueError(f"{what} must be a float between 0 and 1 (exclusive), got {value!r:.100}")
    return value


def _subset(value: object, what: str) -> str | None:
    if value is not None and value not in SUBSETS:
        raise ValueError(
            f"{what} must be 'training', 'validation' or 'both' with validation_split, "
            f"got {value!r:.100}"
        )
    return value


def _padding(value: object, what: str = "padding_value") -> object:
    """Checks ``padding_value``: None, a number, or a dict, tuple or list of them (nested).

    Raises:
        TypeError: for anything else, naming the argument.
    """
    if value is None or isinstance(value, (int, float, complex, np.number, np.bool_)):
        return value
    if isinstance(value, dict):
        items: Any = value.values()
    elif isinstance(value, (tuple, list)):
        items = value
    else:
        raise TypeError(
            f"{what} must be a number, None, or a dict or tuple of them, got {value!r:.200}"
        )
    for item in items:
        _padding(item, what)
    return value


def _shard(value: object, what: str) -> tuple[int, int] | None:
    return parse_shard(value)


def _pick(cls: type[T], arguments: Mapping[str, Any]) -> T:
    """An instance of the dataclass ``cls`` from the ``arguments`` named like its fields."""
    names = {f.name for f in dataclasses.fields(cls) if f.init}  # type: ignore[arg-type]
    return cls(**{k: v for k, v in arguments.items() if k in names})


def _equal(value: object, default: object) -> bool:
    """``value == default``, for a value of any type (``False == 0``: a bool is no int)."""
    return type(value) is type(default) and bool(value == default)


#: One idea that the entry points name differently, by entry point: a name given to the wrong
#: one is answered with what that one calls it.
SAME_IDEA: tuple[dict[str, str], ...] = (
    {
        "dataset": "num_parallel_calls",
        "dataset_from_directory": "num_parallel_calls",
        "rows": "num_parallel_reads",
    },
    {
        "dataset": "inputs",
        "dataset_from_directory": "directory",
        "rows": "inputs",
        "pack": "inputs",
    },
)


def called(function: str, name: str) -> str:
    """What the entry point ``function`` calls the field ``name`` (`SAME_IDEA`)."""
    for idea in SAME_IDEA:
        if idea.get("dataset") == name and function in idea:
            return idea[function]
    return name


def _fields(*classes: type) -> frozenset[str]:
    return frozenset().union(
        *({f.name for f in dataclasses.fields(cls) if f.init} for cls in classes)
    )


#: `LoaderOptions`' fields that `npyio.rows` takes, by its names (`called`): what it does not
#: take is fixed for rows (no ``padding_value``: every row has the file's row shape).
ROWS_OPTIONS = frozenset(
    {
        "shuffle",
        "shuffle_buffer",
        "seed",
        "reshuffle_each_iteration",
        "batch_size",
        "drop_remainder",
        "num_parallel_reads",
        "shard",
    }
)


def entry_points() -> dict[str, frozenset[str]]:
    """The public functions' keyword arguments, by function name, from their options classes
    (``tests/pipeline/test_options.py`` holds them to the signatures): written here, not gathered
    as each function is imported, since ``npyio`` imports them lazily."""
    sources = frozenset({"inputs", "labels"})
    dataset = _fields(ReadOptions, LoaderOptions, SplitOptions) - {"shuffle_buffer"} | sources
    # dataset_from_directory reads .npy files of class folders, as Keras's reads images
    not_directory = {
        "key",
        "label_key",
        "label_dtype",
        "label_shape",
        "label_crop",
        "crops_per_file",
        "foreground",
        "max_file_size",
    }
    not_directory |= {"max_header_size", "reshuffle_each_iteration", "inputs"}
    return {
        "dataset": dataset,
        "dataset_from_directory": (dataset - not_directory) | SOURCES - {"inputs"},
        "rows": ROWS_OPTIONS | _fields(SplitOptions) | sources,
        "pack": _fields(PackOptions, ReadOptions)
        - {"backend", "ignore_errors", "crop", "label_crop", "crops_per_file", "foreground"}
        | sources
        | {"out", "progress"},
    }


def unknown_option(function: str, name: str, known: frozenset[str] | None = None) -> str:
    """The message for ``name``, which ``npyio.{function}`` has not (its names are ``known``,
    or `entry_points`'): what it calls that idea when another entry point has ``name``
    (`SAME_IDEA`), or that it has no such option; else the nearest of its own names (difflib);
    else all of them."""
    table = entry_points()
    own = sorted((table[function] if known is None else known) - SOURCES)
    message = f"npyio.{function}() got an unexpected keyword argument {name!r}"
    others = sorted(f"npyio.{f}" for f, names in table.items() if name in names)
    whose = f"{name!r} is an option of {', '.join(others)}"
    same = [idea[function] for idea in SAME_IDEA if function in idea and name in idea.values()]
    if same:
        return f"{message} -- did you mean {same[0]!r}? ({whose}; npyio.{function} calls it so)"
    if others:
        return f"{message} -- {whose}, not of npyio.{function}, whose options are {', '.join(own)}"
    near = difflib.get_close_matches(name, own, n=1)
    if near:
        return f"{message} -- did you mean {near[0]!r}?"
    return f"{message} -- expected one of {', '.join(own)}"


def entry_point(function: Callable[P, T]) -> Callable[P, T]:
    """A public function that answers a keyword it has not with `unknown_option`'s TypeError
    (Python's own says nothing of the nearest one). Checked once per call, never per
    element."""
    names = frozenset(inspect.signature(function).parameters)

    @functools.wraps(function)
    def call(*args: P.args, **kwargs: P.kwargs) -> T:
        for name in kwargs:
            if name not in names:
                raise TypeError(unknown_option(function.__name__, name))
        return function(*args, **kwargs)

    return call


@dataclass(frozen=True)
class ReadOptions:
    """What each part of an element loads as, and how its files are read.

    ``dtype``/``shape`` (``label_dtype``/``label_shape``) are the arguments as given: a value
    for all the input (label) parts, or a structure like the sources'; planning derives each
    part's `npyio._format.spec.Spec` from them. ``key``/``label_key`` name ``.npz`` members.
    """

    dtype: object = field(default=None, metadata=checked_by(_dtypes))
    shape: object = field(default=None, metadata=checked_by(_shape))
    label_dtype: object = field(default=None, metadata=checked_by(_dtypes))
    label_shape: object = field(default=None, metadata=checked_by(_shape))
    key: str | None = field(default=None, metadata=checked_by(_name))
    label_key: str | None = field(default=None, metadata=checked_by(_name))
    crop: Crop | None = field(default=None, metadata=checked_by(_crop))
    label_crop: Crop | str | None = field(default=SAME, metadata=checked_by(_label_crop))
    crops_per_file: int = field(default=1, metadata=checked_by(_crops_per_file))
    foreground: Foreground | None = field(default=None, metadata=checked_by(as_foreground))
    backend: str = field(default=DEFAULT_BACKEND, metadata=checked_by(_backend))
    ignore_errors: bool = field(default=False, metadata=checked_by(_flag))
    max_file_size: int | None = field(default=None, metadata=checked_by(_limit))
    max_header_size: int = field(default=npy.MAX_HEADER_SIZE, metadata=checked_by(_limit))
    limits: Limits = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _check_fields(self)
        object.__setattr__(self, "limits", Limits(self.max_header_size, self.max_file_size))

    @classmethod
    def from_arguments(cls, arguments: Mapping[str, Any]) -> ReadOptions:
        """The read options among `npyio.pack`'s ``arguments`` (the rest are `PackOptions`'
        or its own): what each part loads as."""
        return _pick(cls, arguments)

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
    each part's dtype when the plan knows it (`npyio._sources.plan`).
    """

    batch_size: int | None = field(default=BATCH_SIZE, metadata=checked_by(positive))
    drop_remainder: bool = field(default=False, metadata=checked_by(_flag))
    shuffle: bool = field(default=False, metadata=checked_by(_flag))
    seed: int | None = field(default=None, metadata=checked_by(_seed))
    reshuffle_each_iteration: bool = field(default=True, metadata=checked_by(_flag))
    shard: Any = field(default=None, metadata=checked_by(_shard))
    num_parallel_calls: int | None = field(default=AUTOTUNE, metadata=checked_by(_parallelism))
    deterministic: bool | None = field(default=None, metadata=checked_by(_optional_flag))
    prefetch: int | None = field(default=AUTOTUNE, metadata=checked_by(_prefetch))
    with_paths: bool = field(default=False, metadata=checked_by(_flag))
    padding_value: object = field(default=None, metadata=checked_by(_padding))
    shuffle_buffer: int | None = field(default=None, metadata=checked_by(positive))
    #: The entry point whose words name the fields in errors (`SAME_IDEA`: ``npyio.rows``
    #: calls ``num_parallel_calls`` ``num_parallel_reads``).
    function: InitVar[str] = "dataset"

    def __post_init__(self, function: str) -> None:
        _check_fields(self, function)
        if self.shuffle_buffer is not None and not self.shuffle:
            raise ValueError(
                f"shuffle_buffer={self.shuffle_buffer} is the size of the shuffle window, "
                "which needs shuffle=True (without it rows come in order)"
            )

    @property
    def auto(self) -> bool:
        """Whether the parallelism of the reads is left to tf.data (AUTOTUNE or None)."""
        return self.num_parallel_calls in (None, AUTOTUNE)


@dataclass(frozen=True)
class SplitOptions:
    """A validation split, as Keras's ``*_dataset_from_directory`` cuts it (`check`)."""

    validation_split: float | None = field(default=None, metadata=checked_by(_fraction))
    subset: str | None = field(default=None, metadata=checked_by(_subset))

    def __post_init__(self) -> None:
        _check_fields(self)

    def check(self, seed: int | None) -> None:
        """The split arguments together, and with the seed (before any file is listed).

        Raises:
            ValueError: for a ``subset`` without a ``validation_split`` (or the reverse), or
                a split without a ``seed``: the subsets are a seeded permutation of the
                samples, so that the training call and the validation call, each with the
                same seed, cut the same split whatever their other options.
        """
        fraction, subset = self.validation_split, self.subset
        if fraction is None:
            if subset is not None:
                raise ValueError(f"subset={subset!r} needs validation_split (got None)")
            return
        _subset(subset, "subset")
        if subset is None:
            raise ValueError(
                "subset must be 'training', 'validation' or 'both' with validation_split, got None"
            )
        if seed is None:
            raise ValueError(
                f"validation_split={fraction} needs a seed: the validation subset is a seeded "
                "draw of the samples, so pass the same seed (e.g. seed=0) to the training and "
                "the validation call; shuffle only orders each subset"
            )


@dataclass(frozen=True)
class DatasetOptions:
    """Every option of `npyio.dataset`, by concern; checked together when made."""

    read: ReadOptions = ReadOptions()
    loader: LoaderOptions = LoaderOptions()
    split: SplitOptions = SplitOptions()

    def __post_init__(self) -> None:
        # what the source kind refuses is refused by the plan, which decides the kind
        # (`npyio._sources.plan.plan`)
        self.split.check(self.loader.seed)

    def given(self) -> dict[str, object]:
        """The options given a value other than their default, by their public names."""
        out = {}
        for part in (self.read, self.loader, self.split):
            for f in dataclasses.fields(part):
                value = getattr(part, f.name)
                if f.init and not (value is f.default or _equal(value, f.default)):
                    out[f.name] = value
        return out

    @classmethod
    def from_arguments(
        cls, arguments: Mapping[str, Any], function: str = "dataset"
    ) -> DatasetOptions:
        """The options among the ``arguments`` of the entry point ``function`` (``"dataset"``
        or ``"rows"``) by their names there, each taken by the class that has a field of that
        name (`called`); the sources (`SOURCES`) are left alone. For the CLI and the tests.

        Raises:
            TypeError: for a name that is neither an option nor a source.
        """
        known = entry_points()[function]
        unknown = sorted(set(arguments) - known - SOURCES)
        if unknown:
            raise TypeError(unknown_option(function, unknown[0], known))
        fields = _fields(LoaderOptions)
        named = {
            f: arguments[called(function, f)] for f in fields if called(function, f) in arguments
        }
        loader = LoaderOptions(**named, function=function)
        return cls(_pick(ReadOptions, arguments), loader, _pick(SplitOptions, arguments))


# --- validation splits ------------------------------------------------------------------------
def split(
    n: int,
    options: SplitOptions,
    seed: int | None,
    samples: str = "files",
    strata: np.ndarray | None = None,
) -> list[np.ndarray]:
    """Indices of the subsets of ``n`` samples, each ascending.

    Which samples are validation depends only on ``n``, ``validation_split``, ``seed`` and
    ``strata``: never on ``shuffle``, ``batch_size`` or any other option, so a training call
    and a validation call that differ in those still cut disjoint subsets that cover every
    sample. The samples are drawn in the seeded permutation ``RandomState(seed)``, and the
    last ``int(validation_split * n)`` of it are the validation subset (Keras's count). With
    ``strata`` (one class per sample: class folders), each class gives its share of them,
    in proportion to its size (the largest remainders get the rounding), again the last of
    its samples in the permutation. Each subset comes in ascending order: the dataset's
    ``shuffle`` orders it. Returns one array (``"training"``, ``"validation"``, or all
    samples without a split) or two (``"both"``).

    The arguments were checked when ``options`` was made (`SplitOptions.check`: a split
    needs a seed). The samples are files, or rows (`npyio.rows`, a pack), as ``samples``
    names them in the error.

    Raises:
        ValueError: for a subset left empty.

    Example:
        >>> training, validation = split(10, SplitOptions(0.3, "both"), seed=0)
        >>> validation.tolist(), len(training)
        ([0, 3, 5], 7)
    """
    validation_split, subset = options.validation_split, options.subset
    if validation_split is None:
        return [np.arange(n)]
    order = np.random.RandomState(seed).permutation(n)
    n_val = int(validation_split * n)
    held = np.zeros(n, dtype=bool)
    if strata is None:
        held[order[n - n_val :]] = True
    else:
        ranked = strata[order]  # each sample's class, in the permutation's order
        classes, sizes = np.unique(ranked, return_counts=True)
        quotas = _quotas(sizes, validation_split, n_val)
        for cls, quota in zip(classes, quotas):
            if quota:
                held[order[np.flatnonzero(ranked == cls)[-quota:]]] = True
    training, validation = np.flatnonzero(~held), np.flatnonzero(held)
    for name, part in (("training", training), ("validation", validation)):
        if subset in (name, "both") and len(part) == 0:
            raise ValueError(
                f"validation_split={validation_split} of {n} {samples} leaves the {name} subset "
                "empty"
            )
    if subset == "training":
        return [training]
    return [validation] if subset == "validation" else [training, validation]


def _quotas(sizes: np.ndarray, fraction: float, total: int) -> np.ndarray:
    """Each class's share of ``total`` held-out samples, in proportion to its size: the floors
    of ``fraction * size``, then one more for the classes with the largest remainders (the
    first class on a tie) until they add up to ``total``."""
    exact = fraction * sizes.astype(np.float64)
    quotas = np.minimum(np.floor(exact).astype(np.int64), sizes)
    short = total - int(quotas.sum())
    if short > 0:
        room = quotas < sizes
        remainders = np.where(room, exact - quotas, -1.0)
        quotas[np.argsort(-remainders, kind="stable")[:short]] += 1
    return quotas


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
        """The options among `npyio.pack`'s ``arguments`` (see `DatasetOptions`); the other
        names (its sources and read options) are left to their own classes."""
        return _pick(cls, arguments)
