"""The capability table as the kinds declare it: one column per kind, each named once, set in
docs/options.md's order, and the page holding the table they write; TF-free."""

from __future__ import annotations

import textwrap
from pathlib import Path

from npyio._pipeline.capabilities import OPTIONS
from npyio._sources.kinds import COLUMNS, KINDS, markdown
from npyio._sources.pack_plan import PACK
from npyio._sources.plan import FILES, NPZ
from npyio._sources.rows_plan import ROWS
from tests.test_structure import run_without_tf

ROOT = Path(__file__).resolve().parents[2]


def test_every_kind_has_one_column_in_the_docs_order():
    assert list(KINDS) == [FILES, NPZ, PACK, ROWS]
    assert len({column.title for column in COLUMNS}) == len(COLUMNS)
    assert all(set(column.uses) == set(OPTIONS) for column in COLUMNS)


def test_the_options_page_holds_the_table_the_kinds_write():
    page = (ROOT / "docs" / "options.md").read_text(encoding="utf-8")
    table = markdown()
    assert table in page
    header = table.splitlines()[0]
    assert header == "| option | " + " | ".join(c.title for c in COLUMNS) + " |"
    assert len(table.splitlines()) == 2 + len(OPTIONS)


def test_the_table_is_written_without_tensorflow():
    code = """
    import sys
    from npyio._sources.kinds import markdown
    print(len(markdown()))
    assert sys.modules.get('tensorflow') is None, 'TensorFlow was imported'
    """
    r = run_without_tf(textwrap.dedent(code))
    assert r.returncode == 0, r.stderr[-3000:]
    assert int(r.stdout.split()[-1]) == len(markdown())
