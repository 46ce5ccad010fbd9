"""The source kinds npyio reads, and the capability table: each kind's column, declared where the
kind is planned, set side by side (docs/options.md holds `markdown`). A new kind is a module of
its own, its `npyio._pipeline.capabilities.Column`, and its place in `COLUMNS`. TF-free."""

from __future__ import annotations

from collections.abc import Mapping

from npyio._pipeline import capabilities
from npyio._pipeline.capabilities import Column
from npyio._sources.pack_plan import PACK_COLUMN
from npyio._sources.plan import FILES_COLUMN, NPZ_COLUMN
from npyio._sources.rows_plan import ROWS_COLUMN

__all__ = ["COLUMNS", "KINDS", "markdown"]

#: Every kind's column, in docs/options.md's order.
COLUMNS: tuple[Column, ...] = (FILES_COLUMN, NPZ_COLUMN, PACK_COLUMN, ROWS_COLUMN)
#: Each kind's column by its name (a plan's ``kind``).
KINDS: Mapping[str, Column] = {column.kind: column for column in COLUMNS}


def markdown() -> str:
    """The capability table as Markdown, every kind's column (docs/options.md holds it)."""
    return capabilities.markdown(COLUMNS)
