"""Copy the recorded benchmark tables (NAME.md in bench/results/, written by bench/results.py)
into the pages that show them, so that a figure lives in one table and the guide quotes it as
it is.

A page marks where a table goes, and this script fills the lines between the marks with the
table (its title as a bold line, so that it nests under the page's own heading)::

    <!-- results: npyio-bench -->
    <!-- /results -->

``make docs`` runs it; commit what it changed (tests/bench/test_results.py checks that the pages
hold the tables as they are).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "bench" / "results"
#: The pages that may include a table.
PAGES = (REPO / "README.md", *sorted((REPO / "docs").glob("*.md")))
MARKS = re.compile(r"(<!-- results: ([\w-]+) -->\n)(.*?)(<!-- /results -->)", re.S)


def included(name: str, results: Path = RESULTS) -> str:
    """Table ``name`` as a page includes it: its ``# title`` as a bold line."""
    title, rest = (results / f"{name}.md").read_text().split("\n", 1)
    return f"**{title.removeprefix('# ')}**\n{rest}"


def fill(text: str, results: Path = RESULTS) -> str:
    """``text`` with every marked region holding its table as it is now."""
    return MARKS.sub(lambda m: m[1] + included(m[2], results) + m[4], text)


def main() -> int:
    for page in PAGES:
        text = page.read_text()
        new = fill(text)
        if new != text:
            page.write_text(new)
            print(f"{page.relative_to(REPO)}: tables updated")
    return 0


if __name__ == "__main__":
    sys.exit(main())
