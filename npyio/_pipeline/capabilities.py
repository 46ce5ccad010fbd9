"""What each option means for each source kind: one table, option x kind.

npyio reads four kinds of source: loose ``.npy`` files (`FILES`), members of ``.npz`` archives
(`NPZ`, with ``key=``), a directory written by `npyio.pack` (`PACK`), and the rows of big
arrays (`ROWS`, `npyio.rows`). For each option and kind, `TABLE` says whether the option is
honoured and what it means there (``shard``: by file or by row), refused with a message (when
its value is one `Use.refuses`), or absent (not an argument of that kind's function).

Everything else derives from the table: `refuse` (`npyio._sources.plan.plan` calls it once, with
the kind it decided), `markdown` (the table in docs/options.md) and
``tests/pipeline/test_capabilities.py`` (which builds every option on every kind). A new source kind
is a column here, a new option a row. TF-free.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from npyio._read import BACKENDS, reads

__all__ = [
    "ABSENT",
    "FILES",
    "HONOURED",
    "KINDS",
    "NPZ",
    "PACK",
    "REFUSED",
    "ROWS",
    "TABLE",
    "Use",
    "markdown",
    "refuse",
]

FILES, NPZ, PACK, ROWS = "files", "npz", "pack", "rows"
#: The source kinds, and how docs/options.md names them.
KINDS = {
    FILES: "`.npy` files",
    NPZ: "`.npz` members (`key=`)",
    PACK: "a pack (`npyio.pack`)",
    ROWS: "rows (`npyio.rows`)",
}
HONOURED, REFUSED, ABSENT = "honoured", "refused", "absent"


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


def _honoured(meaning: str = "") -> Use:
    return Use(HONOURED, meaning)


def _absent(function: str) -> Use:
    return Use(ABSENT, f"not an argument of {function}")


def _not_for_pack(name: str, why: str = "") -> Use:
    message = f"{name}= does not apply to a packed directory"
    return Use(REFUSED, why or "refused", f"{message}: {why}" if why else message)


_NOT_ROWS = _absent("`npyio.rows`")
_NOT_DATASET = _absent("`npyio.dataset`")
_ROW_READER = (
    "a packed directory is read by npyio's row reader; backend= and ignore_errors= do not "
    "apply (npyio verify checks its shards)"
)
_NEEDS_KEY = Use(REFUSED, "needs `key`", "label_key needs key: it names a member of .npz archives")
_MEMBER_BACKENDS = " or ".join(repr(name) for name in BACKENDS if reads(name, "members"))


def _same(files: Use, pack: Use, rows: Use = _NOT_ROWS) -> dict[str, Use]:
    """A row whose ``.npz`` cell is its files cell."""
    return {FILES: files, NPZ: files, PACK: pack, ROWS: rows}


#: option -> source kind -> `Use`. ``key`` is not a row: giving it makes the source `NPZ`.
TABLE: dict[str, dict[str, Use]] = {
    "batch_size": _same(_honoured(), _honoured(), _honoured()),
    "drop_remainder": _same(_honoured(), _honoured(), _honoured()),
    "shuffle": _same(
        _honoured("files in a full uniform shuffle, anew each epoch"),
        _honoured(
            "rows in a full uniform shuffle, anew each epoch (on object storage: pieces of rows "
            "in a new order, rows permuted within cycles of 8)"
        ),
        _honoured(
            "rows in a full uniform shuffle, anew each epoch; with `shuffle_buffer` (and on "
            "object storage) a shuffle by cycles of pieces"
        ),
    ),
    "seed": _same(_honoured(), _honoured(), _honoured()),
    "reshuffle_each_iteration": _same(_honoured(), _honoured(), _honoured()),
    "shard": _same(
        _honoured("by file (every n-th file)"),
        _honoured("by row (contiguous ranges of rows)"),
        _honoured("by row (contiguous ranges of rows)"),
    ),
    "num_parallel_calls": _same(
        _honoured("files read and decoded at once"), _honoured("chunks decoded at once")
    ),
    "deterministic": _same(
        _honoured("as `Dataset.map`'s"),
        Use(
            REFUSED,
            "`False` refused: rows come in order",
            "deterministic=False does not apply to a packed directory: its rows are decoded "
            "in order",
            refuses=lambda value: value is False,
        ),
    ),
    "prefetch": _same(_honoured(), _honoured()),
    "with_paths": _same(_honoured(), _honoured("the source file each row was packed from")),
    "padding_value": _same(
        _honoured(), _not_for_pack("padding_value", "a shard holds rows of one shape")
    ),
    "dtype": _same(_honoured(), _honoured("checked against the pack's")),
    "shape": _same(_honoured(), _honoured("checked against the pack's")),
    "label_dtype": _same(_honoured(), _honoured("checked against the pack's")),
    "label_shape": _same(_honoured(), _honoured("checked against the pack's")),
    "crop": _same(
        _honoured(
            "a window of each array (`npyio.Crop`); the native reader reads only its bytes "
            "(C-order files), the graph path cuts it from the whole array"
        ),
        _not_for_pack("crop", "a pack's rows are read whole; crop the loose files"),
    ),
    "label_crop": _same(
        _honoured("the inputs' window by default, `None` for whole labels, or a window of its own"),
        _not_for_pack("label_crop", "a pack's rows are read whole; crop the loose files"),
    ),
    "crops_per_file": _same(
        _honoured(
            "k random windows of each file per epoch, each a unit of the epoch's stream "
            "(shuffled with the rest)"
        ),
        _not_for_pack("crops_per_file", "a pack's rows are read whole; crop the loose files"),
    ),
    "foreground": _same(
        _honoured(
            "a share of the random windows centred on a labelled voxel of the mask "
            "(`npyio.Foreground`), from an index cached per mask"
        ),
        _not_for_pack("foreground", "a pack's rows are read whole; crop the loose files"),
    ),
    "label_key": {
        FILES: _NEEDS_KEY,
        NPZ: _honoured("the labels' member"),
        PACK: _NEEDS_KEY,  # and key= does not apply to a packed directory
        ROWS: _NOT_ROWS,
    },
    "backend": {
        FILES: _honoured(),
        NPZ: Use(
            REFUSED,
            f"only {_MEMBER_BACKENDS}",
            f"key (.npz archives) needs backend={_MEMBER_BACKENDS}, got {{value!r}}",
            refuses=lambda value: not reads(value, "members"),  # type: ignore[arg-type]
        ),
        PACK: Use(REFUSED, "the row reader reads a pack", _ROW_READER),
        ROWS: _NOT_ROWS,
    },
    "ignore_errors": _same(
        _honoured("skips a bad file, naming it"),
        Use(REFUSED, "the row reader reads a pack", _ROW_READER),
    ),
    "max_file_size": {
        FILES: _honoured(),
        NPZ: Use(REFUSED, "refused", "max_file_size is not supported with key (.npz archives)"),
        PACK: _not_for_pack("max_file_size"),
        ROWS: _NOT_ROWS,
    },
    "max_header_size": _same(
        _honoured(),
        Use(
            REFUSED,
            "its index holds the headers",
            "max_header_size= does not apply to a packed directory: its index holds the headers",
        ),
    ),
    "validation_split": _same(_honoured(), _honoured(), _honoured()),
    "subset": _same(_honoured(), _honoured(), _honoured()),
    "shuffle_buffer": _same(
        _NOT_DATASET, _NOT_DATASET, _honoured("with `shuffle`: shuffle by cycles of these rows")
    ),
    "num_parallel_reads": _same(
        _NOT_DATASET, _NOT_DATASET, _honoured("batches read at once (a cycle's pieces)")
    ),
}


def refuse(kind: str, given: Mapping[str, object], where: str | None = None) -> None:
    """Raises the table's refusal for the first option in ``given`` that ``kind`` refuses.

    Args:
        kind: The source kind the plan decided.
        given: The options given a value other than their default, by their public names.
        where: The source, put before the message (``"{where}: {message}"``).

    Raises:
        ValueError: naming the option, with the table's message.
    """
    for name, value in given.items():
        use = TABLE.get(name, {}).get(kind)
        if use is not None and use.status == REFUSED and use.refuses(value):
            message = use.message.format(value=value)
            raise ValueError(message if where is None else f"{where}: {message}")


def _cell(use: Use) -> str:
    if use.status == HONOURED:
        return "yes" + (f": {use.meaning}" if use.meaning else "")
    if use.status == REFUSED:
        return "no" if use.meaning == "refused" else f"no ({use.meaning})"
    return "—"


def markdown() -> str:
    """The table as Markdown, one row per option, one column per kind (docs/options.md holds it)."""
    lines = [
        "| option | " + " | ".join(KINDS.values()) + " |",
        "|---" * (len(KINDS) + 1) + "|",
    ]
    for name, row in TABLE.items():
        lines.append(f"| `{name}` | " + " | ".join(_cell(row[kind]) for kind in KINDS) + " |")
    return "\n".join(lines) + "\n"
