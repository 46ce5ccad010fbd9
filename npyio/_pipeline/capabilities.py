"""What each option means for each source kind: the capability table, option x kind.

Each source kind declares its column where it is planned (a `Column`: `npyio._sources.plan` for
loose ``.npy`` files and ``.npz`` members, `npyio._sources.pack_plan` for a directory written by
`npyio.pack`, `npyio._sources.rows_plan` for `npyio.rows`), and `npyio._sources.kinds` sets the
columns side by side. For each option, a column says whether the kind honours it and what it
means there (``shard``: by file or by row), refuses it with a message (when its value is one
`Use.refuses`), or has no such argument.

This module holds what every column shares: the rows (`OPTIONS`), the cells (`Use`), the options
the loader applies alike to every kind (`LOADER`), a column's refusals (`Column.refuse`, which
`npyio._sources.plan.plan` calls once, with the kind it decided) and the table as Markdown
(`markdown`, docs/options.md). ``tests/pipeline/test_capabilities.py`` builds every option on
every kind. A new source kind is a column in its own module; a new option is a row, in `OPTIONS`
and in every column. TF-free.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

__all__ = [
    "ABSENT",
    "HONOURED",
    "LOADER",
    "NEEDS_KEY",
    "OPTIONS",
    "REFUSED",
    "Column",
    "Use",
    "absent",
    "honoured",
    "markdown",
]

HONOURED, REFUSED, ABSENT = "honoured", "refused", "absent"

#: The table's rows, in docs/options.md's order: every option of `npyio.dataset` and
#: `npyio.rows` but ``key``, which picks the kind (``.npz`` members) rather than acting on one.
OPTIONS = (
    "batch_size",
    "drop_remainder",
    "shuffle",
    "seed",
    "reshuffle_each_iteration",
    "shard",
    "num_parallel_calls",
    "deterministic",
    "prefetch",
    "with_paths",
    "padding_value",
    "dtype",
    "shape",
    "label_dtype",
    "label_shape",
    "crop",
    "label_crop",
    "crops_per_file",
    "foreground",
    "label_key",
    "backend",
    "ignore_errors",
    "max_file_size",
    "max_header_size",
    "validation_split",
    "subset",
    "shuffle_buffer",
    "num_parallel_reads",
)


def _any(value: object) -> bool:
    return True


@dataclass(frozen=True)
class Use:
    """One cell of the table: what an option means for one source kind.

    Attributes:
        status: `HONOURED`, `REFUSED` or `ABSENT`.
        meaning: What it does there (honoured), or what is refused (a few words).
        message: The refusal's message (``{value!r}`` is the value given).
        refuses: Which of the values given (other than the default) are refused: all, by
            default.
    """

    status: str
    meaning: str = ""
    message: str = ""
    refuses: Callable[[object], bool] = field(default=_any, compare=False)


def honoured(meaning: str = "") -> Use:
    return Use(HONOURED, meaning)


def absent(function: str) -> Use:
    """An option that is not an argument of ``function`` (for this kind)."""
    return Use(ABSENT, f"not an argument of {function}")


#: What the loader does alike for every kind (batching, the split, the seed of its shuffle):
#: every column starts from these cells.
LOADER: Mapping[str, Use] = MappingProxyType(
    {
        name: honoured()
        for name in (
            "batch_size",
            "drop_remainder",
            "seed",
            "reshuffle_each_iteration",
            "validation_split",
            "subset",
        )
    }
)


#: ``label_key`` where ``key`` is not given: it names a member of the archives ``key`` reads.
NEEDS_KEY = Use(REFUSED, "needs `key`", "label_key needs key: it names a member of .npz archives")


@dataclass(frozen=True)
class Column:
    """One source kind's column of the table, declared with the kind.

    Attributes:
        kind: The kind's name (a plan's and a `npyio._pipeline.loader.Source`'s ``kind``).
        title: How docs/options.md names it.
        uses: Option -> `Use`, for every option in `OPTIONS` (checked when made).
    """

    kind: str
    title: str
    uses: Mapping[str, Use]

    def __post_init__(self) -> None:
        missing = [name for name in OPTIONS if name not in self.uses]
        extra = sorted(set(self.uses) - set(OPTIONS))
        if missing or extra:  # a kind says what every option means for it, and no more
            raise ValueError(f"the {self.kind} column: missing {missing}, unknown {extra}")
        object.__setattr__(self, "uses", MappingProxyType(dict(self.uses)))

    def refuse(self, given: Mapping[str, object], where: str | None = None) -> None:
        """Raises the column's refusal for the first option in ``given`` that it refuses.

        Args:
            given: The options given a value other than their default, by their public names.
            where: The source, put before the message (``"{where}: {message}"``).

        Raises:
            ValueError: naming the option, with the column's message.
        """
        for name, value in given.items():
            use = self.uses.get(name)
            if use is not None and use.status == REFUSED and use.refuses(value):
                message = use.message.format(value=value)
                raise ValueError(message if where is None else f"{where}: {message}")


def _cell(use: Use) -> str:
    if use.status == HONOURED:
        return "yes" + (f": {use.meaning}" if use.meaning else "")
    if use.status == REFUSED:
        return "no" if use.meaning == "refused" else f"no ({use.meaning})"
    return "—"


def markdown(columns: Sequence[Column]) -> str:
    """The table of ``columns`` as Markdown, one row per option, one column per kind
    (docs/options.md holds `npyio._sources.kinds.markdown`'s)."""
    lines = [
        "| option | " + " | ".join(column.title for column in columns) + " |",
        "|---" * (len(columns) + 1) + "|",
    ]
    for name in OPTIONS:
        cells = " | ".join(_cell(column.uses[name]) for column in columns)
        lines.append(f"| `{name}` | {cells} |")
    return "\n".join(lines) + "\n"
